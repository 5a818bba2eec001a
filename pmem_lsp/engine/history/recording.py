"""`record_quietly`: an entry of the root as it is now, for the write door and the CLI. History
never fails a write or a command: whatever goes wrong while recording costs that entry only."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .git import HistoryOff
from .store import HistoryStore, Writer, open_store

log = logging.getLogger(__name__)


def history_disabled() -> bool:
    """`PMEM_HISTORY=off`: nothing is recorded (a benchmark, a throwaway root)."""
    return os.environ.get("PMEM_HISTORY", "").strip().lower() in ("off", "0", "no", "false")


def caught_up_store(root: Path) -> HistoryStore:
    """The root's store, after recording what changed since its last entry (writer `outside`):
    what `pmem history`, `diff`, `undo`, the server's history commands and `memory_history` read.
    Raises HistoryOff (with why) when history is off or the store cannot be used."""
    if history_disabled():
        raise HistoryOff("history is off: PMEM_HISTORY is set to off")
    store = open_store(root)
    store.record(Writer("outside"), "changed outside pmem")
    return store


def record_quietly(root: Path, writer: Writer, title: str) -> str | None:
    """The new entry's commit, or None (nothing changed, history off, or recording failed)."""
    if history_disabled() or not root.is_dir():
        return None
    try:
        store = open_store(root)
        made = store.record(writer, title)
        if made is not None:
            from .retention import prune_daily

            prune_daily(store)  # at most once a day; keeps the last 50 entries at least
        return made
    except Exception as exc:  # a write never fails because history could not keep it
        log.debug("history: not recorded: %s", type(exc).__name__)
        return None


def record_file_quietly(root: Path, rel: str, writer: Writer, title: str) -> str | None:
    """An entry with only `rel` changed (`HistoryStore.record_file`), for the agent hooks; only
    into a store that exists (a hook never creates one: the first entry is a pmem command's)."""
    if history_disabled():
        return None
    try:
        return open_store(root, create=False).record_file(rel, writer, title)
    except Exception as exc:  # an agent's write is never failed by history
        log.debug("history: not recorded: %s", type(exc).__name__)
        return None


def agent_writer(data: dict, tool: str, rel: str) -> tuple[Writer, str]:
    """The writer and title of an agent's write as a hook sees it: the tool, the client (named
    by `PMEM_HOOK_CLIENT`, else recognised by Claude Code's payload) and its session."""
    client = os.environ.get("PMEM_HOOK_CLIENT", "").strip()
    if not client:
        client = "Claude Code" if "session_id" in data or "hook_event_name" in data else "agent"
    session = data.get("session_id")
    detail = f"{tool} {rel} · {client}" + (f" · session {session}" if isinstance(session, str) and session else "")
    return Writer("agent", detail), f"{tool} {rel}"
