"""The lines of a file without parsing it: what a request needs to read the cursor's line
(and the server to convert positions) right after an edit, before anything parsed the new text."""

from __future__ import annotations

from ..snapshot import RootSnapshot


def lines_of(snap: RootSnapshot, rel: str) -> list[str]:
    """The file's lines as the Markdown parser splits them (CRLF and lone CR are breaks), or []."""
    entry = snap.files.get(rel)
    if entry is None or entry.text is None:
        return []
    cached = entry.cache.get("nav.lines")
    if cached is None:
        text = entry.text
        if "\r" in text:
            cached = entry.doc.lines  # type: ignore[union-attr]  # the parser's own split
        else:
            cached = text.split("\n")
            if cached and cached[-1] == "":
                cached.pop()
        entry.cache["nav.lines"] = cached
    return cached  # type: ignore[return-value]
