"""The record of changes the user declined (engine/lifecycle/declines.py): kept for a day in
the user's cache folder, cleared by a yes, and read closed — a record file that cannot be
read declines everything."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from pmem_lsp.engine.lifecycle import declines


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PMEM_CACHE_DIR", str(folder))
    return folder


def test_a_decline_is_recorded_matched_and_cleared(tmp_path: Path, cache: Path):
    key = declines.decline_key(tmp_path, "save", "notes/x.md")
    assert not declines.declined(key) and not declines.any_declined()
    declines.record(key)
    assert declines.declined(key) and declines.any_declined()
    assert not declines.declined(declines.decline_key(tmp_path, "save", "notes/y.md"))
    assert not declines.declined(declines.decline_key(tmp_path, "archive", "notes/x.md"))
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(cache / declines.DECLINES_FILE).st_mode) == 0o600
    assert "notes/x.md" not in (cache / declines.DECLINES_FILE).read_text(), "hashes only"
    declines.clear(key)
    assert not declines.declined(key)


def test_the_root_is_matched_with_its_links_resolved(tmp_path: Path):
    real = tmp_path / "memory"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    declines.record(declines.decline_key(tmp_path / "link", "archive", "projects/a.md"))
    assert declines.declined(declines.decline_key(real, "archive", "projects/a.md"))


def test_a_decline_older_than_a_day_is_gone(tmp_path: Path, cache: Path):
    old, new = (declines.decline_key(tmp_path, "delete", p) for p in ("a.md", "b.md"))
    declines.record(new)
    records = json.loads((cache / declines.DECLINES_FILE).read_text())
    records[old] = time.time() - declines.KEEP_SECONDS - 60
    (cache / declines.DECLINES_FILE).write_text(json.dumps(records))
    assert not declines.declined(old) and declines.declined(new)


@pytest.mark.parametrize("text", ["not json", "[1, 2]", "\udcff"])
def test_a_record_file_that_cannot_be_read_declines_everything(tmp_path: Path, cache: Path, text: str):
    cache.mkdir()
    (cache / declines.DECLINES_FILE).write_bytes(text.encode("utf-8", "surrogateescape"))
    key = declines.decline_key(tmp_path, "save", "notes/x.md")
    assert declines.declined(key) and declines.any_declined()
    declines.record(key)  # a new no replaces what could not be read
    assert declines.declined(key) and not declines.declined(declines.decline_key(tmp_path, "save", "other.md"))


def test_an_unreadable_record_holds_the_change_without_saying_the_user_declined(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch):
    """PMEM_CACHE_DIR=/dev/null (a cache folder that is not a folder): nobody declined anything,
    so the message must not say so; the change is still held for the person's prompt, since
    pmem cannot tell."""
    monkeypatch.setenv("PMEM_CACHE_DIR", os.devnull)
    key = declines.decline_key(tmp_path, "archive", "projects/a.md")
    why = declines.held_because(key)
    assert why is not None and declines.declined(key)
    assert "user declined this change" not in why and "cannot read its record" in why and os.devnull in why
