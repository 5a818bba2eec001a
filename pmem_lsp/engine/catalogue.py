"""The rule catalogue: every code pmem knows, gathered from the rule modules (engine/rules/),
with its checks and its quick fixes (engine/rule.py says what a module declares).

Explanations are written for the person who sees the diagnostic; each traces back to the
Persistent Memory format (spec v0.8.0) or to the product design (docs/design.md §4).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from .findings import Finding, Severity
from .rule import FileCheck, FixFn, Rule, TextCheck
from .rules import (
    archive,
    broken_links,
    concluded,
    duplicates,
    freshness,
    instructions,
    interrupted_writes,
    route_facts,
    routes,
    secrets,
    source_paths,
    stale,
    structure,
    summary,
    vanished,
)

if TYPE_CHECKING:
    from .fixes import Fix
    from .root_state import RootState

# The rule modules. A new module is one line here; a new rule in a module, none.
MODULES = (structure, interrupted_writes, summary, routes, route_facts, archive, secrets, broken_links, source_paths,
           instructions, stale, concluded, duplicates, freshness, vanished)

RULES: dict[str, Rule] = {r.code: r for r in sorted((r for m in MODULES for r in m.RULES), key=lambda r: r.code)}
TEXT_CHECKS: tuple[TextCheck, ...] = tuple(c for m in MODULES for c in getattr(m, "TEXT_CHECKS", ()))
FILE_CHECKS: tuple[FileCheck, ...] = tuple(c for m in MODULES for c in getattr(m, "FILE_CHECKS", ()))
FIXES: dict[str, FixFn] = {code: fix for m in MODULES for code, fix in getattr(m, "FIXES", {}).items()}


def severity_of(f: Finding) -> Severity:
    """The finding's severity: as set by `apply_settings`, else its rule's default."""
    return f.severity or RULES[f.code].severity


def quick_fixes(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """The text-only fixes for `finding`, computed against the text `snap` holds (the editor's
    buffer while it has unsaved edits). Empty when the finding has none or no longer matches
    the text."""
    fix = FIXES.get(finding.code)
    return fix(state, finding, today) if fix is not None else []
