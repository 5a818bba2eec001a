"""What a lifecycle write does to an index, as data, and doing it again on the index as it is now.

A plan is made against the text the indexes held at the preview. By the time a write runs —
after the user took a minute to confirm, after the editor moved the file — an agent may have
rewritten `_index.md` or `_archive/_index.md`. So each write carries its change (which route
lines to remove, which route to add, which record to add, update or remove), and `apply_change`
makes that change to the current text: every other line stays as it is now (an agent's added or
reordered lines survive), and when what the user confirmed is no longer there — the route line
was changed or removed, the record was edited, a record for the destination appeared, a file to
create exists — it refuses (changed-since-preview) rather than guess.

This is the one place for that rule: re-validation at confirmation (`operations.replan`), the
filesystem applier (before the first step and at each write) and the server's workspace edits
(computed from the current buffer or disk text at the moment they are sent) all call it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..archive_index import ArchiveRecord, record_location
from ..index_edit import (
    append_record,
    find_records,
    insert_route,
    insert_route_near,
    remove_lines,
    remove_record,
    routes_to,
    update_record,
)
from ..line_index import line_of, split_keepends
from .safety import CHANGED, COLLISION, Refusal

POSTCONDITION = "nothing-dropped"  # the refusal's rule: a write would drop what it did not mean to drop

INDEX_SKELETON = "# Memory index\n"

Fields = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CreateText:
    """Create the file with `text`; it must not exist."""

    text: str


@dataclass(frozen=True)
class ReplaceText:
    """Replace the whole text of a memory file (`pmem save`): only while it still holds
    exactly `before`, the text the preview's diff was made against."""

    before: str
    text: str


@dataclass(frozen=True)
class RemoveRoutes:
    """Remove these route lines to `target` (exact texts, without line endings) from `_index.md`."""

    target: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class AddRoute:
    """Add `line` at the end of the section of `target`'s top folder, unless a route to `target`
    exists already (recover never adds a second one). A recover gives the line's old
    neighbours (`after`: the line above it, `before`: the one below): it goes back there."""

    target: str
    line: str
    after: str | None = None
    before: str | None = None


@dataclass(frozen=True)
class AddRecord:
    """Append the record `text` for the file at `location`; no record for it may exist.
    `placed`: the same record with where its route line was (its neighbours in `_index.md`),
    written instead when given. Not part of what the user confirms: an agent's line added next
    to the route meanwhile changes the neighbours, not the change (docs/decisions.md)."""

    location: str
    text: str
    placed: str = field(default="", compare=False)


@dataclass(frozen=True)
class UpdateRecord:
    """Set `values` on the record for `location`, which must still hold exactly `fields`."""

    location: str
    fields: Fields
    values: Fields


@dataclass(frozen=True)
class RemoveRecord:
    """Remove the record for `location`, which must still hold exactly `fields`."""

    location: str
    fields: Fields


Change = CreateText | ReplaceText | RemoveRoutes | AddRoute | AddRecord | UpdateRecord | RemoveRecord


def record_fields(record: ArchiveRecord) -> Fields:
    return tuple((f.key, f.value) for f in record.fields)


def _changed(path: str, what: str) -> Refusal:
    return Refusal(CHANGED, f"`{path}` changed since the preview: {what}")


def _the_record(path: str, text: str, location: str, fields: Fields) -> ArchiveRecord:
    found = [r for r in find_records(text) if record_location(r) == location]
    if not found:
        raise _changed(path, f"the record for `{location}` is no longer there")
    if len(found) > 1:
        raise _changed(path, f"it now has {len(found)} records for `{location}`")
    if record_fields(found[0]) != fields:
        raise _changed(path, f"the record for `{location}` was edited")
    return found[0]


def apply_change(change: Change, path: str, current: str | None) -> str:
    """The text of `path` after `change`, made on `current` (None: the file does not exist).
    Raises a Refusal when the change no longer applies to what the file holds now."""
    if isinstance(change, CreateText):
        if current is not None:
            raise Refusal(COLLISION, f"`{path}` appeared since the preview; nothing was overwritten")
        return change.text
    if isinstance(change, AddRoute):
        if current is None:
            return insert_route(INDEX_SKELETON, change.target, change.line)
        if routes_to(current, change.target):
            return current  # a route to it exists already (an agent added one): none is added
        if change.after is not None or change.before is not None:
            return insert_route_near(current, change.target, change.line, change.after, change.before)
        return insert_route(current, change.target, change.line)
    if current is None:
        raise _changed(path, "the file is gone")
    if isinstance(change, ReplaceText):
        if current != change.before:
            raise _changed(path, "it was edited, so the diff shown is no longer the change")
        return change.text
    if isinstance(change, RemoveRoutes):
        wanted = list(change.lines)
        drop: set[int] = set()
        for route in routes_to(current, change.target):
            text = line_of(current, route.line)
            if text in wanted:
                wanted.remove(text)
                drop.add(route.line)
        if wanted:
            # Named by its target, not quoted: a route line can hold a secret (PM401).
            raise _changed(path, f"the route line to `{change.target}` was changed or removed")
        return remove_lines(current, drop)
    if isinstance(change, AddRecord):
        if any(record_location(r) == change.location for r in find_records(current)):
            raise _changed(path, f"a record for `{change.location}` appeared")
        return append_record(current, change.placed or change.text)
    if isinstance(change, UpdateRecord):
        record = _the_record(path, current, change.location, change.fields)
        return update_record(current, record, dict(change.values))
    if isinstance(change, RemoveRecord):
        record = _the_record(path, current, change.location, change.fields)
        return remove_record(current, record)
    raise TypeError(change)  # pragma: no cover - Change is a closed union


