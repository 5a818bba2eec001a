"""The history lens's plain half (engine/navigation/history_lens.py), without a store: which
entries make a lens, and what it says. The server's end-to-end tests are in
test_server_history.py."""

from __future__ import annotations

import datetime as dt

from pmem_lsp.engine.history.store import Entry, Writer
from pmem_lsp.engine.navigation.history_lens import ReviewState, files_changed, history_lenses

NOW = dt.datetime(2026, 12, 7, 12, 0, tzinfo=dt.timezone.utc)


def entry(commit: str, parent: str | None, kind: str, files: list[str], minutes_ago: int, detail: str = "") -> Entry:
    return Entry(commit[:12], commit, parent, NOW - dt.timedelta(minutes=minutes_ago), Writer(kind, detail),
                 "title", [(f, "changed") for f in files])


def test_the_baseline_the_users_saves_and_this_sessions_writes_make_no_lens():
    pending = [  # newest first
        entry("e" * 40, "d" * 40, "pmem", ["notes/a.md"], 1, "save notes/a.md"),  # this session's undo
        entry("d" * 40, "c" * 40, "editor", ["notes/b.md"], 2),
        entry("c" * 40, "b" * 40, "agent", ["notes/a.md", "_index.md"], 3, "Claude Code"),
        entry("b" * 40, "a" * 40, "outside", ["notes/a.md"], 10),
        entry("a" * 40, None, "outside", ["notes/a.md", "notes/b.md", "_index.md"], 60),  # where history began
    ]
    files = files_changed(pending, own=frozenset({"e" * 40}))
    assert sorted(files) == ["_index.md", "notes/a.md"]
    a = files["notes/a.md"]
    assert a.entries == ("c" * 40, "b" * 40)
    assert (a.newest_id, a.first_id) == ("c" * 12, "b" * 12)
    assert a.writer == Writer("agent", "Claude Code")


def test_lens_titles_and_commands():
    pending = [entry("c" * 40, "b" * 40, "agent", ["notes/a.md"], 3, "Claude Code"),
               entry("b" * 40, "a" * 40, "outside", ["notes/a.md"], 200)]
    state = ReviewState(files=files_changed(pending))
    lenses = history_lenses(state, "notes/a.md", now=NOW)
    assert [lens.title for lens in lenses] == [
        "changed by an agent (Claude Code) 3 min ago (2 changes)", "diff", "undo", "keep"]
    assert [(lens.command, lens.arguments) for lens in lenses] == [
        ("pmem.history", {"path": "notes/a.md"}),
        ("pmem.diff", {"path": "notes/a.md", "entry": "b" * 12}),
        ("pmem.undo", {"entry": "c" * 12, "paths": ["notes/a.md"]}),
        ("pmem.review.accept", {"path": "notes/a.md"}),
    ]
    assert history_lenses(state, "notes/other.md", now=NOW) == []
    assert history_lenses(None, "notes/a.md") == []
    outside = ReviewState(files=files_changed([entry("b" * 40, "a" * 40, "outside", ["x.md"], 60 * 26)]))
    assert history_lenses(outside, "x.md", now=NOW)[0].title == "changed by another program 1 day ago"
