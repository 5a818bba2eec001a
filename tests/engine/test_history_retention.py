"""Retention (docs/design.md §11): entries older than `history.days` are pruned, at least the
last 50 kept; the newest kept entry becomes the base with its whole tree, and what only the
pruned entries held is gone from the store."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from pathlib import Path

import pytest

from pmem_lsp.engine.history import retention
from pmem_lsp.engine.history.retention import KEEP_AT_LEAST, prune, prune_daily, retention_days
from pmem_lsp.engine.history.store import Writer, open_store
from pmem_lsp.engine.settings import Settings
from roots import make_root

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with git")
NOW = dt.datetime(2026, 6, 1, 12, tzinfo=dt.timezone.utc)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return make_root(tmp_path, {})


def fill(root: Path, old: int, recent: int):
    store = open_store(root)
    for i in range(old + recent):
        (root / "notes/log.md").write_text(f"# Log\n\nversion {i}\n")
        when = NOW - dt.timedelta(days=200 - i) if i < old else NOW - dt.timedelta(hours=old + recent - i)
        assert store.record(Writer("outside"), f"entry {i}", when)
    return store


def test_keeps_the_last_50_when_fewer_are_recent_and_prunes_the_rest(root: Path):
    store = fill(root, old=56, recent=4)
    first_blob = store.git.run("hash-object", "--stdin", input=b"# Log\n\nversion 0\n").decode().strip()
    assert store.git.ok("cat-file", "-e", first_blob)
    assert prune(store, 90, NOW) == 10
    kept = store.entries()
    assert len(kept) == KEEP_AT_LEAST
    assert [e.title for e in kept][-1] == "entry 10" and kept[0].title == "entry 59"
    base = kept[-1]
    assert base.parent is None
    assert store.text_at(base.commit, "notes/log.md") == b"# Log\n\nversion 10\n"
    assert set(store.blobs_of(base.commit)) == set(store.blobs_of(kept[0].commit))  # the whole root
    assert not store.git.ok("cat-file", "-e", first_blob)  # what only pruned entries held is gone
    assert store.record(Writer("outside"), "nothing changed") is None  # the stat cache followed


def test_keeps_every_entry_within_the_days(root: Path):
    store = fill(root, old=0, recent=55)
    assert prune(store, 90, NOW) == 0 and len(store.entries()) == 55


def test_days_come_from_the_settings_and_pruning_runs_once_a_day(root: Path):
    assert Settings().history.days == 90 and retention_days(root) == 90
    (root / ".pmem.toml").write_text("[history]\ndays = 7\n")
    assert retention_days(root) == 7
    store = open_store(root)
    store.record(Writer("pmem"), "first")
    prune_daily(store)
    assert (store.dir / "pruned").exists()
    stamp = (store.dir / "pruned").stat().st_mtime
    prune_daily(store)
    assert (store.dir / "pruned").stat().st_mtime == stamp


def loose_objects(store) -> int:
    counted = dict(line.split(": ") for line in store.git.run("count-objects", "-v").decode().splitlines())
    return int(counted["count"])


def test_a_day_with_nothing_to_prune_packs_the_loose_objects(root: Path, monkeypatch: pytest.MonkeyPatch):
    # No entry is old enough to prune, yet every entry left objects loose: without a pack the
    # store grows by its loose objects for as long as the root is busy.
    store = fill(root, old=0, recent=30)
    before = loose_objects(store)
    assert before > 40
    monkeypatch.setattr(retention, "LOOSE_LIMIT", 40)
    assert prune_daily(store) == 0
    deadline = time.monotonic() + 60  # the pack runs in the background; bounded, not timed
    while loose_objects(store) >= before // 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert loose_objects(store) < before // 4
    entries = store.entries()
    assert len(entries) == 30 and store.text_at(entries[0].commit, "notes/log.md") == b"# Log\n\nversion 29\n"


def test_few_loose_objects_are_left_alone(root: Path):
    store = fill(root, old=0, recent=3)
    assert not retention.pack_loose_objects(store)
