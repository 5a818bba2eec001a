"""`record_quietly`: an entry of the root as it is now, for the write door and the CLI. History
never fails a write or a command: whatever goes wrong while recording costs that entry only."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .store import Writer, open_store

log = logging.getLogger(__name__)


def history_disabled() -> bool:
    """`PMEM_HISTORY=off`: nothing is recorded (a benchmark, a throwaway root)."""
    return os.environ.get("PMEM_HISTORY", "").strip().lower() in ("off", "0", "no", "false")


def record_quietly(root: Path, writer: Writer, title: str) -> str | None:
    """The new entry's commit, or None (nothing changed, history off, or recording failed)."""
    if history_disabled() or not root.is_dir():
        return None
    try:
        return open_store(root).record(writer, title)
    except Exception as exc:  # a write never fails because history could not keep it
        log.debug("history: not recorded: %s", type(exc).__name__)
        return None
