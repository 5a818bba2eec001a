"""PM504–PM506: the dates a file states and the status source of a project (format v0.9–v0.10,
docs/design.md §2.5).

- PM504: a front matter `created`/`updated`/`verified` or a legacy `> last_verified:` /
  `> source_date:` that is not a date, or is a date in the future;
- PM505: more than one active file of one project says `role: current-status` (v0.9: one
  fact, one owner — two claimants mean stop and ask the user);
- PM506: a project's status source whose latest `updated`/`verified` is older than
  `status.days` (the format's freshness gate reads it before any "current" claim), or that
  states no date at all.

A project is the first two segments of a path: `projects/alpha.md` and
`projects/alpha/status.md` are both `projects/alpha` (docs/decisions.md, "Metadata dates").
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from ..findings import Finding, at_line, file_finding
from ..rule import FileCheck, I, Rule, W
from ..zones import Zone

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..analysis import Analysis
    from ..memory_file import MemoryFile
    from ..root_state import FileEntry, RootState

CURRENT_STATUS = "current-status"

RULES = (
    Rule("PM504", "date-invalid", W,
         "A date this file states about itself (front matter `created`, `updated`, `verified`, or a "
         "`> last_verified:` / `> source_date:` line) is not a YYYY-MM-DD date, or lies in the future. "
         "These dates decide whether the file is stale and whether a status can be called current, "
         "so a wrong one misleads every reader."),
    Rule("PM505", "status-duplicate", W,
         "More than one active file of this project says `role: current-status`. The format keeps one "
         "fact in one place: a project has a single status source, and when two files claim it the "
         "agent must stop and ask which one is right. Keep the role on one file and remove it from "
         "the others."),
    Rule("PM506", "status-stale", I,
         "This project's status source (`role: current-status`) was last updated or verified longer "
         "ago than `status.days` (default 14), or states no date. Before calling anything current, "
         "done or blocked, the format's freshness gate reads this date: verify the status and set "
         "`verified` (or `updated`) in its front matter."),
)


def project_of(rel: str) -> str:
    """`projects/alpha.md` and `projects/alpha/x.md` → `projects/alpha`; `top.md` → `top`."""
    parts = rel.split("/")
    if len(parts) == 1:
        return parts[0].removesuffix(".md")
    return f"{parts[0]}/{parts[1].removesuffix('.md')}"


class StatusSources:
    """project → the active files that say `role: current-status`, kept current by `update`."""

    def __init__(self, state: RootState) -> None:
        self.state = state
        self.by_project: dict[str, set[str]] = {}
        self.of: dict[str, str] = {}  # file → its project, for the files that claim the role
        for rel in state.files.by_zone[Zone.ACTIVE]:
            self._note(rel)

    def _claims(self, rel: str) -> bool:
        entry = self.state.files.get(rel)
        if entry is None or entry.zone is not Zone.ACTIVE or not entry.markdown:
            return False
        return claims_status(entry)

    def _note(self, rel: str) -> None:
        if self._claims(rel):
            project = project_of(rel)
            self.by_project.setdefault(project, set()).add(rel)
            self.of[rel] = project

    def update(self, changed: set[str]) -> set[str]:
        """Take the changes in; the files whose PM505 may have changed (the claimants of each
        project a changed file left or joined)."""
        touched: set[str] = set()
        for rel in changed:
            old = self.of.pop(rel, None)
            if old is not None:
                self.by_project[old].discard(rel)
                touched |= self.by_project[old]
            self._note(rel)
            new = self.of.get(rel)
            if new is not None:
                touched |= self.by_project[new]
        return touched

    def others(self, rel: str) -> list[str]:
        project = self.of.get(rel)
        return sorted(self.by_project.get(project, set()) - {rel}) if project is not None else []


def claims_status(entry: FileEntry) -> bool:
    """Whether the file's front matter says `role: current-status` (kept with its text)."""
    return entry.cached(CURRENT_STATUS, lambda: _claims_status(entry.doc))


def _claims_status(doc: MemoryFile | None) -> bool:
    return doc is not None and doc.front_matter_end > 0 and doc.role == CURRENT_STATUS


# The entry cache's key of PM504 for one day: one string for every file (not a tuple each; a
# key that is not a string also makes every entry's cache dict twice as large).
_DATE_KEYS: dict[dt.date, str] = {}


def check_dates(analysis: Analysis, entry: FileEntry) -> Sequence[Finding]:
    """PM504, kept with the text for the day it was made (it compares with today)."""
    today = analysis.today
    key = _DATE_KEYS.get(today) or _DATE_KEYS.setdefault(today, f"PM504 {today.isoformat()}")
    return entry.cached(key, lambda: tuple(_date_findings(entry, today)))  # none: the one empty tuple


