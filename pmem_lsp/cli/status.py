"""`pmem status`: the seed's memory status — reads `_core/` and `_index.md` only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

from ..engine.index_routes import parse_index
from ..engine.memory_file import MemoryFile
from ..engine.snapshot import decode
from ..engine.zones import CORE_DIR, INDEX


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _tokens(n: int) -> str:
    # About four bytes of English per token; what agents pay to load the file.
    t = round(n / 4)
    return f"~{t / 1000:.1f}k tokens" if t >= 1000 else f"~{t} tokens"


def _core_files(root: Path) -> list[tuple[str, int]]:
    out = []
    core = root / CORE_DIR
    for dirpath, dirnames, filenames in os.walk(core):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            try:
                out.append((path.relative_to(root).as_posix(), path.stat().st_size))
            except OSError:
                continue
    return out


def run_status(root: Path, out: TextIO) -> int:
    out.write(f"Memory root: {root}\n")
    core = _core_files(root)
    core_bytes = sum(size for _, size in core)
    out.write(f"Core: {len(core)} files, {_size(core_bytes)} ({_tokens(core_bytes)}), loaded on every activation\n")
    index_path = root / INDEX
    try:
        text = decode(index_path.read_bytes())
    except FileNotFoundError:
        out.write("Index: `_index.md` is missing, so no file can be loaded on demand\n")
        return 0
    except OSError as exc:
        out.write(f"Index: `_index.md` cannot be read ({exc.strerror})\n")
        return 2
    routes = parse_index(MemoryFile(text)).routes
    rows = []
    total = 0
    present = 0
    for route in routes:
        size = None
        if route.path:
            try:
                size = (root / route.path).stat().st_size
            except OSError:
                size = None
        if size is not None:
            total += size
            present += 1
        label = route.path or route.written
        note = "" if size is not None else "  (missing)"
        rows.append(f"  {label} — {route.description}{note}" if route.description else f"  {label}{note}")
    out.write(f"Active: {present} routed files, {_size(total)} ({_tokens(total)}), loaded on demand\n")
    for row in rows:
        out.write(row + "\n")
    return 0
