"""Memory health (spec "Memory Health"): a numbered proposal, never an action.

Candidates come from the analysis — PM501 stale, PM502 concluded, PM503 duplicate — over
active on-demand files only (never `_core/` or the indexes). Each is classified with the
format's lifecycle categories and a one-line reason:

- **delete**: a duplicate (the newer or shorter copy). Only archived files can be deleted,
  so the step offered is archiving it, with the reason "duplicate of PATH";
- **archive**: concluded ("concluded: <the line>"), else stale ("stale: unchanged since DATE");
- **keep active**: the copy a duplicate duplicates, when nothing else makes it a candidate.

Expired trash (trashed files past `recover-by`) is listed separately: permanent removal
needs its own confirmation. Each item carries the command that would carry it out
(`pmem.archive` with `{"path", "reason"}`, `pmem.purge` with `{"path"}`); nothing here
changes a file. The rules' settings apply: an ignored rule proposes nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .analysis import Analysis
from .archive_index import TRASHED, parse_date, record_location, records_of
from .findings import Finding
from .names import clean, one_line, shown
from .root_state import RootState
from .secrets import mask_text
from .zones import ARCHIVE_DIR, ARCHIVE_INDEX, TRASH_DIR, Zone, zone_of

if TYPE_CHECKING:  # the model only types the settings; a root without any loads none
    from .settings import Settings

KEEP, ARCHIVE, DELETE = "keep active", "archive", "delete"
HEALTH_CODES = ("PM501", "PM502", "PM503")
# Why an item is proposed, in the order the report shows them (the most relevant first): a
# duplicate wastes what every agent reads, a concluded file says itself that it is done,
# staleness is only a guess from dates; the copy to keep comes last.
DUPLICATE, CONCLUDED, STALE, ORIGINAL = "duplicate", "concluded", "stale", "original"
GROUPS = {
    DUPLICATE: "Duplicates — archive the copy",
    CONCLUDED: "Concluded — archive",
    STALE: "Stale — archive, the longest unchanged first",
    ORIGINAL: "Keep active — the copy a duplicate duplicates",
}
_GROUP_ORDER = {g: i for i, g in enumerate(GROUPS)}
# How many items of each group the text shows by default (`pmem health --all`: every item;
# the JSON always holds every item).
DEFAULT_PER_GROUP = 10


def no_command(path: str) -> str | None:
    """Why no command can carry out an item on `path` (None: one can). A command names the real
    path, never its shown form (which names no file) nor a masked one; and a path that holds a
    likely secret is not repeated in a command at all. No JSON string can carry a name that is
    not UTF-8, and the safety contract refuses control characters."""
    from .lifecycle.safety import Refusal, validate_relative

    if mask_text(path) != path:
        return "the file name holds a likely secret, so no command repeats it: rename the file, then run health again"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # the lifecycle takes such a name now, but no JSON string can carry it
        return ("no command can name this file (its name is not valid UTF-8, which no JSON string can carry): "
                "run the command in your shell with the name as it is")
    try:
        validate_relative(path)
    except Refusal as exc:
        return f"no command can name this file ({exc.message})"
    return None


def _command(command: str | None, arguments: dict[str, str] | None, editor: bool) -> tuple[Any, str | None]:
    """The command that carries an item out, as a `pmem` argv or (`editor`) the server's
    command and arguments; None and the reason when its path cannot be carried."""
    if command is None:
        return None, None
    args = dict(arguments or {})
    why = no_command(args.get("path", ""))
    if why is not None:
        return None, why
    if args.get("reason"):
        args["reason"] = one_line(clean(args["reason"]))
    if editor:
        return {"command": command, "arguments": [args]}, None
    argv = ["pmem", command.removeprefix("pmem."), args["path"]]
    if args.get("reason"):
        argv += ["--reason", args["reason"]]
    return argv, None


def _with_command(out: dict[str, Any], command: str | None, arguments: dict[str, str] | None,
                  editor: bool) -> dict[str, Any]:
    out["command"], why = _command(command, arguments, editor)
    if why is not None:
        out["note"] = why
    return out


@dataclass(frozen=True)
class HealthItem:
    number: int
    path: str
    proposal: str  # KEEP, ARCHIVE or DELETE
    reason: str  # one line
    signals: tuple[str, ...]  # the rule codes that made it a candidate
    command: str | None = None  # what carries it out (None for keep active)
    arguments: dict[str, str] | None = None
    group: str = STALE  # DUPLICATE, CONCLUDED, STALE or ORIGINAL: why it is proposed

    def as_dict(self, editor: bool = False) -> dict[str, Any]:
        # Paths as every JSON report shows them (names.shown, as `check` and `status`).
        return _with_command({"number": self.number, "path": shown(self.path), "proposal": self.proposal,
                              "reason": one_line(self.reason), "group": self.group, "signals": list(self.signals)},
                             self.command, self.arguments, editor)


@dataclass(frozen=True)
class TrashItem:
    path: str  # where it lies in `_archive/_trash/`
    original: str | None
    recover_by: dt.date
    days_expired: int
    command: str = "pmem.purge"
    arguments: dict[str, str] = field(default_factory=dict)

    def as_dict(self, editor: bool = False) -> dict[str, Any]:
        return _with_command({"path": shown(self.path), "original": shown(self.original) if self.original else None,
                              "recoverBy": self.recover_by.isoformat(), "daysExpired": self.days_expired},
                             self.command, self.arguments, editor)


@dataclass(frozen=True)
class HealthReport:
    root: Path
    today: dt.date
    lifecycle_ready: bool  # `_archive/`, its trash and its index exist (else: upgrade first)
    items: tuple[HealthItem, ...]
    expired_trash: tuple[TrashItem, ...]
    active_files: int = 0  # active Markdown files in the root (what "everything is stale" counts)

    def groups(self) -> list[tuple[str, list[HealthItem]]]:
        """The items by why they are proposed, in the report's order (GROUPS), none empty."""
        by: dict[str, list[HealthItem]] = {}
        for item in self.items:
            by.setdefault(item.group, []).append(item)
        return [(g, by[g]) for g in GROUPS if g in by]

    @property
    def all_stale(self) -> bool:
        """Every active file is stale: a reference corpus, or a root nobody has touched for
        months. The report says so in one line rather than listing each file."""
        stale = sum(1 for i in self.items if i.group == STALE)
        return self.active_files > 1 and stale >= self.active_files

    def as_dict(self, editor: bool = False) -> dict[str, Any]:
        """Plain data. Each item's `command` carries it out: a `pmem` command line (what an
        agent or a person runs; it previews and asks first), or with `editor` the server's
        command and its arguments (what a code action runs). Every item, whatever the text
        shows."""
        return {"root": shown(str(self.root)), "today": self.today.isoformat(), "lifecycleReady": self.lifecycle_ready,
                "activeFiles": self.active_files, "allStale": self.all_stale,
                "groups": [{"group": g, "title": GROUPS[g], "count": len(items)} for g, items in self.groups()],
                "items": [i.as_dict(editor) for i in self.items],
                "expiredTrash": [t.as_dict(editor) for t in self.expired_trash]}

    def text(self, per_group: int | None = DEFAULT_PER_GROUP) -> str:
        """The report as printed, with likely secrets masked: it names paths and quotes route
        descriptions and file lines, and any of them can hold one. `per_group`: at most that
        many items of each group (None: every item); the rest are counted."""
        return mask_text(self._text(per_group))

    def _text(self, per_group: int | None) -> str:
        out = [f"Memory health: {shown(str(self.root))} ({self.today.isoformat()})"]
        if not self.lifecycle_ready:
            out.append("The lifecycle structure is incomplete: run `pmem upgrade` before archiving anything.")
        if self.items:
            counts = ", ".join(f"{len(items)} {g}" for g, items in self.groups())
            out.append(f"Proposal: {len(self.items)} item{'s' if len(self.items) != 1 else ''} ({counts}) — "
                       "nothing changes until you confirm each one.")
            width = len(str(len(self.items)))
            cut = False
            for group, items in self.groups():
                if group == STALE and self.all_stale and per_group is not None:
                    newest = items[-1].reason.removeprefix("stale: unchanged since ")
                    out.append(f"Everything is stale: none of the {self.active_files} active files changed since "
                               f"{newest}. Archive what is finished, or raise `stale.days` for a root of "
                               "reference notes (`pmem health --all` lists them).")
                    cut = True
                    continue
                out.append(f"{GROUPS[group]} ({len(items)}):")
                listed = items if per_group is None else items[:per_group]
                for item in listed:
                    out.append(f"  {item.number:>{width}}. {item.proposal}: {shown(item.path)} — "
                               f"{one_line(item.reason)}")
                if len(listed) < len(items):
                    cut = True
                    out.append(f"  … and {len(items) - len(listed)} more")
            if cut:
                out.append("`pmem health --all` lists every item; `--format json` holds every item.")
            out.append("Carry out an item with its code action in the editor, or "
                       "`pmem archive PATH --reason \"…\"` (each asks for confirmation).")
        else:
            out.append("No candidates: no active file is stale, concluded or a duplicate.")
        if self.expired_trash:
            out.append("Expired trash — permanent removal needs its own confirmation (`pmem purge PATH`):")
            for t in self.expired_trash:
                was = f" (was {shown(t.original)})" if t.original else ""
                days = f"{t.days_expired} day{'s' if t.days_expired != 1 else ''}"
                out.append(f"  - {shown(t.path)}{was}: recover-by {t.recover_by.isoformat()}, expired {days} ago")
        else:
            out.append("Expired trash: none.")
        return "\n".join(out) + "\n"


