"""Checking some files, or a proposed text, against the whole root (docs/design.md §6.1):
`pmem check PATH…`, `pmem check --stdin-filename PATH`, the agent hooks and `memory_check`.

The cross-file rules (routes, links, near-duplicates) still read the whole root; only the
findings reported are narrowed to the files asked about. A proposed text is checked as if it
were on disk at its path, and nothing is written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .analysis import analyze
from .findings import Finding
from .pool import jobs_for
from .root_state import RootState
from .zones import Containment

if TYPE_CHECKING:  # the settings model only types them: a root without settings loads none
    from .entry_cache import Records
    from .settings import Settings


@dataclass(frozen=True)
class CheckResult:
    state: RootState
    findings: list[Finding]


def root_relative(root: Path, raw: str, cwd: Path | None = None) -> str | None:
    """The root-relative POSIX path a command-line or hook path names, or None when it is
    outside the root. An absolute path, or one relative to `cwd` that lands inside the root,
    is taken as it is; anything else is read as relative to the root. The folders are
    resolved (a root reached through a link), the name is not: a file that is itself a link
    is still named by its own path (`zones.Containment.relative`)."""
    where = Containment(root)
    candidates = [raw] if os.path.isabs(raw) else [os.path.join(cwd or os.getcwd(), raw), os.path.join(root, raw)]
    for candidate in candidates:
        rel = where.relative(candidate)
        if rel is not None:
            return rel
    return None


def check_files(root: Path, settings: Settings, paths: list[str] | None = None,
                proposed: tuple[str, str] | None = None, records: Records | None = None,
                parallel: bool = False) -> CheckResult:
    """Findings of the root, narrowed to `paths` (root-relative; None: all). `proposed`:
    (path, text) checked in place of what the disk holds at that path. `records`: the
    per-file records to restore unchanged files from (`entry_cache.py`). `parallel`: a large
    root's per-file work may run in several processes (engine/pool.py; the same findings)."""
    state = RootState.scan(root, settings, restore=records.restorer() if records is not None else None)
    if proposed is not None:
        state.set_buffer(*proposed)
    findings = analyze(state, jobs=jobs_for(len(state.files))[0] if parallel else 1)
    if paths is not None:
        wanted = set(paths)
        findings = [f for f in findings if f.path in wanted]
    return CheckResult(state, findings)
