"""Undo of pmem's own lifecycle writes (issue 42, phase 2): an archive, a delete, a recover
moved a file and rewrote the indexes; `pmem undo ENTRY` puts all of it back as one previewed
plan through the one door, and refuses (nothing changed) where a later change conflicts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_cli_history import digest, entries, pmem

from roots import make_root

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with the git command")]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return make_root(tmp_path, {})


def archived(root: Path) -> str:
    entries(root)
    done = pmem(root, "archive", "projects/alpha.md", "--reason", "shipped", "--yes")
    assert done.returncode == 0, done.stderr
    return entries(root)[0]["id"]


def test_undo_of_an_archive_brings_back_the_file_and_its_exact_route_and_removes_the_record(root: Path):
    before = digest(root)
    index_before = (root / "_index.md").read_bytes()
    entry = archived(root)
    assert not (root / "projects/alpha.md").exists()
    preview = pmem(root, "undo", entry, "--format", "json")
    assert preview.returncode == 3, preview.stderr  # a preview, not confirmed: nothing changed
    shown = json.loads(preview.stdout)
    assert {"kind": "move", "from": "_archive/projects/alpha.md", "to": "projects/alpha.md"} in shown["changes"]
    assert not (root / "projects/alpha.md").exists()
    done = pmem(root, "undo", entry, "--token", shown["token"], "--format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / "_index.md").read_bytes() == index_before  # the route line exactly, where it was
    assert "projects/alpha.md" not in (root / "_archive/_index.md").read_text()  # the record is gone
    assert digest(root) == before
    assert entries(root)[0]["writer"]["detail"].startswith("undo ")
    assert entries(root)[0]["title"] == f"undid entry {entry}"


def test_undo_of_an_archive_keeps_a_route_added_since(root: Path):
    entry = archived(root)
    with (root / "_index.md").open("a") as fh:
        fh.write("- [later](notes/later.md) — added after the archive\n")
    done = pmem(root, "undo", entry, "--yes")
    assert done.returncode == 0, done.stderr
    index = (root / "_index.md").read_text()
    assert "(projects/alpha.md)" in index and "(notes/later.md)" in index
    assert (root / "projects/alpha.md").exists()


def test_undo_of_an_archive_refuses_when_the_archived_file_changed_since(root: Path):
    entry = archived(root)
    path = root / "_archive/projects/alpha.md"
    path.write_text(path.read_text() + "\nwritten in the archive later\n")
    before = digest(root)
    done = pmem(root, "undo", entry, "--yes", "--format", "json")
    assert done.returncode != 0
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "conflict" and "_archive/projects/alpha.md" in error["message"]
    assert digest(root) == before


def test_undo_of_a_recover_archives_the_file_again_with_its_record(root: Path):
    archived(root)
    record_before = (root / "_archive/_index.md").read_bytes()
    done = pmem(root, "recover", "projects/alpha.md", "--yes")
    assert done.returncode == 0, done.stderr
    entry = entries(root)[0]["id"]
    done = pmem(root, "undo", entry, "--yes")
    assert done.returncode == 0, done.stderr
    assert (root / "_archive/projects/alpha.md").exists() and not (root / "projects/alpha.md").exists()
    assert (root / "_archive/_index.md").read_bytes() == record_before
    assert "(projects/alpha.md)" not in (root / "_index.md").read_text()


def test_undo_of_an_outside_removal_brings_the_file_back_and_of_a_creation_refuses(root: Path):
    entries(root)
    text = (root / "projects/alpha.md").read_bytes()
    (root / "projects/alpha.md").unlink()
    removal = entries(root)[0]["id"]
    done = pmem(root, "undo", removal, "--yes")
    assert done.returncode == 0, done.stderr
    assert (root / "projects/alpha.md").read_bytes() == text
    (root / "notes/new.md").write_text("# New\n")
    creation = entries(root)[0]["id"]
    done = pmem(root, "undo", creation, "--yes")
    assert done.returncode != 0 and "archiv" in done.stderr
    assert (root / "notes/new.md").exists()


def test_restore_of_the_index_after_a_wipe_is_a_previewed_compare_and_swap_write(root: Path):
    before = (root / "_index.md").read_bytes()
    good = entries(root)[0]["id"]
    (root / "_index.md").write_text("# Memory index\n")
    entries(root)  # the wipe is recorded too
    shown = pmem(root, "restore", "_index.md", "--at", good, "--format", "json")
    assert shown.returncode == 3, shown.stderr
    preview = json.loads(shown.stdout)
    assert preview["changes"][0]["path"] == "_index.md" and "+- [Alpha]" in preview["changes"][0]["diff"]
    assert (root / "_index.md").read_text() == "# Memory index\n"  # a preview changes nothing
    (root / "_index.md").write_text("# Memory index\n\nwritten meanwhile\n")
    stale = pmem(root, "restore", "_index.md", "--at", good, "--token", preview["token"])
    assert stale.returncode != 0 and (root / "_index.md").read_text().endswith("written meanwhile\n")
    done = pmem(root, "restore", "_index.md", "--at", good, "--yes")
    assert done.returncode == 0, done.stderr
    assert (root / "_index.md").read_bytes() == before
