"""The user's cache folder: where pmem keeps what must never be inside a memory root.

Agents and sync tools read everything in the root, so pmem's own records — the CLI's check
records (`cli/check_cache.py`) — live here: `$PMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/pmem`,
else `~/.cache/pmem`. The writers' lock is deliberately not here: two writers with different
environments would find different folders, so it is the root's own (`lifecycle/lock.py`).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import time

from .env_seconds import env_seconds


def pmem_cache_dir() -> str:
    explicit = os.environ.get("PMEM_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME")
    # The XDG spec: a relative path is invalid and is ignored.
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pmem")


# -- what the check cache and the per-file records both key on -----------------------------
def disabled_by_env() -> bool:
    """`PMEM_NO_CACHE`: neither the check cache nor the per-file records are read or written."""
    return os.environ.get("PMEM_NO_CACHE", "") not in ("", "0")


def racy_seconds() -> float:
    """A file changed less than this before a run is never recorded (`PMEM_CACHE_RACY_SECONDS`)."""
    return env_seconds("PMEM_CACHE_RACY_SECONDS", 2.0)


_STAMP: list[str] = []


def package_stamp() -> str:
    """The installed package's modules by path, size and mtime (a development checkout
    changes without its version changing); computed once per process."""
    if not _STAMP:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        rows = []
        for folder, dirs, files in os.walk(here):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in files:
                if name.endswith(".py"):
                    st = os.stat(os.path.join(folder, name))
                    rows.append((os.path.relpath(os.path.join(folder, name), here), st.st_size, st.st_mtime_ns))
        rows.sort()
        _STAMP.append(hashlib.sha256(marshal.dumps(rows)).hexdigest())
    return _STAMP[0]


def time_zone() -> tuple:
    """What turns an mtime into a local day: the TZ setting and the zone's offsets."""
    return os.environ.get("TZ"), time.tzname, time.timezone, time.altzone, time.daylight


def top_folders() -> tuple[str, ...]:
    """The folders at `/` (a path in a note may point at one: PM403 asks the system)."""
    try:
        return tuple(sorted(e.name for e in os.scandir("/") if e.is_dir()))
    except OSError:
        return ()


def own_folder(folder: str) -> bool:
    """The folder is this user's and no one else can write it: a shared or planted folder
    could hand a check someone else's output (and a record is a pickle, which is code)."""
    try:
        st = os.stat(folder)
    except OSError:
        return False
    getuid = getattr(os, "getuid", None)  # none on Windows: the folder's ACL decides there
    return (getuid is None or st.st_uid == getuid()) and not st.st_mode & 0o022
