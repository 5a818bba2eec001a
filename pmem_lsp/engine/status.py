"""Memory status (spec "Memory Status"): what agents load — read from `_core/` and `_index.md` only.

Routed files are only looked at with `stat` (their size), never read. Targets that are not
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

from .index_routes import parse_index
from .memory_file import MemoryFile
from .root_state import decode
from .secrets import mask_secrets, mask_text
from .zones import ARCHIVE_DIR, CORE_DIR, INDEX, Zone, is_markdown, zone_of


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
            "root": str(self.root),
            "core": {"files": [{"path": p, "bytes": n} for p, n in self.core], "bytes": self.core_bytes,
                     "tokens": tokens(self.core_bytes)},
            "active": {"files": len(self.active_files), "bytes": self.all_active_bytes,
                       "tokens": tokens(self.all_active_bytes), "routed": len(self.active),
                       "routedBytes": self.active_bytes, "unrouted": [p for p, _ in self.unrouted]},
            "indexError": self.index_error,
            "routes": [{"path": r.path, "description": r.description, "bytes": r.size, "note": r.note or None}
                       for r in self.routes],
        }

    def text(self) -> str:
        """The report as printed, with likely secrets masked: it names paths and quotes route
        descriptions and file lines, and any of them can hold one."""
        return mask_text(self._text())

    def _text(self) -> str:
        out = [f"Memory root: {self.root}",
               f"Core: {len(self.core)} files, {format_size(self.core_bytes)} ({format_tokens(self.core_bytes)}), "
               "loaded on every activation"]
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
                       + ", ".join(p for p, _ in unrouted[:5]) + (", …" if len(unrouted) > 5 else ""))
        out.append(f"All active files: {len(self.active_files)}, {format_size(self.all_active_bytes)} "
                   f"({format_tokens(self.all_active_bytes)})")
        for row in self.routes:
            note = f"  ({row.note})" if row.note else ""
            out.append(f"  {row.path} — {row.description}{note}" if row.description else f"  {row.path}{note}")
        return "\n".join(out) + "\n"


def tokens(n: int) -> int:
    # About four bytes of English per token: roughly what an agent pays to load the text.
    return round(n / 4)


def format_size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def format_tokens(n: int) -> str:
    t = tokens(n)
    return f"~{t / 1000:.1f}k tokens" if t >= 1000 else f"~{t} tokens"


def _inside(root: Path, path: Path) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root + os.sep)


def _core_files(root: Path) -> list[tuple[str, int]]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root / CORE_DIR):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.startswith(".") or not _inside(root, path):
                continue
            try:
                out.append((path.relative_to(root).as_posix(), path.stat().st_size))
            except OSError:
                continue
    return out


def _active_files(root: Path, excluded: Callable[[str], bool]) -> list[tuple[str, int]]:
    """Every active Markdown file and its size, by listing folders: `_core/`, `_archive/`, hidden
    and excluded paths and symbolic links to folders are skipped before they are opened."""
    out: list[tuple[str, int]] = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as it:
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
                elif is_markdown(name) and rel != INDEX and de.is_file() and _inside(root, root / rel):
                    out.append((rel, de.stat().st_size))
            except OSError:
                continue
    return sorted(out)


def memory_status(root: Path, excluded: Callable[[str], bool] | None = None) -> MemoryStatus:
    """`excluded`: the settings' `exclude` test (excluded files are not counted)."""
    core = tuple(_core_files(root))
    active_files = tuple(_active_files(root, excluded or (lambda rel: False)))
    try:
        text = decode((root / INDEX).read_bytes())
    except FileNotFoundError:
        return MemoryStatus(root, core, "`_index.md` is missing, so no file can be loaded on demand", (), active_files)
    except OSError as exc:
        return MemoryStatus(root, core, f"`_index.md` cannot be read ({exc.strerror})", (), active_files)
    rows: list[RoutedFile] = []
    seen: set[str] = set()
    for route in parse_index(MemoryFile(text)).routes:
        route = replace(route, description=mask_secrets(route.description), written=mask_secrets(route.written))
        if route.path is None:
            rows.append(RoutedFile(route.written, route.description, None, "not a memory file"))
            continue
        if route.path in seen:
            continue  # routed twice: one file
        seen.add(route.path)
        if zone_of(route.path) is not Zone.ACTIVE:
            rows.append(RoutedFile(route.path, route.description, None, "not an active memory file"))
            continue
        path = root / route.path
        if not _inside(root, path):
            rows.append(RoutedFile(route.path, route.description, None, "leaves the memory root"))
            continue
        try:
            st = path.stat()
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
    return MemoryStatus(root, core, None, tuple(rows), active_files)
