"""One advisory lock per memory root, so that pmem's writers never interleave (docs/design.md §5.1).

Every pmem process that changes a root — the CLI, `pmem mcp`, the language server — holds this
lock from the moment it re-validates a confirmed plan until its last step is done (or undone):
two of them archiving different notes at once run one after the other, and the second plans on
what the first wrote.

The lock belongs to the root, not to the caller: it is `flock` on a descriptor of the root
folder itself. Every pmem writer of a root opens that same folder, whatever its environment
(`XDG_CACHE_HOME`, `PMEM_CACHE_DIR`, `HOME`), its settings or whether a cache folder can be
written, so they all meet on one lock; and it creates no file at all, so no agent, sync tool or
`git status` can ever see it or read it as memory (docs/SECURITY.md, "The writers' lock").

Writers that are not pmem (an agent's own file tools) do not take it; for them each index
write is compare-and-swap on a settled text (`fs_applier.write_index`), which narrows their
window to the instant between the last read and the rename.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from .safety import Refusal

LOCKED = "locked"  # the refusal's rule: another pmem is changing this root
WAIT = 30.0  # seconds to wait for another writer before refusing

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock, compare-and-swap only
    fcntl = None  # type: ignore[assignment]


def lock_target(root: Path) -> Path:
    """What is locked: the root folder itself, by its real path (a symlinked root and its target
    are one lock)."""
    return Path(os.path.realpath(root))


def _open_root(root: Path) -> int:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(lock_target(root), flags)


class RootLock:
    """`with RootLock(root):` — exclusive among pmem processes (and threads: each lock is its own
    open file description) on this root."""

    def __init__(self, root: Path, wait: float = WAIT) -> None:
        self.root = root
        self.wait = wait
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never blocks. False when another writer holds it."""
        if fcntl is None:
            return True
        if self._fd is None:
            self._fd = _open_root(self.root)
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
                raise busy(self.wait)
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


def busy(wait: float = WAIT) -> Refusal:
    return Refusal(LOCKED, f"another pmem process is changing this memory root (it held the lock for over "
                           f"{wait:.0f} s); nothing was changed — try again when it is done")
