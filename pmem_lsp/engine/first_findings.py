"""What one open buffer shows on its own, before its root is scanned: its summary's findings.

The server publishes these first (`MemoryHost.early_findings`), and so does the early path
(`server/early_path.py`), which answers the editor before the protocol libraries are imported. With
`settings=None` it applies the defaults without importing the settings model (pydantic): a
session with no `.pmem.toml` and no editor settings has nothing to validate, and the first
diagnostics come sooner. `tests/engine/test_early_findings.py` holds the two forms equal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .findings import Finding
from .memory_file import MemoryFile
from .rules.summary import RULES, check_summary
from .zones import zone_of

if TYPE_CHECKING:
    from .settings import Settings

# The rules these findings can come from: their names and default severities.
EARLY_RULES = {rule.code: rule for rule in RULES}


def buffer_findings(rel: str, text: str, settings: Settings | None) -> list[Finding]:
    """The summary findings of `text` at `rel`, with the settings' selection and severities
    (None: the defaults), in the analysis's order."""
    found = check_summary(rel, zone_of(rel), MemoryFile(text), settings)
    if settings is not None:
        from .analysis import apply_settings

        return apply_settings(found, settings)
    # The defaults select every rule and change no severity (`apply_settings` with `Settings()`).
    out = [f if f.severity is not None else replace(f, severity=EARLY_RULES[f.code].severity) for f in found]
    out.sort(key=Finding.sort_key)
    return out
