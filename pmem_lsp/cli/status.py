"""`pmem status`: prints the engine's memory status."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from ..engine.status import memory_status


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


def _tokens(n: int) -> str:
    # About four bytes of English per token: roughly what an agent pays to load the text.
    t = round(n / 4)
    return f"~{t / 1000:.1f}k tokens" if t >= 1000 else f"~{t} tokens"


def run_status(root: Path, out: TextIO) -> int:
    status = memory_status(root)
    out.write(f"Memory root: {root}\n")
    out.write(f"Core: {len(status.core)} files, {_size(status.core_bytes)} ({_tokens(status.core_bytes)}), "
              "loaded on every activation\n")
    if status.index_error:
        out.write(f"Index: {status.index_error}\n")
        return 0
    active = status.active
    out.write(f"Active: {len(active)} routed files, {_size(status.active_bytes)} "
              f"({_tokens(status.active_bytes)}), loaded on demand\n")
    for row in status.routes:
        note = f"  ({row.note})" if row.note else ""
        out.write(f"  {row.path} — {row.description}{note}\n" if row.description else f"  {row.path}{note}\n")
    return 0
