"""`pmem health`: the engine's numbered proposal (engine/health.py), as text or JSON. Changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from ..engine.health import DEFAULT_PER_GROUP, memory_health
from ..engine.secrets import mask_data
from ..engine.settings import Settings
from . import exit_codes
from .terminal import lines


def run_health(root: Path, settings: Settings, fmt: str, out: TextIO, all_items: bool = False) -> int:
    report = memory_health(root, settings)
    if fmt == "json":
        out.write(json.dumps(mask_data(report.as_dict()), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(lines(report.text(None if all_items else DEFAULT_PER_GROUP)))
    return exit_codes.OK
