"""Run the rules over a root state, and keep the result current one change at a time.

Findings are kept in pieces, each recomputed only when what it depends on changes:

- per file: its summary, secrets and concluded status (its text), its links (the existence
  of their targets), PM005 (its size), PM202 (whether the index routes it), PM301 (whether a
  record names it), PM403 (a `stat` of the paths it points to outside the root, taken when
  the file is checked), PM501 (its last change: the modification time, or in a git
  repository the last commit, read once per analysis), PM503 (its duplicate pairs);
- the duplicate pairs (`rules/duplicates.py`): a sketch per file, computed once for the
  whole root and then only for changed files, which are compared with their candidates;
- on `_index.md`: the route lines (the index text, and the existence of their targets and
  whether they are folders);
- on `_archive/_index.md`: the records (that text and the existence of their files);
- the root's shape (PM001–PM004, PM006).

A change to one file's text re-checks that file only (and its old and new duplicates); a
file appearing or vanishing also re-checks the two indexes, the root's shape and the files
that link to it; an edit of an index re-checks the files whose routed or recorded state
flipped. The work done is counted (`Analysis.work`) so a test can hold it to a constant.
"""

from __future__ import annotations

import bisect
import datetime as dt
import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, cast

from .archive_index import records_of
from .catalogue import FILE_CHECKS, RULES, TEXT_CHECKS, severity_of
from .findings import SORT_KEY, Finding, whole_file_span
from .index_routes import index_model
from .memory_file import MemoryFile
from .root_state import FileEntry, RootState
from .rule import FileCheck, TextCheck
from .rules.archive import check_archive
from .rules.broken_links import LINK_ZONES, link_paths, md_form
from .rules.duplicates import DuplicateIndex, sketch_of
from .rules.freshness import StatusSources, claims_status
from .rules.interrupted_writes import check_leftovers
from .rules.routes import check_routes
from .rules.stale import GitDates, git_dates
from .rules.structure import check_structure
from .rules.vanished import check_vanished
from .zones import ARCHIVE_INDEX, INDEX, Zone, zone_of

if TYPE_CHECKING:  # the settings model (pydantic) is not needed to run a check: hooks start fast
    from .settings import Settings

_INDEXES = (INDEX, ARCHIVE_INDEX)


