#!/usr/bin/env bash
# `make test-vscode`: the extension end to end in a real VS Code (code-server in Debian's
# chromium, driven by playwright-core), the way a user walks it on a copy of the demo memory.
# The Makefile builds the .vsix (`make vscode`) and .venv/bin/pmem-lsp (`make install`) first.
#
#   PMEM_E2E_CACHE   cache folder (default <repo>/.cache/vscode-e2e); screenshots go to
#                    $PMEM_E2E_CACHE/screenshots, the run's logs to $PMEM_E2E_CACHE/run
#   PMEM_E2E_SERVER  the pmem-lsp to test (default <repo>/.venv/bin/pmem-lsp)
#   PMEM_E2E_VSIX    the extension to test (default: the newest editors/vscode/*.vsix)
#   PMEM_E2E_ONLY    comma-separated step names to run (default: all)
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
export PMEM_E2E_CACHE="${PMEM_E2E_CACHE:-$REPO/.cache/vscode-e2e}"
start=$(date +%s)

eval "$("$HERE/setup.sh")"
echo "e2e: set-up done in $(( $(date +%s) - start )) s"

VSIX="${PMEM_E2E_VSIX:-$(ls -t "$REPO"/editors/vscode/pmem-lsp-*.vsix 2>/dev/null | head -1 || true)}"
[ -n "$VSIX" ] || { echo "e2e: no .vsix in editors/vscode: run 'make vscode' first" >&2; exit 2; }
SERVER="${PMEM_E2E_SERVER:-$REPO/.venv/bin/pmem-lsp}"
[ -x "$SERVER" ] || { echo "e2e: $SERVER is missing: run 'make install' first" >&2; exit 2; }

export E2E_CODE_SERVER="$CODE_SERVER" E2E_PLAYWRIGHT="$PLAYWRIGHT_CORE" E2E_CHROMIUM="$CHROMIUM"
export E2E_VSIX="$VSIX" E2E_SERVER="$SERVER" E2E_DEMO="$REPO/examples/demo-memory"
export E2E_NODE_BIN="$(dirname "$NODE24")"
set +e
"$NODE24" "$HERE/run.mjs"
status=$?
set -e
echo "e2e: whole run $(( $(date +%s) - start )) s"
exit $status
