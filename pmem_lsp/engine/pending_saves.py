"""A save's proposed text, kept for the command a person runs to apply it (`pmem mcp`).

A preview of a save hands the agent a command for the person (`pmem … save PATH
--content-file F`); F holds the proposed text in the user's cache folder (0700; never the root,
which agents read). It goes when the change is applied — through `memory_apply`, or by the
person's command — and otherwise after `KEEP_SECONDS`, as new ones come.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path

from .user_cache import pmem_cache_dir

FOLDER = "pending"
KEEP_SECONDS = 7 * 86400


def _folder() -> Path:
    return Path(pmem_cache_dir()) / FOLDER


def path_for(root: Path, text: str) -> Path:
    digest = hashlib.sha256(f"{root}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return _folder() / f"save-{digest}.md"


def keep(root: Path, text: str) -> Path:
    """Write `text` for a save into `root`, readable by the user only; drop expired ones."""
    folder = _folder()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    now = time.time()
    for old in folder.glob("*.md"):
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > KEEP_SECONDS:
                old.unlink()
    path = path_for(root, text)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
        out.write(text)
    return path


def forget(root: Path, text: str) -> None:
    """The save of `text` into `root` was applied: its kept text is no longer pending."""
    with contextlib.suppress(OSError):
        path_for(root, text).unlink()


def forget_file(content_file: str) -> None:
    """The person's `--content-file` was applied: removed when it is a pending save's file
    (a file of their own elsewhere is theirs and stays)."""
    path = Path(os.path.abspath(content_file))
    if path.parent == _folder().absolute() and path.name.startswith("save-") and path.suffix == ".md":
        with contextlib.suppress(OSError):
            path.unlink()
