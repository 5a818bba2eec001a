"""Renaming or moving memory files and folders in the editor (`workspace/willRenameFiles`).

The edits keep every route and relative link that points to a moved file correct, and the
relative links inside moved files too (they now start from another folder). Edits are for
the files as they are before the move (the editor applies them first). A move into
`_archive/` is not archiving and a move out of it is not recovering: those get no edits, and
a message pointing to the lifecycle action instead.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field

from ..fixes import TextEdit
from ..root_state import RootState
from ..zones import Zone, zone_of
from .refs import ROUTE, Ref, ref_graph

_ARCHIVE_ZONES = (Zone.ARCHIVE, Zone.TRASH, Zone.ARCHIVE_INDEX)


@dataclass(frozen=True, slots=True)
class RenameResult:
    edits: list[TextEdit]
    messages: list[str] = field(default_factory=list)


def _mover(moves: list[tuple[str, str]]) -> Callable[[str], str | None]:
    ordered = sorted(moves, key=lambda m: len(m[0]), reverse=True)  # the innermost move wins

    def moved(path: str) -> str | None:
        for source, dest in ordered:
            if path == source:
                return dest
            if path.startswith(source + "/"):
                return dest + path[len(source):]
        return None

    return moved


def _needs_escape(form: str, line: str, ref: Ref) -> bool:
    """A bare link target or a bare route path cannot hold a space."""
    angle = ref.start > 0 and line[ref.start - 1] == "<"
    return form in ("link", "bare") and not angle


def rewrite(ref: Ref, new_path: str, line: str) -> str:
    """`new_path` written the way `ref` wrote its path: fragment, `./`, trailing `/`, `.md`
    left out of a wiki-link, and `%`-escapes kept."""
    written = ref.written
    cut = min((i for i in (written.find("#"), written.find("?")) if i >= 0), default=len(written))
    path_part, suffix = written[:cut], written[cut:]
    new = new_path
    if ref.form == "wiki" and not path_part.lower().endswith(".md") and new.lower().endswith(".md"):
        new = new[:-3]
    if path_part.endswith("/") and not new.endswith("/"):
        new += "/"
    if path_part.startswith("./") and not new.startswith("../"):
        new = "./" + new
    if "%" in path_part:
        new = new.replace("%", "%25").replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    elif " " in new and _needs_escape(ref.form, line, ref):
        new = new.replace(" ", "%20")
    return new + suffix


def _blocked(source: str, dest: str) -> str | None:
    """Why a move gets no edits, as a message for the user; "" when silently none."""
    src_zone, dst_zone = zone_of(source), zone_of(dest)
    if Zone.HIDDEN in (src_zone, dst_zone):
        return ""
    if src_zone not in _ARCHIVE_ZONES and dst_zone in _ARCHIVE_ZONES:
        return (f"Moving {source} into _archive/ is not archiving: the route and the archive record "
                "are not updated. Undo the move and use the Archive action (pmem.archive) instead.")
    if src_zone in _ARCHIVE_ZONES and dst_zone not in _ARCHIVE_ZONES:
        return (f"Moving {source} out of _archive/ is not recovering: the saved route is not restored. "
                "Undo the move and use the Recover action (pmem.recover) instead.")
    return None


def rename_edits(state: RootState, moves: list[tuple[str, str]]) -> RenameResult:
    """Edits for moving each (old, new) root-relative path — files or folders — at once."""
    messages: list[str] = []
    kept: list[tuple[str, str]] = []
    for source, dest in moves:
        if not source or not dest or source == dest:
            continue
        why = _blocked(source, dest)
        if why is None:
            kept.append((source, dest))
        elif why:
            messages.append(why)
    if not kept:
        return RenameResult([], messages)
    graph = ref_graph(state)
    moved = _mover(kept)
    refs: dict[tuple[str, int, int], Ref] = {}
    for source, _dest in kept:
        folder = source in state.dirs and source not in state.files
        for ref in graph.refs_under(source) if folder else graph.refs_to(source):
            refs[(ref.source, ref.line, ref.start)] = ref
        prefix = source + "/"
        for holder, held in graph.by_source.items():
            if holder == source or (folder and holder.startswith(prefix)):
                for ref in held:
                    refs[(ref.source, ref.line, ref.start)] = ref
    edits: list[TextEdit] = []
    for ref in refs.values():
        new_target = moved(ref.target) or ref.target
        new_source = moved(ref.source) or ref.source
        doc = state.doc(ref.source)
        if doc is None:
            continue
        line = doc.lines[ref.line]
        if ref.kind == ROUTE:
            if new_target == ref.target:
                continue
            new_path = new_target
        else:
            new_path = posixpath.relpath(new_target, posixpath.dirname(new_source) or ".")
            if new_path == ".":
                continue
        new_written = rewrite(ref, new_path, line)
        if new_written != ref.written:
            edits.append(TextEdit(ref.source, ref.line, ref.start, ref.line, ref.end, new_written))
    return RenameResult(_without_overlaps(edits), messages)


def _without_overlaps(edits: list[TextEdit]) -> list[TextEdit]:
    """Sorted by position; an edit that overlaps the one before it in the same file is dropped."""
    out: list[TextEdit] = []
    for e in sorted(edits, key=lambda e: (e.path, e.line, e.col, e.end_col)):
        prev = out[-1] if out else None
        if prev is not None and prev.path == e.path and prev.line == e.line and e.col < prev.end_col:
            continue
        out.append(e)
    return out
