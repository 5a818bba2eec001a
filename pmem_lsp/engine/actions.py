"""Which lifecycle actions a place in a file offers (docs/design.md §5): plain actions, which the server
turns into code actions that run `pmem.<op>` (and so confirm before they change anything).

- an active Markdown file: archive it — and, for each PM501 (stale), PM502 (concluded) or
  PM503 (duplicate) finding in view, archive it with that finding's reason, as its fix;
- an archived file, or its record in `_archive/_index.md`: recover, or delete (to the trash);
- a trashed file, or its record: recover, and purge once `recover-by` has passed — the fix of
  its PM304;
- PM001 on `_index.md`: upgrade, as its fix.

Delete is never offered on an active file (the format: archive it first).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .archive_index import TRASHED, ArchiveRecord, parse_date, record_location, records_of
from .findings import Finding
from .health_proposal import HEALTH_CODES, archive_reason
from .root_state import RootState
from .zones import ARCHIVE_INDEX, Zone, is_markdown, zone_of


@dataclass(frozen=True, slots=True)
class Action:
    title: str
    op: str  # upgrade, archive, delete, recover, purge: the command is `pmem.<op>`
    path: str | None  # the file acted upon (None for upgrade)
    reason: str | None = None
    answers: tuple[Finding, ...] = ()  # the findings it is the fix of (none: offered on the place)
    add_route: bool = False  # recover: add the proposed route for a file archived with none


def _record_at(state: RootState, line: int) -> ArchiveRecord | None:
    entry = state.files.get(ARCHIVE_INDEX)
    for record in records_of(entry) if entry is not None else []:
        if record.heading_line <= line < record.end:
            return record
    return None


def _record_of(state: RootState, location: str) -> ArchiveRecord | None:
    entry = state.files.get(ARCHIVE_INDEX)
    return next((r for r in records_of(entry) if record_location(r) == location), None) if entry is not None else None


def _recover(rel: str, record: ArchiveRecord | None) -> list[Action]:
    """Recover puts the root back as it was: a file archived with no route comes back with
    none; adding one is its own, explicit choice (issue 26)."""
    actions = [Action(f"Recover {rel}", "recover", rel)]
    if record is not None and record.saved_route is None and record.archived_unrouted:
        actions.append(Action(f"Recover {rel} and add a route", "recover", rel, add_route=True))
    return actions


def _file_actions(rel: str, record: ArchiveRecord | None, today: dt.date,
                  expired: tuple[Finding, ...]) -> list[Action]:
    zone = zone_of(rel)
    trashed = zone is Zone.TRASH or (record is not None and record.status == TRASHED)
    if zone is Zone.ACTIVE and is_markdown(rel):
        return [Action(f"Archive {rel}", "archive", rel)]
    if zone is Zone.ARCHIVE and not trashed:
        return [*_recover(rel, record), Action(f"Delete {rel} (move to trash)", "delete", rel)]
    if zone is Zone.TRASH:
        actions = _recover(rel, record)
        recover_by = parse_date(record.get("recover-by")) if record is not None else None
        if recover_by is not None and recover_by < today:
            actions.append(Action(f"Delete {rel} permanently", "purge", rel, answers=expired))
        return actions
    return []


def actions_at(state: RootState, rel: str, first_line: int, last_line: int, findings: Sequence[Finding],
               wanted: Collection[str], today: dt.date) -> list[Action]:
    """The lifecycle actions for lines `first_line`..`last_line` of `rel`. `findings`: the
    file's current findings; `wanted`: the codes of the diagnostics the user is looking at (a
    finding's fix is offered for those)."""
    here = [f for f in findings if f.code in wanted and f.line <= last_line and first_line <= f.end_line]
    out = [Action(f"Archive {rel} ({reason})", "archive", rel, reason, (f,))
           for f in here if f.code in HEALTH_CODES and (reason := archive_reason(f)) is not None]
    expired = tuple(f for f in here if f.code == "PM304")
    if rel == ARCHIVE_INDEX:
        record = _record_at(state, first_line)
        location = record_location(record) if record is not None else None
        if record is not None and location is not None:
            mine = tuple(f for f in expired if f.line == record.heading_line)
            out += _file_actions(location, record, today, mine)
    else:
        # The record says when a trashed file may be purged, and whether an archived one had a
        # route to come back with.
        record = _record_of(state, rel) if zone_of(rel) in (Zone.TRASH, Zone.ARCHIVE) else None
        out += _file_actions(rel, record, today, ())
    upgrade = tuple(f for f in here if f.code == "PM001")
    if upgrade:
        out.append(Action("Upgrade: create the missing lifecycle folders", "upgrade", None, answers=upgrade))
    return out
