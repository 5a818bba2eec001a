"""A memory file as it was before an agent's write, kept by pre-write for post-write.

post-write reports what a write changed — the problems it brought into the file, the routes an
`_index.md` write removed — not the file's older problems, which the agent did not cause and
would be told to fix again on every write. That needs the text before the write. Claude Code
sends it as `tool_response.originalFile` when it has it; when it does not (a `Write` over the
file, another client), pre-write's copy stands in: the file as pre-write saw it, keyed by the
root, the session and the tool call (`tool_use_id`, which both hooks of one call carry), in the
user's cache folder (0700; never the root, which agents read); post-write takes it back once.
Without either, an index write that left no route at all would be the quietest write. A kept
text older than a day is dropped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path
from typing import Any

from .user_cache import pmem_cache_dir

FOLDER = "before-write"
KEEP_SECONDS = 24 * 3600


def _call_key(root: Path, data: dict[str, Any]) -> str | None:
    """The tool call `data` is a hook payload of; None when it names none."""
    call = data.get("tool_use_id")
    if not isinstance(call, str) or not call:
        return None
    session = data.get("session_id")
    payload = "\0".join((os.path.realpath(root), session if isinstance(session, str) else "", call))
    return hashlib.sha256(payload.encode("utf-8", "surrogateescape")).hexdigest()


def keep(root: Path, data: dict[str, Any], text: str | None) -> None:
    """pre-write: keep the file's text (`None`: it did not exist) for this call's post-write.
    Best effort: a cache that cannot be written only costs the report its before-text."""
    key = _call_key(root, data)
    if key is None or text is None:
        return
    folder = Path(pmem_cache_dir()) / FOLDER
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        _drop_old(folder)
        temp = folder / f".{key}.{os.getpid()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as out:
            out.write(text)
        os.replace(temp, folder / key)


def take(root: Path, data: dict[str, Any]) -> str | None:
    """post-write: the text pre-write kept for this call, removed as it is read."""
    key = _call_key(root, data)
    if key is None:
        return None
    path = Path(pmem_cache_dir()) / FOLDER / key
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with contextlib.suppress(OSError):
        os.unlink(path)
    with os.fdopen(fd, "r", encoding="utf-8", errors="surrogateescape", newline="") as kept:
        try:
            return kept.read()
        except OSError:
            return None


def _drop_old(folder: Path) -> None:
    now = time.time()
    with os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if now - entry.stat(follow_symlinks=False).st_mtime > KEEP_SECONDS:
                    os.unlink(entry.path)
