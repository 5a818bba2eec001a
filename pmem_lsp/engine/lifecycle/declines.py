"""Changes the user declined in an agent's session, so that the agent cannot apply them another
way (docs/decisions.md, "A declined change stays declined").

`pmem mcp` records a request here when the user declines or dismisses its confirmation; the CLI,
for a request that matches one recorded in the last day, refuses `--token` and `--yes` and
applies only after its own prompt at a terminal. A later yes to the same change (accepted
through MCP, or at the CLI's prompt) clears it.

A request matches by the root, the operation and the file it acts on (the plan's target, so
`./notes/x.md` is `notes/x.md`; for an undo, the entry it undoes), not by every argument: a
text changed by a space or another archive reason would otherwise make a declined change new
again. The records are hashes, in
the user's cache folder (mode 0700, the file 0600) beside `pending/`, never in the memory root,
which agents read. A record file that cannot be read is taken to decline everything.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..user_cache import pmem_cache_dir

if TYPE_CHECKING:
    from .plan import Plan

DECLINES_FILE = "declined.json"
KEEP_SECONDS = 24 * 3600  # a decline holds for a day
_VERSION = 1

DECLINED_MESSAGE = ("the user declined this change in the agent's session; nothing was written. Only the person "
                    "can apply it, at a terminal, where pmem asks them")


def decline_key(root: Path, operation: str, target: str | None) -> str:
    """What a decline is recorded as: the root (links resolved), the operation and its file."""
    payload = {"version": _VERSION, "root": os.path.realpath(root), "operation": operation, "target": target}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


def plan_key(root: Path, plan: Plan) -> str:
    """`decline_key` of a planned change. An undo acts on no one file (its target is None): it
    is matched by the entry it undoes, so a no to undoing one entry does not hold every undo."""
    return decline_key(root, plan.op, plan.target or plan.facts.get("entry"))


def _path() -> Path:
    return Path(pmem_cache_dir()) / DECLINES_FILE


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    folder = Path(pmem_cache_dir())
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(folder / (DECLINES_FILE + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl
        except ImportError:  # Windows: no advisory lock; a lost update is a lost record only
            fcntl = None  # type: ignore[assignment]
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _load() -> dict[str, float] | None:
    """The records (old ones dropped); None when the file is there but cannot be read."""
    records, _ = _read()
    return records


def _read() -> tuple[dict[str, float] | None, str]:
    """The records, or None and why they cannot be read."""
    path = _path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        return None, f"{path}: {exc.strerror or type(exc).__name__}"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, f"{path} is not a record pmem wrote"
    if not isinstance(data, dict):
        return None, f"{path} is not a record pmem wrote"
    now = time.time()
    return {k: float(v) for k, v in data.items()
            if isinstance(k, str) and isinstance(v, int | float) and 0 <= now - float(v) <= KEEP_SECONDS}, ""


def _store(records: dict[str, float]) -> None:
    path = _path()
    temp = path.with_name(f".{DECLINES_FILE}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(records, out)
    os.replace(temp, path)


def record(key: str) -> None:
    """The user declined (or dismissed) the change `key` names."""
    with _locked():
        records = _load() or {}
        records[key] = time.time()
        _store(records)


def clear(key: str) -> None:
    """The user said yes to the change `key` names: it is no longer declined."""
    with _locked():
        records = _load()
        if records is not None and key in records:
            del records[key]
            _store(records)


def declined(key: str) -> bool:
    """The user declined this change in the last day (or the records cannot be read)."""
    return held_because(key) is not None


def held_because(key: str) -> str | None:
    """Why the change `key` names is held for the person's own prompt: they declined it, or
    pmem cannot read its records and so cannot tell (a true message either way: a folder that
    is not one, e.g. PMEM_CACHE_DIR=/dev/null, is not the user's no). None: not held."""
    records, why = _read()
    if records is None:
        return (f"pmem cannot read its record of the changes the user declined ({why}), so it cannot tell "
                "whether this one was; nothing was written. Only the person can apply it, at a terminal, where "
                "pmem asks them")
    return DECLINED_MESSAGE if key in records else None


def any_declined() -> bool:
    """Anything is recorded at all (a cheap test before a change is planned to look it up)."""
    records = _load()
    return records is None or bool(records)
