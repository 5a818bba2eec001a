"""The history code lens (docs/design.md §11, "In the editor"): on a file an agent or another
program changed since the user last accepted a review, `changed by an agent 3 min ago · diff ·
undo · keep`.

Two halves, so the keystroke path never calls git: `review_state` reads the history store (git
processes: call it off the event loop, when the watcher or a write recorded an entry) and
returns plain data the server caches per root; `history_lenses` turns one file's part of that
cached state into lens titles and commands, with no I/O at all.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from ..history import review
from ..history.git import HistoryOff
from ..history.recording import history_disabled
from ..history.store import Entry, Writer, open_store

# Writers whose changes the user did not make in this editor. `editor` entries are the user's own
# saves; `pmem` entries this session made (its lifecycle actions, undo) are left out by commit.
REVIEWED_WRITERS = ("agent", "outside", "pmem")


@dataclass(frozen=True)
class FileReview:
    """What the unreviewed entries did to one file."""

    rel: str
    entries: tuple[str, ...]  # commits, newest first: what `keep` accepts
    first_id: str  # the oldest of them (the diff shows the file as it was before it)
    newest_id: str  # the newest (what `undo` takes back)
    writer: Writer  # the newest entry's writer
    time: dt.datetime  # the newest entry's time


@dataclass(frozen=True)
class ReviewState:
    files: dict[str, FileReview] = field(default_factory=dict)
    head: str | None = None  # the store's newest entry when this was read
    off: str | None = None  # why history is off (no lens then)


def review_state(root: Path, own: frozenset[str] = frozenset()) -> ReviewState:
    """The unreviewed changes of `root`, file by file. Runs git: never on the keystroke path.
    `own`: commits this editor session made itself (not shown as someone else's change)."""
    if history_disabled():
        return ReviewState(off="history is off: PMEM_HISTORY is set to off")
    try:
        store = open_store(root, create=False)
        pending = review.unreviewed(store)
        head = store.head()
    except HistoryOff as exc:
        return ReviewState(off=str(exc))
    return ReviewState(files=files_changed(pending, own), head=head)


def files_changed(pending: list[Entry], own: frozenset[str] = frozenset()) -> dict[str, FileReview]:
    """`pending` (newest first) grouped by file, without the user's own changes. The store's
    first entry is left out: it is where history began (every file "added"), not a change."""
    grouped: dict[str, list[Entry]] = {}
    for entry in pending:
        if entry.parent is None or entry.writer.kind not in REVIEWED_WRITERS or entry.commit in own:
            continue
        for rel, _change in entry.files:
            grouped.setdefault(rel, []).append(entry)
    return {rel: FileReview(rel, tuple(e.commit for e in entries), entries[-1].id, entries[0].id,
                            entries[0].writer, entries[0].time)
            for rel, entries in grouped.items()}


@dataclass(frozen=True)
class HistoryLens:
    """One lens: its title and the `pmem.*` command it runs, with its one argument object."""

    title: str
    command: str
    arguments: dict


def who(writer: Writer) -> str:
    if writer.kind == "agent":
        return f"an agent ({writer.detail})" if writer.detail else "an agent"
    if writer.kind == "pmem":
        return "pmem outside this editor"  # the CLI as an agent's hands, another editor
    return "another program"


def ago(when: dt.datetime, now: dt.datetime) -> str:
    seconds = max(0, int((now - when).total_seconds()))
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    days = seconds // 86400
    return f"{days} day{'s' if days != 1 else ''} ago"


def history_lenses(state: ReviewState | None, rel: str, now: dt.datetime | None = None) -> list[HistoryLens]:
    """The lenses of `rel` from a cached review state (nothing when it has no unreviewed change)."""
    change = state.files.get(rel) if state is not None else None
    if change is None:
        return []
    now = now or dt.datetime.now(dt.timezone.utc).astimezone()
    count = len(change.entries)
    more = f" ({count} changes)" if count > 1 else ""
    return [
        HistoryLens(f"changed by {who(change.writer)} {ago(change.time, now)}{more}", "pmem.history",
                    {"path": rel}),
        HistoryLens("diff", "pmem.diff", {"path": rel, "entry": change.first_id}),
        HistoryLens("undo", "pmem.undo", {"entry": change.newest_id, "paths": [rel]}),
        HistoryLens("keep", "pmem.review.accept", {"path": rel}),
    ]
