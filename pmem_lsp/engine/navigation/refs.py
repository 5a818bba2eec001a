"""Who points at what: every route in `_index.md` and every relative link in active and core
files, resolved to root-relative paths (docs/design.md §5 references, rename, code lens).

Each file's references depend on its text alone, so they are kept in the file entry's cache.
The reverse map (target → references) is kept per root state and brought up to date by
comparing file entries by identity: a change replaces an entry, so only changed files are
re-read. Nothing here looks at the disk.
"""

from __future__ import annotations

import posixpath
import weakref
from dataclasses import dataclass

from ..index_routes import Route, index_model
from ..memory_file import Link
from ..paths import normalize_target
from ..root_state import FileEntry, RootState
from ..zones import INDEX, Zone

ROUTE, LINK = "route", "link"
_LINK_ZONES = (Zone.ACTIVE, Zone.CORE)


@dataclass(frozen=True, slots=True)
class Ref:
    source: str  # root-relative path of the file holding the route or link
    line: int
    start: int  # character offsets of the written path in the line
    end: int
    kind: str  # ROUTE or LINK
    form: str  # a route's form (wiki, link, angle, code, bare) or "link"
    written: str  # the path as written (no angle brackets)
    target: str  # root-relative path, fragment and query removed
    fragment: str  # text after `#`, or ""




def routes_of(state: RootState) -> tuple[Route, ...]:
    entry = state.files.get(INDEX)
    model = index_model(entry) if entry is not None else None
    return model.routes if model is not None else ()


def _fragment(written: str) -> str:
    return written.partition("#")[2]


def link_target(link: Link, base: str) -> str | None:
    """The root-relative path of a relative link, or None (URL, anchor, absolute, outside)."""
    target = link.target.strip()
    if not target or target.startswith("#"):
        return None
    path, problem = normalize_target(target, base)
    if problem is not None or not path:
        return None
    return path


def refs_of(entry: FileEntry) -> tuple[Ref, ...]:
    """The references one file holds, kept until its text changes."""
    return entry.cached("nav.refs", lambda: _build_refs(entry))


def _build_refs(entry: FileEntry) -> tuple[Ref, ...]:
    out: list[Ref] = []
    if entry.zone is Zone.INDEX:
        model = index_model(entry)
        for r in model.routes if model is not None else ():
            if r.path is not None:
                out.append(Ref(entry.rel, r.line, r.start, r.end, ROUTE, r.form, r.written, r.path,
                               _fragment(r.written)))
    elif entry.zone in _LINK_ZONES and entry.markdown:
        doc = entry.doc
        base = posixpath.dirname(entry.rel)
        for link in doc.links if doc is not None else ():
            path = link_target(link, base)
            if path is not None:
                out.append(Ref(entry.rel, link.line, link.start, link.end, LINK, LINK, link.target, path,
                               _fragment(link.target)))
    return tuple(out)


class RefGraph:
    """References by source and by target, for one root state."""

    def __init__(self) -> None:
        self.entries: dict[str, FileEntry] = {}
        self.by_source: dict[str, tuple[Ref, ...]] = {}
        self.by_target: dict[str, list[Ref]] = {}

    def _drop(self, rel: str) -> None:
        self.entries.pop(rel, None)
        for ref in self.by_source.pop(rel, ()):
            refs = self.by_target.get(ref.target)
            if refs is not None:
                refs.remove(ref)
                if not refs:
                    del self.by_target[ref.target]

    def _add(self, entry: FileEntry) -> None:
        self.entries[entry.rel] = entry
        refs = refs_of(entry)
        if refs:
            self.by_source[entry.rel] = refs
            for ref in refs:
                self.by_target.setdefault(ref.target, []).append(ref)

    def sync(self, state: RootState) -> None:
        files = state.files
        for rel in [rel for rel, entry in self.entries.items() if files.get(rel) is not entry]:
            self._drop(rel)
        entries = self.entries
        for rel, entry in files.items():
            if entries.get(rel) is not entry and (entry.zone is Zone.INDEX or entry.zone in _LINK_ZONES):
                self._add(entry)

    def refs_to(self, path: str) -> list[Ref]:
        """Routes and links to `path`, in file order (the index first)."""
        refs = list(self.by_target.get(path, ()))
        refs.sort(key=lambda r: (r.source != INDEX, r.source, r.line, r.start))
        return refs

    def refs_under(self, folder: str) -> list[Ref]:
        """References to `folder` itself or to anything inside it."""
        prefix = folder + "/"
        out: list[Ref] = []
        for target, refs in self.by_target.items():
            if target == folder or target.startswith(prefix):
                out.extend(refs)
        return out


_GRAPHS: weakref.WeakKeyDictionary[RootState, RefGraph] = weakref.WeakKeyDictionary()


def ref_graph(state: RootState) -> RefGraph:
    """The graph of `snap`, brought up to date with the entries that changed since last time."""
    graph = _GRAPHS.get(state)
    if graph is None:
        graph = _GRAPHS[state] = RefGraph()
    graph.sync(state)
    return graph
