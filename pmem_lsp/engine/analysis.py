"""Run every rule over a snapshot and apply the user's selection and severities."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import replace

from .archive_index import parse_archive_index
from .catalogue import severity_of
from .findings import Finding
from .index_routes import parse_index
from .rules.archive import check_archive
from .rules.links import check_links
from .rules.routes import check_routes
from .rules.structure import check_structure
from .rules.summary import check_summary
from .settings import Settings
from .snapshot import RootSnapshot
from .zones import ARCHIVE_INDEX, INDEX, Zone

_LINK_ZONES = (Zone.ACTIVE, Zone.CORE)


def raw_findings(snap: RootSnapshot, today: dt.date | None = None) -> list[Finding]:
    """Every finding of every rule, before selection and severity overrides."""
    today = today or dt.date.today()
    out: list[Finding] = []
    for rel, entry in snap.files.items():
        doc = entry.doc if entry.markdown else None
        if doc is None:
            continue
        summary = entry.cache.get("summary")
        if summary is None:
            summary = entry.cache["summary"] = check_summary(rel, entry.zone, doc)
        out.extend(summary)  # type: ignore[arg-type]
        if entry.zone in _LINK_ZONES:
            out.extend(check_links(snap, rel, doc))
    out.extend(check_structure(snap))
    index_doc = snap.doc(INDEX)
    if index_doc is not None:
        out.extend(check_routes(snap, parse_index(index_doc)))
    archive_doc = snap.doc(ARCHIVE_INDEX)
    records = parse_archive_index(archive_doc) if archive_doc is not None else []
    out.extend(check_archive(snap, records, today))
    return out


def apply_settings(findings: list[Finding], settings: Settings) -> list[Finding]:
    """Drop deselected rules; give each finding its final severity."""
    out = []
    for f in findings:
        if not settings.enabled(f.code):
            continue
        severity = settings.severity.get(f.code) or severity_of(f)
        out.append(f if f.severity is severity else replace(f, severity=severity))
    out.sort(key=Finding.sort_key)
    return out


def analyze(snap: RootSnapshot, today: dt.date | None = None) -> list[Finding]:
    return apply_settings(raw_findings(snap, today), snap.settings)


def by_path(findings: list[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        grouped[f.path].append(f)
    return dict(grouped)
