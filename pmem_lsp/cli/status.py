"""`pmem status`: the engine's memory status (engine/status_report.py), as text or JSON. Changes nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from ..engine.names import clean_data
from ..engine.secrets import mask_data
from ..engine.settings_defaults import SettingsError, settings_for
from ..engine.status_report import memory_status
from . import exit_codes
from .terminal import lines


def run_status(root: Path, fmt: str, out: TextIO) -> int:
    try:
        excluded = settings_for(root).excluded
    except SettingsError as exc:
        sys.stderr.write(f"pmem: warning: {exc}; `exclude` is not applied\n")
        excluded = None
    report = memory_status(root, excluded)
    if fmt == "json":
        # Plain data, with likely secrets in route descriptions masked as in the text.
        out.write(json.dumps(clean_data(mask_data(report.as_dict())), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(lines(report.text()))
    return exit_codes.OK
