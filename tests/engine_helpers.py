"""Data-driven tests: a memory root on disk in (built with `roots.py`), findings out.

`findings(root)` runs the whole engine (`analyze`) with settings resolved from the root, and
returns findings with their final severity. `rows(...)` turns them into tuples that are easy
to compare exactly.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pmem_lsp.engine.analysis import analyze
from pmem_lsp.engine.findings import Finding
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.root_state import RootState
from pmem_lsp.engine.settings import resolve_settings
from pmem_lsp.engine.zones import is_markdown
from roots import make_root

TODAY = dt.date(2026, 12, 1)


def scan(root: Path, overrides: dict[str, Any] | None = None) -> RootState:
    return RootState.scan(root, resolve_settings(root, overrides))


def findings(root: Path, overrides: dict[str, Any] | None = None,
             today: dt.date = TODAY) -> list[Finding]:
    return analyze(scan(root, overrides), today)


def rows(found: Iterable[Finding], *, severity: bool = False) -> list[tuple]:
    """(path, 0-based line, code[, severity]) per finding, in the engine's order."""
    if severity:
        return [(f.path, f.line, f.code, f.severity.value if f.severity else None) for f in found]
    return [(f.path, f.line, f.code) for f in found]


def ranges(found: Iterable[Finding]) -> list[tuple]:
    """(path, code, line, col, end_line, end_col) per finding."""
    return [(f.path, f.code, f.line, f.col, f.end_line, f.end_col) for f in found]


def only(found: Iterable[Finding], *codes: str) -> list[Finding]:
    """The findings whose code starts with one of `codes` (`PM1` = the summary family)."""
    return [f for f in found if f.code.startswith(codes)]


def problems(found: Iterable[Finding]) -> list[Finding]:
    """Errors and warnings: what a well-formed root must not have."""
    return [f for f in found if f.severity is not None and f.severity.value in ("error", "warning")]


def check_text(tmp_path: Path, rel: str, text: str, *codes: str) -> list[tuple]:
    """Add one file to the baseline; rows of its findings (restricted to `codes` if given)."""
    root = make_root(tmp_path, {rel: text})
    found = [f for f in findings(root) if f.path == rel]
    return rows(only(found, *codes) if codes else found)


def doc(text: str) -> MemoryFile:
    return MemoryFile(text)


def markdown_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and is_markdown(p.name))