# -- the post-condition of a write, and its undo ---------------------------------------------
def _lines(text: str | None) -> Counter[str]:
    """The non-blank lines of `text`, without line endings, as a multiset: what routes and
    records are made of (blank lines carry neither)."""
    return Counter(line.rstrip("\r\n") for line in split_keepends(text or "") if line.strip())


def lost_lines(reference: str | None, current: str | None) -> Counter[str]:
    """The non-blank lines of `reference` missing from `current` (None: absent), as a multiset."""
    if reference is None:
        return Counter()
    return _lines(reference) - _lines(current)


def _block(text: str, location: str) -> Counter[str]:
    lines = split_keepends(text)
    out: Counter[str] = Counter()
    for r in find_records(text):
        if record_location(r) == location:
            out += Counter(x.rstrip("\r\n") for x in lines[r.heading_line:r.end] if x.strip())
    return out


def _declared(change: Change, before: str | None, after: str) -> tuple[Counter[str], Counter[str]]:
    """The lines `change` means to remove and to add (a multiset each)."""
    none: Counter[str] = Counter()
    if isinstance(change, RemoveRoutes):
        return Counter(change.lines), none
    if isinstance(change, AddRoute):
        added = Counter([change.line])
        return none, added + (_lines(INDEX_SKELETON) if before is None else none)
    if isinstance(change, AddRecord):
        # The record as it is written: a variant of it (its route's neighbours) when it has one.
        return none, _lines(getattr(change, "placed", "") or change.text)
    if isinstance(change, UpdateRecord):
        moved_to = dict(change.values).get("location", change.location)
        return _block(before or "", change.location), _block(after, moved_to)
    if isinstance(change, RemoveRecord):
        return _block(before or "", change.location), none
    return _lines(before), _lines(after)  # CreateText, ReplaceText: the whole text is the change


def check_effect(change: Change, path: str, before: str | None, after: str) -> None:
    """The post-condition of every index write, checked right before its rename: the new text
    is the text read, minus what the change removes, plus what it adds (non-blank lines, as
    multisets). A write that would drop or add anything else is refused, nothing written."""
    if isinstance(change, (CreateText, ReplaceText)):
        if after != change.text:
            raise Refusal(POSTCONDITION, f"`{path}` would not hold the text that was confirmed; it was not rewritten")
        return
    removable, addable = _declared(change, before, after)
    old, new = _lines(before), _lines(after)
    dropped = (old - new) - removable
    extra = (new - old) - addable
    if dropped or extra:
        what = []
        if dropped:
            what.append(f"drop {sum(dropped.values())} line(s) it did not mean to remove")
        if extra:
            what.append(f"add {sum(extra.values())} line(s) it did not mean to add")
        raise Refusal(POSTCONDITION, f"the write of `{path}` would {' and '.join(what)}; it was not rewritten")


def undo_change(change: Change, path: str, before: str | None, after: str, current: str | None) -> str | None:
    """The text of `path` with a write that took it from `before` to `after` undone, made on
    `current` (what it holds now; an agent may have written since). None: remove the file
    (it was created by the write). Raises a Refusal when the undo no longer applies."""
    if current == after:
        return before
    if isinstance(change, CreateText):
        raise _changed(path, "it was edited after pmem created it, so it was left as it is")
    if current is None:
        raise _changed(path, "the file is gone")
    if isinstance(change, ReplaceText):
        raise _changed(path, "it was edited after pmem wrote it, so pmem's text was left there")
    if isinstance(change, AddRoute):
        return apply_change(RemoveRoutes(change.target, (change.line,)), path, current)
    if isinstance(change, RemoveRoutes):
        return apply_change(AddRoute(change.target, change.lines[0]), path, current) if change.lines else current
    if isinstance(change, AddRecord):
        added = [r for r in find_records(after) if record_location(r) == change.location]
        if not added:
            raise _changed(path, f"the record for `{change.location}` is not there")
        return apply_change(RemoveRecord(change.location, record_fields(added[0])), path, current)
    record_lines = split_keepends(before or "")
    old = [r for r in find_records(before or "") if record_location(r) == change.location]
    if not old:
        raise _changed(path, f"the record for `{change.location}` was not there before")
    block = "".join(record_lines[old[0].heading_line:old[0].end])
    if isinstance(change, RemoveRecord):
        return apply_change(AddRecord(change.location, block), path, current)
    if isinstance(change, UpdateRecord):
        ours = [r for r in find_records(after) if record_location(r) == dict(change.values).get("location",
                                                                                               change.location)]
        if not ours:
            raise _changed(path, f"the record for `{change.location}` is not there")
        now = _the_record(path, current, record_location(ours[0]) or change.location, record_fields(ours[0]))
        lines = split_keepends(current)
        return "".join(lines[:now.heading_line]) + block + "".join(lines[now.end:])
    raise TypeError(change)  # pragma: no cover - Change is a closed union
