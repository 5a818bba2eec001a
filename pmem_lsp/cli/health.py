"""`pmem health`: the engine's numbered proposal (engine/health.py), as text or JSON. Changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from ..engine.health import memory_health
from ..engine.names import clean_data
from ..engine.secrets import mask_data
from ..engine.settings import Settings
from . import exit_codes
from .terminal import lines


def run_health(root: Path, settings: Settings, fmt: str, out: TextIO) -> int:
    report = memory_health(root, settings)
    if fmt == "json":
        out.write(json.dumps(clean_data(mask_data(report.as_dict())), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(lines(report.text()))
    return exit_codes.OK
