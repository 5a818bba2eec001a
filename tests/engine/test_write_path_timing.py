"""The write path against another program's timing (issue 40; docs/SECURITY.md, "The write
protocol"; engine/lifecycle/fs_applier.py, execute.py).

Each break found on main is one test here. The hostile action runs at an exact moment, from a
hook point patched in process (the fsync of pmem's temporary file, its `link`, its `unlink`) or
from a writer that holds the index open until pmem has answered — never from a sleep, so the
tests say the same with two busy cores:

1. a writer that truncated `_index.md` and pauses with it open: pmem refuses, changes nothing,
   and the writer's text (with its own line) survives when it finishes;
2. `_index.md` swapped for a link to a private file outside the root while pmem writes: the
   retry reads nothing through the link, nothing is changed;
3. the archived file swapped for a folder between the checks and the move: refused, the folder
   stays where it was;
4. a move refused after pmem made its destination folder leaves no empty folder behind.
"""

from __future__ import annotations

import datetime as dt
import errno
import multiprocessing
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pmem_lsp.engine.lifecycle import fs_applier, open_writers
from pmem_lsp.engine.lifecycle.execute import Confirmed, Unattended, execute
from pmem_lsp.engine.lifecycle.operations import context
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.safety import Refusal
from roots import base_files, summary_file, write_root

TODAY = dt.date.today()
ROUTES = [f"- [A {i}](notes/a{i}.md) — note a{i}" for i in range(4)]
WRITERS_LINE = "<!-- the other writer's own line -->"
BOUND = 60  # seconds: only ever reached when a test fails


def a_root(base: Path) -> Path:
    files = base_files()
    for i in range(4):
        files[f"notes/a{i}.md"] = summary_file(f"A {i}")
    files["loose.md"] = summary_file("Loose")
    files["_index.md"] += "\n## Notes\n" + "".join(f"{line}\n" for line in ROUTES)
    return write_root(base, files)


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every path under `root`: a file's bytes, a folder as "folder", a link as its target."""
    out: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel] = (f"link:{os.readlink(p)}" if p.is_symlink() else "folder" if p.is_dir() else p.read_bytes())
    return out


REQUESTS = {
    "save": Request("save", "notes/new.md", content=summary_file("New")),
    "route": Request("route", "loose.md"),
    "recover": Request("recover", "_archive/notes/a3.md"),
}


def prepared(root: Path, op: str) -> Request:
    """The root ready for `op` (recover: a3 archived first, by pmem itself)."""
    if op == "recover":
        archive = Request("archive", "notes/a3.md", "done")
        execute(root, Confirmed(archive, archive.plan(context(root, TODAY))), today=TODAY)
    return REQUESTS[op]


def refused_with_nothing_changed(call: Callable[[], object]) -> Refusal:
    with pytest.raises(Refusal) as exc:
        call()
    assert "nothing was changed" in exc.value.message, exc.value.message
    return exc.value


# -- 1. a writer that truncates and pauses ---------------------------------------------------
class StalledWriter:
    """Another program's rewrite of `_index.md` in place, paused in the middle: it opens the
    index for writing, reads it, truncates it and waits — holding it open — until `finish()`,
    then writes its whole text plus a line of its own through the same descriptor."""

    def __init__(self, index: Path) -> None:
        self.index = index
        self.truncated = threading.Event()
        self.go_on = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        fd = os.open(self.index, os.O_RDWR)
        try:
            text = b""
            while chunk := os.read(fd, 1 << 16):
                text += chunk
            os.ftruncate(fd, 0)
            self.truncated.set()
            self.go_on.wait(BOUND)  # the pause (5–8 s in the report): as long as pmem takes
            os.pwrite(fd, text + f"{WRITERS_LINE}\n".encode(), 0)
        finally:
            os.close(fd)

    def __enter__(self) -> StalledWriter:
        self.thread.start()
        assert self.truncated.wait(BOUND)
        return self

    def __exit__(self, *exc: object) -> None:
        self.go_on.set()
        self.thread.join(BOUND)


