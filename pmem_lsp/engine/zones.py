"""Where a path lives in a memory root (docs/design.md §2) and how roots are found."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path

INDEX = "_index.md"
CORE_DIR = "_core"
ARCHIVE_DIR = "_archive"
ARCHIVE_INDEX = "_archive/_index.md"
TRASH_DIR = "_archive/_trash"
REQUIRED_CORE_FILES = ("_core/profile.md", "_core/preferences.md")

DEFAULT_ROOT = "~/.persistent-memory"


class Zone(str, Enum):
    CORE = "core"
    INDEX = "index"
    ACTIVE = "active"
    ARCHIVE = "archive"
    ARCHIVE_INDEX = "archive-index"
    TRASH = "trash"
    HIDDEN = "hidden"


def zone_of(rel: str) -> Zone:
    """The zone of a root-relative POSIX path (no leading `./`)."""
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        return Zone.HIDDEN
    head = parts[0]
    if head == CORE_DIR:
        return Zone.CORE
    if rel == INDEX:
        return Zone.INDEX
    if head == ARCHIVE_DIR:
        if rel == ARCHIVE_INDEX:
            return Zone.ARCHIVE_INDEX
        if len(parts) > 1 and parts[1] == "_trash":
            return Zone.TRASH
        return Zone.ARCHIVE
    return Zone.ACTIVE


def is_markdown(rel: str) -> bool:
    return rel.lower().endswith(".md")


def archive_location(original: str) -> str:
    return f"{ARCHIVE_DIR}/{original}"


def trash_location(original: str) -> str:
    return f"{TRASH_DIR}/{original}"


def original_of(location: str) -> str | None:
    """The original active path of a file in `_archive/` or `_archive/_trash/`."""
    if location.startswith(TRASH_DIR + "/"):
        return location[len(TRASH_DIR) + 1 :]
    if location.startswith(ARCHIVE_DIR + "/"):
        return location[len(ARCHIVE_DIR) + 1 :]
    return None


def looks_like_root(path: Path) -> bool:
    """A folder is a memory root when it has any of the format's own entries."""
    try:
        return (
            (path / INDEX).is_file()
            or (path / CORE_DIR).is_dir()
            or (path / ARCHIVE_DIR).is_dir()
        )
    except OSError:
        return False


def discover_root(option: str | None, environ: dict[str, str] | None = None) -> Path:
    """`--root`, else `PMEM_ROOT`, else `PERSISTENT_MEMORY_HOME` (the format's own name for it
    since v0.10, which its reference CLI reads), else `~/.persistent-memory` (docs/design.md §2).
    The CLI, the MCP server, the language server and the hooks all find their root here."""
    env = os.environ if environ is None else environ
    chosen = option or env.get("PMEM_ROOT") or env.get("PERSISTENT_MEMORY_HOME") or DEFAULT_ROOT
    return Path(os.path.expanduser(chosen)).absolute()
