"""PM301–PM305: `_archive/_index.md` records against the archived files (DESIGN §2.4)."""

from __future__ import annotations

import datetime as dt

from ..archive_index import ARCHIVED, TRASHED, ArchiveRecord, parse_date, record_location
from ..findings import Finding, Severity, at_line, file_finding
from ..paths import normalize_target
from ..snapshot import FileEntry, RootSnapshot
from ..zones import ARCHIVE_INDEX, Zone, zone_of

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


def check_archive(snap: RootSnapshot, records: list[ArchiveRecord], today: dt.date) -> tuple[list[Finding], set[str] | None]:
    """Findings on `_archive/_index.md` itself, and the recorded locations (None when the
    archive index exists but cannot be read: then no file is known to lack a record)."""
    out: list[Finding] = []
    index_doc = snap.doc(ARCHIVE_INDEX)
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
                               f"legacy record for `{record.title}`: no index-line, so recover will propose a route for confirmation",
                               severity=Severity.INFORMATION))
        present = location is not None and snap.is_file(location)
        if location and not present and snap.missing(location):
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM302",
                               f"no file at `{location}`"))
        if not present:
            continue
        if record.status == TRASHED:
            recover_by = parse_date(record.get("recover-by"))
            if recover_by is not None and recover_by < today:
                out.append(at_line(ARCHIVE_INDEX, lines, here, "PM304",
                                   f"`{location}` was due for recovery by {recover_by.isoformat()}; it may be purged (with confirmation)"))
        original, problem = normalize_target(record.get("original") or record.title)
        if original and problem is None and zone_of(original) is Zone.ACTIVE and snap.exists(original):
            out.append(at_line(ARCHIVE_INDEX, lines, here, "PM305",
                               f"cannot recover: `{original}` is occupied by another file"))

    if index_doc is None and snap.is_file(ARCHIVE_INDEX):
        return out, None
    return out, recorded


def check_unrecorded(entry: FileEntry, recorded: set[str] | None) -> Finding | None:
    """PM301 for one file in `_archive/` or the trash."""
    if recorded is not None and entry.zone in (Zone.ARCHIVE, Zone.TRASH) and entry.rel not in recorded:
        return file_finding(entry.rel, entry.doc if entry.markdown else None, "PM301",
                            "archived file without a record in `_archive/_index.md`: its original path and route are unknown")
    return None
