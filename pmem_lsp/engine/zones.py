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
    if rel.startswith(".") or "/." in rel:  # a part starts with `.`
        return Zone.HIDDEN
    parts = rel.split("/")
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


def hidden_part(rel: str) -> str | None:
    """The first part of `rel` that starts with `.` and so makes it hidden (docs/design.md §3,
    point 4): a file name (`notes/.d目录.md`) as much as a folder (`.obsidian/x.md`). Messages
    name it, because a file that looks ordinary in a listing is otherwise refused without a
    visible reason (docs/decisions.md, "Any name through the lifecycle")."""
    return next((p for p in rel.split("/") if p.startswith(".")), None)


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


def roots_above(path: Path) -> list[Path]:
    """Every folder above `path` that looks like a memory root, the nearest first.

    All of them, not the nearest alone: a root's own folders can look like a root too
    (`_archive/` holds `_archive/_index.md`; a `_core/` or `projects/x/` folder may hold an
    `_index.md`), and the format has no root inside a root, so a file under several is the
    outermost's as much as the nearest's. The hook judges a write under each and the
    strictest answer holds (docs/decisions.md, "Hooks: a root that is not configured")."""
    return [folder for folder in path.parents if looks_like_root(folder)]


def clearly_root(path: Path) -> bool:
    """A folder with an `_index.md` and `_core/` or `_archive/`: a memory root beyond doubt. A
    folder above a root is judged by this, not `looks_like_root`, since `_archive/` alone is
    a common folder name (a synced drive's) and would make a real root look nested."""
    try:
        return (path / INDEX).is_file() and ((path / CORE_DIR).is_dir() or (path / ARCHIVE_DIR).is_dir())
    except OSError:
        return False


def enclosing_root(path: Path) -> Path | None:
    """The outermost folder above `path` that is clearly a root, None when there is none."""
    found = None
    for folder in path.parents:
        if clearly_root(folder):
            found = folder
    return found


def discover_root(option: str | None, environ: dict[str, str] | None = None) -> Path:
    """`--root`, else `PMEM_ROOT`, else `PERSISTENT_MEMORY_HOME` (the format's own name for it
    since v0.10, which its reference CLI reads), else `~/.persistent-memory` (docs/design.md §2).
    The CLI, the MCP server, the language server and the hooks all find their root here."""
    env = os.environ if environ is None else environ
    chosen = option or env.get("PMEM_ROOT") or env.get("PERSISTENT_MEMORY_HOME") or DEFAULT_ROOT
    return Path(os.path.expanduser(chosen)).absolute()


# -- containment: does a path stay inside the root? -----------------------------------------
class Containment:
    """The one answer to "is this inside the memory root?" (docs/design.md §3 point 2), for
    one root: its real path is resolved once, and each folder's once (`_real` caches them).
    A path none of whose parts is a symbolic link is inside without any `realpath`; a part
    that is a link is resolved where it is met. Short-lived: made for one scan, report or
    operation, since a folder may become a link later.

    - `inside(rel)`: what the root-relative `rel` names, links followed, lies in the root.
    - `through_link(rel)`: some part of `rel` is a symbolic link (the lifecycle refuses that).
    - `relative(path)`: an absolute (or cwd-relative) path as root-relative, its folders
      resolved but not its last part (a file that is a link is named by its own path); None
      when it is outside or the root itself.
    """

    __slots__ = ("root", "real", "_real", "_linked")

    def __init__(self, root: Path | str) -> None:
        self.root = os.fspath(root)
        self.real = os.path.realpath(self.root)
        self._real: dict[str, str] = {"": self.real}  # a folder's rel → its real path
        self._linked: dict[str, bool] = {"": False}  # a folder's rel → some part of it is a link

    def _within(self, real: str) -> bool:
        return real == self.real or real.startswith(self.real.rstrip(os.sep) + os.sep)

    def _resolve(self, rel: str) -> tuple[str, bool]:
        """(real path, went through a link) of `rel`, every part looked at once per object."""
        if rel in self._real:
            return self._real[rel], self._linked[rel]
        parts = rel.split("/")
        if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
            # Not a root-relative path as pmem writes one: resolved whole, and never taken as
            # naming what it seems to (so `through_link` says yes).
            return os.path.realpath(os.path.join(self.root, rel)), True
        # The nearest known folder, then each part below it: no recursion, whatever the depth.
        known = len(parts) - 1
        while known > 0 and "/".join(parts[:known]) not in self._real:
            known -= 1
        done = "/".join(parts[:known])
        real, linked = self._real[done], self._linked[done]
        for i in range(known, len(parts)):
            here = f"{real}{os.sep}{parts[i]}" if real != os.sep else f"{os.sep}{parts[i]}"
            try:
                is_link = os.path.islink(here)
            except (OSError, ValueError):
                is_link = False
            if is_link:
                real, linked = os.path.realpath(here), True
            else:
                real = here
            if i < len(parts) - 1:  # a folder: kept for the next path under it
                done = "/".join(parts[: i + 1])
                self._real[done], self._linked[done] = real, linked
        return real, linked

    def inside(self, rel: str) -> bool:
        if not rel or rel == ".":
            return True
        return self._within(self._resolve(rel)[0])

    def through_link(self, rel: str) -> bool:
        return bool(rel) and rel != "." and self._resolve(rel)[1]

    def relative(self, path: Path | str, cwd: Path | str | None = None) -> str | None:
        full = os.path.abspath(os.path.join(cwd or os.getcwd(), os.fspath(path)))
        folder, name = os.path.split(full)
        full = os.path.join(os.path.realpath(folder), name)
        if full == self.real or not self._within(full):
            return None
        return os.path.relpath(full, self.real).replace(os.sep, "/")


def inside_root(root: Path | str, rel: str) -> bool:
    """`Containment(root).inside(rel)`, for one question."""
    return Containment(root).inside(rel)
