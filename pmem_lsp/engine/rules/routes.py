"""PM201–PM207: routes in `_index.md` against the files that exist (DESIGN §2.3)."""

from __future__ import annotations

import posixpath

from ..findings import Finding, at_line, file_finding
from ..index_routes import IndexModel, Route
from ..paths import ABSOLUTE, EMPTY, OUTSIDE, URL
from ..snapshot import FileEntry, RootSnapshot
from ..zones import INDEX, Zone, archive_location, is_markdown, trash_location, zone_of

MAX_DESCRIPTION = 160

_PROBLEM_TEXT = {
    URL: "a URL is not a memory file",
    ABSOLUTE: "absolute and home paths are not memory files; routes are relative to the root",
    OUTSIDE: "the path leaves the memory root",
    EMPTY: "the target is empty",
}
_ZONE_TEXT = {
    Zone.CORE: "`_core/` is always loaded and is never routed",
    Zone.INDEX: "the index cannot route to itself",
    Zone.ARCHIVE: "archived files are never loaded; recover the file to route it",
    Zone.ARCHIVE_INDEX: "the archive index is never loaded",
    Zone.TRASH: "trashed files are never loaded",
    Zone.HIDDEN: "hidden files are not memory",
}


def _range(route: Route) -> tuple[int, int, int, int]:
    return route.line, route.start, route.line, route.end


def active_by_name(snap: RootSnapshot) -> dict[str, list[str]]:
    """The active files by file name: one pass over the active zone, made once per check."""
    out: dict[str, list[str]] = {}
    for rel in snap.files.by_zone[Zone.ACTIVE]:
        out.setdefault(posixpath.basename(rel), []).append(rel)
    return out


def renamed_candidate(snap: RootSnapshot, path: str, by_name: dict[str, list[str]] | None = None) -> str | None:
    """An active file with the same name elsewhere: the likely new home of a moved file."""
    names = active_by_name(snap) if by_name is None else by_name
    found = sorted(rel for rel in names.get(posixpath.basename(path), ()) if rel != path)
    return found[0] if len(found) == 1 else None


def check_routes(snap: RootSnapshot, model: IndexModel) -> tuple[list[Finding], set[str]]:
    """Findings on `_index.md` itself, and the set of routed paths (for PM202 per file)."""
    out: list[Finding] = []
    seen: dict[str, int] = {}
    by_name: dict[str, list[str]] | None = None  # built at the first dangling route
    index_lines = snap.files[INDEX].doc.lines  # type: ignore[union-attr]
    for route in model.routes:
        r = _range(route)
        if route.path is None:
            out.append(Finding(INDEX, *r, "PM204", f"invalid route target: {_PROBLEM_TEXT[route.problem or EMPTY]}"))
            continue
        path = route.path
        zone = zone_of(path)
        if zone is not Zone.ACTIVE:
            out.append(Finding(INDEX, *r, "PM204", f"invalid route target `{path}`: {_ZONE_TEXT[zone]}"))
        elif not is_markdown(path):
            out.append(Finding(INDEX, *r, "PM204", f"invalid route target `{path}`: only Markdown files are memory files"))
        elif path in snap.dirs or path in snap.linked_dirs:
            out.append(Finding(INDEX, *r, "PM204", f"route target `{path}` is a folder, not a Markdown file"))
        elif snap.missing(path):
            if snap.is_file(archive_location(path)) or snap.is_file(trash_location(path)):
                where = archive_location(path) if snap.is_file(archive_location(path)) else trash_location(path)
                out.append(Finding(INDEX, *r, "PM205", f"`{path}` was archived (now `{where}`): remove this route"))
            else:
                if by_name is None:
                    by_name = active_by_name(snap)
                candidate = renamed_candidate(snap, path, by_name)
                hint = f"; did it move to `{candidate}`?" if candidate else ""
                out.append(Finding(INDEX, *r, "PM201", f"`{path}` does not exist{hint}"))
        if path in seen:
            out.append(Finding(INDEX, *r, "PM203", f"`{path}` is already routed on line {seen[path] + 1}"))
        else:
            seen[path] = route.line
        if len(route.description) > MAX_DESCRIPTION:
            out.append(at_line(INDEX, index_lines, route.line, "PM207",
                               f"route description is {len(route.description)} characters; keep it under {MAX_DESCRIPTION}"))
    for bad in model.malformed:
        out.append(Finding(INDEX, bad.line, bad.start, bad.line, bad.end, "PM206", bad.reason))

    return out, set(seen)


def check_unrouted(entry: FileEntry, routed: set[str]) -> Finding | None:
    """PM202 for one file, given the routed paths (only when `_index.md` exists)."""
    if entry.zone is Zone.ACTIVE and entry.markdown and entry.rel not in routed:
        return file_finding(entry.rel, entry.doc, "PM202", "no route in `_index.md`: agents never load this file")
    return None
