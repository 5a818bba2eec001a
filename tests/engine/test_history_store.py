"""The history store (engine/history/): entries recorded only on change, the right writer on
each side of a pmem write, files kept and skipped, three-way undo of one file, forget."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.history import location
from pmem_lsp.engine.history.forget import forget_path
from pmem_lsp.engine.history.git import HistoryOff
from pmem_lsp.engine.history.merge import revert_file
from pmem_lsp.engine.history.recording import record_quietly
from pmem_lsp.engine.history.store import HistoryStore, Writer, open_store
from pmem_lsp.engine.lifecycle.execute import Unattended, execute
from pmem_lsp.engine.lifecycle.preview import Request
from roots import make_root, write_root

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with the git command")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return make_root(tmp_path)


def test_the_store_is_private_and_outside_the_root(root: Path, tmp_path: Path):
    store = open_store(root)
    assert store.dir.is_relative_to(tmp_path / "state" / "pmem" / "history")
    assert not store.dir.is_relative_to(root)
    assert stat.S_IMODE(os.stat(store.dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.dir.parent).st_mode) == 0o700
    # The same root by another path is the same store.
    link = tmp_path / "link"
    link.symlink_to(root)
    assert location.store_dir(link) == store.dir


def test_an_entry_only_when_the_tree_changed_and_only_kept_files(root: Path):
    store = open_store(root)
    write_root(root, {".hidden/x.md": "hidden\n", "notes/raw.md": "x" * (300 * 1024), "notes/a.txt": "not md\n"})
    first = store.record(Writer("outside"), "first look")
    assert first is not None
    assert store.record(Writer("outside"), "nothing new") is None
    kept = subprocess.run(["git", "--git-dir", str(store.git.git_dir), "ls-tree", "-r", "--name-only", first],
                          capture_output=True, text=True, check=True).stdout.split()
    assert "_index.md" in kept and "_core/profile.md" in kept
    assert not any(p.startswith(".hidden") or p in ("notes/raw.md", "notes/a.txt") for p in kept)
    write_root(root, {"projects/alpha.md": "changed\n"})
    second = store.record(Writer("agent", "Write projects/alpha.md · Claude Code"), "an agent wrote")
    [entry, _] = store.entries()[:2]
    assert entry.commit == second
    assert entry.writer == Writer("agent", "Write projects/alpha.md · Claude Code")
    assert entry.files == [("projects/alpha.md", "changed")]


def test_a_change_that_keeps_size_and_is_rewritten_is_still_seen(root: Path):
    """The stat cache is keyed by mtime, ctime, size and inode: a same-size rewrite is hashed."""
    store = open_store(root)
    store.record(Writer("outside"), "before")
    path = root / "projects/alpha.md"
    old = path.read_bytes()
    path.write_bytes(old.replace(b"Fact", b"Fict", 1))
    assert store.record(Writer("outside"), "after") is not None
    assert store.text_at(store.entries()[0].commit, "projects/alpha.md") == path.read_bytes()


def test_a_pmem_archive_is_recorded_before_and_after_with_its_writer(root: Path):
    record_quietly(root, Writer("outside"), "start")
    (root / "projects/alpha.md").write_text((root / "projects/alpha.md").read_text() + "\nby hand\n")
    request = Request("archive", "projects/alpha.md", "shipped")
    execute(root, Unattended(request))
    newest, before = open_store(root).entries()[:2]
    assert before.writer.kind == "outside"
    assert before.files == [("projects/alpha.md", "changed")]
    assert newest.writer == Writer("pmem", "archive projects/alpha.md — shipped")
    changed = dict(newest.files)
    assert changed["projects/alpha.md"] == "removed"
    assert changed["_archive/projects/alpha.md"] == "added"
    assert changed["_index.md"] == "changed"


def test_without_git_history_is_off_and_a_write_still_works(root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(HistoryOff, match="git"):
        open_store(root)
    plan, _ = execute(root, Unattended(Request("archive", "projects/alpha.md", "done")))
    assert (root / "_archive/projects/alpha.md").is_file()


def test_a_store_written_by_a_newer_pmem_turns_history_off(root: Path):
    store = open_store(root)
    (store.dir / "VERSION").write_text("99\n")
    with pytest.raises(HistoryOff, match="newer pmem"):
        HistoryStore(root)
    assert record_quietly(root, Writer("outside"), "x") is None


def test_three_way_undo_of_one_file(root: Path):
    git = open_store(root).git
    base = b"a\nb\nc\nd\ne\nf\ng\n"
    entry = b"a\nB\nc\nd\ne\nf\ng\n"  # the entry changed line 2
    later = b"a\nB\nc\nd\ne\nf\nG\n"  # a later change touched line 7 only
    assert revert_file(git, git.store, "x.md", later, entry, base).text == b"a\nb\nc\nd\ne\nf\nG\n"
    clash = b"a\nBB\nc\nd\ne\nf\ng\n"  # a later change touched line 2 too
    refused = revert_file(git, git.store, "x.md", clash, entry, base)
    assert refused.text is None and refused.conflict and "line 2" in refused.conflict


def test_forget_leaves_no_object_holding_the_text(root: Path):
    store = open_store(root)
    secret_text = "a text only this file ever held, 7f3a9c\n"
    write_root(root, {"notes/leak.md": secret_text})
    store.record(Writer("agent", "Write"), "leak")
    write_root(root, {"notes/leak.md": None, "projects/alpha.md": "later\n"})
    store.record(Writer("outside"), "removed")
    blob = subprocess.run(["git", "hash-object", "--stdin"], input=secret_text, capture_output=True, text=True,
                          check=True).stdout.strip()
    held = forget_path(store, "notes/leak.md")
    assert held == 1
    objects = subprocess.run(["git", "--git-dir", str(store.git.git_dir), "cat-file", "--batch-all-objects",
                              "--batch-check"], capture_output=True, text=True, check=True).stdout
    assert blob not in objects
    assert store.entries("notes/leak.md") == []
    assert [e.title for e in store.entries()][:2] == ["removed", "leak"]  # the entries themselves stay


# -- undo, as a property: random writes, then undo of one of them ------------------------------

LINES = 12


def _undo_in_store(root: Path, store: HistoryStore, commit: str, rel: str):
    parent = store.parent_of(commit)
    assert parent is not None
    return revert_file(store.git, store.dir, rel, (root / rel).read_bytes(), store.text_at(commit, rel),
                       store.text_at(parent, rel))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.integers(0, LINES - 1), min_size=1, max_size=6), data=st.data())
def test_undo_of_a_random_entry_equals_replaying_without_it(edits: list[int], data: st.DataObject,
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each write replaces one line; undo of write k equals the writes replayed without k when
    no later write touched that line or its neighbours, and is a conflict (nothing to apply)
    when a later write touched that very line."""
    k = data.draw(st.integers(0, len(edits) - 1), label="undone")
    later = edits[k + 1:]
    near = [i for i in later if abs(i - edits[k]) == 1]
    assume(not near)  # git merge-file joins adjacent hunks: neither clearly a conflict nor clean
    with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
        monkeypatch.setenv("XDG_STATE_HOME", str(Path(folder) / "state"))
        root = Path(folder) / "memory"
        lines = [f"base {n}\n" for n in range(LINES)]
        write_root(root, {"notes/n.md": "".join(lines)})
        store = open_store(root)
        store.record(Writer("outside"), "base")
        commits = []
        for step, line in enumerate(edits):
            lines[line] = f"write {step}\n"
            (root / "notes/n.md").write_text("".join(lines))
            commit = store.record(Writer("outside"), f"write {step}")
            assert commit is not None
            commits.append(commit)
        reverted = _undo_in_store(root, store, commits[k], "notes/n.md")
        if edits[k] in later:
            assert reverted.conflict is not None
            return
        replayed = [f"base {n}\n" for n in range(LINES)]
        for step, line in enumerate(edits):
            if step != k:
                replayed[line] = f"write {step}\n"
        assert reverted.conflict is None
        assert reverted.text == "".join(replayed).encode()


def test_any_name_is_kept_under_its_own_name(root: Path):
    """Names git would read as quoted (a leading `"`), with a tab, or not UTF-8 are kept as they are."""
    names = ['notes/"q.md', "notes/tab\there.md", os.fsdecode(b"notes/bad\xff.md")]
    for name in names:
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(f"{name!r}\n")
    store = open_store(root)
    commit = store.record(Writer("outside"), "odd names")
    assert commit is not None
    kept = store.blobs_of(commit)
    for name in names:
        assert store.text_at(commit, name) == (root / name).read_bytes()
        assert name in kept


def test_a_home_without_a_state_folder_gets_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A fresh account (or a Mac) has no ~/.local: history must not be off for that.
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    store = open_store(make_root(tmp_path))
    assert store.dir.is_relative_to(home / ".local" / "state" / "pmem" / "history")
    for folder in (store.dir, store.dir.parent, home / ".local" / "state"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
