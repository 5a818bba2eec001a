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
                before_entry: bytes | None, lines_independent: bool = False) -> Reverted:
    """`work`: a private folder for the three texts (the store's: memory never goes to /tmp).
    `lines_independent`: the file is a list of independent lines (the indexes: a route, a
    record), so lines inserted at the same place by both sides are both kept — a route added
    since next to the one the undo brings back is no conflict."""
    if at_entry == before_entry:
        return Reverted(rel, current)
    if current == before_entry:  # already as it was before the entry
        return Reverted(rel, current)
    if before_entry is None:  # the entry created the file: undoing it removes it
        if current == at_entry or current is None:
            return Reverted(rel, None)
        return Reverted(rel, None, "it was created by that entry and changed since: undoing would remove "
                                   "those later changes too")
    if at_entry is None:  # the entry removed the file: undoing it brings it back
        if current is None:
            return Reverted(rel, before_entry)
        return Reverted(rel, conflict="it was removed by that entry and written again since")
    if current is None:
        return Reverted(rel, conflict="it was removed after that entry")
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        names = []
        for label, data in (("current", current), ("entry", at_entry), ("before", before_entry)):
            path = Path(tmp) / label
            path.write_bytes(data)
            names.append(str(path))
        labels = ["-L", "now", "-L", "entry", "-L", "before-entry"]
        merged = git.run("merge-file", "-p", *labels, *names, check=False)
        # merge-file's exit status is the number of conflicts; its markers say where they are.
        if lines_independent and b"\n<<<<<<< now" in b"\n" + merged:
            both = _both_insertions(git.run("merge-file", "-p", "--diff3", *labels, *names, check=False))
            merged = both if both is not None else merged
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


def _both_insertions(merged: bytes) -> bytes | None:
    """A `--diff3` merge with every conflict made of lines both sides only inserted (the
    entry's side is empty), resolved by keeping both: the lines there now, then the ones the
    undo brings back. None when a conflict touches a line that was there (a real conflict)."""
    out: list[bytes] = []
    now: list[bytes] = []
    base: list[bytes] = []
    side = "outside"
    for line in merged.splitlines(keepends=True):
        if side == "outside" and line.startswith(b"<<<<<<< now"):
            side, now, base = "now", [], []
        elif side == "now" and line.startswith(b"||||||| entry"):
            side = "base"
        elif side == "base" and line.startswith(b"======="):
            if base:
                return None
            side = "other"
            out += now
        elif side == "other" and line.startswith(b">>>>>>> before-entry"):
            side = "outside"
        elif side == "now":
            now.append(line)
        elif side == "base":
            base.append(line)
        else:
            out.append(line)
    return b"".join(out) if side == "outside" else None
