"""What is under the cursor: a route, a relative link, an archive record, or a file's title."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..archive_index import ArchiveRecord, record_location, records_of
from ..index_routes import Route, index_model
from ..memory_file import Link, MemoryFile
from ..root_state import RootState
from ..zones import ARCHIVE_INDEX, INDEX, Zone, zone_of
from .refs import link_target

ROUTE, LINK, RECORD, TITLE = "route", "link", "record", "title"


@dataclass(frozen=True, slots=True)
class Spot:
    kind: str  # ROUTE, LINK, RECORD or TITLE
    line: int  # the text the spot covers (one line)
    start: int
    end: int
    path: str | None  # the root-relative path it names (a record: its location; a title: the file)
    fragment: str = ""
    route: Route | None = None
    record: ArchiveRecord | None = None




def archive_records(state: RootState) -> list[ArchiveRecord]:
    entry = state.files.get(ARCHIVE_INDEX)
    return records_of(entry) if entry is not None else []


def link_span(line_text: str, link: Link) -> tuple[int, int]:
    """The whole `[text](target)` (or `![…](…)`) around a link's target, when it can be found."""
    start, end = link.start, link.end
    j = start
    while j > 0 and line_text[j - 1] in "< \t":
        j -= 1
    if j >= 2 and line_text[j - 2 : j] == "](":
        opening = j - 2 - len(link.text) - 1
        if opening >= 0 and line_text[opening] == "[":
            start = opening - 1 if opening > 0 and line_text[opening - 1] == "!" else opening
            close = line_text.find(")", link.end)
            end = close + 1 if close >= 0 else link.end
    return start, end


def _route_spot(state: RootState, line: int) -> Spot | None:
    entry = state.files.get(INDEX)
    model = index_model(entry) if entry is not None else None
    for route in model.routes if model is not None else ():
        if route.line == line:
            return Spot(ROUTE, line, route.start, route.end, route.path, route.written.partition("#")[2],
                        route=route)
    return None


def _record_spot(state: RootState, line: int) -> Spot | None:
    doc = state.doc(ARCHIVE_INDEX)
    if doc is None:
        return None
    for record in archive_records(state):
        if record.heading_line <= line < record.end:
            text = doc.lines[record.heading_line]
            return Spot(RECORD, record.heading_line, 0, len(text.rstrip()), record_location(record), record=record)
    return None


def _link_spot(rel: str, doc: MemoryFile, line: int, char: int) -> Spot | None:
    text = doc.lines[line]
    for link in doc.links:
        if link.line != line:
            continue
        start, end = link_span(text, link)
        if start <= char <= end:
            path = link_target(link, posixpath.dirname(rel))
            if path is None:
                return None
            return Spot(LINK, line, link.start, link.end, path, link.target.partition("#")[2])
    return None


def spot_at(state: RootState, rel: str, line: int, char: int) -> Spot | None:
    """The route, record, link or title at (line, char) of `rel`, or None."""
    doc = state.doc(rel)
    if doc is None or not 0 <= line < len(doc.lines):
        return None
    zone = zone_of(rel)
    if zone is Zone.INDEX:
        spot = _route_spot(state, line)
        if spot is not None:
            return spot if spot.path is not None else None
    elif zone is Zone.ARCHIVE_INDEX:
        return _record_spot(state, line)
    spot = _link_spot(rel, doc, line, char)
    if spot is not None:
        return spot
    if doc.title is not None and doc.title.line == line:
        return Spot(TITLE, line, 0, len(doc.lines[line].rstrip()), rel)
    return None
