"""The `git` command, driven with plumbing on the store's bare repository and none of the
user's configuration: a global `core.hooksPath`, `commit.gpgsign` or an alias must never change
what history records (or ask for a passphrase)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


class HistoryOff(Exception):
    """History cannot be used here; the message says why (shown by `pmem history`)."""


GIT_TIMEOUT = 60.0  # a store gc on a large root; a stuck git must not hang a write forever


class Git:
    def __init__(self, store: Path) -> None:
        git = shutil.which("git")
        if git is None:
            raise HistoryOff("history is off: the `git` command is not on PATH (history keeps its entries "
                             "in git's object store)")
        self.exe = git
        self.store = store
        self.git_dir = store / "repo.git"
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(store),
            "GIT_DIR": str(self.git_dir),
            "GIT_INDEX_FILE": str(store / "index"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "pmem", "GIT_AUTHOR_EMAIL": "pmem@localhost",
            "GIT_COMMITTER_NAME": "pmem", "GIT_COMMITTER_EMAIL": "pmem@localhost",
            "LC_ALL": "C",
        }

    def run(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
            check: bool = True) -> bytes:
        try:
            done = subprocess.run([self.exe, *args], input=input, capture_output=True,
                                  env={**self.env, **(env or {})}, timeout=GIT_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise HistoryOff(f"history is off: git could not run ({exc})") from None
        if check and done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise HistoryOff(f"history store error: git {args[0]}: {message[-1] if message else done.returncode}")
        return done.stdout

    def ok(self, *args: str) -> bool:
        """Whether `git args` succeeds (a question, not a step: its failure is an answer)."""
        try:
            return subprocess.run([self.exe, *args], capture_output=True, env=self.env,
                                  timeout=GIT_TIMEOUT, check=False).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False
