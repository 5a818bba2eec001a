"""Path completion (docs/design.md §5): in `_index.md`, files without a route first; inside Markdown
links anywhere, the entries of the folder the link has reached so far.

Every answer is capped: a 10k-file root must not produce a 10k-item list. When the cap cuts
the list, the result says it is incomplete so the editor asks again as the user types.
"""

from __future__ import annotations

import heapq
import posixpath
import re
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from ..findings import Finding
from ..fixes import text_of
from ..index_edit import format_target, route_style, state_dialect
from ..index_routes import INDEX_MODEL_KEY, WIKI
from ..root_state import FileEntry, RootState
from ..saved_routes import saved_line
from ..secrets import mask_secrets
from ..zones import ARCHIVE_INDEX, INDEX, Zone
from .hover_text import escape, has_secret
from .refs import routes_of
from .text import lines_of

LIMIT = 50  # the editor asks again as the user types (the list says it is incomplete)
FILE, FOLDER, ROUTE = "file", "folder", "route"

_MD = (".md", ".MD", ".Md", ".mD")
_ITEM = r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\*\*)?"
_RE_LINK = re.compile(r"\]\(\s*<?([^()\s<>]*)$")
_RE_WIKI = re.compile(r"\[\[([^\]|\n]*)$")
_RE_ANGLE = re.compile(_ITEM + r"<([^<>\s]*)$")
_RE_CODE = re.compile(_ITEM + r"`([^`\s]*)$")
_RE_BARE_ITEM = re.compile(_ITEM + r"([^\s\[<`*]*)$")
_RE_MARKER = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")  # a list item's marker, before its route


@dataclass(frozen=True, slots=True)
class Completion:
    label: str
    new_text: str
    start: int  # the text replaced on the cursor's line (character offsets)
    end: int
    kind: str  # FILE, FOLDER or ROUTE
    detail: str
    documentation: str  # Markdown, may be empty
    sort_text: str
    filter_text: str


@dataclass(frozen=True, slots=True)
class Completions:
    items: list[Completion]
    incomplete: bool


def _matcher(partial: str) -> Callable[[str], re.Match[str] | None] | None:
    """Case-insensitive subsequence match (`prgar` finds `projects/garden.md`)."""
    if not partial:
        return None
    # `[^a]*a[^b]*b…` anchored: each step jumps to the next occurrence, with no nested backtracking.
    return re.compile("".join(f"[^{re.escape(c)}]*{re.escape(c)}" for c in partial), re.IGNORECASE).match


def _first_bullet(entry: FileEntry, findings: Mapping[str, Sequence[Finding]]) -> str | None:
    doc = entry.doc
    if doc is None or doc.summary is None or not doc.summary.bullets or has_secret(findings, entry.rel):
        return None
    return mask_secrets(doc.summary.bullets[0].text)


def _title(entry: FileEntry, findings: Mapping[str, Sequence[Finding]]) -> str | None:
    doc = entry.doc
    title = doc.title_text if doc is not None else None
    return mask_secrets(title) if title else None


def _documentation(entry: FileEntry, findings: Mapping[str, Sequence[Finding]]) -> str:
    """Title and first Summary bullet, kept with the entry until its text changes."""
    key = ("nav.doc", has_secret(findings, entry.rel))
    return entry.cached(key, lambda: _build_documentation(entry, findings))


def _build_documentation(entry: FileEntry, findings: Mapping[str, Sequence[Finding]]) -> str:
    parts = []
    title = _title(entry, findings)
    if title:
        parts.append(f"**{escape(title)}**")
    bullet = _first_bullet(entry, findings)
    if bullet:
        parts.append(f"- {bullet}")
    elif has_secret(findings, entry.rel):
        parts.append("*Contains a likely secret; preview hidden.*")
    return "\n\n".join(parts)


_T = TypeVar("_T")

# The index facts last read, per root state: used while an oversized index is being edited.
_LAST: weakref.WeakKeyDictionary[RootState, dict[str, object]] = weakref.WeakKeyDictionary()


def _index_fact(state: RootState, key: str, compute: Callable[[], _T]) -> _T:
    """`compute()` for the current `_index.md`, kept with its entry until its text changes.

    An index over `index.maxBytes` (PM006) is not parsed again on every keystroke for the
    sake of completion: until something else parses it (a hover, symbols, links), its last
    known routes are used. Everything else gets the current index, parsed once per change.
    """
    entry = state.files.get(INDEX)
    if entry is None or entry.text is None:
        return compute()
    if key in entry.cache:
        return entry.cached(key, compute)
    last = _LAST.setdefault(state, {})
    oversized = len(entry.text) > state.settings.index.max_bytes
    if oversized and INDEX_MODEL_KEY not in entry.cache and key in last:
        return cast(_T, last[key])  # stored by the line below, under the same key
    value = last[key] = entry.cached(key, compute)
    return value


def routed_paths(state: RootState) -> frozenset[str]:
    """Every path `_index.md` routes."""
    return _index_fact(state, "nav.routed", lambda: frozenset(r.path for r in routes_of(state) if r.path))


def _active_paths(state: RootState) -> Collection[str]:
    by_zone = getattr(state.files, "by_zone", None)
    if by_zone is not None:
        return by_zone[Zone.ACTIVE]
    return [rel for rel, entry in state.files.items() if entry.zone is Zone.ACTIVE]


