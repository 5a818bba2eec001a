"""Memory status (spec "Memory Status"): what agents load — read from `_core/` and `_index.md` only.

`_index.md` is read only when it stays inside the root (a symbolic link out of it is reported,
never read) and only up to the cap `pmem check` has (`MAX_ANALYSED_BYTES`). Routed files are
only looked at with `stat` (their size), never read. Containment is `zones.Containment`: the
root is resolved once, and a path with no symbolic link in it needs no `realpath`. Targets that are not
active memory files, leave the root, or are routed twice are counted once or not at all.
The active files are counted by listing the active folders (names and sizes, never
contents); `_archive/` is never listed, opened or even looked at.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .folders import walk
from .index_routes import parse_index
from .memory_file import MemoryFile
from .names import one_line, shown
from .root_state import MAX_ANALYSED_BYTES, _cut, decode
from .secrets import mask_secrets, mask_text
from .zones import ARCHIVE_DIR, CORE_DIR, INDEX, Containment, Zone, is_markdown, zone_of

LEADS_OUT = "a symbolic link that leads out of the memory root; not read"


@dataclass(frozen=True)
class RoutedFile:
    path: str  # as routed (normalised), or as written when it is not a root path
    description: str
    size: int | None  # None: missing, unreadable, or not an active memory file
    note: str = ""  # why it is not counted


@dataclass(frozen=True)
class MemoryStatus:
    root: Path
    core: tuple[tuple[str, int], ...]
    index_error: str | None  # `_index.md` missing or unreadable
    routes: tuple[RoutedFile, ...]
    active_files: tuple[tuple[str, int], ...] = ()  # every active Markdown file and its size
    outside: tuple[str, ...] = ()  # `_core/` files (or `_core/` itself) that are links out of the root
    index_size: int = 0  # `_index.md`'s whole size, when only its first MAX_ANALYSED_BYTES were read

    @property
    def core_bytes(self) -> int:
        return sum(size for _, size in self.core)

    @property
    def active(self) -> list[RoutedFile]:
        return [r for r in self.routes if r.size is not None]

    @property
    def active_bytes(self) -> int:
        return sum(r.size or 0 for r in self.active)

    @property
    def unrouted(self) -> list[tuple[str, int]]:
        """Active Markdown files no route names (none are known when the index is missing)."""
        if self.index_error:
            return []
        routed = {r.path for r in self.active}
        return [(rel, size) for rel, size in self.active_files if rel not in routed]

    @property
    def all_active_bytes(self) -> int:
        return sum(size for _, size in self.active_files)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON (the server's `pmem.status`)."""
        return {
            "root": shown(str(self.root)),
            "core": {"files": [{"path": shown(p), "bytes": n} for p, n in self.core], "bytes": self.core_bytes,
                     "tokens": tokens(self.core_bytes),
                     **({"notRead": [{"path": shown(p), "note": LEADS_OUT} for p in self.outside]}
                        if self.outside else {})},
            "active": {"files": len(self.active_files), "bytes": self.all_active_bytes,
                       "tokens": tokens(self.all_active_bytes), "routed": len(self.active),
                       "routedBytes": self.active_bytes, "unrouted": [shown(p) for p, _ in self.unrouted]},
            "indexError": self.index_error,
            **({"indexTruncated": {"size": self.index_size, "read": MAX_ANALYSED_BYTES}} if self.index_size else {}),
            "routes": [{"path": shown(r.path), "description": r.description, "bytes": r.size, "note": r.note or None}
                       for r in self.routes],
        }

    def text(self) -> str:
        """The report as printed, with likely secrets masked: it names paths and quotes route
        descriptions and file lines, and any of them can hold one."""
        return mask_text(self._text())

    def _text(self) -> str:
        out = [f"Memory root: {shown(str(self.root))}",
               f"Core: {len(self.core)} files, {format_size(self.core_bytes)} ({format_tokens(self.core_bytes)}), "
               "loaded on every activation"]
        out += [f"  {shown(p)}: {LEADS_OUT}" for p in self.outside]
        if self.index_error:
            n = len(self.active_files)
            out.append(f"Active: {n} file{'s' if n != 1 else ''}, {format_size(self.all_active_bytes)} "
                       f"({format_tokens(self.all_active_bytes)}), none loaded on demand")
            out.append(f"Index: {self.index_error}")
            return "\n".join(out) + "\n"
        active = self.active
        out.append(f"Active: {len(active)} routed files, {format_size(self.active_bytes)} "
                   f"({format_tokens(self.active_bytes)}), loaded on demand")
        unrouted = self.unrouted
        if unrouted:
            size = sum(n for _, n in unrouted)
            out.append(f"Not routed: {len(unrouted)} active file{'s' if len(unrouted) != 1 else ''}, "
                       f"{format_size(size)} ({format_tokens(size)}), never loaded on demand: "
                       + ", ".join(shown(p) for p, _ in unrouted[:5]) + (", …" if len(unrouted) > 5 else ""))
        out.append(f"All active files: {len(self.active_files)}, {format_size(self.all_active_bytes)} "
                   f"({format_tokens(self.all_active_bytes)})")
        if self.index_size:
            out.append(f"Index: {format_size(self.index_size)}, only its first {format_size(MAX_ANALYSED_BYTES)} "
                       "read (as `pmem check` does)")
        for row in self.routes:
            note = f"  ({one_line(row.note)})" if row.note else ""
            path, description = shown(row.path), one_line(row.description)
            out.append(f"  {path} — {description}{note}" if description else f"  {path}{note}")
        return "\n".join(out) + "\n"


