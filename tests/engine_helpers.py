"""Data-driven engine tests: a memory root on disk in, findings out.

`make_root(tmp_path, {relative path: text})` writes a well-formed baseline root and applies
the given changes on top of it:

- a text value writes (or replaces) that file;
- `None` removes a baseline file or folder;
- a key ending in `/` creates an empty folder (its value is ignored).

Unless the changes name `_index.md`, the index is generated to route every active Markdown
file of the final tree, so adding `notes/x.md` does not cause a PM202 on its own.

`findings(root)` runs the whole engine (`analyze`) with settings resolved from the root, and
returns findings with their final severity. `rows(...)` turns them into tuples that are easy
to compare exactly.
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pmem_lsp.engine.analysis import analyze
from pmem_lsp.engine.findings import Finding
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.settings import resolve_settings
from pmem_lsp.engine.root_state import RootState
from pmem_lsp.engine.zones import Zone, is_markdown, zone_of

TODAY = dt.date(2026, 12, 1)
REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo-memory"


def summary_block(n: int = 3, heading: str = "## Summary", prefix: str = "Fact") -> str:
    """A summary heading followed by `n` factual bullets."""
    bullets = "".join(f"- {prefix} number {i + 1} about the work.\n" for i in range(n))
    return f"{heading}\n{bullets}"


def active_file(title: str, *, metadata: str = "Status: active\n", summary: str | None = None,
                body: str = "## Context\nSome details that live below the summary.\n") -> str:
    """A well-formed active memory file: title, metadata, summary, body."""
    summary = summary_block() if summary is None else summary
    parts = [f"# {title}\n\n"]
    if metadata:
        parts.append(metadata + "\n")
    if summary:
        parts.append(summary + "\n")
    parts.append(body)
    return "".join(parts)


BASELINE: dict[str, str | None] = {
    "_core/profile.md": "# Profile\n\n## Identity\n- Name: Test Person\n- Based in Gothenburg.\n",
    "_core/preferences.md": "# Preferences\n\n## Communication\n- Be direct and concise.\n",
    "_archive/_trash/": None,
    "_archive/_index.md": "# Archive index\n",
    "projects/alpha.md": active_file("Alpha project"),
    "notes/beta.md": active_file("Beta note", metadata="Updated: 2026-11-01\n"),
}


def route_line(path: str, description: str | None = None) -> str:
    label = Path(path).stem.replace("-", " ").capitalize()
    target = path.replace(" ", "%20")
    return f"- [{label}]({target}) — {description or 'about ' + label.lower()}"


def index_text(paths: Iterable[str]) -> str:
    """`_index.md` routing `paths`, grouped under a heading per top folder."""
    groups: dict[str, list[str]] = {}
    for p in sorted(paths):
        top = p.split("/")[0] if "/" in p else "Other"
        groups.setdefault(top, []).append(p)
    out = ["# Memory index", ""]
    for top, ps in groups.items():
        out.append(f"## {top.capitalize()}")
        out.extend(route_line(p) for p in ps)
        out.append("")
    return "\n".join(out)


def write_tree(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        target = root / rel
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        elif text is None:
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


def make_root(tmp_path: Path, changes: dict[str, str | None] | None = None, *,
              baseline: bool = True) -> Path:
    """The baseline root with `changes` applied (see the module docstring)."""
    root = tmp_path / "memory"
    root.mkdir(parents=True)
    changes = dict(changes or {})
    tree: dict[str, str | None] = dict(BASELINE) if baseline else {}
    write_tree(root, tree)
    write_tree(root, {k: v for k, v in changes.items() if k != "_index.md"})
    if "_index.md" in changes:
        write_tree(root, {"_index.md": changes["_index.md"]})
    elif baseline:
        active = [p.relative_to(root).as_posix() for p in root.rglob("*.md")
                  if p.is_file() and zone_of(p.relative_to(root).as_posix()) is Zone.ACTIVE]
        (root / "_index.md").write_text(index_text(active), encoding="utf-8")
    return root


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
