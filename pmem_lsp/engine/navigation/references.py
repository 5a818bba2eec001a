"""References to a file (DESIGN §5): every route and relative link that points to it."""

from __future__ import annotations

from ..snapshot import RootSnapshot
from .links import Location
from .refs import ref_graph
from .spots import TITLE, spot_at


def subject_at(snap: RootSnapshot, rel: str, line: int, char: int) -> str | None:
    """The file a references request is about: what the route, link or record at the cursor
    names, else the file itself (its title, or anywhere else in it)."""
    spot = spot_at(snap, rel, line, char)
    if spot is not None and spot.kind != TITLE:
        return spot.path
    return rel


def references_to(snap: RootSnapshot, path: str, include_declaration: bool = False) -> list[Location]:
    out: list[Location] = []
    if include_declaration and path in snap.files:
        doc = snap.doc(path)
        title = doc.title if doc is not None else None
        line = title.line if title is not None else 0
        out.append(Location(path, line, 0, len(doc.lines[line].rstrip()) if doc is not None and doc.lines else 0))
    out += [Location(r.source, r.line, r.start, r.end) for r in ref_graph(snap).refs_to(path)]
    return out


def references(snap: RootSnapshot, rel: str, line: int, char: int,
               include_declaration: bool = False) -> list[Location]:
    subject = subject_at(snap, rel, line, char)
    return references_to(snap, subject, include_declaration) if subject else []
