"""`pmem history`, `diff`, `restore`, `undo`, `history --forget` as the user runs them: a real
`pmem` process, a real `git`, and the store in the test's own state folder."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roots import make_root

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with the git command")]

SECRET = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"  # a GitHub token's shape
NOTE = "".join(f"line {n}\n" for n in range(1, 13))


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return make_root(tmp_path, {"notes/n.md": NOTE})


def pmem(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, env=os.environ)


def entries(root: Path, *args: str) -> list[dict]:
    done = pmem(root, "history", "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["entries"]


def digest(top: Path) -> dict[str, str]:
    return {p.relative_to(top).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(top.rglob("*")) if p.is_file()}


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_outside_write_then_a_pmem_archive_each_get_their_writer(root: Path):
    entries(root)
    edit(root, "projects/alpha.md", "Fact number 1", "Fact number one")
    done = pmem(root, "archive", "projects/alpha.md", "--reason", "shipped", "--yes")
    assert done.returncode == 0, done.stderr
    newest, before = entries(root)[:2]
    assert before["writer"] == {"kind": "outside", "detail": ""}
    assert before["files"] == [{"path": "projects/alpha.md", "change": "changed"}]
    assert newest["writer"] == {"kind": "pmem", "detail": "archive projects/alpha.md — shipped"}
    assert {"path": "_archive/projects/alpha.md", "change": "added"} in newest["files"]
    # PATH filters: only the entries that changed that file.
    assert [e["id"] for e in entries(root, "projects/alpha.md")][:2] == [newest["id"], before["id"]]


def test_diff_masks_a_secret(root: Path):
    entries(root)
    edit(root, "notes/n.md", "line 3\n", f"line 3\ntoken = {SECRET}\n")
    entry = entries(root)[0]["id"]
    for args in (["diff", entry], ["diff", "--since", "1d"], ["diff", entry, "notes/n.md", "--format", "json"]):
        done = pmem(root, *args)
        assert done.returncode == 0, done.stderr
        assert "+token = " in done.stdout
        assert SECRET not in done.stdout and SECRET[4:] not in done.stdout


def test_restore_brings_a_deleted_file_back_byte_for_byte(root: Path):
    original = (root / "notes/n.md").read_bytes()
    entry = entries(root)[0]["id"]
    (root / "notes/n.md").unlink()
    previewed = pmem(root, "restore", "notes/n.md", "--at", entry)
    assert previewed.returncode == 3 and not (root / "notes/n.md").exists()
    done = pmem(root, "restore", "notes/n.md", "--at", entry, "--yes")
    assert done.returncode == 0, done.stderr
    assert (root / "notes/n.md").read_bytes() == original
    assert entries(root)[0]["writer"]["kind"] == "pmem"


def _archived(root: Path) -> tuple[str, bytes, str]:
    """notes/n.md archived by pmem: (the entry that archived it, its bytes, the archive index)."""
    entries(root)
    done = pmem(root, "archive", "notes/n.md", "--reason", "done", "--yes")
    assert done.returncode == 0, done.stderr
    return (entries(root)[0]["id"], (root / "_archive/notes/n.md").read_bytes(),
            (root / "_archive/_index.md").read_text())


def test_restore_puts_back_an_archived_files_text_an_agent_changed_keeping_its_record(root: Path):
    entry, original, records = _archived(root)
    with open(root / "_archive/notes/n.md", "a") as fh:
        fh.write("An agent's line in the archive.\n")
    previewed = pmem(root, "restore", "_archive/notes/n.md", "--at", entry)
    assert previewed.returncode == 3, previewed.stderr
    assert "-An agent's line in the archive." in previewed.stdout and "record" in previewed.stdout
    done = pmem(root, "restore", "_archive/notes/n.md", "--at", entry, "--yes")
    assert done.returncode == 0, done.stderr
    assert (root / "_archive/notes/n.md").read_bytes() == original
    assert (root / "_archive/_index.md").read_text() == records
    assert pmem(root, "check").returncode == 0


def test_restore_brings_back_an_archived_file_deleted_outside_pmem_with_its_folder(root: Path):
    entry, original, records = _archived(root)
    shutil.rmtree(root / "_archive/notes")
    done = pmem(root, "restore", "_archive/notes/n.md", "--at", entry, "--yes", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert '"operation": "restore"' in done.stdout and '"created _archive/notes/n.md"' in done.stdout
    assert (root / "_archive/notes/n.md").read_bytes() == original
    assert (root / "_archive/_index.md").read_text() == records
    assert pmem(root, "check").returncode == 0


def test_restore_of_an_archived_file_without_its_record_or_in_the_trash_is_refused(root: Path):
    entry, _, _ = _archived(root)
    assert pmem(root, "recover", "notes/n.md", "--yes").returncode == 0  # the record goes with it
    before = digest(root)
    done = pmem(root, "restore", "_archive/notes/n.md", "--at", entry, "--yes")
    assert done.returncode == 2
    assert "no record in `_archive/_index.md`" in done.stderr and "nothing was changed" in done.stderr
    done = pmem(root, "restore", "_archive/_trash/notes/n.md", "--at", entry, "--yes")
    assert done.returncode == 2 and "trash" in done.stderr
    assert digest(root) == before


def test_restore_of_an_archived_file_refuses_a_secret_it_held(root: Path):
    entries(root)
    with open(root / "notes/n.md", "a") as fh:
        fh.write(f"token {SECRET}\n")
    entries(root)  # recorded with the secret; pmem's archive refuses nothing it moves
    with_secret = pmem(root, "archive", "notes/n.md", "--reason", "done", "--yes")
    assert with_secret.returncode == 0, with_secret.stderr
    entry = entries(root)[0]["id"]
    (root / "_archive/notes/n.md").write_text(NOTE)  # the person took the secret out
    before = digest(root)
    done = pmem(root, "restore", "_archive/notes/n.md", "--at", entry, "--yes")
    assert done.returncode == 2 and "no-secrets" in done.stderr and SECRET not in done.stderr, done.stderr
    assert digest(root) == before


def test_undo_of_an_old_entry_keeps_later_changes_to_other_lines(root: Path):
    entries(root)
    edit(root, "notes/n.md", "line 2\n", "line two\n")
    old = entries(root)[0]["id"]
    edit(root, "notes/n.md", "line 11\n", "line eleven\n")
    entries(root)
    previewed = pmem(root, "undo", old, "--format", "json")
    assert previewed.returncode == 3
    token = json.loads(previewed.stdout)["token"]
    assert "line two" in (root / "notes/n.md").read_text()
    done = pmem(root, "undo", old, "--token", token)
    assert done.returncode == 0, done.stderr
    assert (root / "notes/n.md").read_text() == NOTE.replace("line 11\n", "line eleven\n")


def test_undo_that_conflicts_is_refused_with_the_lines_and_nothing_changes(root: Path):
    entries(root)
    edit(root, "notes/n.md", "line 5\n", "line five\n")
    old = entries(root)[0]["id"]
    edit(root, "notes/n.md", "line five\n", "line FIVE\n")
    before = digest(root)
    done = pmem(root, "undo", old, "--yes")
    assert done.returncode == 2
    assert "notes/n.md" in done.stderr and "line 5" in done.stderr and "nothing was changed" in done.stderr
    assert digest(root) == before


@pytest.mark.parametrize("args", [["undo", "0123456789ab", "--yes"], ["diff", "0123456789ab"],
                                  ["restore", "/etc/hosts", "--at", "HEAD"], ["history", "../outside.md"],
                                  ["undo", "--yes", "HEAD"], ["restore", "_index.md", "--at", "0123456789ab"]])
def test_bad_input_exits_2_and_changes_nothing(root: Path, args: list[str]):
    entries(root)
    before = digest(root)
    done = pmem(root, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("pmem: ")
    assert digest(root) == before


def test_forget_leaves_no_object_holding_the_text(root: Path, tmp_path: Path):
    leaked = f"an agent wrote this 9c1e5d\ntoken = {SECRET}\n"
    (root / "notes/leak.md").write_text(leaked)
    entries(root)
    (root / "notes/leak.md").unlink()
    entries(root)
    assert pmem(root, "history", "--forget", "notes/leak.md").returncode == 3  # not confirmed
    done = pmem(root, "history", "--forget", "notes/leak.md", "--yes")
    assert done.returncode == 0, done.stderr
    blob = subprocess.run(["git", "hash-object", "--stdin"], input=leaked, capture_output=True, text=True,
                          check=True).stdout.strip()
    stores = list((tmp_path / "state" / "pmem" / "history").iterdir())
    assert len(stores) == 1
    objects = subprocess.run(["git", "--git-dir", str(stores[0] / "repo.git"), "cat-file", "--batch-all-objects",
                              "--batch-check"], capture_output=True, text=True, check=True).stdout
    assert blob not in objects
    assert entries(root, "notes/leak.md") == []


def test_history_says_why_it_is_off_without_git(root: Path):
    env = dict(os.environ, PATH="/nonexistent")
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "history"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert "history is off" in done.stderr and "git" in done.stderr


def test_review_lists_what_changed_since_the_last_accept_and_accepting_touches_no_file(root: Path):
    done = pmem(root, "review", "--all")
    assert done.returncode == 0, done.stderr
    edit(root, "notes/n.md", "line 1\n", "line one\n")
    done = pmem(root, "review", "--format", "json")
    report = json.loads(done.stdout)
    assert [e["files"] for e in report["unreviewed"]] == [[{"path": "notes/n.md", "change": "changed"}]]
    assert list(report["by_writer"]) == ["outside"]
    assert "+line one" in pmem(root, "diff", "--unreviewed").stdout
    before = digest(root)
    assert pmem(root, "review", "--accept", report["unreviewed"][0]["id"]).returncode == 0
    assert json.loads(pmem(root, "review", "--format", "json").stdout)["unreviewed"] == []
    assert digest(root) == before


def _fake_git(folder: Path, message: str) -> str:
    """A PATH whose `git` fails every command with `message` (a full disk, a broken install)."""
    folder.mkdir()
    fake = folder / "git"
    fake.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit 128\n")
    fake.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


def _store(tmp_path: Path) -> Path:
    stores = list((tmp_path / "state" / "pmem" / "history").iterdir())
    assert len(stores) == 1
    return stores[0]


@pytest.mark.parametrize("fault", ["newer", "unreadable", "full", "git fails"])
def test_a_store_fault_is_a_clear_message_exit_2_and_a_write_still_works(root: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         fault: str):
    """docs/design.md §11: a store written by a newer pmem, one that cannot be read, a full disk,
    a git that fails — each a clear message and exit 2 from the history commands, nothing changed
    in the root; and pmem's own writes go on (history never fails a write)."""
    edit(root, "notes/n.md", "line 3", "line three")
    entry = entries(root)[0]["id"]
    store = _store(tmp_path)
    if fault == "newer":
        (store / "VERSION").write_text("99\n")
    elif fault == "unreadable":
        shutil.rmtree(store / "repo.git" / "objects")
        (store / "repo.git" / "objects").write_text("not a folder\n")
    elif fault == "full":
        monkeypatch.setenv("PATH", _fake_git(tmp_path / "bin", "fatal: unable to write new object: No space left on device"))
    else:
        monkeypatch.setenv("PATH", _fake_git(tmp_path / "bin", "fatal: something went wrong"))
    before = digest(root)
    for args in (["history"], ["diff", entry], ["undo", entry, "--yes"], ["restore", "notes/n.md", "--at", entry, "--yes"],
                 ["review"]):
        done = pmem(root, *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.startswith("pmem: ") and "Traceback" not in done.stderr, (args, done.stderr)
        assert "history" in done.stderr, (args, done.stderr)
        assert digest(root) == before, args
    archived = pmem(root, "archive", "notes/n.md", "--reason", "done with it", "--yes")
    assert archived.returncode == 0, archived.stderr
    assert (root / "_archive/notes/n.md").exists() and not (root / "notes/n.md").exists()


def crashing_git(tmp_path: Path, trap: str) -> Path:
    """A folder holding a `git` that runs the shell lines `trap` (which kill pmem, its parent,
    at the chosen step), then the real git."""
    real_git = shutil.which("git")
    folder = tmp_path / "crashing-git"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\n{trap}exec "{real_git}" "$@"\n')
    (folder / "git").chmod(0o755)
    return folder


@pytest.mark.parametrize("step", ["update-index", "write-tree", "commit-tree", "update-ref"])
def test_a_crash_while_recording_loses_at_most_that_entry(root: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch, step: str):
    """docs/design.md §11: pmem killed in the middle of recording (its `git` at `step` kills
    it) loses that entry at most: every file of the root is as it was, the store opens again,
    and the next command records the change the lost entry would have held."""
    entries(root)
    edit(root, "notes/n.md", "line 7", "line seven")
    before = digest(root)
    folder = crashing_git(tmp_path, f'if [ "$1" = "{step}" ]; then kill -9 $PPID; exit 1; fi\n')
    with monkeypatch.context() as patched:
        patched.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
        crashed = pmem(root, "history")
    assert crashed.returncode == -9, (crashed.returncode, crashed.stderr)
    assert digest(root) == before
    after = entries(root)  # the real git again: the store opens and catches up
    assert after[0]["files"] == [{"path": "notes/n.md", "change": "changed"}], after[0]
    shown = pmem(root, "diff", after[0]["id"])
    assert shown.returncode == 0 and "+line seven" in shown.stdout, shown.stdout + shown.stderr


@pytest.mark.parametrize("crash_at", [1, 2])
def test_a_crash_while_recording_around_a_write_leaves_the_write_whole_or_not_begun(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_at: int):
    """An archive records an entry before (the outside edit) and one after: killed at the
    first, nothing is archived; killed at the second, the archive is complete on disk (file,
    record, route), and the next command's entry holds it."""
    entries(root)
    edit(root, "projects/alpha.md", "Fact number 1", "Fact number one")
    before = digest(root)
    count = tmp_path / "update-refs"
    folder = crashing_git(tmp_path, 'if [ "$1" = "update-ref" ]; then\n'
                                    f'  echo x >> "{count}"\n'
                                    f'  if [ "$(wc -l < "{count}")" -eq {crash_at} ]; then kill -9 $PPID; exit 1; fi\nfi\n')
    with monkeypatch.context() as patched:
        patched.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
        crashed = pmem(root, "archive", "projects/alpha.md", "--reason", "shipped", "--yes")
    assert crashed.returncode == -9, (crashed.returncode, crashed.stderr)
    if crash_at == 1:
        assert digest(root) == before
    else:
        assert not (root / "projects/alpha.md").exists()
        assert "Fact number one" in (root / "_archive/projects/alpha.md").read_text()
        assert "projects/alpha.md" in (root / "_archive/_index.md").read_text()
        assert "(projects/alpha.md)" not in (root / "_index.md").read_text()
        assert any(f["path"] == "_archive/projects/alpha.md" for f in entries(root)[0]["files"])
    checked = pmem(root, "check", "--format", "json")
    assert checked.returncode in (0, 1) and "PM308" not in checked.stdout and "PM210" not in checked.stdout
