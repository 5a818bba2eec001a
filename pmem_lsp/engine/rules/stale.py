"""PM501: an active file untouched for `stale.days` (docs/design.md §4).

A date the file states about itself comes first (docs/design.md §2.5): its front matter
`updated` or `verified`, else a legacy `> last_verified:` / `> source_date:` line — the dates
the format's reference CLI reads, so both report the same files. Without one, when the root
is a git repository (it holds `.git`), the last commit that touched a file decides: a clone
or checkout sets every modification time to "now", so mtimes say nothing there. The dates
come from one `git log` pass over the whole root, plus one `git status` for the files
changed since their last commit (those, and files git does not track, count by their
modification time). Neither command writes anything (`--no-optional-locks`). Without git,
or when git fails, the modification time decides.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..findings import Finding, entry_finding
from ..memory_file import DateField
from ..root_state import FileEntry
from ..rule import FileCheck, I, Rule
from ..zones import Zone

if TYPE_CHECKING:
    from ..analysis import Analysis

RULES = (
    Rule("PM501", "stale", I,
             "This active file has not changed for `stale.days` (default 90): by the date it states "
             "(front matter `updated` or `verified`, else a `> last_verified:` or `> source_date:` "
             "line), else by its last commit "
             "when the root itself is a git repository (holds `.git`), else by its modification "
             "time. Memory health "
             "proposes archiving inactive files, so agents stop loading them on demand; archived "
             "files keep a record and can be recovered. The quick fix archives it, after "
             "confirmation."),
)

GIT_TIMEOUT = 30.0  # seconds; past it, modification times decide


@dataclass
class GitDates:
    """When each path (root-relative, POSIX) was last committed, and which are changed since."""
    committed: dict[str, float] = field(default_factory=dict)  # POSIX timestamps
    dirty: set[str] = field(default_factory=set)


# The root's `.git/config` is as writable as the memory itself (an agent can write it), and
# some settings make git run a program: `core.fsmonitor` on `status`, signature checks on
# `log`. Those are switched off on the command line, which wins over every config file and
# is passed on to the git processes git starts (submodules).
_NO_PROGRAMS = ("-c", "core.fsmonitor=false", "-c", "log.showSignature=false")


def _git(root: Path, *args: str) -> bytes | None:
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    try:
        done = subprocess.run(["git", "--no-optional-locks", *_NO_PROGRAMS, "-C", str(root), *args],
                              capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_dates(root: Path) -> GitDates | None:
    """The commit dates of every file under `root` in one pass, or None when `root` is not a
    git repository or git cannot say."""
    if not os.path.exists(root / ".git"):
        return None
    log = _git(root, "log", "-z", "--name-only", "--no-color",
               "--format=%x01%ct", "--", ".")
    if log is None:
        return None
    dates = GitDates()
    committed = dates.committed
    for chunk in log.split(b"\x01"):
        if not chunk:
            continue
        stamp, _, names = chunk.partition(b"\x00")
        try:
            when = float(stamp)
        except ValueError:
            continue
        for raw in names.split(b"\x00"):
            name = os.fsdecode(raw.strip(b"\n"))
            if name and name not in committed:
                committed[name] = when  # newest first: the first sighting is the last change
    status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules")
    if status is not None:
        items = status.split(b"\x00")
        i = 0
        while i < len(items):
            item = items[i]
            i += 1
            if len(item) < 4:
                continue
            dates.dirty.add(os.fsdecode(item[3:]))
            if item[:1] in (b"R", b"C"):
                i += 1  # a rename's second name is its old path
    return dates


def age_of(changed: float | None, today: dt.date) -> tuple[dt.date, int] | None:
    """The day of the last change and the days since (None without a usable time)."""
    if changed is None:  # not `not changed`: 0 is 1970-01-01, the oldest time there is, not "unknown"
        return None
    try:
        day = dt.date.fromtimestamp(changed)
    except (OverflowError, OSError, ValueError):
        return None
    return day, (today - day).days


def stale_reason(day: dt.date) -> str:
    return f"stale: unchanged since {day.isoformat()}"


def stale_finding(entry: FileEntry, changed: float | None, today: dt.date, days: int,
                  source: str) -> Finding | None:
    """`source`: what dated the change ("its last commit" or "its modification time")."""
    age = age_of(changed, today)
    if age is None or age[1] < days:
        return None
    day, n = age
    return entry_finding(entry, "PM501",
                         f"unchanged since {day.isoformat()}, {n} days ago (by {source}; `stale.days` is {days}): "
                         "archive it if it is no longer needed",
                         data={"changed": day.isoformat(), "days": n, "dated_by": source, "reason": stale_reason(day)})


def stated_date_of(entry: FileEntry) -> DateField | None:
    """The date the file states about itself (`MemoryFile.stated_date`), kept with its text."""
    return entry.cached("stated-date", lambda: entry.doc.stated_date if entry.doc is not None else None)


def stated_finding(entry: FileEntry, stated: DateField, today: dt.date, days: int) -> Finding | None:
    """PM501 by the date the file states (None when it is fresh by it, or the date is no date)."""
    if stated.date is None:
        return None
    n = (today - stated.date).days
    if n < days:
        return None
    key = stated.key if stated.key in ("updated", "verified") else f"> {stated.key}"
    source = f"its `{key}` date"
    return entry_finding(entry, "PM501",
                         f"unchanged since {stated.date.isoformat()}, {n} days ago (by {source}; `stale.days` is "
                         f"{days}): archive it if it is no longer needed, or update its date if it is current",
                         data={"changed": stated.date.isoformat(), "days": n, "dated_by": source,
                               "reason": stale_reason(stated.date)})


def check_stale(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    stated = stated_date_of(entry)
    if stated is not None:
        found = stated_finding(entry, stated, analysis.today, analysis.settings.stale.days)
        return [found] if found is not None else []
    found = stale_finding(entry, analysis.changed_on(entry.rel), analysis.today,
                          analysis.settings.stale.days, analysis.dated_by(entry.rel))
    return [found] if found is not None else []


def _dated(analysis: Analysis, entry: FileEntry) -> tuple:
    return analysis.today, analysis.changed_on(entry.rel), analysis.dated_by(entry.rel)


FILE_CHECKS = (FileCheck(("PM501",), frozenset({Zone.ACTIVE}), check_stale, depends=_dated),)