class EnabledCodes(dict[str, bool]):
    """`code → settings.enabled(code)`, each code asked once (an Analysis asks for every
    finding of every file; the settings' prefix matching is the slow part)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings

    def __missing__(self, code: str) -> bool:
        on = self[code] = self.settings.enabled(code)
        return on


def apply_settings(findings: Iterable[Finding], settings: Settings,
                   enabled: EnabledCodes | None = None) -> list[Finding]:
    """Drop deselected rules; give each finding its final severity; sort."""
    on = enabled if enabled is not None else EnabledCodes(settings)
    severity_for = settings.severity_for
    out = []
    for f in findings:
        code = f.code
        if not on[code]:
            continue
        severity = severity_for(code) or severity_of(f)
        out.append(f if f.severity is severity else f.with_severity(severity))
    if len(out) > 1:
        out.sort(key=SORT_KEY)  # `Finding.sort_key`, without a Python call for each
    return out


def _any_enabled(enabled: EnabledCodes, prefix: str) -> bool:
    return any(enabled[code] for code in RULES if code.startswith(prefix))


def _enabled(enabled: EnabledCodes, checks: tuple) -> tuple:
    return tuple(c for c in checks if any(enabled[code] for code in c.codes))


def _local_findings(rel: str, zone: Zone, doc: MemoryFile, settings: Settings,
                    checks: tuple[TextCheck, ...]) -> list[Finding]:
    out: list[Finding] = []
    for check in checks:
        if zone in check.zones:
            out += check.run(rel, zone, doc, settings)
    return out


# The key of the file checks' results kept in an entry's cache with the facts they read: one
# flat tuple per entry, (codes, facts, findings) after one another for each check that ran
# there, and `()` for no findings. One small object per file rather than a key, a pair and a
# list per check: the server holds every file's (10 000 files: some 19 MB less).
_FILE_CHECK = "file-check"


class Analysis:
    """The findings of one root state, updated by `update(changed paths)`."""

    def __init__(self, state: RootState, today: dt.date | None = None, jobs: int = 1) -> None:
        """`jobs`: processes for the per-file work of a large root (engine/pool.py; 1: this
        one only). The findings are the same whatever it is."""
        self.state = state
        self.today = today or dt.date.today()
        self.settings = state.settings
        self.work: Counter[str] = Counter()
        self.enabled = EnabledCodes(self.settings)  # the settings never change under an Analysis
        self._routes_on = _any_enabled(self.enabled, "PM2")
        self._archive_on = _any_enabled(self.enabled, "PM3")
        self._links_on = self.enabled["PM402"]
        self._text_checks: tuple[TextCheck, ...] = _enabled(self.enabled, TEXT_CHECKS)
        self._file_checks: tuple[FileCheck, ...] = _enabled(self.enabled, FILE_CHECKS)
        self._text_zones: dict[Zone, bool] = {}
        self.per_file: dict[str, tuple[Finding, ...]] = {}  # none: the one empty tuple, for most files
        self.routed: set[str] | None = None  # None: no readable `_index.md`
        self.dangling_names: set[str] = set()  # file names of the routes to nothing
        self.routed_folders: frozenset[str] = frozenset()  # routed paths that are folders (PM204)
        self.recorded: set[str] | None = None  # None: unknown (archive index unreadable)
        self.index_findings: list[Finding] = []
        self.archive_findings: list[Finding] = []
        self.structure: list[Finding] = []
        self.linked_from: dict[str, set[str]] = defaultdict(set)  # link target → files linking to it
        self.links_of: dict[str, set[str]] = {}
        # File name → files with a link to a missing path of that name: a file of that name
        # coming or going changes the broken link's "did it move?" (PM402). Only missing
        # targets: a target that vanishes re-checks its files (`linked_from`), which adds them.
        self.linked_by_name: dict[str, set[str]] = defaultdict(set)
        self.final: dict[str, list[Finding]] = {}
        self._stale_on = self.enabled["PM501"]
        self._git: GitDates | None = None  # git's dates, once asked (see `changed_on`)
        self._git_asked = False
        self._changed_here: set[str] = set()  # changed since this analysis began
        self._hidden = self._hidden_folders()  # (`update` follows what comes and goes there)
        self.duplicates = DuplicateIndex(state.files, self.settings.duplicates.threshold)
        self.duplicates_due: set[str] = set()  # text changes the duplicate search has not seen yet
        self._dups_on = self.enabled["PM503"]
        self.status_sources: StatusSources | None = None
        if self._stale_on or self._dups_on:
            self._git_dates()  # here, once: never later on the editor's thread
        if jobs > 1:
            from .pool import warm

            # The indexes are worked on here, during the workers' shares: the cross-file rules
            # read their parsed documents, which a worker would keep to itself.
            texts = [e for e in state.files.values() if e.text is not None and e.markdown]
            here = [e for e in texts if e.rel in _INDEXES]
            others = [e for e in texts if e.rel not in _INDEXES]
            self.work.update(warm(others, self._warm, jobs, self.work, here=here))
        if self._dups_on:
            self.work["duplicates"] += 1
            self.duplicates.build()
        # PM505 reads which files of a project claim to be its status source (rules/freshness.py).
        self.status_sources = StatusSources(state) if self.enabled["PM505"] else None
        self._recheck_indexes()
        self.structure = self._structure()
        for rel in list(state.files):
            self._recheck_file(rel)
        self._rebuild_final(set(self.final) | set(self.per_file) | self._shared_paths())

    # -- pieces -------------------------------------------------------------
    def _structure(self) -> list[Finding]:
        self.work["structure"] += 1
        # PM210/PM308 read the history store: only when one of them is enabled.
        vanished = check_vanished(self.state) if self.enabled["PM210"] or self.enabled["PM308"] else []
        return check_structure(self.state) + check_leftovers(self.state) + vanished

    def _recheck_indexes(self) -> None:
        state = self.state
        index_entry = state.files.get(INDEX)
        model = index_model(index_entry) if index_entry is not None else None
        if model is not None and self._routes_on:
            self.work["index"] += 1
            self.index_findings, self.routed, self.dangling_names = check_routes(state, model)
        else:
            self.index_findings, self.routed, self.dangling_names = [], None, set()
        self.routed_folders = self._routed_folders()
        self._recheck_archive()

    def _recheck_archive(self) -> None:
        state = self.state
        if self._archive_on:
            self.work["archive-index"] += 1
            archive_entry = state.files.get(ARCHIVE_INDEX)
            records = records_of(archive_entry) if archive_entry is not None else []
            self.archive_findings, self.recorded = check_archive(state, records, self.today)
        else:
            self.archive_findings, self.recorded = [], None

    def _routes_depend_on(self, paths: set[str]) -> bool:
        """Whether a file appearing or vanishing at one of `paths` can change what
        `check_routes` finds: a routed path (PM201/PM205/PM204), a file in the archive or the
        trash (PM205 names where a routed file went), or a file named like a route to nothing
        (its "did it move?" hint)."""
        if not paths:
            return False
        if self.routed is None:
            return True  # not checked yet (or no index): nothing to keep
        for rel in paths:
            if rel in self.routed or posixpath.basename(rel) in self.dangling_names:
                return True
            if zone_of(rel) in (Zone.ARCHIVE, Zone.TRASH):
                return True
        return False

    def _routed_folders(self) -> frozenset[str]:
        """The routed paths that are folders now: a route to one is PM204, so the index is
        re-checked when a folder appears or vanishes at a routed path (as when a file does)."""
        if not self.routed:
            return frozenset()
        state = self.state
        return frozenset(p for p in self.routed if p in state.dirs or p in state.linked_dirs)

    def _file_findings(self, entry: FileEntry) -> list[Finding]:
        """The file's text checks (kept with its text) and file checks (run again each time)."""
        out: list[Finding] = []
        # Parsed only when a selected rule reads the text here (`--select PM2,PM3` parses no
        # note: PM202 asks for a file's title only when it reports it), and only when what
        # it needs is not kept with the text already (a worker of engine/pool.py found it,
        # or the per-file records restored it).
        has_text = entry.markdown and self._reads_text(entry.zone) and entry.readable
        if has_text:
            out += entry.cached("local", lambda: tuple(self._local(entry)))  # none: the one empty tuple
        kept = entry.cache.get(_FILE_CHECK)
        before: tuple = kept if isinstance(kept, tuple) else ()
        after: list = []
        for check in self._file_checks:
            # (`readable` again: a restored entry read meanwhile may have found its file gone.)
            if entry.zone in check.zones and (not check.needs_text or (has_text and entry.readable)):
                out += self._run_file_check(check, entry, before, after)
        if after or before:
            entry.cache[_FILE_CHECK] = tuple(after)  # once per file, not once per check
        return out

    def _run_file_check(self, check: FileCheck, entry: FileEntry, before: tuple, after: list) -> Sequence[Finding]:
        """The check's findings for `entry`: those it gave last time (`before`, the entry's
        kept results) while what it reads of the root (`check.depends`) gives the same answer,
        else a new run. What is to be kept now goes to `after`."""
        if check.depends is None:
            return list(check.run(self, entry))
        facts = check.depends(self, entry)
        codes = check.codes
        for i in range(0, len(before) - 2, 3):
            if before[i] == codes:
                if before[i + 1] == facts:
                    self.work["kept"] += 1
                    after += before[i:i + 3]
                    return cast("tuple[Finding, ...]", before[i + 2])
                break
        found = tuple(check.run(self, entry))  # no findings: the one empty tuple
        after += (codes, facts, found)
        return found

    def _reads_text(self, zone: Zone) -> bool:
        """Does a selected text check, or a file check that needs the text, run in `zone`?"""
        known = self._text_zones.get(zone)
        if known is None:
            known = self._text_zones[zone] = (
                any(zone in c.zones for c in self._text_checks)
                or any(zone in c.zones and c.needs_text for c in self._file_checks))
        return known

    def _local(self, entry: FileEntry) -> list[Finding]:
        """The file's text checks, run once per text (`_file_findings` keeps them with it)."""
        self.work["parsed"] += 1
        doc = entry.doc
        if doc is None:
            return []  # a restored entry whose file was gone when it was read at last
        return _local_findings(entry.rel, entry.zone, doc, self.settings, self._text_checks)

    def _warm(self, entry: FileEntry) -> None:
        """What the per-file work finds in `entry`'s text alone, kept in its cache: run by the
        workers of engine/pool.py before the cross-file facts exist (the file checks' results
        there are thrown away; only what they keep with the text is sent back). `entry` is a
        Markdown file with text."""
        self._file_findings(entry)
        entry.cache.pop(_FILE_CHECK, None)  # made before the cross-file facts: `_run_file_check` runs them again
        if self._links_on:
            self._link_targets(entry)
        if self._dups_on and entry.zone is Zone.ACTIVE:
            sketch_of(entry)
        if self.status_sources is None and self.enabled["PM505"] and entry.zone is Zone.ACTIVE:
            claims_status(entry)
        if entry.rel == INDEX and self._routes_on:
            index_model(entry)
        elif entry.rel == ARCHIVE_INDEX and self._archive_on:
            records_of(entry)
        whole_file_span(entry)

    def _git_dates(self) -> GitDates | None:
        if not self._git_asked:
            self._git_asked = True
            self.work["git"] += 1
            self._git = git_dates(self.state.root) if self.state.files.by_zone[Zone.ACTIVE] else None
        return self._git

    def changed_on(self, rel: str) -> float | None:
        """When `rel` last changed (POSIX time): its last commit in a git repository, unless it
        changed since (uncommitted, or during this analysis) or git does not track it; else
        its modification time."""
        entry = self.state.files.get(rel)
        mtime = entry.mtime if entry is not None else None  # 0 (1970) is a time like any other
        git = self._git_dates()
        if git is None or rel in self._changed_here or rel in git.dirty:
            return mtime
        return git.committed.get(rel, mtime)

    def dated_by(self, rel: str) -> str:
        """What `changed_on` read for `rel`: "its last commit" or "its modification time"."""
        git = self._git_dates()
        if git is None or rel in self._changed_here or rel in git.dirty or rel not in git.committed:
            return "its modification time"
        return "its last commit"

    def _link_targets(self, entry: FileEntry) -> set[str]:
        """The paths whose coming or going changes the file's PM402 findings: each target,
        and the note a target without an extension names too."""
        if not (entry.markdown and entry.zone in LINK_ZONES):
            return set()
        out = set()
        for path in link_paths(entry).paths:
            if path:
                out.add(path)
                note = md_form(path)
                if note is not None:
                    out.add(note)
        return out

    def _recheck_file(self, rel: str) -> None:
        self.work["files"] += 1
        for target in self.links_of.pop(rel, ()):
            self.linked_from[target].discard(rel)
            named = self.linked_by_name.get(target.rpartition("/")[2])
            if named is not None:
                named.discard(rel)
        entry = self.state.files.get(rel)
        if entry is None:
            self.per_file.pop(rel, None)
            return
        self.per_file[rel] = tuple(self._file_findings(entry))
        targets = self._link_targets(entry) if self._links_on else set()
        self.links_of[rel] = targets
        files = self.state.files
        for target in targets:
            self.linked_from[target].add(rel)
            if target not in files:
                self.linked_by_name[target.rpartition("/")[2]].add(rel)

    def _shared_paths(self) -> set[str]:
        """Paths that hold findings not owned by one file: the indexes, the core files."""
        paths = {f.path for f in self.index_findings + self.archive_findings + self.structure}
        return paths | set(_INDEXES)

    def _rebuild_final(self, paths: set[str]) -> set[str]:
        """Recompute the final (filtered, sorted) findings of `paths`; return those that changed."""
        shared: dict[str, list[Finding]] = defaultdict(list)
        for f in self.index_findings + self.archive_findings + self.structure:
            if f.path in paths:
                shared[f.path].append(f)
        changed = set()
        per_file, settings, enabled = self.per_file, self.settings, self.enabled
        for rel in paths:
            own = per_file.get(rel, ())
            more = shared.get(rel)  # most files have none: their own tuple, not a copy of it
            found = apply_settings(own if more is None else [*own, *more], settings, enabled)
            if found:
                if self.final.get(rel) != found:
                    changed.add(rel)
                self.final[rel] = found
            elif self.final.pop(rel, None) is not None:
                changed.add(rel)
        return changed

    # -- changes ------------------------------------------------------------
    def update(self, changed: set[str], defer_duplicates: bool = False) -> set[str]:
        """The root state changed at `changed` (paths whose entries were replaced, added or
        removed). Re-check what depends on them; return the paths whose findings changed.

        `defer_duplicates`: leave the near-duplicate search (PM503) for `settle` — an editor's
        keystroke must not wait for comparisons with other files (docs/design.md §7)."""
        if not changed:
            return set()
        state = self.state
        existence = {rel for rel in changed if (rel in state.files) != (rel in self.per_file)}
        before_shared = self._shared_paths()
        old_routed, old_recorded = self.routed, self.recorded
        touched = set(changed)
        self._changed_here |= changed
        if self.status_sources is not None:
            touched |= self.status_sources.update(changed)
        if self._dups_on:
            if defer_duplicates and not existence:
                self.duplicates_due |= changed
            else:
                touched |= self.duplicates.update(changed | self.duplicates_due)
                self.duplicates_due.clear()
        # A folder appearing or vanishing is a changed path that is no file; keystrokes in a
        # buffer never are, so they skip the walk over every route.
        folder_change = any(rel not in state.files for rel in changed) and self._routed_folders() != self.routed_folders
        if changed & set(_INDEXES) or folder_change or self._routes_depend_on(existence):
            self._recheck_indexes()
            self.structure = self._structure()
        elif existence:
            # A file came or went that no route names: the routes' findings stand (a walk over
            # every route of a large index is most of an external change's cost).
            self._recheck_archive()
            self.structure = self._structure()
        elif changed & state.files.by_zone[Zone.CORE]:
            self.structure = self._structure()  # PM004 sums `_core/`
        # Files whose routed or recorded state may have flipped.
        touched |= self._flipped(old_routed, self.routed)
        touched |= self._flipped(old_recorded, self.recorded)
        # Files linking to a path that appeared or vanished: a file, or a folder (a changed
        # path that is no file, or a parent of a file that came or went: a folder is made with
        # its first file and may go with its last).
        seen: set[str] = set()
        for rel in existence:  # and those whose broken link's file may have moved to it (PM402)
            touched |= self.linked_by_name.get(rel.rpartition("/")[2], set())
        for rel in existence | {rel for rel in changed if rel not in state.files}:
            while rel and rel not in seen:
                seen.add(rel)
                touched |= self.linked_from.get(rel, set())
                rel = posixpath.dirname(rel)
        # Files linking under a folder whose paths became known or unknown (a link to a folder,
        # a folder that could not be listed: what lies under it is unseen, never missing).
        hidden = self._hidden_folders()
        if hidden != self._hidden:
            touched |= self._linking_under(hidden ^ self._hidden)
            self._hidden = hidden
        for rel in touched:
            self._recheck_file(rel)
        return self._rebuild_final(touched | before_shared | self._shared_paths())

    def _hidden_folders(self) -> frozenset[str]:
        """The folders whose paths the scan could not see: links to folders, folders that could
        not be listed (`RootState.unseen`)."""
        state = self.state
        return frozenset(state.linked_dirs) | frozenset(folder for folder, _reason in state.scan_errors)

    def _linking_under(self, folders: frozenset[str]) -> set[str]:
        """The files linking to a path under one of `folders`: one sort of the targets, then a
        range of them per folder (a folder's paths became seen or unseen: rare, never a
        keystroke)."""
        targets = sorted(self.linked_from)
        out: set[str] = set()
        for folder in folders:
            prefix = "" if folder == "." else folder + "/"
            i = bisect.bisect_left(targets, prefix)
            while i < len(targets) and targets[i].startswith(prefix):
                out |= self.linked_from[targets[i]]
                i += 1
        return out

    def settle(self) -> set[str]:
        """Do the near-duplicate work `update` left for later; return the paths whose
        findings changed."""
        if not self.duplicates_due:
            return set()
        due, self.duplicates_due = self.duplicates_due, set()
        touched = self.duplicates.update(due)
        for rel in touched:
            self._recheck_file(rel)
        return self._rebuild_final(touched)

    def _flipped(self, old: set[str] | None, new: set[str] | None) -> set[str]:
        if old == new:
            return set()
        if old is None or new is None:
            return set(self.state.files)  # the index appeared or vanished: every file may flip
        return {rel for rel in old ^ new if rel in self.state.files}

    # -- results ------------------------------------------------------------
    def by_path(self) -> dict[str, list[Finding]]:
        return dict(self.final)

    def all(self) -> list[Finding]:
        out = [f for found in self.final.values() for f in found]
        out.sort(key=Finding.sort_key)
        return out


def analyze(state: RootState, today: dt.date | None = None, jobs: int = 1) -> list[Finding]:
    """Every finding of every enabled rule, with its final severity, sorted."""
    return Analysis(state, today, jobs).all()

