"""A hostile external writer of a memory root, and the invariants every pmem writer must keep
against it (issue 23; docs/SECURITY.md, "The write protocol").

The writer takes no lock, as an agent's own file tools do not. In a loop it:

- rewrites `_index.md` the ordinary way: truncate, then write in two pieces a millisecond apart
  (on one descriptor, the text it read through that descriptor — so it never loses a line
  itself; what it shows pmem is an index that is momentarily empty or half-written), in bursts
  with short pauses;
- appends a line of its own to `_index.md` now and then (a comment: agents' lines survive
  pmem's writes except in the one window docs/SECURITY.md states, so they are counted, not
  required);
- renames a scratch file of its own back and forth.

`Ledger` is what pmem said it did (and what it refused); `check_invariants` compares the root
with it: every file exists exactly once, one route per routed active file, one record per
archived file, no route or record lost, every operation complete or nothing.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from pmem_lsp.engine.archive_index import record_location
from pmem_lsp.engine.index_edit import find_records, routes_to
from roots import base_files, summary_file, write_root

LIMIT = 120.0  # seconds: the writer stops by itself if a test forgets to stop it


def _hostile(root: str, stop, cycles, append_every: int) -> None:  # a child process
    index = os.path.join(root, "_index.md")
    scratch = [os.path.join(root, "scratch", "a.txt"), os.path.join(root, "scratch", "b.txt")]
    deadline = time.monotonic() + LIMIT
    n = 0
    while not stop.is_set() and time.monotonic() < deadline:
        n += 1
        try:
            fd = os.open(index, os.O_RDWR)
            try:
                chunks = []
                while chunk := os.read(fd, 1 << 16):
                    chunks.append(chunk)
                data = b"".join(chunks)
                os.ftruncate(fd, 0)
                half = len(data) // 2
                os.pwrite(fd, data[:half], 0)  # truncate, then write, in two pieces
                time.sleep(0.001)  # as a writer that flushes as it goes
                os.pwrite(fd, data[half:], half)
            finally:
                os.close(fd)
            if n % append_every == 0:
                with open(index, "a", encoding="utf-8") as fh:
                    fh.write(f"<!-- agent line {n} -->\n")
            if n % 3 == 0:
                src, dst = (scratch[0], scratch[1]) if os.path.exists(scratch[0]) else (scratch[1], scratch[0])
                os.rename(src, dst)
        except OSError:
            pass
        cycles.value = n
        # Bursts of rewrites, then a pause: about 100 rewrites a second, with quiet moments
        # a careful writer can use (a writer that never pauses is refused, nothing changed).
        time.sleep(0.002 if n % 6 else 0.05)


class Hostile:
    """`with Hostile(root):` — the writer runs in its own process while the block runs, and
    has run at least a few cycles by the time the block ends."""

    def __init__(self, root: Path, append_every: int = 3) -> None:
        self.root = root
        ctx = multiprocessing.get_context("fork")
        self.stop = ctx.Event()
        self.cycles = ctx.Value("i", 0)
        self.process = ctx.Process(target=_hostile, args=(str(root), self.stop, self.cycles, append_every), daemon=True)

    def __enter__(self) -> Hostile:
        (self.root / "scratch").mkdir(exist_ok=True)
        (self.root / "scratch" / "a.txt").write_text("scratch\n", encoding="utf-8")
        self.process.start()
        deadline = time.monotonic() + 30
        while self.cycles.value < 3 and time.monotonic() < deadline:
            time.sleep(0.01)  # wait until it is really writing
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.process.join(30)
        if self.process.is_alive():  # pragma: no cover - it stops by itself after LIMIT
            self.process.kill()


# -- the root and the ledger -------------------------------------------------------------
def hostile_root(base: Path, groups: dict[str, int]) -> Path:
    """A root with, per group, `n` routed notes `notes/<group><i>.md` and `n` unrouted ones
    `loose/<group><i>.md` (for `route add`)."""
    files = base_files()
    lines = []
    for group, n in groups.items():
        for i in range(n):
            rel = f"notes/{group}{i}.md"
            files[rel] = summary_file(f"{group} {i}")
            files[f"loose/{group}{i}.md"] = summary_file(f"loose {group} {i}")
            lines.append(f"- [{group} {i}]({rel}) — note {group}{i}\n")
    files["_index.md"] += "\n## Notes\n" + "".join(lines)
    return write_root(base, files)


@dataclass
class Ledger:
    """What pmem answered, per path: the state each path must be in afterwards."""

    active_routed: set[str] = field(default_factory=set)  # active files with exactly one route
    archived: set[str] = field(default_factory=set)  # original paths now in `_archive/` with a record
    unrouted: set[str] = field(default_factory=set)  # active files with no route
    contents: dict[str, str] = field(default_factory=dict)  # files pmem saved: their text
    refused: list[str] = field(default_factory=list)  # every refusal (nothing changed), its message
    applied: int = 0

    def start(self, root: Path) -> None:
        index = (root / "_index.md").read_text(encoding="utf-8")
        for path in root.rglob("*.md"):
            rel = path.relative_to(root).as_posix()
            if rel.startswith(("notes/", "loose/")):
                (self.active_routed if routes_to(index, rel) else self.unrouted).add(rel)

    def done(self, op: str, rel: str, content: str | None = None) -> None:
        self.applied += 1
        if op == "archive":
            self.active_routed.discard(rel)
            self.archived.add(rel)
        elif op == "recover":
            self.archived.discard(rel)
            self.active_routed.add(rel)
        elif op in ("route", "save"):
            self.unrouted.discard(rel)
            self.active_routed.add(rel)
            if content is not None:
                self.contents[rel] = content


def check_invariants(root: Path, ledger: Ledger) -> None:
    index = (root / "_index.md").read_text(encoding="utf-8")
    records = find_records((root / "_archive/_index.md").read_text(encoding="utf-8"))
    by_location: dict[str, int] = {}
    for r in records:
        loc = record_location(r) or ""
        by_location[loc] = by_location.get(loc, 0) + 1
    for rel in ledger.active_routed | ledger.unrouted:
        assert (root / rel).is_file(), f"{rel} is gone"
        assert not (root / "_archive" / rel).exists(), f"{rel} exists twice (also in _archive/)"
        want = 1 if rel in ledger.active_routed else 0
        assert len(routes_to(index, rel)) == want, f"{rel}: {len(routes_to(index, rel))} routes, expected {want}"
        assert f"_archive/{rel}" not in by_location, f"{rel} is active but still has a record"
    for rel in ledger.archived:
        assert (root / "_archive" / rel).is_file(), f"{rel} is not in _archive/"
        assert not (root / rel).exists(), f"{rel} exists twice (also active)"
        assert by_location.get(f"_archive/{rel}") == 1, f"{rel}: {by_location.get(f'_archive/{rel}', 0)} records"
        assert not routes_to(index, rel), f"the route of archived {rel} is still there"
    for rel, text in ledger.contents.items():
        assert (root / rel).read_text(encoding="utf-8") == text, f"{rel} does not hold what was saved"
    assert sum(by_location.values()) == len(ledger.archived), "a record that no archive made"
    leftovers = [p for p in root.rglob("*.pmem-tmp")]
    assert leftovers == [], f"pmem left temporary files: {leftovers}"
    for message in ledger.refused:
        # A refusal at the preview changed nothing by construction; one at execution (or a step
        # that failed) must say that it changed nothing — a partial state would break the above.
        if "at execution" in message or "failed" in message:
            assert "nothing was changed" in message or "nothing was written" in message, \
                f"a refusal that does not say nothing changed: {message}"


# -- a pmem user on the command line --------------------------------------------------------
def pmem(root: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args],
                          input=stdin, capture_output=True, text=True, timeout=120, env={**os.environ, **env})


def cli_writer(root: Path, group: str, env: dict[str, str], ledger: Ledger, lock: threading.Lock, n: int) -> None:
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

    for i in range(n):
        rel = f"notes/{group}{i}.md"
        record("archive", rel, pmem(root, env, "archive", rel, "--reason", "done", "--yes"))
        if i % 2 == 0:
            record("recover", rel, pmem(root, env, "recover", rel, "--yes"))
        new, text = f"notes/new-{group}{i}.md", summary_file(f"New {group} {i}")
        record("save", new, pmem(root, env, "save", new, "--yes", stdin=text), text)
        loose = f"loose/{group}{i}.md"
        record("route", loose, pmem(root, env, "route", "add", loose, "--yes"))
