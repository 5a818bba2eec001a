"""The user's cache folder: where pmem keeps what must never be inside a memory root.

Agents and sync tools read everything in the root, so pmem's own records — the CLI's check
records (`cli/check_cache.py`) — live here: `$PMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/pmem`,
else `~/.cache/pmem`. The writers' lock is deliberately not here: two writers with different
environments would find different folders, so it is the root's own (`lifecycle/lock.py`).
"""

from __future__ import annotations

import os


def pmem_cache_dir() -> str:
    explicit = os.environ.get("PMEM_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME")
    # The XDG spec: a relative path is invalid and is ignored.
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pmem")
