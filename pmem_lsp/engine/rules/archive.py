"""PM301–PM305: `_archive/_index.md` records against the archived files (docs/design.md §2.4), and
their fixes: add a record for an archived file, remove a record whose file is gone."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ..archive_index import ARCHIVED, RECOVERY_DAYS, TRASHED, ArchiveRecord, parse_date, record_location
from ..findings import Finding, Severity, at_line, file_finding
from ..fixes import Fix, text_fix, text_of
from ..index_edit import (
    append_record,
    find_records,
    format_record,
    insert_route,
    line_text,
    reads_back,
    remove_record,
    routes_to,
)
from ..line_index import newline_of
from ..paths import normalize_target
from ..root_state import FileEntry, RootState
from ..rule import FileCheck, I, Rule, W
from ..zones import ARCHIVE_INDEX, INDEX, Zone, original_of, zone_of

if TYPE_CHECKING:
    from ..analysis import Analysis

RULES = (
    Rule("PM301", "archive-unrecorded", W,
             "This file is in `_archive/` but `_archive/_index.md` has no record of it, so its "
             "original path and route line are unknown and it cannot be recovered cleanly."),
    Rule("PM302", "archive-record-dangling", W,
             "This archive record points to a location where no file exists."),
    Rule("PM303", "archive-record-incomplete", W,
             "This archive record misses fields or has bad values. A record keeps status, "
             "original path, location, the exact index line and the dates, so that recover can "
             "restore the file and its route exactly. (A record without `index-line` is a legacy "
             "record: reported as information.)"),
    Rule("PM304", "trash-expired", I,
             "This trashed file is past its `recover-by` date. It may be purged, but only with a "
             "separate explicit confirmation."),
    Rule("PM305", "recover-blocked", I,
             "The original path of this archived file is occupied by another file, so recovering "
             "it would collide. Rename one of them first."),
)


def _record_problems(record: ArchiveRecord) -> list[str]:
    problems: list[str] = []
    status = record.status
    required = ["status", "original", "location", "archived"]
    if status == TRASHED:
        required += ["deleted", "recover-by"]
    missing = [k for k in required if not record.get(k)]
    if missing:
        problems.append("missing " + ", ".join(missing))
    if status and status not in (ARCHIVED, TRASHED):
        problems.append(f"status `{status}` is neither archived nor trashed")
    for key in ("archived", "deleted", "recover-by"):
        value = record.get(key)
        if value and parse_date(value) is None:
            problems.append(f"{key} `{value}` is not a YYYY-MM-DD date")
    original = record.get("original")
    if original:
        path, problem = normalize_target(original)
        if problem is not None or not path or zone_of(path) is not Zone.ACTIVE:
            problems.append(f"original `{original}` is not an active memory path")
    location = record.get("location")
    if location:
        path, problem = normalize_target(location)
        zone = zone_of(path) if path and problem is None else None
        if status == ARCHIVED and zone is not Zone.ARCHIVE:
            problems.append(f"location `{location}` is not in `_archive/`")
        elif status == TRASHED and zone is not Zone.TRASH:
            problems.append(f"location `{location}` is not in `_archive/_trash/`")
    deleted, recover_by = parse_date(record.get("deleted")), parse_date(record.get("recover-by"))
    if deleted and recover_by and recover_by < deleted:
        problems.append("recover-by is before deleted")
    return problems


def check_archive(state: RootState, records: list[ArchiveRecord],
                  today: dt.date) -> tuple[list[Finding], set[str] | None]:
    """Findings on `_archive/_index.md` itself, and the recorded locations (None when the
    archive index exists but cannot be read: then no file is known to lack a record)."""
    out: list[Finding] = []
    index_doc = state.doc(ARCHIVE_INDEX)
    lines = index_doc.lines if index_doc is not None else []
    recorded: set[str] = set()
    for record in records:
        here = record.heading_line
        location = record_location(record)
        if location:
            recorded.add(location)
        problems = _record_problems(record)
        if problems:
            legacy = " (legacy record: no index-line)" if record.is_legacy else ""
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM303",
                               f"record for `{record.title}`: " + "; ".join(problems) + legacy))
        elif record.is_legacy:
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM303",
                               f"legacy record for `{record.title}`: no index-line, "
                               "so recover will propose a route for confirmation",
                               severity=Severity.INFORMATION))
        present = location is not None and state.is_file(location)
        if location and not present and state.missing(location):
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM302",
                               f"no file at `{location}`"))
        if not present:
            continue
        if record.status == TRASHED:
            recover_by = parse_date(record.get("recover-by"))
            if recover_by is not None and recover_by < today:
                out.append(at_line(ARCHIVE_INDEX, lines, here, "PM304",
                                   f"`{location}` was due for recovery by {recover_by.isoformat()}; "
                                   "it may be purged (with confirmation)"))
        original, problem = normalize_target(record.get("original") or record.title)
        if original and problem is None and zone_of(original) is Zone.ACTIVE and state.exists(original):
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM305",
                               f"cannot recover: `{original}` is occupied by another file"))

    if index_doc is None and state.is_file(ARCHIVE_INDEX):
        return out, None
    return out, recorded


def check_unrecorded(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    """PM301 for one file in `_archive/` or the trash (none when the archive index cannot be
    read: then no file is known to lack a record)."""
    recorded = analysis.recorded
    if recorded is None or entry.rel in recorded:
        return []
    return [file_finding(entry.rel, entry.doc if entry.markdown else None, "PM301",
                         "archived file without a record in `_archive/_index.md`: "
                         "its original path and route are unknown")]


FILE_CHECKS = (FileCheck(("PM301",), frozenset({Zone.ARCHIVE, Zone.TRASH}), check_unrecorded, needs_text=False),)



# -- fixes ----------------------------------------------------------------------
RECORD_REASON = "recorded by pmem"


def add_record(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    location = finding.path
    zone = zone_of(location)
    original = original_of(location)
    archive_text = text_of(state, ARCHIVE_INDEX)
    if zone not in (Zone.ARCHIVE, Zone.TRASH) or not original or archive_text is None:
        return []  # no archive index to write into: that is PM001's upgrade
    fields = [("status", ARCHIVED if zone is Zone.ARCHIVE else TRASHED), ("original", original),
              ("location", location)]
    index_text = text_of(state, INDEX)
    routes = routes_to(index_text, original) if index_text is not None else []
    if routes:
        fields.append(("index-line", line_text(index_text or "", routes[0].line)))
    fields += [("archived", today.isoformat()), ("reason", RECORD_REASON)]
    title = "Add record to _archive/_index.md"
    if zone is Zone.TRASH:
        recover_by = today + dt.timedelta(days=RECOVERY_DAYS)
        fields += [("deleted", today.isoformat()), ("recover-by", recover_by.isoformat())]
        title += f" (trashed today: recoverable until {recover_by.isoformat()})"
    record = format_record(original, fields, newline_of(archive_text))
    return text_fix(title, finding.code, ARCHIVE_INDEX, archive_text,
                     append_record(archive_text, record), True)


def remove_dangling_record(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """PM302: the record's file is gone from its location. When it is back at its original
    path (a recover that stopped before removing the record), the record is done with."""
    text = text_of(state, ARCHIVE_INDEX)
    if text is None:
        return []
    record = next((r for r in find_records(text) if r.heading_line == finding.line), None)
    if record is None:
        return []
    original = record.get("original") or record.title
    back = state.is_file(original)
    finish = finish_recover(state, record) if back else None
    title = (f"Remove the record (`{original}` is back at its original path)" if back
             else "Remove the dangling record")
    plain = text_fix(title, "PM302", ARCHIVE_INDEX, text, remove_record(text, record), preferred=back and not finish)
    return ([finish] if finish else []) + plain


def saved_route(record: ArchiveRecord, original: str) -> str | None:
    """The exact route line the record saved for `original`, when it still reads as one."""
    line = (record.get("index-line") or "").rstrip("\r\n")
    return line if line.strip() and reads_back(line, original) else None


def finish_recover(state: RootState, record: ArchiveRecord) -> Fix | None:
    """A recover that stopped after moving the file back: restore the record's saved route line
    exactly (not a generated one) and remove the record, in one fix (issue 23)."""
    original = record.get("original") or record.title
    index_text, archive_text = text_of(state, INDEX), text_of(state, ARCHIVE_INDEX)
    saved = saved_route(record, original)
    if saved is None or index_text is None or archive_text is None or routes_to(index_text, original):
        return None
    route = text_fix("", "PM302", INDEX, index_text, insert_route(index_text, original, saved))
    drop = text_fix("", "PM302", ARCHIVE_INDEX, archive_text, remove_record(archive_text, record))
    if not route or not drop:
        return None
    return Fix(f"Finish the recover of `{original}`: restore its saved route line and remove the record", "PM302",
               route[0].edits + drop[0].edits, True)


FIXES = {"PM301": add_record, "PM302": remove_dangling_record}
