#!/usr/bin/env bash
# Builds the optional native core (docs/native.md) as an abi3 wheel with maturin and installs it
# into the virtual environment of PYTHON (argument 1), where a Rust toolchain (cargo) is present.
# Elsewhere it says so in one line and exits 0: pmem then runs its pure-Python engine, with the
# same results. `make install` (hence `make demo`), `make native`, `make test` and `make bench`
# call it. PyO3 and crc32fast come from crates.io (native/Cargo.lock), maturin from PyPI.
# Argument 2, optional: a file to touch once the core is installed (the Makefile's stamp).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${1:?usage: native/build.sh PYTHON [STAMP]}"
python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")"  # absolute (the venv's link kept)
stamp="${2:-}"
say() { echo "native: $*" >&2; }

cargo="$(command -v cargo || true)"
[ -z "$cargo" ] && [ -x "$HOME/.cargo/bin/cargo" ] && cargo="$HOME/.cargo/bin/cargo"
if [ -z "$cargo" ]; then
  say "no Rust toolchain (cargo), so no native core: pmem uses its pure-Python engine (same results)"
  exit 0
fi
export PATH="$(dirname "$cargo"):$PATH"
bin="$(dirname "$python")"
# maturin into the same environment (a build tool, like ruff for the tests), once.
if [ ! -x "$bin/maturin" ]; then
  "$python" -m pip install --quiet "maturin>=1.15,<2" >&2
fi
out="$here/target/wheels"
rm -f "$out"/pmem_native-*.whl
(cd "$here" && "$bin/maturin" build --release --quiet --interpreter "$python" --out "$out" >&2)
# A core copied in by hand by builds before maturin (site-packages/pmem_native.abi3.so) would
# shadow nothing but confuse whoever looks: removed.
site="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
rm -f "$site/pmem_native.abi3.so"
"$python" -m pip install --quiet --force-reinstall --no-deps "$out"/pmem_native-*.whl >&2
"$python" -c 'import pmem_native; print("native: pmem_native", pmem_native.VERSION, "installed")' >&2
if [ -n "$stamp" ]; then touch "$stamp"; fi
