"""`pmem status`: prints the engine's memory status (engine/status.py renders it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from ..engine.settings import SettingsError, resolve_settings
from ..engine.status import memory_status
from . import exit_codes
from .terminal import lines


def run_status(root: Path, out: TextIO) -> int:
    try:
        excluded = resolve_settings(root).excluded
    except SettingsError as exc:
        sys.stderr.write(f"pmem: warning: {exc}; `exclude` is not applied\n")
        excluded = None
    out.write(lines(memory_status(root, excluded).text()))
    return exit_codes.OK
