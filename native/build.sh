#!/usr/bin/env bash
# Builds the optional native core (docs/native.md) and installs it into the virtual environment of
# PYTHON (argument 1), where a Rust toolchain and Debian's packaged PyO3 are present. Elsewhere it
# says why and exits 0: pmem then runs its pure-Python engine, with the same results.
# `make native` (and so `make test` and `make bench`) calls it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${1:?usage: native/build.sh PYTHON}"
registry=/usr/share/cargo/registry
say() { echo "native: $*" >&2; }

cargo="$(command -v cargo || true)"
[ -z "$cargo" ] && [ -x "$HOME/.cargo/bin/cargo" ] && cargo="$HOME/.cargo/bin/cargo"
if [ -z "$cargo" ]; then
  say "no Rust toolchain (cargo): not built; pmem uses its pure-Python engine"
  exit 0
fi
# PyO3 0.17 and crc32fast from Debian (crates.io is not needed, native/.cargo/config.toml):
# installed once, as root, like the editors' tools; otherwise say what to run.
packages="librust-pyo3-dev librust-crc32fast-dev"
have_crates() { ls -d "$registry"/pyo3-0.17.* "$registry"/crc32fast-1.* >/dev/null 2>&1; }
if ! have_crates; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >&2 || true
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $packages >&2 || say "apt-get install $packages failed"
  fi
fi
if ! have_crates; then
  say "Debian's packaged crates are missing (apt-get install $packages): not built;" \
      "pmem uses its pure-Python engine"
  exit 0
fi
export PYO3_PYTHON="$python"
# In the crate's folder, so that its .cargo/config.toml (the offline source) applies.
(cd "$here" && "$cargo" build --release --quiet)
site="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
# Replaced, not overwritten in place: a running pmem that mapped the old file keeps it.
cp "$here/target/release/libpmem_native.so" "$site/.pmem_native.abi3.so.tmp"
mv -f "$site/.pmem_native.abi3.so.tmp" "$site/pmem_native.abi3.so"
"$python" -c 'import pmem_native; print("native: pmem_native", pmem_native.VERSION, "installed")' >&2
