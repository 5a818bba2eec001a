"""References to a file (docs/design.md §5): every route and relative link that points to it."""

from __future__ import annotations

from ..root_state import RootState
from .destinations import Location
from .refs import ref_graph
from .spots import TITLE, spot_at


def subject_at(state: RootState, rel: str, line: int, char: int) -> str | None:
    """The file a references request is about: what the route, link or record at the cursor
    names, else the file itself (its title, or anywhere else in it)."""
    spot = spot_at(state, rel, line, char)
    if spot is not None and spot.kind != TITLE:
        return spot.path
    return rel


def references_to(state: RootState, path: str, include_declaration: bool = False) -> list[Location]:
    out: list[Location] = []
    if include_declaration and path in state.files:
        doc = state.doc(path)
        title = doc.title if doc is not None else None
        line = title.line if title is not None else 0
        out.append(Location(path, line, 0, len(doc.lines[line].rstrip()) if doc is not None and doc.lines else 0))
    out += [Location(r.source, r.line, r.start, r.end) for r in ref_graph(state).refs_to(path)]
    return out


def references(state: RootState, rel: str, line: int, char: int,
               include_declaration: bool = False) -> list[Location]:
    subject = subject_at(state, rel, line, char)
    return references_to(state, subject, include_declaration) if subject else []
