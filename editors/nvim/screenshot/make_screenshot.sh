#!/bin/sh
# Regenerates docs/nvim-archive.png: Neovim (headless, in tmux) on a copy of the demo memory,
# showing pmem-lsp's diagnostics and the confirmation :PmemArchive asks for.
# Needs tmux, nvim, the repo's .venv, and Python with Pillow (Debian: python3-pil, fonts-dejavu-core).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
NVIM=${NVIM:-$REPO/.venv/bin/nvim}
PYTHON_PIL=${PYTHON_PIL:-/usr/bin/python3}
OUT=${1:-$REPO/docs/nvim-archive.png}
WORK=$(mktemp -d)
SOCK="pmem-shot-$$"
trap 'tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$WORK"' EXIT

mkdir -p "$WORK/home"
cp -r "$REPO/examples/demo-memory" "$WORK/home/.persistent-memory"
printf '#!/bin/sh\nexec %s -m pmem_lsp "$@"\n' "$REPO/.venv/bin/python" > "$WORK/pmem-lsp"
chmod +x "$WORK/pmem-lsp"

capture() { tmux -L "$SOCK" capture-pane -p -t shot "$@"; }
wait_for() {  # wait_for TEXT: poll the screen for up to 30 s
  i=0
  until capture | grep -qF -- "$1"; do
    i=$((i + 1)); [ $i -gt 300 ] && { echo "timed out waiting for: $1" >&2; capture >&2; exit 1; }
    sleep 0.1
  done
}

tmux -L "$SOCK" -f /dev/null new-session -d -s shot -x 104 -y 40 \
  "env HOME=$WORK/home XDG_CONFIG_HOME=$WORK/cfg XDG_STATE_HOME=$WORK/state XDG_DATA_HOME=$WORK/data \
   PMEM_PLUGIN=$REPO/editors/nvim PMEM_SERVER=$WORK/pmem-lsp TERM=tmux-256color COLORTERM=truecolor \
   sh -c 'cd $WORK/home/.persistent-memory && exec $NVIM -u $HERE/init.lua -n projects/garden-sensors.md'"
tmux -L "$SOCK" set-option -g default-terminal tmux-256color >/dev/null
tmux -L "$SOCK" set-option -as terminal-features ',*:RGB' >/dev/null
wait_for "PM102"
sleep 0.5
tmux -L "$SOCK" send-keys -t shot ":PmemArchive" Enter
wait_for "reason:"
tmux -L "$SOCK" send-keys -t shot -l "handed over to the allotment society"
tmux -L "$SOCK" send-keys -t shot Enter
wait_for "Type number"
sleep 0.3
capture -e > "$WORK/screen.ansi"
tmux -L "$SOCK" send-keys -t shot "2" Enter   # Cancel: nothing moves
"$PYTHON_PIL" "$HERE/render_ansi.py" "$WORK/screen.ansi" "$OUT"
echo "wrote $OUT"
