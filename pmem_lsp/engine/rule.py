"""What a rule module declares (engine/rules/*.py), and what the catalogue gathers from it.

A rule module holds, for its codes: the metadata (`RULES`: code, name, default severity,
explanation), the checks that find them (`TEXT_CHECKS` and `FILE_CHECKS`, or a check of its own
scope that the analysis calls), and the quick fixes (`FIXES`: code → fix function). Adding a
rule is its module, one line in `catalogue.MODULES` when the module is new, and its tests.

The two common scopes of a check, which the analysis runs for every file and keeps current:

- a **text check** reads one file's text only (its summary, its secrets, what it says of its
  work); its findings are kept with the text until it changes;
- a **file check** also reads what the analysis knows of the root (which paths exist, which are
  routed or recorded, when a file last changed, its near-duplicates); it runs again when the
  file or those facts change. It says which facts it reads (`depends`), so its findings are
  kept while they give the same answers.

The routes (`_index.md`), the records (`_archive/_index.md`) and the root's shape have checks
of their own scope (`rules/routes.check_routes`, `rules/archive.check_archive`,
`rules/structure.check_structure`), which also give the analysis the facts file checks read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .findings import Finding, Severity
from .zones import Zone

if TYPE_CHECKING:
    from .analysis import Analysis
    from .fixes import Fix
    from .memory_file import MemoryFile
    from .root_state import FileEntry, RootState
    from .settings import Settings

E, W, I, H = Severity.ERROR, Severity.WARNING, Severity.INFORMATION, Severity.HINT  # noqa: E741


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str
    severity: Severity
    explanation: str  # for the person who sees the finding; traces back to the format


TextCheckFn = Callable[[str, Zone, "MemoryFile", "Settings"], Iterable[Finding]]
FileCheckFn = Callable[["Analysis", "FileEntry"], Iterable[Finding]]
FixFn = Callable[["RootState", Finding, dt.date], list["Fix"]]
DependsFn = Callable[["Analysis", "FileEntry"], Hashable]


@dataclass(frozen=True)
class TextCheck:
    """A check of one Markdown file's text alone; run when any of `codes` is enabled."""

    codes: tuple[str, ...]
    zones: frozenset[Zone]
    run: TextCheckFn


@dataclass(frozen=True)
class FileCheck:
    """A check of one file against what the analysis knows of the root."""

    codes: tuple[str, ...]
    zones: frozenset[Zone]
    run: FileCheckFn
    needs_text: bool = True  # only readable Markdown files (else every file of the zones)
    # What the check reads of the root for this file, besides the file's own text and the
    # settings: while it gives the same answer, the findings it gave stand (kept with the
    # entry, and in the per-file records, so an unchanged file is neither read nor checked
    # again). None: run every time. A fact the check reads and this leaves out would let a
    # record hide a change (tests/engine/test_check_cache.py and test_records.py look).
    depends: DependsFn | None = None


ALL_ZONES = frozenset(z for z in Zone if z is not Zone.HIDDEN)