def _date_findings(entry: FileEntry, today: dt.date) -> list[Finding]:
    doc = entry.doc
    if doc is None:
        return []
    out = []
    for f in doc.date_fields:
        shown = f.key if f.line < doc.front_matter_end else f"> {f.key}"
        if f.date is None:
            out.append(at_line(entry.rel, doc.lines, f.line, "PM504",
                               f"`{shown}` is not a YYYY-MM-DD date{_how_to_write(f.value, shown)}",
                               data={"key": f.key}))
        elif f.date > today:
            out.append(at_line(entry.rel, doc.lines, f.line, "PM504",
                               f"`{shown}` is {f.date.isoformat()}, in the future", data={"key": f.key}))
    return out


# Date forms other tools write (Dendron's and Logseq's Unix times, `2025/11/16`, `2025.11.16`,
# `20251116`): read, so that the message can say which day it is, never taken as the date.
_EPOCH = re.compile(r"['\"]?(\d{9,10}|\d{12,13})['\"]?")
_OTHER_DATE = re.compile(r"['\"]?(\d{4})([/.]?)(\d{2})\2(\d{2})['\"]?")


def _how_to_write(value: str, shown: str) -> str:
    """What the message adds for a value that is no YYYY-MM-DD date: the day a Unix time or
    another way of writing a date stands for, and the line that states it (`: write …`); the
    day's form when the value is none of those."""
    value = value.strip()
    day, what = None, ""
    if (m := _EPOCH.fullmatch(value)) is not None:
        digits = m.group(1)
        seconds = int(digits) / (1000 if len(digits) > 10 else 1)
        what = "Unix time in milliseconds" if len(digits) > 10 else "Unix time in seconds"
        try:
            day = dt.datetime.fromtimestamp(seconds, dt.timezone.utc).date()
        except (OverflowError, OSError, ValueError):
            day = None
        if day is not None and not dt.date(1990, 1, 1) <= day <= dt.date(2100, 1, 1):
            day = None  # a count, an id: no time anyone wrote for a date
    elif (m := _OTHER_DATE.fullmatch(value)) is not None:
        try:
            day = dt.date(int(m.group(1)), int(m.group(3)), int(m.group(4)))
        except ValueError:
            day = None
        what = "a date"
    key = f"{shown}:"
    if day is None:
        return f": write it as `{key} YYYY-MM-DD`"
    return f": `{value}` reads as {what}, {day.isoformat()}; write `{key} {day.isoformat()}`"


def check_status_source(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    doc = entry.doc if claims_status(entry) else None
    if doc is None:
        return []
    out = []
    line = doc.front_matter.get("role", (0, ""))[0]
    sources = analysis.status_sources
    others = sources.others(entry.rel) if sources is not None else []
    if others:
        out.append(at_line(entry.rel, doc.lines, line, "PM505",
                           f"project `{project_of(entry.rel)}` has {len(others) + 1} status sources: this file and "
                           + ", ".join(f"`{o}`" for o in others) + "; keep `role: current-status` on one of them",
                           data={"others": others}))
    dates = [f.date for f in doc.date_fields if f.date is not None and f.key in ("updated", "verified")]
    limit = analysis.settings.status.days
    if not dates:
        out.append(at_line(entry.rel, doc.lines, line, "PM506",
                           "this status source states no `updated` or `verified` date, so no one can tell "
                           "whether it is current"))
    else:
        latest = max(dates)
        days = (analysis.today - latest).days
        if days > limit:
            out.append(file_finding(entry.rel, doc, "PM506",
                                    f"the status source was last updated or verified on {latest.isoformat()}, "
                                    f"{days} days ago (`status.days` is {limit}): verify it before calling "
                                    "anything current", data={"date": latest.isoformat(), "days": days}))
    return out


def _today(analysis: Analysis, _entry: FileEntry) -> dt.date:
    return analysis.today


def _status_facts(analysis: Analysis, entry: FileEntry) -> tuple:
    sources = analysis.status_sources
    today = analysis.today
    others = tuple(sources.others(entry.rel)) if sources is not None else ()
    if others:
        return today, others
    # The common answer (no other status source): one tuple for every file of the day.
    return _ALONE.get(today) or _ALONE.setdefault(today, (today, ()))


_ALONE: dict[dt.date, tuple[dt.date, tuple[str, ...]]] = {}


FILE_CHECKS = (
    FileCheck(("PM504",), frozenset({Zone.ACTIVE, Zone.CORE}), check_dates, depends=_today),
    FileCheck(("PM505", "PM506"), frozenset({Zone.ACTIVE}), check_status_source, depends=_status_facts),
)