def assert_writer_kept_everything(root: Path, before: dict[str, bytes | str]) -> None:
    """The writer's text with its line, and nothing else changed."""
    text = (root / "_index.md").read_text(encoding="utf-8")
    assert text == before["_index.md"].decode() + f"{WRITERS_LINE}\n"  # type: ignore[union-attr]
    after = snapshot(root)
    del after["_index.md"], before["_index.md"]
    assert after == before


@pytest.mark.parametrize("op", ["save", "route", "recover"])
def test_an_index_emptied_since_the_preview_is_never_the_base(tmp_path: Path, monkeypatch, op: str):
    """`--yes` after a preview of the whole index: the writer truncates and pauses. On main,
    pmem took the empty file as the base after ~1 s, renamed a one-line index over it and said
    Done; the writer then wrote into the replaced file and every route was lost."""
    monkeypatch.setattr(fs_applier, "SETTLE_LIMIT", 1.5)  # > QUIET_EMPTY: main's wait ran out first
    root = a_root(tmp_path / "memory")
    request = prepared(root, op)
    shown = request.plan(context(root, TODAY))  # the preview, on the whole index
    before = snapshot(root)
    with StalledWriter(root / "_index.md"):
        refusal = refused_with_nothing_changed(lambda: execute(root, Unattended.after(request, shown), today=TODAY))
    assert refusal.rule == fs_applier.UNSETTLED and "was emptied since pmem read it" in refusal.message
    assert_writer_kept_everything(root, before)


@pytest.mark.parametrize("op", ["save", "route"])
def test_an_index_held_open_for_writing_is_never_renamed_over(tmp_path: Path, monkeypatch, op: str):
    """The writer truncated before pmem's preview, so the empty index is what pmem read: that
    alone looks settled. It still holds the index open for writing: pmem waits, then refuses."""
    monkeypatch.setattr(fs_applier, "QUIET_EMPTY", 0.05)  # the empty text is a base at once...
    monkeypatch.setattr(fs_applier, "SETTLE_LIMIT", 0.5)  # ...and the wait for the writer is short
    root = a_root(tmp_path / "memory")
    request = prepared(root, op)
    before = snapshot(root)
    with StalledWriter(root / "_index.md"):
        shown = request.plan(context(root, TODAY))  # the preview, on the empty index
        refusal = refused_with_nothing_changed(lambda: execute(root, Unattended.after(request, shown), today=TODAY))
    assert refusal.rule == fs_applier.HELD and "held open for writing" in refusal.message
    assert_writer_kept_everything(root, before)


@pytest.mark.parametrize("replacement", [
    "# Memory index\n",  # the routes gone
    None,  # the heading gone, every route kept
], ids=["lost-most-routes", "lost-heading"])
def test_an_index_that_lost_its_heading_or_most_routes_is_refused(tmp_path: Path, monkeypatch,
                                                                  replacement: str | None):
    """Not only an empty index: one that lost its heading or most of its routes since the plan
    read it is another writer's half, however still it holds; on main it was the base after
    0.5 s and the route was written on it."""
    monkeypatch.setattr(fs_applier, "SETTLE_LIMIT", 1.5)  # > QUIET: main's wait ran out first
    root = a_root(tmp_path / "memory")
    request = REQUESTS["route"]
    shown = request.plan(context(root, TODAY))  # the preview, then `--yes`
    index = root / "_index.md"
    whole = index.read_text(encoding="utf-8")
    index.write_text(whole.replace("# Memory index\n", "") if replacement is None else replacement, encoding="utf-8")
    before = snapshot(root)
    refusal = refused_with_nothing_changed(lambda: execute(root, Unattended.after(request, shown), today=TODAY))
    assert refusal.rule == fs_applier.UNSETTLED and "since pmem read it" in refusal.message
    assert snapshot(root) == before


def _hold_open_for_writing(path: str, opened, release) -> None:  # a child process
    fd = os.open(path, os.O_WRONLY)
    opened.set()
    release.wait(BOUND)
    os.close(fd)


