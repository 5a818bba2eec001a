"""PM201–PM207: routes in `_index.md` against the files that exist (docs/design.md §2.3), and their
fixes: remove a route, point it to the file it likely meant, add a route for an unrouted file."""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import TYPE_CHECKING

from ..findings import Finding, at_line, entry_finding
from ..fixes import Fix, TextEdit, text_fix, text_of
from ..index_edit import (
    insert_route,
    link_destination,
    reads_back,
    remove_lines,
    route_for,
    routes_to,
    state_dialect,
)
from ..index_routes import ANGLE, LINK, NO_DESCRIPTION, WIKI, IndexModel, Route, index_model, parse_index
from ..line_index import split_keepends
from ..names import one_line
from ..paths import ABSOLUTE, EMPTY, OUTSIDE, URL, normalize_target
from ..root_state import FileEntry, RootState
from ..rule import E, FileCheck, I, Rule, W
from ..saved_routes import saved_line
from ..zones import ARCHIVE_INDEX, INDEX, Zone, archive_location, hidden_part, is_markdown, trash_location, zone_of

if TYPE_CHECKING:
    from ..analysis import Analysis

RULES = (
    Rule("PM201", "route-dangling", E,
             "This route points to a file that does not exist. Agents following it find nothing."),
    Rule("PM202", "route-missing", W,
             "This active file has no route in `_index.md`, so agents never load it on demand. "
             "Add a one-line route, or archive the file."),
    Rule("PM203", "route-duplicate", W,
             "The same file is routed more than once. Keep one line per file."),
    Rule("PM204", "route-invalid-target", E,
             "Routes point to active on-demand Markdown files inside the root. `_core/` is always "
             "loaded, `_archive/` is never loaded, and absolute paths, URLs, hidden and "
             "non-Markdown files are not memory files."),
    Rule("PM205", "route-archived", E,
             "This route points to a file that now lives in `_archive/`. Archived files must not "
             "be routed: remove the line (recover the file to route it again)."),
    Rule("PM206", "route-malformed", W,
             "An index line mentions a file but does not start with a target, or starts with one "
             "that cannot be read. A route is one line: a target (`[Title](path)`, `<path>`, "
             "`` `path` ``, `[[path]]` or a bare `path.md`), then a separator and a short "
             "description."),
    Rule("PM207", "route-description-long", I,
             "This route's description is over 160 characters. The index is read on every "
             "activation; keep each route to one short line."),
    Rule("PM209", "route-description-missing", W,
             "This route has a target but no description, so an agent reading the index cannot "
             "tell what the file holds without opening it. Add a separator and a short "
             "description after the target (`- [Title](path) — what it is`). Until issue 26 this "
             "was part of PM206: settings that select, ignore or set the severity of PM206 "
             "still cover it."),
)


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


def active_by_name(state: RootState) -> dict[str, list[str]]:
    """The active files by file name: one pass over the active zone, made once per check."""
    out: dict[str, list[str]] = {}
    for rel in state.files.by_zone[Zone.ACTIVE]:
        out.setdefault(posixpath.basename(rel), []).append(rel)
    return out


def renamed_candidate(state: RootState, path: str, by_name: dict[str, list[str]] | None = None) -> str | None:
    """An active file with the same name elsewhere: the likely new home of a moved file."""
    names = active_by_name(state) if by_name is None else by_name
    found = sorted(rel for rel in names.get(posixpath.basename(path), ()) if rel != path)
    return found[0] if len(found) == 1 else None


def literal_targets(route: Route) -> list[str]:
    """The paths a route's target names when its `%` escapes are read literally (the file
    `19%22 Server Rack.md`, routed as written): every escape kept, or every escape but `%20`
    (a space written the link's way) kept. Empty when it has no `%`."""
    if "%" not in route.written or route.path is None:
        return []
    out = []
    for written in (route.written.replace("%", "%25"), route.written.replace("%", "%25").replace("%2520", "%20")):
        literal, problem = normalize_target(written)
        if problem is not None or literal is None or literal == route.path:
            continue
        if route.path.endswith(".md") and not literal.endswith(".md"):
            literal += ".md"  # a wiki link leaves `.md` out
        if literal not in out:
            out.append(literal)
    return out


def _escaped_route(route: Route) -> str | None:
    """A route to a note whose name holds `?` or `#` (`notes/Rust ?.md`, `notes/# Lambda.md`):
    a link reads them as the start of a query and a fragment, so the path ends before them.
    The target written with `%3F` and `%23`, when that names a Markdown file; else None."""
    written = route.written
    if route.form == WIKI or not ("?" in written or "#" in written):
        return None  # a wiki link's `#` is its heading: it cannot name such a file at all
    escaped = written.replace("?", "%3F").replace("#", "%23")
    if escaped.startswith("$"):
        escaped = "./" + escaped  # a leading `$` reads as an environment variable, not a name
    path, problem = normalize_target(escaped)
    return escaped if problem is None and path is not None and is_markdown(path) else None


