"""One advisory lock per memory root, so that pmem's writers never interleave (docs/design.md §5.1).

Every pmem process that changes a root — the CLI, the language server, anything later — holds
this lock from the moment it re-validates a confirmed plan until its last step is done: two
of them archiving different notes at once run one after the other, and the second plans on
what the first wrote. The lock is `flock` on a file named after the root's real path in the
user's cache folder (`engine/user_cache.py`: `~/.cache/pmem/locks/`), not in the root: a lock file there would show in
`git status` and in sync tools. Where the cache folder cannot be written, a hidden file in the
root (`.pmem.lock`) is used instead.

Writers that are not pmem (an agent's own file tools) do not take it; for them each index
write is compare-and-swap (`fs_applier.write_atomic`), which narrows their window to the
instant between the last read and the rename.
"""

from __future__ import annotations

import errno
import hashlib
import os
import time
from pathlib import Path

from ..user_cache import pmem_cache_dir
from .safety import Refusal

LOCK_FILE = ".pmem.lock"
LOCKED = "locked"  # the refusal's rule: another pmem is changing this root
WAIT = 30.0  # seconds to wait for another writer before refusing

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock, compare-and-swap only
    fcntl = None  # type: ignore[assignment]


def lock_path(root: Path) -> Path:
    digest = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return Path(pmem_cache_dir()) / "locks" / f"{digest}.lock"


def _open_lock_file(root: Path) -> int:
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    path = lock_path(root)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return os.open(path, flags, 0o600)
    except OSError:
        return os.open(root / LOCK_FILE, flags, 0o600)


class RootLock:
    """`with RootLock(root):` — exclusive among pmem processes (and threads) on this root."""

    def __init__(self, root: Path, wait: float = WAIT) -> None:
        self.root = root
        self.wait = wait
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never blocks. False when another writer holds it."""
        if fcntl is None:
            return True
        if self._fd is None:
            self._fd = _open_lock_file(self.root)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            raise
        return True

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait
        delay = 0.005
        while not self.try_acquire():
            if time.monotonic() > deadline:
                self.release()
                raise busy()
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def release(self) -> None:
        if self._fd is not None:
            try:
                if fcntl is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> RootLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def busy() -> Refusal:
    return Refusal(LOCKED, f"another pmem process is changing this memory root (it held the lock for over "
                           f"{WAIT:.0f} s); nothing was changed — try again when it is done")