def archive_reason(finding: Finding) -> str | None:
    """The reason an archive would record for a PM501–PM503 finding (the quick fix's): the
    rule puts it in the finding's data, with what it is made from."""
    if finding.code not in HEALTH_CODES or not finding.data:
        return None
    reason = finding.data.get("reason")
    return reason if isinstance(reason, str) else None


def _expired_trash(state: RootState, today: dt.date) -> list[TrashItem]:
    entry = state.files.get(ARCHIVE_INDEX)
    out = []
    for record in records_of(entry) if entry is not None else []:
        if record.status != TRASHED:
            continue
        location = record_location(record)
        recover_by = parse_date(record.get("recover-by"))
        if location is None or recover_by is None or recover_by >= today or not state.is_file(location):
            continue
        out.append(TrashItem(location, record.get("original"), recover_by, (today - recover_by).days,
                             arguments={"path": location}))
    return sorted(out, key=lambda t: t.path)


def health_report(analysis: Analysis, findings: Mapping[str, Sequence[Finding]] | None = None) -> HealthReport:
    """The proposal for an analysed root. `findings`: the analysis' current findings by path
    (default `analysis.by_path()`)."""
    state = analysis.state
    today = analysis.today
    by_path = analysis.by_path() if findings is None else findings
    signals: dict[str, dict[str, Finding]] = {}
    for rel, found in by_path.items():
        if zone_of(rel) is not Zone.ACTIVE or rel not in state.files:
            continue
        for f in found:
            if f.code in HEALTH_CODES:
                signals.setdefault(rel, {}).setdefault(f.code, f)
    # path, proposal, reason, codes, archive reason, group, relevance (lower first)
    rows: list[tuple[str, str, str, tuple[str, ...], str | None, str, int]] = []
    originals: dict[str, str] = {}
    for rel, codes in signals.items():
        reasons = {code: archive_reason(f) for code, f in codes.items()}
        relevance = 0
        if "PM503" in codes:
            proposal, primary, group = DELETE, "PM503", DUPLICATE
            original = (codes["PM503"].data or {}).get("original")
            if isinstance(original, str):
                originals.setdefault(original, rel)
        elif "PM502" in codes:
            proposal, primary, group = ARCHIVE, "PM502", CONCLUDED
        else:
            proposal, primary, group = ARCHIVE, "PM501", STALE
            days = (codes["PM501"].data or {}).get("days")
            relevance = -days if isinstance(days, int) else 0
        reason = reasons[primary] or codes[primary].message
        line = reason
        if proposal == DELETE:
            line += "; archive it first, delete it from the archive later"
        extra = [_short(codes[code], reasons[code]) for code in sorted(codes) if code != primary]
        if extra:
            line += "; also " + ", ".join(extra)
        rows.append((rel, proposal, line, tuple(sorted(codes)), reason, group, relevance))
    for original, copy in originals.items():
        if original not in signals and original in state.files:
            rows.append((original, KEEP, f"the copy to keep: {copy} duplicates it", (), None, ORIGINAL, 0))
    rows.sort(key=lambda r: (_GROUP_ORDER[r[5]], r[6], r[0]))
    items = tuple(
        HealthItem(n, rel, proposal, line, codes,
                   None if proposal == KEEP else "pmem.archive",
                   None if proposal == KEEP else {"path": rel, "reason": reason or line}, group)
        for n, (rel, proposal, line, codes, reason, group, _) in enumerate(rows, 1)
    )
    ready = state.exists(ARCHIVE_DIR) and state.exists(TRASH_DIR) and state.is_file(ARCHIVE_INDEX)
    active = sum(1 for rel in state.files if rel.endswith(".md") and zone_of(rel) is Zone.ACTIVE)
    return HealthReport(state.root, today, ready, items, tuple(_expired_trash(state, today)), active)


def _short(finding: Finding, reason: str | None) -> str:
    if finding.code == "PM501":
        days = (finding.data or {}).get("days")
        return f"unchanged for {days} days" if isinstance(days, int) else "stale"
    if finding.code == "PM502":
        return reason or "concluded"
    return reason or "a duplicate"


def memory_health(root: Path, settings: Settings, today: dt.date | None = None) -> HealthReport:
    """Scan and analyse `root`, then propose. Reads the root; writes nothing."""
    return health_report(Analysis(RootState.scan(root, settings), today))
