"""Memory status (spec "Memory Status"): what agents load — read from `_core/` and `_index.md` only.

Routed files are only looked at with `stat` (their size), never read. Targets that are not
active memory files, leave the root, or are routed twice are counted once or not at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from .index_routes import parse_index
from .memory_file import MemoryFile
from .secrets import find_secrets, mask
from .snapshot import decode
from .zones import CORE_DIR, INDEX, Zone, zone_of


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

    @property
    def core_bytes(self) -> int:
        return sum(size for _, size in self.core)

    @property
    def active(self) -> list[RoutedFile]:
        return [r for r in self.routes if r.size is not None]

    @property
    def active_bytes(self) -> int:
        return sum(r.size or 0 for r in self.active)


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


def mask_secrets(line: str) -> str:
    """The line with every likely secret replaced by its masked hint (DESIGN §6)."""
    for m in sorted(find_secrets([line]), key=lambda m: m.start, reverse=True):
        if m.end_line == 0:
            line = line[:m.start] + mask(line[m.start:m.end]) + line[m.end:]
    return line


def memory_status(root: Path) -> MemoryStatus:
    core = tuple(_core_files(root))
    try:
        text = decode((root / INDEX).read_bytes())
    except FileNotFoundError:
        return MemoryStatus(root, core, "`_index.md` is missing, so no file can be loaded on demand", ())
    except OSError as exc:
        return MemoryStatus(root, core, f"`_index.md` cannot be read ({exc.strerror})", ())
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
            size = path.stat().st_size
        except FileNotFoundError:
            rows.append(RoutedFile(route.path, route.description, None, "missing"))
            continue
        except OSError as exc:
            rows.append(RoutedFile(route.path, route.description, None, f"unreadable: {exc.strerror}"))
            continue
        rows.append(RoutedFile(route.path, route.description, size))
    return MemoryStatus(root, core, None, tuple(rows))
