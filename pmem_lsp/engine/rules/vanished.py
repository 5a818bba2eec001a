"""PM210 `routes-vanished` and PM308 `records-vanished` (docs/design.md §11, "Findings"): route
lines or archive records that history last saw are gone while the files they name are still
there — a wipe (an agent's truncate-then-write, a sync tool), not a removal the user meant,
which archives the file. The fixes put exactly those lines back, from history.

They need the history store (`history/reference.py`, cached by the newest entry): with history
off, or nothing recorded for the root, they are silent. A route removed on purpose while its file
stays is seen until a pmem or editor entry records the index without it."""

from __future__ import annotations

import datetime as dt

from ..archive_index import record_location, records_of
from ..findings import Finding
from ..fixes import Fix, text_fix, text_of
from ..history.reference import KeptRoute, Reference, reference
from ..index_routes import index_model
from ..lifecycle.changes import AddRecord, AddRoute, apply_change
from ..lifecycle.safety import Refusal
from ..root_state import RootState
from ..rule import E, Rule
from ..zones import ARCHIVE_INDEX, INDEX, Zone, archive_location, zone_of

RULES = (
    Rule("PM210", "routes-vanished", E,
         "Routes that were in `_index.md` at the last history entry are gone, while the files they "
         "routed still exist and were not archived. Agents find a file only through its route, so "
         "those files are lost to them. This is what a wipe looks like (a program truncated the index "
         "and wrote part of it back), not a removal you meant: removing a file from memory is archiving "
         "it. The fix puts exactly those route lines back, from history; see what happened with "
         "`pmem history _index.md` and `pmem diff`."),
    Rule("PM308", "records-vanished", E,
         "Records that were in `_archive/_index.md` at the last history entry are gone, while the "
         "archived files they describe are still there. Without its record an archived file loses its "
         "original path, its saved route line and why it was archived, so recovering it cannot put it "
         "back as it was. The fix puts exactly those records back, from history."),
)


def vanished_routes(state: RootState, ref: Reference) -> list[KeptRoute]:
    entry = state.files.get(INDEX)
    model = index_model(entry) if entry is not None else None
    if model is None:
        return []
    routed = {r.path for r in model.routes if r.path}
    return [kept for target, kept in ref.routes.items()
            if target not in routed and target in state.files and zone_of(target) is Zone.ACTIVE
            and archive_location(target) not in state.files]


def vanished_records(state: RootState, ref: Reference) -> dict[str, str]:
    entry = state.files.get(ARCHIVE_INDEX)
    if entry is None:
        return {}
    recorded = {record_location(r) for r in records_of(entry)}
    return {location: block for location, block in ref.records.items()
            if location not in recorded and location in state.files}


def check_vanished(state: RootState) -> list[Finding]:
    ref = reference(state.root)
    if ref is None:
        return []
    out = []
    routes = vanished_routes(state, ref)
    if routes:
        many = len(routes) != 1
        out.append(Finding(INDEX, 0, 0, 0, 0, "PM210",
                           f"{len(routes)} route{'s' if many else ''} that were in `_index.md` at the last history "
                           f"entry {'are' if many else 'is'} gone while the file{'s' if many else ''} still "
                           f"exist{'' if many else 's'} and {'are' if many else 'is'} not archived (a wipe?); "
                           "the fix puts them back from history",
                           data={"targets": sorted(r.target for r in routes), "entry": ref.head[:12]}))
    records = vanished_records(state, ref)
    if records:
        count = f"{len(records)} record{'s' if len(records) != 1 else ''}"
        out.append(Finding(ARCHIVE_INDEX, 0, 0, 0, 0, "PM308",
                           f"{count} that were in `_archive/_index.md` at the last history entry "
                           f"{'are' if len(records) != 1 else 'is'} gone while the archived files are still "
                           "there; the fix puts them back from history",
                           data={"locations": sorted(records), "entry": ref.head[:12]}))
    return out


def restored_index(text: str, routes: list[KeptRoute]) -> str:
    """`text` with each vanished route line back where it was (beside its old neighbours, which
    come back first when they were routes too), else in its folder's section."""
    for kept in routes:
        try:
            text = apply_change(AddRoute(kept.target, kept.line, kept.above, kept.below), INDEX, text)
        except Refusal:
            continue
    return text


def fix_routes(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    ref = reference(state.root)
    text = text_of(state, INDEX)
    if ref is None or text is None:
        return []
    routes = vanished_routes(state, ref)  # in the order the index held them: neighbours first
    if not routes:
        return []
    return text_fix(f"Restore {len(routes)} vanished route{'s' if len(routes) != 1 else ''} from history",
                    "PM210", INDEX, text, restored_index(text, routes), preferred=True)


def fix_records(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    ref = reference(state.root)
    text = text_of(state, ARCHIVE_INDEX)
    if ref is None or text is None:
        return []
    records = vanished_records(state, ref)
    new = text
    for location, block in records.items():
        try:
            new = apply_change(AddRecord(location, block), ARCHIVE_INDEX, new)
        except Refusal:
            continue
    return text_fix(f"Restore {len(records)} vanished record{'s' if len(records) != 1 else ''} from history",
                    "PM308", ARCHIVE_INDEX, text, new, preferred=True)


FIXES = {"PM210": fix_routes, "PM308": fix_records}
