"""PM301–PM307: `_archive/_index.md` records against the archived files (docs/design.md §2.4,
§2.5), and their fixes: add a record for an archived file, remove a record whose file is gone,
convert a record to the root's dialect. Records of both dialects are read alike
(archive_index.py); PM306 and PM307 say where the two dialects' readers would disagree."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ..archive_index import (
    ARCHIVED,
    PMEM,
    RECOVERY_DAYS,
    TRASHED,
    V010,
    ArchiveRecord,
    dialect_of_records,
    parse_date,
    record_location,
    reference_blocks,
    written_name,
)
from ..findings import Finding, Severity, at_line, entry_finding
from ..fixes import Fix, text_fix, text_of
from ..index_edit import (
    append_record,
    convert_record,
    find_records,
    format_record,
    insert_route,
    reads_back,
    remove_record,
    routes_to,
    state_dialect,
)
from ..line_index import line_of, newline_of
from ..paths import record_path
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
    Rule("PM306", "archive-dialect-mixed", W,
             "`_archive/_index.md` holds records of both dialects: pmem's own (`## path`, `status`, "
             "`original`, `index-line`, …) and the format's v0.10 blocks (`### path`, `state`, "
             "`original_path`, `active_index_line`, …). The format's reference CLI (`memory`) finds "
             "only v0.10 records, so it cannot recover, delete or see the others. The fix rewrites "
             "this record in the root's dialect, after you confirm it; `pmem migrate` converts them all."),
    Rule("PM307", "archive-record-merged", W,
             "The format's reference CLI reads every line after a `### ` heading up to the next one "
             "as one record, so it reads this record as part of the record above it: a recover or "
             "delete of that one by it would drop or corrupt this one. The fix rewrites this record "
             "where both readers see it alone, after you confirm it."),
)


def _record_problems(record: ArchiveRecord) -> list[str]:
    problems: list[str] = []
    status = record.status
    dialect = record.dialect
    # A v0.10 record has no location: it follows from the path and the state.
    required = ["status", "original", "archived"] if dialect == V010 else ["status", "original", "location", "archived"]
    if status == TRASHED:
        required += ["deleted", "recover-by"]
    missing = [written_name(k, dialect) for k in required if not record.get(k)]
    if missing:
        problems.append("missing " + ", ".join(missing))
    if status and status not in (ARCHIVED, TRASHED):
        problems.append(f"status `{status}` is neither archived nor trashed")
    for key in ("archived", "deleted", "recover-by"):
        value = record.get(key)
        if value and parse_date(value) is None:
            problems.append(f"{written_name(key, dialect)} `{value}` is not a YYYY-MM-DD date")
    original = record.get("original")
    if original:
        path, problem = record_path(original)
        if problem is not None or not path or zone_of(path) is not Zone.ACTIVE:
            problems.append(f"original `{original}` is not an active memory path")
    location = record.get("location")
    if location:
        path, problem = record_path(location)
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
            legacy = f" (legacy record: no {written_name('index-line', record.dialect)})" if record.is_legacy else ""
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM303",
                               f"record for `{record.title}`: " + "; ".join(problems) + legacy))
        elif record.is_legacy:
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM303",
                               f"legacy record for `{record.title}`: no "
                               f"{written_name('index-line', record.dialect)}, "
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
        original, problem = record_path(record.get("original") or record.title)
        if original and problem is None and zone_of(original) is Zone.ACTIVE and state.exists(original):
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM305",
                               f"cannot recover: `{original}` is occupied by another file"))

    out += _dialect_findings(state, records, lines)
    if index_doc is None and state.is_file(ARCHIVE_INDEX):
        return out, None
    return out, recorded


def _merged_into(records: list[ArchiveRecord], lines: list[str]) -> dict[int, str]:
    """Heading line of each record the reference CLI reads as part of another record's `### `
    block (one it finds by `original_path`, and so may rewrite or drop) → that block's heading
    text (docs/decisions.md, "Dialects")."""
    blocks = reference_blocks(lines)
    out: dict[int, str] = {}
    for record in records:
        if lines[record.heading_line].startswith("### "):
            continue
        for start, end, original in blocks:
            # A block without `original_path` is never found, so never rewritten, by it.
            if original is not None and start < record.heading_line < end:
                out[record.heading_line] = lines[start][4:].strip()
                break
    return out


def _dialect_findings(state: RootState, records: list[ArchiveRecord], lines: list[str]) -> list[Finding]:
    if not records:
        return []
    out: list[Finding] = []
    merged = _merged_into(records, lines)
    # The root's dialect (index_edit.root_dialect): with records, they decide unless the setting does.
    setting = state.settings.dialect
    dialect = setting if setting in (PMEM, V010) else (dialect_of_records(records) or V010)
    mixed = len({r.dialect for r in records}) > 1
    for record in records:
        here = record.heading_line
        if here in merged:
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM307",
                               f"the format's reference CLI reads the record for `{record.title}` as part of "
                               f"the record `{merged[here]}` above it", data={"dialect": dialect}))
        elif record.dialect == V010 and not lines[here].startswith("### "):
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM307",
                               f"the v0.10 record for `{record.title}` is not under a `### ` heading, so the "
                               "format's reference CLI does not see it", data={"dialect": dialect}))
        if mixed and record.dialect != dialect:
            other = "pmem's own" if record.dialect == PMEM else "the format's v0.10"
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM306",
                               f"the record for `{record.title}` is in {other} dialect, and this root is "
                               f"written in {'v0.10' if dialect == V010 else 'pmem'}'s", data={"dialect": dialect}))
    return out


def _dialect(state: RootState) -> str:
    """The root's dialect (index_edit.root_dialect) from its settings and its two indexes."""
    return state_dialect(state)


