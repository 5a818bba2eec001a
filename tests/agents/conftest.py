"""Fixtures of the agent tests.

- `agent_clients` — the real Claude Code and Codex command-line clients from the npm registry,
  version-pinned, installed once into `.cache/agent-clients` (as the editors' tools are
  installed by the tests' set-up); the test is skipped, saying why, where npm or the registry
  is missing. (Claude Code's install script puts its binary for this platform in place.)
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
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