@pytest.mark.parametrize("way", ["lease", "proc"])
def test_another_process_holding_the_index_for_writing_is_seen(tmp_path: Path, monkeypatch, way: str):
    """Both ways of asking (docs/decisions.md): a read lease, and `/proc/*/fdinfo` where no
    lease can be taken (not the file's owner)."""
    if way == "proc":
        monkeypatch.setattr(open_writers, "_by_lease", lambda fd: None)
    path = tmp_path / "_index.md"
    path.write_text("# Memory index\n", encoding="utf-8")
    fork = multiprocessing.get_context("fork")
    opened, release = fork.Event(), fork.Event()
    child = fork.Process(target=_hold_open_for_writing, args=(str(path), opened, release), daemon=True)
    child.start()
    try:
        assert opened.wait(BOUND)
        fd = os.open(path, os.O_RDONLY)
        try:
            assert open_writers.held_for_writing(fd)
        finally:
            os.close(fd)
    finally:
        release.set()
        child.join(BOUND)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert not open_writers.held_for_writing(fd)  # the child closed it: nobody holds it
    finally:
        os.close(fd)


# -- 2. a symlink swapped in mid-write ---------------------------------------------------------
def test_an_index_swapped_for_a_link_mid_write_is_not_read_through(tmp_path: Path, monkeypatch):
    """While `route add` fsyncs its temporary file, `_index.md` becomes a link to a private file
    outside the root. On main the retry read through the link, and `_index.md` ended a regular
    file holding the outside file's lines plus the route."""
    root = a_root(tmp_path / "memory")
    outside = tmp_path / "private.md"
    outside.write_text("# Private\n\n- [Secret](secret.md) — not memory\n", encoding="utf-8")
    private = outside.read_bytes()
    request = REQUESTS["route"]
    shown = Confirmed(request, request.plan(context(root, TODAY)))
    index = root / "_index.md"
    real_fsync = os.fsync
    swapped: list[bool] = []

    def fsync_then_swap(fd: int) -> None:
        real_fsync(fd)
        if not swapped and os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith("._index.md."):
            swapped.append(True)
            index.unlink()
            index.symlink_to(outside)

    monkeypatch.setattr(os, "fsync", fsync_then_swap)
    with pytest.raises(Refusal) as exc:
        execute(root, shown, today=TODAY)
    assert swapped
    assert "nothing was changed" in exc.value.message and "symbolic link" in exc.value.message, exc.value.message
    assert index.is_symlink() and outside.read_bytes() == private  # nothing written through it or over it
    assert not list(root.rglob("*.pmem-tmp"))


# -- 3. a folder swapped in for a file mid-archive -------------------------------------------
def _swap_for_folder(source: Path) -> None:
    """`source` becomes a folder holding the file that was there."""
    aside = source.with_name(source.name + ".aside")
    os.rename(source, aside)
    source.mkdir()
    os.rename(aside, source / "inside.md")


@pytest.mark.parametrize("moment", ["link", "rename"])
def test_a_file_swapped_for_a_folder_mid_archive_is_not_moved(tmp_path: Path, monkeypatch, moment: str):
    """The archived file becomes a folder after pmem checked it: at its hard link (which then
    fails on the folder, and on main the fallback rename moved the whole folder into `_archive/`
    with a record and "Done"), or where no hard link is possible, right before the rename."""
    root = a_root(tmp_path / "memory")
    source = root / "notes/a0.md"
    request = Request("archive", "notes/a0.md", "done")
    shown = Confirmed(request, request.plan(context(root, TODAY)))
    real_link, real_rename = os.link, os.rename
    swapped: list[bool] = []

    def link(src, dst, *args, **kwargs):
        if Path(src) == source and not swapped:
            swapped.append(True)
            if moment == "link":
                _swap_for_folder(source)
            else:
                raise OSError(errno.EXDEV, "no hard links here")
        return real_link(src, dst, *args, **kwargs)

    def rename(src, dst, *args, **kwargs):
        if moment == "rename" and Path(src) == source and Path(dst) != source.with_name("a0.md.aside") \
                and source.is_file() and not source.is_symlink():
            _swap_for_folder(source)
        return real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(os, "rename", rename)
    before_index = {rel: (root / rel).read_bytes() for rel in ("_index.md", "_archive/_index.md")}
    refusal = refused_with_nothing_changed(lambda: execute(root, shown, today=TODAY))
    assert swapped and "folder" in refusal.message, refusal.message
    assert source.is_dir() and (source / "inside.md").is_file()  # the folder stays where it was
    assert not (root / "_archive/notes").exists()  # nothing moved, no folder made for it left
    assert {rel: (root / rel).read_bytes() for rel in before_index} == before_index


