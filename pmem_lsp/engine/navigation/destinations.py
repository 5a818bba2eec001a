"""Document links and go to definition (docs/design.md §5): routes, relative links and record
locations lead to the files they name."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import TypeGuard

from ..index_routes import index_model
from ..memory_file import MemoryFile
from ..root_state import RootState
from ..zones import INDEX, Zone, zone_of
from .refs import link_target
from .spots import archive_records, spot_at

_RE_SLUG_DROP = re.compile(r"[^\w\- ]")


@dataclass(frozen=True, slots=True)
class DocLink:
    line: int  # where the path is written
    start: int
    end: int
    target: str  # root-relative path of an existing file
    target_line: int  # 0, or the heading a `#fragment` names
    tooltip: str


@dataclass(frozen=True, slots=True)
class Location:
    path: str  # root-relative
    line: int
    start: int = 0
    end: int = 0


def slug(text: str) -> str:
    """GitHub-style heading anchor: lower case, punctuation dropped, spaces to `-`."""
    return _RE_SLUG_DROP.sub("", text.strip().lower()).replace(" ", "-")


def heading_line(doc: MemoryFile | None, fragment: str) -> int:
    """The line of the heading that `#fragment` names, else 0."""
    if doc is None or not fragment:
        return 0
    wanted = fragment.strip().lower()
    for h in doc.headings:
        if slug(h.text) == wanted:
            return h.line
    return 0


def _file(path: str | None, state: RootState) -> TypeGuard[str]:
    """`path` names a file of the root (a guard: `path` is a str after it)."""
    return path is not None and path in state.files


def _doc_link(state: RootState, line: int, start: int, end: int, path: str, fragment: str) -> DocLink:
    doc = state.doc(path)
    title = doc.title_text if doc is not None else None
    return DocLink(line, start, end, path, heading_line(doc, fragment), title or path)


def document_links(state: RootState, rel: str) -> list[DocLink]:
    """Every route, relative link and record location in `rel` that names an existing file."""
    doc = state.doc(rel)
    if doc is None:
        return []
    out: list[DocLink] = []
    zone = zone_of(rel)
    if zone is Zone.ARCHIVE_INDEX:
        for record in archive_records(state):
            for key in ("original", "location"):
                f = record.field(key)
                if f is None or not _file(f.value, state):
                    continue
                text = doc.lines[f.line]
                start = text.rfind(f.value)
                if start >= 0:
                    out.append(_doc_link(state, f.line, start, start + len(f.value), f.value, ""))
        return out
    route_lines: set[int] = set()
    if zone is Zone.INDEX:
        model = index_model(state.files[INDEX])
        for r in model.routes if model is not None else ():
            route_lines.add(r.line)
            if _file(r.path, state):
                out.append(_doc_link(state, r.line, r.start, r.end, r.path, r.written.partition("#")[2]))
    base = posixpath.dirname(rel)
    for link in doc.links:
        if link.line in route_lines and any(d.line == link.line and d.start == link.start for d in out):
            continue  # the route already links it
        path = link_target(link, base)
        if _file(path, state):
            out.append(_doc_link(state, link.line, link.start, link.end, path, link.target.partition("#")[2]))
    out.sort(key=lambda d: (d.line, d.start))
    return out


def definition(state: RootState, rel: str, line: int, char: int) -> Location | None:
    """Where the route, link or record at (line, char) leads; None when the target is missing."""
    spot = spot_at(state, rel, line, char)
    if spot is None or spot.kind == "title":
        return None
    path = spot.path
    if spot.record is not None and not _file(path, state):
        original = spot.record.get("original")
        path = original if original and _file(original, state) else None
    if not _file(path, state):
        return None
    return Location(path, heading_line(state.doc(path), spot.fragment))
