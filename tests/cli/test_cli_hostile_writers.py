"""`pmem save`, `route add`, `archive --yes` and `recover --yes` against a hostile external writer
(tests/hostile.py: truncate-then-write of `_index.md`, appends, renames) and against a second pmem
with another cache folder, at once (issue 23). Afterwards every invariant holds: every file
exists once, one route per routed active file, one record per archived file, no route or record
lost compared with what each pmem said, every operation complete or nothing."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from hostile import Hostile, Ledger, check_invariants, cli_writer, hostile_root, pmem

pytestmark = pytest.mark.e2e  # every test here runs `pmem` as a subprocess

N = 2  # notes per writer and per kind of operation: bounded, a few seconds


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
            cli_writer(root, group, envs[group], ledger, lock, N)
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


def test_archive_from_a_read_only_folder_leaves_the_file_once_and_says_so(tmp_path: Path):
    """`pmem archive --yes` of a file whose folder cannot be changed (immutable): the hard link
    into `_archive/` is undone, the file is there once, the index and records are untouched, and
    the message's "nothing was changed" is true."""
    root = hostile_root(tmp_path / "memory", {"r": 1})
    folder = root / "notes"
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)],
                                                        capture_output=True).returncode != 0:
        pytest.skip("needs root and `chattr +i` (an immutable folder) on this file system")
    try:
        before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
        result = pmem(root, {}, "archive", "notes/r0.md", "--yes")
        after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    assert result.returncode == 2 and "nothing was changed" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert after == before and not (root / "_archive/notes/r0.md").exists()