# -- 4. no empty folder after "nothing was changed" ------------------------------------------
def test_a_refused_archive_leaves_no_folder_it_made(tmp_path: Path, monkeypatch):
    """The source cannot be removed from its folder (read-only, immutable): the hard link is
    undone and the archive refused; on main the `_archive/notes/` made for it stayed, empty."""
    root = a_root(tmp_path / "memory")
    source = root / "notes/a0.md"
    request = Request("archive", "notes/a0.md", "done")
    shown = Confirmed(request, request.plan(context(root, TODAY)))
    real_unlink = os.unlink

    def unlink(path, *args, **kwargs):
        if Path(path) == source:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    before = snapshot(root)
    refused_with_nothing_changed(lambda: execute(root, shown, today=TODAY))
    assert snapshot(root) == before  # `_archive/notes/` too: not left behind


def test_a_refused_save_leaves_none_of_the_folders_it_made(tmp_path: Path, monkeypatch):
    """A save into folders that do not exist yet (`deep/er/new.md`) that fails at its index write
    (the disk is full): every folder it made goes, not only the innermost one."""
    root = a_root(tmp_path / "memory")
    request = Request("save", "deep/er/new.md", content=summary_file("New"))
    shown = Confirmed(request, request.plan(context(root, TODAY)))
    real = fs_applier.write_atomic
    failed: list[Path] = []

    def full_at_the_index(path: Path, *args, **kwargs) -> None:
        if path.name == "_index.md":
            failed.append(path)
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, *args, **kwargs)

    monkeypatch.setattr(fs_applier, "write_atomic", full_at_the_index)
    before = snapshot(root)
    refused_with_nothing_changed(lambda: execute(root, shown, today=TODAY))
    assert failed
    assert snapshot(root) == before  # no `deep/`, no `deep/er/`, no note


def test_a_file_swapped_for_a_folder_before_a_purge_is_not_removed(tmp_path: Path, monkeypatch):
    """A purge renames the file aside before removing it: a folder swapped in after the check
    is put back and refused, never renamed aside (and never left as a hidden leftover)."""
    root = a_root(tmp_path / "memory")
    for step in (Request("archive", "notes/a0.md", "done"), Request("delete", "_archive/notes/a0.md", "done")):
        execute(root, Confirmed(step, step.plan(context(root, TODAY))), today=TODAY)
    later = TODAY + dt.timedelta(days=3650)  # past its recover-by date
    request = Request("purge", "_archive/_trash/notes/a0.md")
    shown = Confirmed(request, request.plan(context(root, later)))
    archived = root / "_archive/_trash/notes/a0.md"
    real_rename = os.rename

    def rename(src, dst, *args, **kwargs):
        if Path(src) == archived and archived.is_file() and ".pmem" in Path(dst).name:
            _swap_for_folder(archived)
        return real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", rename)
    before = snapshot(root)
    refusal = refused_with_nothing_changed(lambda: execute(root, shown, today=later))
    assert "folder" in refusal.message and "_archive/_trash/notes/a0.md" in refusal.message, refusal.message
    after = snapshot(root)
    assert after.pop("_archive/_trash/notes/a0.md/inside.md") == before.pop("_archive/_trash/notes/a0.md")
    assert after.pop("_archive/_trash/notes/a0.md") == "folder" and after == before