def tokens(n: int) -> int:
    # About four bytes of English per token: roughly what an agent pays to load the text.
    return round(n / 4)


def format_size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def format_tokens(n: int) -> str:
    t = tokens(n)
    return f"~{t / 1000:.1f}k tokens" if t >= 1000 else f"~{t} tokens"


def _core_files(root: Path, where: Containment) -> tuple[list[tuple[str, int]], list[str]]:
    """The files in `_core/` and their sizes; and those (or `_core/` itself) that lead out of the
    root, which are named but never read or counted."""
    if not where.inside(CORE_DIR):
        return [], [CORE_DIR]
    out, outside = [], []
    for dirpath, dirnames, filenames in walk(root / CORE_DIR):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d)))
        base = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            rel = f"{base}/{name}"
            if not where.inside(rel):
                outside.append(rel)
                continue
            try:
                out.append((rel, os.stat(root / rel).st_size))
            except OSError:
                continue
    return out, outside


def _active_files(root: Path, excluded: Callable[[str], bool], where: Containment) -> list[tuple[str, int]]:
    """Every active Markdown file and its size, by listing folders: `_core/`, `_archive/`, hidden
    and excluded paths and symbolic links to folders are skipped before they are opened. Folders
    are entered without following links, so only a file that is itself a link needs resolving."""
    out: list[tuple[str, int]] = []
    stack = [""]
    base = os.fspath(root)
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(f"{base}/{rel_dir}" if rel_dir else base) as it:
                entries = list(it)
        except OSError:
            continue
        for de in entries:
            name = de.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name.startswith(".") or (not rel_dir and name in (ARCHIVE_DIR, CORE_DIR)) or excluded(rel):
                continue
            try:
                if de.is_dir(follow_symlinks=False):
                    stack.append(rel)
                elif (is_markdown(name) and rel != INDEX and de.is_file()
                      and (not de.is_symlink() or where.inside(rel))):
                    out.append((rel, de.stat().st_size))
            except OSError:
                continue
    return sorted(out)


def read_capped(path: Path) -> tuple[str, int]:
    """(text up to MAX_ANALYSED_BYTES, whole size) of a regular file; OSError when it cannot be
    read (FileNotFoundError: missing). Opened without blocking: a named pipe is never read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, "not a regular file")
        chunks, got = [], 0
        while got <= MAX_ANALYSED_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_ANALYSED_BYTES + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return decode(data[:_cut(data, MAX_ANALYSED_BYTES)]), max(st.st_size, len(data))


def memory_status(root: Path, excluded: Callable[[str], bool] | None = None) -> MemoryStatus:
    """`excluded`: the settings' `exclude` test (excluded files are not counted)."""
    where = Containment(root)
    core_list, outside = _core_files(root, where)
    core = tuple(core_list)
    active_files = tuple(_active_files(root, excluded or (lambda rel: False), where))

    def without_index(why: str) -> MemoryStatus:
        return MemoryStatus(root, core, why, (), active_files, tuple(outside))

    if not where.inside(INDEX):
        return without_index(f"`_index.md` is {LEADS_OUT}")
    try:
        text, size = read_capped(root / INDEX)
    except FileNotFoundError:
        return without_index("`_index.md` is missing, so no file can be loaded on demand")
    except OSError as exc:
        return without_index(f"`_index.md` cannot be read ({exc.strerror})")
    if size > MAX_ANALYSED_BYTES and "\n" in text:
        text = text[:text.rindex("\n") + 1]  # a line cut at the cap is no route
    rows: list[RoutedFile] = []
    seen: set[str] = set()
    base = os.fspath(root)
    for route in parse_index(MemoryFile(text)).routes:
        route = replace(route, description=mask_secrets(route.description))
        if route.path is None:
            rows.append(RoutedFile(mask_secrets(route.written), route.description, None, "not a memory file"))
            continue
        if route.path in seen:
            continue  # routed twice: one file
        seen.add(route.path)
        if zone_of(route.path) is not Zone.ACTIVE:
            rows.append(RoutedFile(route.path, route.description, None, "not an active memory file"))
            continue
        if not where.inside(route.path):
            rows.append(RoutedFile(route.path, route.description, None, "leaves the memory root"))
            continue
        try:
            st = os.stat(f"{base}/{route.path}")
        except FileNotFoundError:
            rows.append(RoutedFile(route.path, route.description, None, "missing"))
            continue
        except OSError as exc:
            rows.append(RoutedFile(route.path, route.description, None, f"unreadable: {exc.strerror}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            rows.append(RoutedFile(route.path, route.description, None, "a folder, not a Markdown file"))
            continue
        rows.append(RoutedFile(route.path, route.description, st.st_size))
    return MemoryStatus(root, core, None, tuple(rows), active_files, tuple(outside),
                        size if size > MAX_ANALYSED_BYTES else 0)