def _query_or_fragment_finding(state: RootState, route: Route, r: tuple[int, int, int, int],
                               escaped: str) -> Finding:
    path, _ = normalize_target(escaped)
    marks = " and ".join(f"`{c}`" for c in "?#" if c in route.written)
    there = "" if path is None or state.missing(path) else f" (`{path}` is there)"
    shown_target = f"<{escaped}>" if " " in escaped and route.form in (LINK, ANGLE) else escaped
    return Finding(INDEX, *r, "PM204",
                   f"the route's target ends where its {marks} starts (a link reads `?` as a query and `#` as "
                   f"a fragment): write them as `%3F` and `%23`, `{shown_target}`{there}",
                   data={"escaped": escaped, "path": path})


def check_routes(state: RootState, model: IndexModel) -> tuple[list[Finding], set[str], set[str]]:
    """Findings on `_index.md` itself, the set of routed paths (for PM202 per file), and the
    file names of the routes to nothing (a file of that name appearing or vanishing changes
    their "did it move?" hint: `Analysis.update` re-checks the routes then, and only then)."""
    out: list[Finding] = []
    seen: dict[str, int] = {}
    dangling_names: set[str] = set()
    by_name: dict[str, list[str]] | None = None  # built at the first dangling route
    index_doc = state.files[INDEX].doc
    assert index_doc is not None  # `model` was parsed from it
    index_lines = index_doc.lines
    for route in model.routes:
        r = _range(route)
        if route.path is None:
            # `$?.md` read up to its `?` is `$`, an environment variable's form: say what it is.
            escaped = _escaped_route(route)
            out.append(_query_or_fragment_finding(state, route, r, escaped) if escaped is not None else
                       Finding(INDEX, *r, "PM204", f"invalid route target: {_PROBLEM_TEXT[route.problem or EMPTY]}"))
            continue
        path = route.path
        zone = zone_of(path)
        if zone is Zone.HIDDEN:
            # Say which part hides it and what to do: a name that looks ordinary in a listing
            # (`.to().md`, a method's name) is otherwise refused without a way out.
            part = hidden_part(path)
            out.append(Finding(INDEX, *r, "PM204", f"invalid route target `{path}`: {_ZONE_TEXT[zone]} (`{part}` "
                               "starts with `.`): remove the route, or rename it so that no part of its path "
                               "starts with `.`"))
        elif zone is not Zone.ACTIVE:
            out.append(Finding(INDEX, *r, "PM204", f"invalid route target `{path}`: {_ZONE_TEXT[zone]}"))
        elif (escaped := _escaped_route(route)) is not None and (not is_markdown(path) or path in state.dirs):
            out.append(_query_or_fragment_finding(state, route, r, escaped))
        elif not is_markdown(path):
            out.append(Finding(INDEX, *r, "PM204",
                               f"invalid route target `{path}`: only Markdown files are memory files"))
        elif path in state.dirs or path in state.linked_dirs:
            out.append(Finding(INDEX, *r, "PM204", f"route target `{path}` is a folder, not a Markdown file"))
        elif state.missing(path):
            if state.is_file(archive_location(path)) or state.is_file(trash_location(path)):
                where = archive_location(path) if state.is_file(archive_location(path)) else trash_location(path)
                out.append(Finding(INDEX, *r, "PM205", f"`{path}` was archived (now `{where}`): remove this route"))
            else:
                dangling_names.add(posixpath.basename(path))
                literals = literal_targets(route)
                # The literal name appearing or vanishing changes the message, as a rename's does.
                dangling_names.update(posixpath.basename(p) for p in literals)
                literal = next((p for p in literals if state.is_file(p)), None)
                if literal is not None:
                    # `19%22 Server Rack.md`: the file's name holds what reads as an escape.
                    out.append(Finding(INDEX, *r, "PM201",
                                       f"`{path}` does not exist, but `{literal}` does: the route's `%` escapes "
                                       "are decoded; write each `%` of the name as `%25` to route that file",
                                       data={"literal": literal}))
                else:
                    if by_name is None:
                        by_name = active_by_name(state)
                    candidate = renamed_candidate(state, path, by_name)
                    hint = f"; did it move to `{candidate}`?" if candidate else ""
                    out.append(Finding(INDEX, *r, "PM201", f"`{path}` does not exist{hint}"))
        if path in seen:
            out.append(Finding(INDEX, *r, "PM203", f"`{path}` is already routed on line {seen[path] + 1}"))
        else:
            seen[path] = route.line
        if len(route.description) > MAX_DESCRIPTION:
            out.append(at_line(INDEX, index_lines, route.line, "PM207",
                               f"route description is {len(route.description)} characters; "
                               f"keep it under {MAX_DESCRIPTION}"))
    for bad in model.malformed:
        if bad.reason == NO_DESCRIPTION:
            out.append(Finding(INDEX, bad.line, bad.start, bad.line, bad.end, "PM209",
                               "route has no description: add a short one after the target (` — what it is`)"))
        else:
            # The fix replaces the text it read (`was`), and only while the line still holds it.
            data = None if bad.route is None else {"route": bad.route,
                                                   "was": index_lines[bad.line][bad.start:bad.end]}
            out.append(Finding(INDEX, bad.line, bad.start, bad.line, bad.end, "PM206", bad.reason, data=data))

    return out, set(seen), dangling_names


