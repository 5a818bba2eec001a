"""Issue 40 as it was found: `pmem save`, `route add` and `recover --yes` run as processes while
another process has `_index.md` truncated and pauses before writing it back through the same
descriptor. pmem refuses, says what it saw and that nothing was changed; the writer finishes,
and its text — every route, plus its own line — is what `_index.md` holds. On main pmem took
the empty file as its base after ~1 s, renamed a one-line index over it and said "Done"; the
writer's text went to the replaced file and every route was lost.

The writer waits for a file to appear, not for a time: it finishes once pmem has answered."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from hostile import pmem
from roots import base_files, summary_file, write_root

pytestmark = pytest.mark.e2e  # `pmem` runs as a subprocess

BOUND = 60.0  # seconds: reached only when a test fails
WRITERS_LINE = "<!-- the other writer's own line -->"

# Open, read, truncate, say so, pause (until told), write the whole text plus a line, close.
STALLED_WRITER = """
import os, sys, time
index, truncated, go_on, line = sys.argv[1:]
fd = os.open(index, os.O_RDWR)
text = b""
while chunk := os.read(fd, 65536):
    text += chunk
os.ftruncate(fd, 0)
open(truncated, "w").close()
deadline = time.monotonic() + 60
while not os.path.exists(go_on) and time.monotonic() < deadline:
    time.sleep(0.01)
os.pwrite(fd, text + line.encode() + b"\\n", 0)
os.close(fd)
"""


def a_root(base: Path) -> Path:
    files = base_files()
    for i in range(4):
        files[f"notes/a{i}.md"] = summary_file(f"A {i}")
    files["loose.md"] = summary_file("Loose")
    files["_index.md"] += "\n## Notes\n" + "".join(f"- [A {i}](notes/a{i}.md) — note a{i}\n" for i in range(4))
    return write_root(base, files)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("op", ["save", "route", "recover"])
def test_a_writer_paused_mid_rewrite_loses_nothing_and_pmem_changes_nothing(tmp_path: Path, op: str):
    root = a_root(tmp_path / "memory")
    env = {"PMEM_CACHE_DIR": str(tmp_path / "cache"), "PMEM_SETTLE_LIMIT": "1"}  # a short wait, then refuse
    if op == "recover":
        archived = pmem(root, env, "archive", "notes/a3.md", "--reason", "done", "--yes")
        assert archived.returncode == 0, archived.stderr
    args = {"save": ("save", "notes/new.md", "--yes"), "route": ("route", "add", "loose.md", "--yes"),
            "recover": ("recover", "_archive/notes/a3.md", "--yes")}[op]
    before = tree(root)
    truncated, go_on = tmp_path / "truncated", tmp_path / "go-on"
    writer = subprocess.Popen([sys.executable, "-c", STALLED_WRITER, str(root / "_index.md"), str(truncated),
                               str(go_on), WRITERS_LINE])
    try:
        deadline = time.monotonic() + BOUND
        while not truncated.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert truncated.exists(), "the writer never truncated the index"
        result = pmem(root, env, *args, stdin=summary_file("New") if op == "save" else None)
    finally:
        go_on.touch()
        writer.wait(BOUND)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Done" not in result.stdout and "Traceback" not in result.stderr
    assert "nothing was changed" in result.stderr and "_index.md" in result.stderr, result.stderr
    after = tree(root)
    assert after.pop("_index.md") == before.pop("_index.md") + f"{WRITERS_LINE}\n".encode()
    assert after == before  # no note created, moved or recorded
