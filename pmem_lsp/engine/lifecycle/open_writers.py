"""Does another program hold a file open for writing? Asked right before pmem renames a new
index over the old one: a writer that truncated the index and pauses before writing its text
back would, after the rename, write into the replaced file, and its text — and every line it
carried — would be lost (issue 40; docs/decisions.md, "Another program holding the index open").

Two ways, the cheap one first (measured in docs/decisions.md):

- a read lease (Linux `fcntl(F_SETLEASE, F_RDLCK)` on a read-only descriptor) is refused with
  EAGAIN while any descriptor of the file, in any process of any user, is open for writing;
  it takes microseconds whatever the size of the root or the number of processes. It is
  released at once. Only the file's owner (or a process with CAP_LEASE) may take one.
- otherwise, `/proc/*/fdinfo`: every descriptor of every process this user may inspect, its
  open flags compared for the index's inode (milliseconds; blind to other users' processes).

Where neither is possible (not Linux) the answer is "no": the compare-and-swap remains.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_F_SETSIG = getattr(fcntl, "F_SETSIG", 10)  # Linux's value; Python names it from 3.x on some builds
# A lease holder is told of an opener by a signal, SIGIO unless set: SIGIO's default action ends
# the process (measured: a writer opening the file in the microseconds pmem holds the lease
# killed it). SIGURG is ignored by default and handled by nothing in pmem.
_BREAK_SIGNAL = getattr(signal, "SIGURG", 23)


def held_for_writing(fd: int) -> bool:
    """True when a descriptor other than pmem's read-only `fd` has the file open for writing."""
    lease = _by_lease(fd)
    if lease is not None:
        return lease
    return _by_proc(fd)


def _by_lease(fd: int) -> bool | None:
    """None: a lease cannot be taken here (not the owner, no lease support)."""
    if fcntl is None or not hasattr(fcntl, "F_SETLEASE"):
        return None
    try:
        fcntl.fcntl(fd, _F_SETSIG, _BREAK_SIGNAL)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EBUSY):
            return True
        return None  # EACCES (not the owner), EINVAL (file system or leases disabled)
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return False


def _by_proc(fd: int) -> bool:
    try:
        st = os.fstat(fd)
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return False
    me, key = str(os.getpid()), (st.st_dev, st.st_ino)
    for pid in pids:
        folder = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:
            continue  # gone, or another user's
        for number in fds:
            if pid == me and number == str(fd):
                continue
            try:
                target = os.stat(f"{folder}/{number}")
            except OSError:
                continue
            if (target.st_dev, target.st_ino) != key:
                continue
            try:
                with open(f"/proc/{pid}/fdinfo/{number}", encoding="ascii") as info:
                    flags = next((int(line.split()[1], 8) for line in info if line.startswith("flags:")), 0)
            except (OSError, ValueError, IndexError):
                continue
            if flags & (os.O_WRONLY | os.O_RDWR):
                return True
    return False
