"""PM210 `routes-vanished` and PM308 `records-vanished` (docs/design.md §11, "Findings"): route
lines or archive records that history last saw are gone while the files they name are still
there — a wipe (an agent's truncate-then-write, a sync tool), not a removal the user meant,
which archives the file. The fixes put exactly those lines back, from history.

They need the history store (`history/reference.py`, cached by the newest entry): with history
off, or nothing recorded for the root, they are silent. A route removed on purpose while its file
stays is seen until a pmem or editor entry records the index without it."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ..archive_index import record_location, records_of
from ..findings import Finding
from ..fixes import Fix, text_fix, text_of
from ..history.reference import Reference, reference
from ..index_edit import append_record, find_records, newline_of
from ..index_routes import index_model, parse_index
from ..line_index import split_keepends
from ..memory_file import MemoryFile
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


@dataclass(frozen=True)
class KeptRoute:
    target: str
    line: str  # the route line exactly, without its line ending
    above: str | None  # its neighbours then: where it goes back
    below: str | None


def _lines(text: str) -> list[str]:
    return [x.rstrip("\r\n") for x in split_keepends(text)]


def _neighbours(lines: list[str], line: int) -> tuple[str | None, str | None]:
    """As `index_edit.route_neighbours`, on lines split once (it splits the text per call)."""
    above = lines[line - 1] if 0 < line <= len(lines) and lines[line - 1].strip() else None
    below = lines[line + 1] if line + 1 < len(lines) and lines[line + 1].strip() else None
    return above, below


def vanished_routes(state: RootState, ref: Reference) -> list[KeptRoute]:
    """The routes of the reference whose target has no route now, exists, and is not archived;
    in the order the index held them. Only the reference's lines missing from the index now are
    parsed: when nothing vanished, that is none."""
    entry = state.files.get(INDEX)
    model = index_model(entry) if entry is not None else None
    if entry is None or entry.text is None or model is None:
        return []
    routed = {r.path for r in model.routes if r.path}
    present: set[str] | None = None  # the lines now, only once some reference text differs
    found: dict[str, KeptRoute] = {}
    for text in ref.index_texts:  # newest first: the newest line of a route wins
        if text == entry.text:
            continue
        present = present if present is not None else set(_lines(entry.text))
        lines = _lines(text)
        missing = [i for i, line in enumerate(lines) if line.strip() and line not in present]
        if not missing:
            continue
        for route in parse_index(MemoryFile("\n".join(lines[i] for i in missing) + "\n")).routes:
            at = missing[route.line]
            target = route.path
            if (target and target not in found and target not in routed and target in state.files
                    and zone_of(target) is Zone.ACTIVE and archive_location(target) not in state.files):
                found[target] = KeptRoute(target, lines[at], *_neighbours(lines, at))
    return list(found.values())  # the newest text's routes in its line order: neighbours go back first


def vanished_records(state: RootState, ref: Reference) -> dict[str, str]:
    entry = state.files.get(ARCHIVE_INDEX)
    if entry is None or entry.text is None:
        return {}
    recorded = {record_location(r) for r in records_of(entry)}
    found: dict[str, str] = {}
    for text in ref.archive_texts:
        if text == entry.text:
            continue
        lines = split_keepends(text)
        for record in find_records(text):
            location = record_location(record)
            if location and location not in found and location not in recorded and location in state.files:
                found[location] = "".join(lines[record.heading_line:record.end])
    return found


_silenced: ContextVar[bool] = ContextVar("pmem_history_findings_silenced", default=False)


@contextmanager
def without_history_findings() -> Iterator[None]:
    """No PM210/PM308 inside: a check on a narrowed root (the hooks' one-file look replaces
    the index with the lines that route that file) is no base for "routes vanished"."""
    token = _silenced.set(True)
    try:
        yield
    finally:
        _silenced.reset(token)


def check_vanished(state: RootState) -> list[Finding]:
    ref = None if _silenced.get() else reference(state.root)
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
    """`text` with each vanished route line back where it was: right after its old neighbour
    above (a line there once now, or a route restored before it), else right before its old
    neighbour below, else at the end. One pass, whatever the number: a wiped 10k-route index
    is restored in milliseconds (one `AddRoute` per line would parse the index each time)."""
    nl = newline_of(text) if text else "\n"
    lines = split_keepends(text)
    counts = Counter(_lines(text))
    after: dict[str, list[str]] = defaultdict(list)
    before: dict[str, list[str]] = defaultdict(list)
    placed: set[str] = set()
    tail: list[str] = []
    for kept in routes:  # in the old index's order, so a neighbour is placed before the next
        if kept.above is not None and (counts.get(kept.above) == 1 or kept.above in placed):
            after[kept.above].append(kept.line)
        elif kept.below is not None and counts.get(kept.below) == 1:
            before[kept.below].append(kept.line)
        else:
            tail.append(kept.line)
        placed.add(kept.line)
    out: list[str] = []

    def put(first: list[str]) -> None:
        stack = list(reversed(first))
        while stack:  # depth-first without recursion: a chain can be 10k lines long
            line = stack.pop()
            out.append(line + nl)
            stack.extend(reversed(after.pop(line, [])))

    for raw in lines:
        bare = raw.rstrip("\r\n")
        put(before.pop(bare, []))
        out.append(raw if raw != bare else raw + nl)
        put(after.pop(bare, []))
    put(tail)
    restored = "".join(out)
    return restored if restored or not text else text


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
    if not records:
        return []
    new = append_record(text, "".join(records.values()))  # once: one parse, however many came back
    return text_fix(f"Restore {len(records)} vanished record{'s' if len(records) != 1 else ''} from history",
                    "PM308", ARCHIVE_INDEX, text, new, preferred=True)


FIXES = {"PM210": fix_routes, "PM308": fix_records}
