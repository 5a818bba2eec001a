"""Writing a cache file after the command's answer, in a forked child (issue 44).

The first ordinary `pmem check` of a root (after `--no-cache`, or with an empty cache folder)
used to be slower than a cold check: after printing, it walked the root again for the check
cache and pickled every file's record (0.4-0.7 s on the 10k root), and whoever ran it — an
agent's hook, CI, a terminal — waited for that before the process ended. The output is already
flushed by then, so the writing moves to a forked child that holds none of the caller's pipes:
the caller sees the process end as soon as the answer is out.

A run that starts while such a child is still writing must not miss the record only because
it is half written (the next check would be cold again, and tests that run two checks back to
back could not rely on the first one's record). The child holds an exclusive `flock` on
`<record>.lock` until its record is in place; a reader takes the lock shared before it opens
the record, so it waits for a writer that is busy — never longer than `WAIT_FOR_WRITER`
seconds, after which it reads whatever is there (an older record or none: a miss, never an
error). When no writer is busy the lock costs one `open` and one `flock`.

Forked only where that is safe and useful: on Linux, in a process with one thread (a process
with threads must not fork: the server writes in its own thread instead), and unless
`PMEM_CACHE_WRITE=foreground`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator

WAIT_FOR_WRITER = 10.0  # seconds a reader waits for a busy writer before reading what is there


def _lock_path(record: str) -> str:
    return record + ".lock"


def _open_lock(record: str) -> int | None:
    try:
        return os.open(_lock_path(record), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def no_writer_busy(record: str) -> Iterator[None]:
    """Wait (at most `WAIT_FOR_WRITER` s) until no child is writing `record`, then read it."""
    try:
        import fcntl
    except ImportError:  # not POSIX: writes are never forked there
        yield
        return
    if not os.path.exists(_lock_path(record)):
        yield  # never written in the background: nothing to wait for
        return
    fd = _open_lock(record)
    if fd is None:
        yield
        return
    try:
        deadline = time.monotonic() + WAIT_FOR_WRITER
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break  # a writer stuck this long: read what is there
                time.sleep(0.01)
            except OSError:
                break
        yield
    finally:
        os.close(fd)  # also releases the shared lock


def _can_fork() -> bool:
    return (sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1
            and os.environ.get("PMEM_CACHE_WRITE", "") != "foreground")


def write_after_answer(record: str, write: Callable[[], None]) -> None:
    """Run `write()` (which puts `record` in place) in a forked child holding `record`'s lock, and
    return at once; where forking is not possible, run it here."""
    if not _can_fork():
        write()
        return
    import fcntl

    folder = os.path.dirname(record)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return  # no cache folder: nothing can be written
    fd = _open_lock(record)
    if fd is None:
        write()
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another child still writing this record: after it
    except OSError:
        os.close(fd)
        write()
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # what is buffered is the parent's to write, once
    pid = os.fork()
    if pid != 0:
        os.close(fd)  # the child's copy of the descriptor keeps the lock
        return
    status = 1
    try:
        # Hold none of the caller's pipes: whoever reads the answer sees its end with the parent's.
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        with contextlib.suppress(OSError):
            os.nice(10)  # work nobody waits for: the parent's exit and the caller's next command go first
        write()
        status = 0
    finally:
        os._exit(status)  # never back into the caller's code, its exit handlers or buffers


def wait_for_writers(folder: str) -> None:
    """Wait until no child is writing a record under `folder` (a caller about to look at the
    cache files themselves, or to delete the folder: tests, benchmarks)."""
    try:
        import fcntl
    except ImportError:
        return
    for here, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith(".lock"):
                try:
                    fd = os.open(os.path.join(here, name), os.O_RDONLY)
                except OSError:
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH)
                finally:
                    os.close(fd)
