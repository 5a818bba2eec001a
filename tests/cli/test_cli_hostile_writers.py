"""`pmem save`, `route add`, `archive --yes` and `recover --yes` against a hostile external writer
(tests/hostile.py: truncate-then-write of `_index.md`, appends, renames) and against a second pmem
with another cache folder, at once (issue 23). Afterwards every invariant holds: every file
exists once, one route per routed active file, one record per archived file, no route or record
lost compared with what each pmem said, every operation complete or nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hostile import Hostile, Ledger, check_invariants, hostile_root
from roots import summary_file

pytestmark = pytest.mark.e2e  # every test here runs `pmem` as a subprocess

N = 2  # notes per writer and per kind of operation: bounded, a few seconds


def pmem(root: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args],
                          input=stdin, capture_output=True, text=True, timeout=120, env={**os.environ, **env})


def writer(root: Path, group: str, env: dict[str, str], ledger: Ledger, lock: threading.Lock) -> None:
    """One pmem user: saves, routes, archives and recovers its own group's notes."""
    def record(op: str, rel: str, result: subprocess.CompletedProcess, content: str | None = None) -> None:
        with lock:
            if result.returncode == 0:
                assert "Done" in result.stdout, result.stdout
                ledger.done(op, rel, content)
            else:
                assert result.returncode == 2, (op, rel, result.returncode, result.stderr)
                assert "Traceback" not in result.stderr
                ledger.refused.append(result.stderr)

    for i in range(N):
        rel = f"notes/{group}{i}.md"
        record("archive", rel, pmem(root, env, "archive", rel, "--reason", "done", "--yes"))
        if i % 2 == 0:
            record("recover", rel, pmem(root, env, "recover", rel, "--yes"))
        new, text = f"notes/new-{group}{i}.md", summary_file(f"New {group} {i}")
        record("save", new, pmem(root, env, "save", new, "--yes", stdin=text), text)
        loose = f"loose/{group}{i}.md"
        record("route", loose, pmem(root, env, "route", "add", loose, "--yes"))


def test_two_pmems_with_different_cache_folders_and_a_hostile_writer_lose_nothing(tmp_path: Path):
    root = hostile_root(tmp_path / "memory", {"a": N, "b": N})
    ledger = Ledger()
    ledger.start(root)
    lock = threading.Lock()
    envs = {"a": {"PMEM_CACHE_DIR": str(tmp_path / "cache-a")},
            "b": {"PMEM_CACHE_DIR": "", "XDG_CACHE_HOME": str(tmp_path / "xdg-b"), "HOME": str(tmp_path / "home-b")}}
    errors: list[BaseException] = []

    def run(group: str) -> None:
        try:
            writer(root, group, envs[group], ledger, lock)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with Hostile(root) as hostile:
        threads = [threading.Thread(target=run, args=(g,)) for g in envs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
    assert not errors, errors
    assert hostile.cycles.value > 10  # it really was writing all along
    check_invariants(root, ledger)
    assert ledger.applied, f"nothing was applied at all: {ledger.refused}"