def check_unrecorded(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    """PM301 for one file in `_archive/` or the trash (none when the archive index cannot be
    read: then no file is known to lack a record)."""
    recorded = analysis.recorded
    if recorded is None or entry.rel in recorded:
        return []
    return [entry_finding(entry, "PM301",
                         "archived file without a record in `_archive/_index.md`: "
                         "its original path and route are unknown")]


def _recorded(analysis: Analysis, entry: FileEntry) -> bool | None:
    return None if analysis.recorded is None else entry.rel in analysis.recorded


FILE_CHECKS = (FileCheck(("PM301",), frozenset({Zone.ARCHIVE, Zone.TRASH}), check_unrecorded, needs_text=False,
                         depends=_recorded),)



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
        fields.append(("index-line", line_of(index_text or "", routes[0].line)))
    fields += [("archived", today.isoformat()), ("reason", RECORD_REASON)]
    dialect = _dialect(state)
    title = "Add record to _archive/_index.md"
    if zone is Zone.TRASH:
        recover_by = today + dt.timedelta(days=RECOVERY_DAYS)
        fields += [("deleted", today.isoformat()), ("recover-by", recover_by.isoformat())]
        title += f" (trashed today: recoverable until {recover_by.isoformat()})"
    record = format_record(original, fields, newline_of(archive_text), dialect)
    return text_fix(title, finding.code, ARCHIVE_INDEX, archive_text,
                     append_record(archive_text, record), True)


def _record_at(state: RootState, finding: Finding) -> tuple[str, ArchiveRecord] | None:
    """The archive index's text and the record whose heading the finding is on."""
    text = text_of(state, ARCHIVE_INDEX)
    if text is None:
        return None
    record = next((r for r in find_records(text) if r.heading_line == finding.line), None)
    return None if record is None else (text, record)


def remove_dangling_record(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """PM302: the record's file is gone from its location. When it is back at its original
    path (a recover that stopped before removing the record), the record is done with."""
    found = _record_at(state, finding)
    if found is None:
        return []
    text, record = found
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


def convert_to_dialect(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """PM306, PM307: the record rewritten in the root's dialect, where both readers see it alone."""
    found = _record_at(state, finding)
    if found is None:
        return []
    text, record = found
    dialect = (finding.data or {}).get("dialect") or _dialect(state)
    name = "v0.10" if dialect == V010 else "pmem's"
    return text_fix(f"Rewrite the record for {record.title} in {name} dialect", finding.code, ARCHIVE_INDEX,
                    text, convert_record(text, record, dialect), True)


FIXES = {"PM301": add_record, "PM302": remove_dangling_record, "PM306": convert_to_dialect,
         "PM307": convert_to_dialect}