def _route_style_of(state: RootState) -> tuple[str, str, str]:
    """(list marker, target form, separator) most routes use, as the add-route fix writes them."""
    return _index_fact(state, "nav.style", lambda: route_style(state.files[INDEX].text or "",
                                                                    state_dialect(state)))


def _index_paths(state: RootState, partial: str, start: int, end: int, mode: str,
                 findings: Mapping[str, Sequence[Finding]], limit: int) -> Completions:
    """Active Markdown files as root-relative paths, files without a route first."""
    routed = routed_paths(state)
    match = _matcher(partial.removeprefix("./"))
    candidates = [rel for rel in _active_paths(state) if rel.endswith(_MD)]
    if match is not None:
        candidates = list(filter(match, candidates))
    unrouted = [rel for rel in candidates if rel not in routed]
    others = [rel for rel in candidates if rel in routed]
    if mode == ROUTE:
        others = []  # a second route to a routed file would be a duplicate (PM203)
    total = len(unrouted) + len(others)
    chosen = heapq.nsmallest(limit, unrouted)
    if len(chosen) < limit:
        chosen += heapq.nsmallest(limit - len(chosen), others)
    style = _route_style_of(state) if mode == ROUTE else None
    archive = text_of(state, ARCHIVE_INDEX) if style is not None else None
    items = []
    for rel in chosen:
        entry = state.files[rel]
        is_routed = rel in routed
        text = rel
        # A half-done recover's saved route line, exactly (engine/saved_routes.py); a saved
        # line that no longer reads as a route gets the bare path, never a made-up line.
        saved = saved_line(archive, rel, state.is_file) if archive else None
        if mode == WIKI:
            text = rel[:-3] if rel.lower().endswith(".md") else rel
        elif saved is not None:
            text = _RE_MARKER.sub("", saved.line, count=1) if saved.line is not None else rel
        elif style is not None:
            _marker, form, separator = style
            title = _title(entry, findings) or rel.rsplit("/", 1)[-1][:-3]
            description = _first_bullet(entry, findings) or title
            text = f"{format_target(form, rel, title)}{separator}{description}"
        items.append(Completion(
            label=rel, new_text=text, start=start, end=end, kind=ROUTE if style is not None else FILE,
            detail="routed in _index.md" if is_routed else "no route yet",
            documentation=_documentation(entry, findings),
            sort_text=f"{1 if is_routed else 0}{rel}", filter_text=rel))
    return Completions(items, total > len(items))


def _rank(base: int, child: str, lowered: str) -> int:
    return base if child.lower().startswith(lowered) else base + 1


def _folder_entries(state: RootState, rel: str, partial: str, char: int,
                    findings: Mapping[str, Sequence[Finding]], limit: int) -> Completions:
    """The files and folders of the folder a relative link has reached, by name."""
    dir_part, slash, name = partial.rpartition("/")
    base = posixpath.dirname(rel)
    joined = posixpath.join(base, dir_part) if slash else base
    folder = posixpath.normpath(joined) if joined else ""
    if folder == ".":
        folder = ""
    if folder == ".." or folder.startswith("../") or folder.startswith("/"):
        return Completions([], False)
    if folder and folder not in state.dirs:
        return Completions([], False)
    prefix = folder + "/" if folder else ""
    cut = len(prefix)
    match = _matcher(name)
    lowered = name.lower()
    found: list[tuple[int, str, str]] = []  # (rank, name, root-relative path); a prefix match ranks first
    for path, entry in state.files.items():
        if not path.startswith(prefix) or path == rel:
            continue
        child = path[cut:]
        if "/" in child or (match is not None and match(child) is None):
            continue
        found.append((_rank(0 if entry.markdown else 4, child, lowered), child, path))
    for path in state.dirs:
        if path and path.startswith(prefix) and "/" not in path[cut:]:
            child = path[cut:]
            if match is None or match(child) is not None:
                found.append((_rank(2, child, lowered), child + "/", path))
    if folder and (not name or name.startswith(".")):
        found.append((6, "../", posixpath.dirname(folder)))
    chosen = heapq.nsmallest(limit, found)
    items = []
    for rank, child, path in chosen:
        target = state.files.get(path)
        items.append(Completion(
            label=child, new_text=child, start=char - len(name), end=char,
            kind=FOLDER if child.endswith("/") else FILE,
            detail=path + ("/" if child.endswith("/") and path else ""),
            documentation=_documentation(target, findings) if target is not None and target.markdown else "",
            sort_text=f"{rank}{child}", filter_text=child))
    return Completions(items, len(found) > len(items))


def complete(state: RootState, rel: str, line: int, char: int,
             findings: Mapping[str, Sequence[Finding]] | None = None, limit: int = LIMIT) -> Completions | None:
    """Path completions at (line, char) of `rel`, or None when the cursor is not on a path."""
    findings = findings or {}
    lines = lines_of(state, rel)
    if not 0 <= line < len(lines):
        return None
    before = lines[line][:char]
    if rel == INDEX:
        for pattern, mode in ((_RE_WIKI, WIKI), (_RE_LINK, FILE), (_RE_ANGLE, FILE), (_RE_CODE, FILE),
                              (_RE_BARE_ITEM, ROUTE)):
            m = pattern.search(before)
            if m:
                partial = m.group(1)
                return _index_paths(state, partial, m.start(1), char, mode, findings, limit)
        return None
    m = _RE_LINK.search(before)
    if m:
        return _folder_entries(state, rel, m.group(1), char, findings, limit)
    return None
