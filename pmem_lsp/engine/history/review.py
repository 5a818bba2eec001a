"""What the user has accepted (`pmem review --accept`): kept in the store (`reviewed.json`), the
root untouched. `upto`: every entry up to it is reviewed (`--all`); `accepted`: single entries
after it. An entry is unreviewed when it is newer than `upto` and not accepted one by one."""

from __future__ import annotations

import json
import os

from .store import Entry, HistoryStore

REVIEWED = "reviewed.json"


def _load(store: HistoryStore) -> tuple[str | None, set[str]]:
    try:
        raw = json.loads((store.dir / REVIEWED).read_text(encoding="utf-8"))
        upto = raw.get("upto") if isinstance(raw.get("upto"), str) else None
        return upto, {c for c in raw.get("accepted", []) if isinstance(c, str)}
    except (OSError, ValueError, AttributeError):
        return None, set()  # never reviewed (or the record is lost): everything is unreviewed


def _save(store: HistoryStore, upto: str | None, accepted: set[str]) -> None:
    tmp = store.dir / (REVIEWED + ".tmp")
    tmp.write_text(json.dumps({"upto": upto, "accepted": sorted(accepted)}), encoding="utf-8")
    os.replace(tmp, store.dir / REVIEWED)


def reviewed_upto(store: HistoryStore) -> str | None:
    upto, _ = _load(store)
    return upto if upto and store.git.ok("cat-file", "-e", f"{upto}^{{commit}}") else None


def unreviewed(store: HistoryStore) -> list[Entry]:
    _, accepted = _load(store)
    upto = reviewed_upto(store)
    return [e for e in store.entries(after=upto) if e.commit not in accepted]


def accept(store: HistoryStore, commits: list[str]) -> None:
    """Mark these entries reviewed (full commit ids, resolved by the caller)."""
    with store.locked():
        upto, accepted = _load(store)
        _save(store, upto, accepted | set(commits))


def accept_all(store: HistoryStore) -> None:
    with store.locked():
        _save(store, store.head(), set())


def renamed(store: HistoryStore, old_to_new: dict[str, str]) -> None:
    """After `--forget` rewrote the entries: the same marks on the rewritten commits (called
    with the store locked)."""
    upto, accepted = _load(store)
    _save(store, old_to_new.get(upto or "") if upto else None,
          {old_to_new[c] for c in accepted if c in old_to_new})
