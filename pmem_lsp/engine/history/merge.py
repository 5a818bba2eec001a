"""Undo of one file, three-way: what an entry changed in it, taken back out of the file as it is
now, keeping everything written after. `git merge-file` is the engine; a line a later change
touched too is a conflict, and a conflict changes nothing."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from .git import Git


@dataclass(frozen=True)
class Reverted:
    """The text the file should hold after the undo (None: the undo would remove the file), or
    why it cannot be undone (`conflict`: the lines of the current file that block it)."""

    rel: str
    text: bytes | None = None
    conflict: str | None = None


def revert_file(git: Git, work: Path, rel: str, current: bytes | None, at_entry: bytes | None,
                before_entry: bytes | None) -> Reverted:
    """`work`: a private folder for the three texts (the store's: memory never goes to /tmp)."""
    if at_entry == before_entry:
        return Reverted(rel, current)
    if current == before_entry:  # already as it was before the entry
        return Reverted(rel, current)
    if at_entry is None:  # the entry created the file
        if current == at_entry or current is None:
            return Reverted(rel, None)
        return Reverted(rel, None, "it was created by that entry and changed since: undoing would remove "
                                   "those later changes too")
    if current is None:
        return Reverted(rel, conflict="it was removed after that entry")
    if before_entry is None:  # the entry removed it… and it is back
        return Reverted(rel, conflict="it was removed by that entry and written again since")
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        names = []
        for label, data in (("current", current), ("entry", at_entry), ("before", before_entry)):
            path = Path(tmp) / label
            path.write_bytes(data)
            names.append(str(path))
        merged = git.run("merge-file", "-p", "-L", "now", "-L", "entry", "-L", "before-entry", *names, check=False)
        # merge-file's exit status is the number of conflicts; its markers say where they are.
        if b"\n<<<<<<< now" in b"\n" + merged:
            return Reverted(rel, conflict=f"a later change touched the same lines ({_conflict_lines(merged)})")
    return Reverted(rel, merged)


def _conflict_lines(merged: bytes) -> str:
    """Where the conflicts are, as line numbers of the file now: only lines outside a conflict
    and on its "now" side are lines of the current file."""
    spans = []
    line_now = 0
    side = "outside"  # outside, now (the current file's lines), other (the entry's side)
    start = 0
    for raw in merged.decode("utf-8", "replace").split("\n"):
        if raw.startswith("<<<<<<< now"):
            side, start = "now", line_now + 1
        elif side == "now" and raw.startswith("======="):
            side = "other"
            spans.append(f"line {start}" if line_now <= start else f"lines {start}–{line_now}")
        elif side == "other" and raw.startswith(">>>>>>> before-entry"):
            side = "outside"
        elif side != "other":
            line_now += 1
    return ", ".join(spans) if spans else "unknown lines"
