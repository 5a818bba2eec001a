"""Code lenses on an active file's first line: routed or not, references, last change.

Listing them costs nothing (a zone check); each title is computed only when the editor
resolves the lens it is about to show.
"""

from __future__ import annotations

from ..root_state import RootState
from ..zones import Zone, zone_of
from .hover_text import changed_date
from .refs import ref_graph, routes_of

ROUTED, REFERENCES, CHANGED = "routed", "references", "changed"
KINDS = (ROUTED, REFERENCES, CHANGED)


def lens_kinds(state: RootState, rel: str) -> tuple[str, ...]:
    """The lenses `rel` gets (on line 0): only active Markdown files have them."""
    entry = state.files.get(rel)
    if entry is None or not entry.markdown or zone_of(rel) is not Zone.ACTIVE:
        return ()
    return KINDS


def lens_title(state: RootState, rel: str, kind: str) -> str | None:
    if kind == ROUTED:
        count = sum(1 for r in routes_of(state) if r.path == rel)
        return "no route" if count == 0 else "routed" if count == 1 else f"routed {count} times"
    if kind == REFERENCES:
        total = len(ref_graph(state).refs_to(rel))
        return f"{total} reference{'s' if total != 1 else ''}"
    if kind == CHANGED:
        entry = state.files.get(rel)
        return f"changed {changed_date(entry)}" if entry is not None else None
    return None
