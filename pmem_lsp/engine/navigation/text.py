"""The lines of a file without parsing it: what a request needs to read the cursor's line
(and the server to convert positions) right after an edit, before anything parsed the new text."""

from __future__ import annotations

from ..root_state import RootState


def lines_of(state: RootState, rel: str) -> list[str]:
    """The file's lines as the Markdown parser splits them (CRLF and lone CR are breaks), or []."""
    entry = state.files.get(rel)
    index = entry.line_index if entry is not None else None
    return index.lines if index is not None else []
