"""Fixtures of the agent tests.

- `agent_clients` — the real Claude Code and Codex command-line clients from the npm registry,
  version-pinned, installed once into `.cache/agent-clients` (as the editors' tools are
  installed by the tests' set-up); the test is skipped, saying why, where npm or the registry
  is missing. (Claude Code's install script puts its binary for this platform in place.)
- `inspector` — the official MCP Inspector (its CLI mode), version-pinned, installed once into
  `.cache/inspector` the same way; skipped, saying why, where npm, the registry or the
  package's CLI is missing.
- `mcp1_python` — an interpreter with the MCP SDK's 1.x line (what clients built before the
  2.x SDK run), in a venv of its own under `.cache/mcp1` made once from PyPI; skipped, saying
  why, where it cannot be made.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roots import REPO

CLIENTS = {"claude": "@anthropic-ai/claude-code@2.1.332", "codex": "@openai/codex@0.171.0"}
PREFIX = REPO / ".cache" / "agent-clients"


@pytest.fixture(scope="session")
def agent_clients() -> dict[str, Path]:
    bins = {name: PREFIX / "node_modules" / ".bin" / name for name in CLIENTS}
    npm = shutil.which("npm")
    PREFIX.mkdir(parents=True, exist_ok=True)
    with open(PREFIX / ".lock", "w") as lock:  # two test workers install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all(b.exists() for b in bins.values()):
            if npm is None:
                pytest.skip("npm is not installed: the real Claude Code and Codex clients cannot be had")
            done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix",
                                   str(PREFIX), *CLIENTS.values()], capture_output=True, text=True, timeout=600)
            if done.returncode != 0 or not all(b.exists() for b in bins.values()):
                pytest.skip(f"npm could not install {', '.join(CLIENTS.values())}: {done.stderr[-500:]}")
    return bins


INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"  # 2.x: `--cli --protocol-era legacy|auto|modern`
INSPECTOR_PREFIX = REPO / ".cache" / "inspector"


@pytest.fixture(scope="session")
def inspector() -> Path:
    """The Inspector's launcher (`inspector --cli …`). Its own prefix: installing it beside the
    agent clients would make npm re-resolve their tree."""
    launcher = INSPECTOR_PREFIX / "node_modules" / ".bin" / "inspector"
    npm = shutil.which("npm")
    INSPECTOR_PREFIX.mkdir(parents=True, exist_ok=True)
    with open(INSPECTOR_PREFIX / ".lock", "w") as lock:  # two test workers install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not launcher.exists():
            if npm is None:
                pytest.skip(f"npm is not installed: the MCP Inspector ({INSPECTOR}) cannot be had")
            done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(INSPECTOR_PREFIX),
                                   INSPECTOR], capture_output=True, text=True, timeout=600)
            if done.returncode != 0 or not launcher.exists():
                pytest.skip(f"npm could not install {INSPECTOR}: {done.stderr[-500:]}")
    # It declares node >= 22.19 but runs on 20; where it cannot run at all, say so.
    ran = subprocess.run([str(launcher), "--cli", "--version"], capture_output=True, text=True, timeout=120)
    if ran.returncode != 0:
        pytest.skip(f"the MCP Inspector ({INSPECTOR}) does not run here: {(ran.stderr or ran.stdout)[-500:]}")
    return launcher


MCP1 = REPO / ".cache" / "mcp1"


@pytest.fixture(scope="session")
def mcp1_python() -> Path:
    python = MCP1 / "bin" / "python"
    MCP1.parent.mkdir(parents=True, exist_ok=True)
    with open(MCP1.parent / ".mcp1.lock", "w") as lock:  # two test workers make it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = MCP1 / ".installed"
        if not ready.exists():
            made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(MCP1)], capture_output=True, text=True,
                                  timeout=300)
            pip = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "mcp<2"], capture_output=True,
                                 text=True, timeout=600) if made.returncode == 0 else made
            if pip.returncode != 0:
                pytest.skip(f"the MCP SDK 1.x client could not be installed: {(pip.stderr or '')[-500:]}")
            ready.touch()
    return python
