"""The per-file work of a large root in several processes (issue 28: `pmem check` and `pmem
health` on many cores).

What a file's text alone gives — its parse, the text checks' findings, its links, source
pointers, near-duplicate sketch, dates and the place of a whole-file finding — is kept in its
`FileEntry.cache` (engine/root_state.py), and the analysis reads it from there. `warm` fills
those caches for many files at once: it forks workers after the scan (the texts are already
in memory and shared with them), each runs the analysis's own per-file function over its
share of the files, and sends back each file's cache (pickled; the parsed documents stay in
the worker). This process takes a share too, then reads the workers' caches into its entries.

Nothing here decides a finding: a worker computes exactly what the analysis would compute in
this process, with the same functions. A worker that fails, a cache that cannot be pickled or
a platform without `fork` leaves the caches of its files empty, and the analysis computes
them here as it always does: the result is the same, only slower.

When: `jobs_for` — a root of at least `min_files()` files (`MIN_FILES`, or `MIN_FILES_NATIVE`
with the native core) and more than one free core (of those
this process may run on, `os.sched_getaffinity`, less what the load average says is busy), at
most one process per `FILES_PER_JOB` files; `PMEM_JOBS` overrides (1: never; N: N processes
whatever the root's size and the load). Linux only (`fork`; macOS and
Windows start processes by `spawn`, which would read and parse everything again).
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .native import CORE as _NATIVE

if TYPE_CHECKING:
    from .root_state import FileEntry

ENV = "PMEM_JOBS"
# Measured on the generated roots (docs/decisions.md, "The cold check on many cores"): the
# critical path of a check on two processes, in CPU time, at 1,000 files 0.43-0.50 -> 0.36-0.38 s,
# at 2,000 files 0.79-0.85 -> 0.59-0.64 s, at 10,000 3.00-3.12 -> 1.94-1.99 s, for 10-30% more
# CPU in all: below 2,000 files what it saves is not worth a second process.
MIN_FILES = 2000
FILES_PER_JOB = 1000
# With the native core (docs/native.md) a file's own work is a fraction of what it was, and the
# pool's fixed costs (the fork, pickling every file's cache back) are not: on this two-core
# machine, 10,000 files took 1.05-1.15x as long in two processes as in one, 20,000 files 0.99x
# (medians of interleaved rounds, docs/decisions.md, "The pool and the native core").
MIN_FILES_NATIVE = 20_000


def min_files() -> int:
    """The smallest root the pool is used for without `PMEM_JOBS`."""
    return MIN_FILES if _NATIVE is None else MIN_FILES_NATIVE


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def busy() -> float:
    """How busy the machine is, 0 (idle) to 1 (a process on every core) or more: the last
    minute's load average per core."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (AttributeError, OSError):
        return 0.0


def free_cores() -> int:
    """The cores this process may run on that are not busy with other work, itself counted
    as free (a loaded machine: 1; an idle one: every core)."""
    n = cores()
    return max(1, min(n, int(n * max(0.0, 1.0 - busy()) + 1.0)))


def jobs_for(files: int, env: Mapping[str, str] = os.environ) -> tuple[int, str | None]:
    """(processes for the per-file work of a root of `files` files, a warning or None).
    `PMEM_JOBS`: unset, empty, `0` or `auto` decide by the root and the free cores (a root of
    `min_files()` files or more, one process per `FILES_PER_JOB` files at most); a number N ≥ 1
    is N processes; anything else is one process, with a warning that says so."""
    raw = env.get(ENV, "").strip()
    if raw.lower() in ("", "0", "auto"):
        if files < min_files() or not can_fork():
            return 1, None
        return max(1, min(free_cores(), files // FILES_PER_JOB)), None
    try:
        wanted = int(raw)
    except ValueError:
        wanted = -1
    if wanted < 1:
        return 1, f"{ENV}={raw!r} is not a number of processes; checking in one"
    return (wanted if can_fork() else 1), None


def can_fork() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def _weight(entry: FileEntry) -> int:
    return len(entry.text or "") + 200  # a file costs something whatever its size


def _shares(entries: list[FileEntry], jobs: int, here: list[FileEntry]) -> list[list[FileEntry]]:
    """`entries` in `jobs` shares of about equal text (largest first, each to the lightest);
    `here` all in the first share (this process's), counted in its load."""
    shares: list[list[FileEntry]] = [list(here)] + [[] for _ in range(jobs - 1)]
    loads = [sum(map(_weight, here))] + [0] * (jobs - 1)
    for entry in sorted(entries, key=lambda e: -len(e.text or "")):
        i = loads.index(min(loads))
        shares[i].append(entry)
        loads[i] += _weight(entry)
    return shares


def warm(entries: list[FileEntry], fill: Callable[[FileEntry], None], jobs: int,
         work: Counter[str] | None = None, here: list[FileEntry] | None = None) -> Counter[str]:
    """Run `fill(entry)` for every entry, in `jobs` processes, and keep what each run left
    in the entry's cache. `here`: entries filled in this process, during the workers' shares
    (what their fill leaves besides the cache is wanted here). `work`: the caller's work
    counter, which `fill` adds to; returns what the workers added to theirs (this process's
    share counts in `work` itself)."""
    done: Counter[str] = Counter()
    here = here or []
    jobs = min(jobs, len(entries))
    if jobs < 2 or not can_fork() or threading.active_count() > 1:
        return done  # a process with threads must not fork; the analysis fills the caches itself
    import gc
    import pickle

    shares = _shares(entries, jobs, here)
    children: list[tuple[int, int, list[FileEntry]]] = []  # (pid, read end, share)
    gc.freeze()  # the workers inherit every object: no collection of them copies the pages
    try:
        for share in shares[1:]:
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: never returns to the caller
                status = 1
                try:
                    os.close(read)
                    status = _worker(share, fill, work, write)
                finally:
                    os._exit(status)
            os.close(write)
            children.append((pid, read, share))
    finally:
        gc.unfreeze()
    try:
        for entry in shares[0]:
            fill(entry)
        for pid, read, share in children:
            with os.fdopen(read, "rb") as pipe:
                data = pipe.read()
            _, status = os.waitpid(pid, 0)
            if status != 0 or not data:
                continue  # the analysis computes this share here
            try:
                caches, counted = pickle.loads(data)
            except Exception:  # any bad answer: computed here instead
                continue
            for entry, cache in zip(share, caches, strict=True):
                for key, value in cache.items():
                    entry.cache.setdefault(key, value)
            done.update(counted)
    finally:
        for pid, _read, _share in children:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except (ChildProcessError, ProcessLookupError):
                pass  # reaped above
    return done


def _worker(share: list[FileEntry], fill: Callable[[FileEntry], None], work: Counter[str] | None,
            write: int) -> int:
    import contextlib
    import pickle

    before = Counter(work or {})
    for entry in share:
        with contextlib.suppress(Exception):  # this process meets it again where it matters
            fill(entry)
    counted = Counter(work or {})
    counted.subtract(before)
    with os.fdopen(write, "wb") as pipe:
        pickle.dump(([entry.cache for entry in share], +counted), pipe, protocol=pickle.HIGHEST_PROTOCOL)
    return 0