def check_unrouted(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    """PM202 for one active Markdown file (only when `_index.md` exists). A file that a line of
    the index means but that cannot be read as a route (PM206 there) is told which line: "no
    route" would be untrue, and the fix is that line's."""
    routed = analysis.routed
    if routed is None or not entry.markdown or entry.rel in routed:
        return []
    line = _meant_by(analysis.state).get(entry.rel)
    if line is not None:
        return [entry_finding(entry, "PM202", f"its route on line {line + 1} of `_index.md` cannot be read (PM206 "
                                              "there): agents never load this file until that line is fixed")]
    return [entry_finding(entry, "PM202", "no route in `_index.md`: agents never load this file; add a route "
                                          "(`pmem route add`, or the quick fix) or archive it")]


def _meant_by(state: RootState) -> dict[str, int]:
    """The files that unreadable lines of `_index.md` mean (`MalformedLine.target`), each with
    its first such line; kept with the index's parse."""
    entry = state.files.get(INDEX)
    model = index_model(entry) if entry is not None else None
    if entry is None or model is None:
        return {}
    return entry.cached(_MEANT_KEY, _first_lines, model)  # asked twice a file (PM202, its facts): kept


_MEANT_KEY = "index-meant"


def _first_lines(model: IndexModel) -> dict[str, int]:
    out: dict[str, int] = {}
    for bad in model.malformed:
        if bad.target is not None:
            out.setdefault(bad.target, bad.line)
    return out


def _routed(analysis: Analysis, entry: FileEntry) -> tuple[bool, int | None] | None:
    if analysis.routed is None:
        return None
    return entry.rel in analysis.routed, _meant_by(analysis.state).get(entry.rel)


FILE_CHECKS = (FileCheck(("PM202",), frozenset({Zone.ACTIVE}), check_unrouted, needs_text=False, depends=_routed),)



# -- fixes ----------------------------------------------------------------------
def _route_at(state: RootState, finding: Finding) -> tuple[str, Route] | None:
    if finding.path != INDEX:
        return None
    text = text_of(state, INDEX)
    doc = state.doc(INDEX)
    if text is None or doc is None:
        return None
    for route in parse_index(doc).routes:
        if route.line == finding.line and route.start == finding.col and route.path is not None:
            return text, route
    return None


def _remove_route(state: RootState, finding: Finding, title: str, preferred: bool) -> list[Fix]:
    found = _route_at(state, finding)
    if found is None:
        return []
    text, route = found
    return text_fix(title.format(path=route.path), finding.code, INDEX, text,
                     remove_lines(text, {route.line}), preferred)


def _written_path(route: Route, line: str, new_path: str) -> str:
    """`new_path` written the way `route` wrote its target: `./`, `#fragment`, a wiki-link's
    missing `.md`, escapes where the form needs them."""
    written = route.written
    cut = min((i for i in (written.find("#"), written.find("?")) if i >= 0), default=len(written))
    base, fragment = written[:cut], written[cut:]
    out = new_path
    if route.form == WIKI and not base.lower().endswith(".md") and out.lower().endswith(".md"):
        out = out[:-3]
    angled = route.form == LINK and route.start > 0 and line[route.start - 1] == "<"
    if angled:
        out = out.replace("%", "%25").replace("#", "%23").replace("?", "%3F")
    elif route.form == LINK:
        out = link_destination(out)
    if base.startswith("./") and not out.startswith("<"):
        out = "./" + out
    return out + fragment


MAX_REPOINTS = 3
_CLOSE_ENOUGH = 0.6


def _stem(rel: str) -> str:
    return posixpath.basename(rel).rsplit(".", 1)[0].casefold()


def _closeness(missing: str, rel: str, title: str | None) -> float:
    """How likely `rel` is the file a route to `missing` meant: a name that starts with the
    other (`coffee` → `coffee-brewing`), else the closest of its name and its title."""
    want, have = _stem(missing), _stem(rel)
    if want and have.startswith(want) or have and want.startswith(have):
        return 0.95
    import difflib  # only for a route to nothing: not imported by every check

    score = difflib.SequenceMatcher(None, want, have).ratio()
    if title:
        score = max(score, difflib.SequenceMatcher(None, want, title.casefold()).ratio())
    return score


def repoint_candidates(state: RootState, missing: str, routed: set[str]) -> list[str]:
    """Active files a dangling route to `missing` likely meant, best first: the one file of the
    same name elsewhere, then unrouted files whose name or title is close."""
    same = renamed_candidate(state, missing)
    if same is not None:
        return [same]
    scored = []
    for rel in state.files.by_zone[Zone.ACTIVE]:
        if rel in routed or not is_markdown(rel):
            continue
        doc = state.doc(rel)
        score = _closeness(missing, rel, doc.title_text if doc is not None else None)
        if score >= _CLOSE_ENOUGH:
            scored.append((-score, rel))
    return [rel for _score, rel in sorted(scored)[:MAX_REPOINTS]]


def _repoint(state: RootState, finding: Finding) -> list[Fix]:
    found = _route_at(state, finding)
    if found is None:
        return []
    text, route = found
    doc = state.doc(INDEX)
    assert doc is not None  # _route_at found the route in it
    routed = {r.path for r in parse_index(doc).routes if r.path}
    literal = (finding.data or {}).get("literal")
    candidates = [literal] if isinstance(literal, str) else repoint_candidates(state, route.path or "", routed)
    fixes = []
    line = doc.lines[route.line]
    for n, candidate in enumerate(candidates):
        if candidate in routed:
            continue  # the new name is routed already: removing this line is the fix
        edit = TextEdit(INDEX, route.line, route.start, route.line, route.end,
                        _written_path(route, line, candidate))
        new_line = line[:route.start] + edit.new_text + line[route.end:]
        if not reads_back(new_line, candidate):
            # A name holding `%` (or what reads as an escape): written with `%25`.
            escaped = _written_path(route, line, candidate.replace("%", "%25"))
            new_line = line[:route.start] + escaped + line[route.end:]
            if not reads_back(new_line, candidate):
                continue
            edit = TextEdit(INDEX, route.line, route.start, route.line, route.end, escaped)
        fixes.append(Fix(f"Point to `{candidate}`", finding.code, (edit,), n == 0 and len(candidates) == 1))
    return fixes


def add_route(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    if finding.path in _meant_by(state):
        return []  # a line of the index means it already: its fix (PM206) mends that line
    fix = route_fix(state, finding.path)
    return [fix] if fix is not None else []


def route_fix(state: RootState, rel: str) -> Fix | None:
    """The edit that routes the active Markdown file `rel` in `_index.md` (the PM202 fix and
    `pmem.addRoute`); None when it is routed already, not an active file, or there is no
    readable index."""
    entry = state.files.get(rel)
    text = text_of(state, INDEX)
    if entry is None or entry.zone is not Zone.ACTIVE or not entry.markdown or text is None or routes_to(text, rel):
        return None
    saved = saved_line(text_of(state, ARCHIVE_INDEX), rel, state.is_file)
    if saved is not None and saved.line is None:
        return None  # the record keeps a line that no longer reads as a route: no made-up one
    route = saved.line if saved is not None and saved.line else route_for(text, rel, entry.doc,
                                                                           dialect=state_dialect(state))
    fixes = text_fix("Add route to _index.md", "PM202", INDEX, text, insert_route(text, rel, route), True)
    return fixes[0] if fixes else None


def fix_dangling(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    return _repoint(state, finding) + _remove_route(state, finding, "Remove route to `{path}`", False)


def fix_archived(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    return _remove_route(state, finding, "Remove route to `{path}`", True)


def fix_duplicate(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    return _remove_route(state, finding, "Remove duplicate route", True)


def fix_prose_route(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """The route a PM206 line meant (`data.route`), written over the text it read (`data.was`):
    a sentence ending in a path (`Notes for the launch are in projects/launch.md`) as the path
    first and the sentence as its description; a link whose target holds a space with the
    target in `<…>`."""
    route = (finding.data or {}).get("route")
    text = text_of(state, INDEX)
    if not route or text is None:
        return []
    lines = split_keepends(text)
    if finding.line >= len(lines):
        return []
    if lines[finding.line][finding.col:finding.end_col] != (finding.data or {}).get("was"):
        return []  # the line changed since the finding
    edit = TextEdit(INDEX, finding.line, finding.col, finding.line, finding.end_col, route)
    return [Fix(f"Write it as a route: {one_line(route)}", "PM206", (edit,), preferred=True)]


FIXES = {"PM201": fix_dangling, "PM202": add_route, "PM203": fix_duplicate, "PM205": fix_archived,
         "PM206": fix_prose_route}
