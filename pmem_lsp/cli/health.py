"""`pmem health`: the engine's numbered proposal (engine/health_proposal.py), as text or JSON. Changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..engine.analysis import Analysis
from ..engine.health_proposal import DEFAULT_PER_GROUP, health_report
from ..engine.names import clean_data
from ..engine.pool import jobs_for
from ..engine.root_state import RootState
from ..engine.secrets import mask_data
from . import exit_codes
from .terminal import lines

if TYPE_CHECKING:  # the settings model only types them: a root without settings loads none
    from ..engine.entry_cache import Records
    from ..engine.settings import Settings


def run_health(root: Path, settings: Settings, fmt: str, out: TextIO, all_items: bool = False,
               states: list | None = None, records: Records | None = None) -> int:
    """`states` receives the root state read (the cache asks it which outside paths PM403
    looked at, as for `pmem check`); `records`: the per-file records (`engine/entry_cache.py`)."""
    state = RootState.scan(root, settings, restore=records.restorer() if records is not None else None)
    if states is not None:
        states.append(state)
    report = health_report(Analysis(state, jobs=jobs_for(len(state.files))[0]))
    if fmt == "json":
        out.write(json.dumps(clean_data(mask_data(report.as_dict())), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(lines(report.text(None if all_items else DEFAULT_PER_GROUP)))
    return exit_codes.OK
