"""Document symbols (headings, the Summary marked; routes in `_index.md`) and workspace
symbols (files by title and headings across the root, fuzzy subsequence match)."""

from __future__ import annotations

import heapq
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..index_routes import index_model
from ..markdown import Heading
from ..memory_file import MemoryFile
from ..root_state import FileEntry, RootState
from ..zones import INDEX, Zone

TITLE, SECTION, SUMMARY, ROUTE, FILE = "title", "heading", "summary", "route", "file"
WORKSPACE_LIMIT = 100


@dataclass(slots=True)
class DocSymbol:
    name: str
    kind: str  # TITLE, SECTION, SUMMARY or ROUTE
    detail: str
    line: int  # the whole section: first line …
    end_line: int  # … last line (inclusive) and its length
    end_col: int
    sel_start: int  # the heading text on `line`
    sel_end: int
    children: list[DocSymbol] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WorkspaceSymbol:
    name: str
    kind: str  # FILE or SECTION / SUMMARY
    path: str  # root-relative
    line: int
    container: str  # the file's path for a heading, its folder for a file


def _text_span(line: str, text: str) -> tuple[int, int]:
    start = line.find(text) if text else -1
    if start < 0:
        stripped = line.rstrip()
        return len(stripped) - len(stripped.lstrip()), len(stripped)
    return start, start + len(text)


def _kind(doc: MemoryFile, h: Heading) -> str:
    if doc.title is not None and h.line == doc.title.line:
        return TITLE
    if doc.summary_headings and h is doc.summary_headings[0]:
        return SUMMARY
    return SECTION


def document_symbols(state: RootState, rel: str) -> list[DocSymbol]:
    """Headings as a tree (a heading holds the deeper ones after it); routes under their heading."""
    doc = state.doc(rel)
    if doc is None:
        return []
    lines = doc.lines
    last = max(len(lines) - 1, 0)
    heads = [h for h in doc.headings if h.top_level]
    roots: list[DocSymbol] = []
    stack: list[tuple[int, DocSymbol]] = []  # (level, symbol)
    for n, h in enumerate(heads):
        end = last
        for later in heads[n + 1:]:
            if later.level <= h.level:
                end = later.line - 1
                break
        end = max(end, h.end_line)
        start, stop = _text_span(lines[h.line], h.text)
        kind = _kind(doc, h)
        detail = {TITLE: "title", SUMMARY: "summary"}.get(kind, "")
        if kind == SUMMARY and doc.summary is not None:
            detail = f"summary · {len(doc.summary.bullets)} bullet{'s' if len(doc.summary.bullets) != 1 else ''}"
        sym = DocSymbol(h.text or "(empty heading)", kind, detail, h.line, end, len(lines[end]) if lines else 0,
                        start, stop)
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(sym)
        stack.append((h.level, sym))
    if rel == INDEX:
        _add_routes(state, roots)
    return roots


def _add_routes(state: RootState, roots: list[DocSymbol]) -> None:
    model = index_model(state.files[INDEX])
    doc = state.doc(INDEX)
    if model is None or doc is None:
        return
    lines = doc.lines

    def holder(line: int, symbols: list[DocSymbol]) -> list[DocSymbol]:
        for sym in symbols:
            if sym.kind != ROUTE and sym.line < line <= sym.end_line:
                return holder(line, sym.children)
        return symbols

    for r in model.routes:
        name = r.path or r.written
        text = lines[r.line]
        holder(r.line, roots).append(DocSymbol(
            name, ROUTE, r.description, r.line, r.line, len(text.rstrip()), r.start, r.end))
    for sym in _walk(roots):
        sym.children.sort(key=lambda s: s.line)
    roots.sort(key=lambda s: s.line)


def _walk(symbols: list[DocSymbol]) -> Iterator[DocSymbol]:
    for sym in symbols:
        yield sym
        yield from _walk(sym.children)


# -- workspace symbols ------------------------------------------------------------
@dataclass(slots=True)
class _Table:
    entries: dict[str, FileEntry] = field(default_factory=dict)
    rows: dict[str, list[WorkspaceSymbol]] = field(default_factory=dict)


_TABLES: weakref.WeakKeyDictionary[RootState, _Table] = weakref.WeakKeyDictionary()


def _rows(entry: FileEntry) -> list[WorkspaceSymbol]:
    return entry.cached("nav.symbols", lambda: _build_rows(entry))


def _build_rows(entry: FileEntry) -> list[WorkspaceSymbol]:
    doc = entry.doc
    rel = entry.rel
    folder = rel.rpartition("/")[0]
    out = []
    if doc is not None:
        title = doc.title
        out.append(WorkspaceSymbol(doc.title_text or rel.rsplit("/", 1)[-1], FILE, rel,
                                   title.line if title is not None else 0, folder))
        summary = doc.summary_headings[0] if doc.summary_headings else None
        for h in doc.headings:
            if title is not None and h.line == title.line or not h.text:
                continue
            out.append(WorkspaceSymbol(h.text, SUMMARY if h is summary else SECTION, rel, h.line, rel))
    return out


def _table(state: RootState) -> _Table:
    table = _TABLES.get(state)
    if table is None:
        table = _TABLES[state] = _Table()
    files = state.files
    for rel in [rel for rel, e in table.entries.items() if files.get(rel) is not e]:
        del table.entries[rel]
        table.rows.pop(rel, None)
    for rel, entry in files.items():
        if table.entries.get(rel) is not entry and entry.markdown and entry.zone is not Zone.HIDDEN:
            table.entries[rel] = entry
            table.rows[rel] = _rows(entry)
    return table


def workspace_symbols(state: RootState, query: str, limit: int = WORKSPACE_LIMIT) -> list[WorkspaceSymbol]:
    """Files (by title or path) and headings whose name holds the query's characters in order.

    Ranked: the query as a substring before a scattered match, files before headings, earlier
    and shorter matches first. At most `limit` results.
    """
    table = _table(state)
    q = query.strip().lower()
    if not q:
        files = [rows[0] for rows in table.rows.values() if rows and rows[0].kind == FILE]
        return heapq.nsmallest(limit, files, key=lambda s: s.path)
    search = re.compile(".*?".join(re.escape(c) for c in q)).search
    scored = []
    for rows in table.rows.values():
        for sym in rows:
            name = sym.name.lower()
            m = search(name)
            if m is None and sym.kind == FILE:
                name = sym.path.lower()
                m = search(name)
            if m is None:
                continue
            pos = name.find(q)
            scored.append(((pos < 0, sym.kind != FILE, pos if pos >= 0 else m.start(), m.end() - m.start(),
                            len(sym.name), sym.path, sym.line), sym))
    return [sym for _key, sym in heapq.nsmallest(limit, scored, key=lambda pair: pair[0])]
