"""The write protocol every pmem writer follows through the one door (issue 23;
engine/lifecycle/execute.py; docs/SECURITY.md, "The write protocol"):

- the lock is the root's, whatever the writer's cache folder or environment, and no file;
- an index caught mid-rewrite (emptied, half-written) is never a base: waited for, and an
  emptied one refused when it stays so; a shrunk one that holds still is planned on again;
- every index write checks its post-condition (nothing dropped) before the rename;
- a multi-step operation completes or puts back every step, and says what remains when even
  that fails; a failed unlink undoes its hard link (read-only source folder);
- a killed write's temporary file is reported (PM007) and cleared by the next write;
- after a recover that stopped half-way, the preferred fixes restore the saved route line.
"""

from __future__ import annotations

import datetime as dt
import errno
import multiprocessing
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from test_fixes import apply_fix

from engine_helpers import findings, scan
from pmem_lsp.engine.catalogue import quick_fixes
from pmem_lsp.engine.index_edit import routes_to
from pmem_lsp.engine.lifecycle import changes, fs_applier
from pmem_lsp.engine.lifecycle.execute import Confirmed, execute
from pmem_lsp.engine.lifecycle.fs_applier import ApplyError, apply_step
from pmem_lsp.engine.lifecycle.lock import RootLock
from pmem_lsp.engine.lifecycle.operations import context
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.safety import Refusal
from roots import base_files, summary_file, write_root

TODAY = dt.date.today()
NOTE = "notes/a0.md"


def a_root(base: Path, n: int = 3) -> Path:
    files = base_files()
    lines = []
    for i in range(n):
        rel = f"notes/a{i}.md"
        files[rel] = summary_file(f"A {i}")
        lines.append(f"- [A {i}]({rel}) — note a{i}\n")
    files["loose.md"] = summary_file("Loose")
    files["_index.md"] += "\n## Notes\n" + "".join(lines)
    return write_root(base, files)


def confirmed(root: Path, request: Request) -> Confirmed:
    return Confirmed(request, request.plan(context(root, TODAY)))


def run(root: Path, request: Request):
    return execute(root, confirmed(root, request), today=TODAY)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- the lock ----------------------------------------------------------------------------
def _try_lock_elsewhere(root: str, env: dict[str, str], answer) -> None:
    os.environ.update(env)
    lock = RootLock(Path(root), wait=0)
    answer.put(lock.try_acquire())
    lock.release()


@pytest.mark.parametrize("env", [
    {"PMEM_CACHE_DIR": "{tmp}/other-cache"},
    {"XDG_CACHE_HOME": "{tmp}/xdg", "HOME": "{tmp}/home"},
    {"PMEM_CACHE_DIR": "/proc/self/cannot-be-written"},  # an unwritable cache folder
], ids=["PMEM_CACHE_DIR", "XDG_CACHE_HOME", "unwritable"])
def test_the_lock_is_the_roots_whatever_the_writers_environment(tmp_path: Path, env: dict[str, str]):
    root = a_root(tmp_path / "memory")
    env = {k: v.format(tmp=tmp_path) for k, v in env.items()}
    before = snapshot(root)
    fork = multiprocessing.get_context("fork")
    answer = fork.Queue()
    with RootLock(root):
        child = fork.Process(target=_try_lock_elsewhere, args=(str(root), env, answer))
        child.start()
        held = answer.get(timeout=60)
        child.join(60)
    assert held is False, "a writer with another cache folder took the lock while it was held"
    child = fork.Process(target=_try_lock_elsewhere, args=(str(root), env, answer))
    child.start()
    assert answer.get(timeout=60) is True
    child.join(60)
    # No lock file anywhere: not in the root, not in any cache folder.
    assert snapshot(root) == before and not list(root.rglob(".*"))
    assert not any("lock" in p.name for p in tmp_path.rglob("*") if not p.is_relative_to(root))


def test_a_symlinked_root_and_its_target_are_one_lock(tmp_path: Path):
    root = a_root(tmp_path / "memory")
    (tmp_path / "link").symlink_to(root)
    with RootLock(root):
        other = RootLock(tmp_path / "link", wait=0)
        assert other.try_acquire() is False
        other.release()


# -- an index caught mid-rewrite ---------------------------------------------------------
def test_an_index_caught_emptied_is_waited_for_and_nothing_is_lost(tmp_path: Path, monkeypatch):
    """An agent truncates `_index.md` and writes it again a moment later, while pmem saves: pmem
    sees the empty file, waits, and writes on the whole text, with every route kept."""
    root = a_root(tmp_path / "memory")
    index = root / "_index.md"
    whole = index.read_bytes()
    request = Request("save", "notes/new.md", content=summary_file("New"))
    shown = confirmed(root, request)
    index.write_bytes(b"")  # the agent truncated it...
    reads = threading.Event()
    real = fs_applier._read_bytes

    def counting(path):
        if path == index and not (real(path) or b"").strip():
            reads.set()  # pmem has seen it empty
        return real(path)

    monkeypatch.setattr(fs_applier, "_read_bytes", counting)

    def agent():
        reads.wait(30)
        index.write_bytes(whole)  # ...and writes it again

    writer = threading.Thread(target=agent)
    writer.start()
    plan, done = execute(root, shown, today=TODAY)
    writer.join(30)
    assert reads.is_set()
    text = index.read_text(encoding="utf-8")
    for i in range(3):
        assert routes_to(text, f"notes/a{i}.md"), f"the route of notes/a{i}.md was lost"
    assert len(routes_to(text, "notes/new.md")) == 1 and (root / "notes/new.md").is_file()


def test_an_index_that_stays_emptied_is_refused_and_nothing_changes(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(fs_applier, "SETTLE_LIMIT", 0.3)
    root = a_root(tmp_path / "memory")
    shown = confirmed(root, Request("save", "notes/new.md", content=summary_file("New")))
    (root / "_index.md").write_bytes(b"")
    before = snapshot(root)
    with pytest.raises(Refusal) as exc:
        execute(root, shown, today=TODAY)
    assert exc.value.rule == fs_applier.UNSETTLED and "emptied" in exc.value.message
    assert snapshot(root) == before  # the note was not created, the index not written


def test_an_index_that_lost_a_line_on_purpose_is_planned_on_again(tmp_path: Path):
    """An agent removed another route between preview and yes: once the text holds still it is
    the base, so that route stays removed (pmem does not bring it back) and the archive runs."""
    root = a_root(tmp_path / "memory")
    shown = confirmed(root, Request("archive", NOTE, "done"))
    index = root / "_index.md"
    index.write_text(index.read_text(encoding="utf-8").replace("- [A 1](notes/a1.md) — note a1\n", ""),
                     encoding="utf-8")
    execute(root, shown, today=TODAY)
    text = index.read_text(encoding="utf-8")
    assert not routes_to(text, "notes/a1.md") and not routes_to(text, NOTE) and routes_to(text, "notes/a2.md")
    assert (root / "_archive" / NOTE).is_file()


def test_every_index_write_checks_that_it_drops_nothing(tmp_path: Path, monkeypatch):
    """A change that would drop a line it did not mean to (a bug, a bad parse) is refused right
    before the rename, and the steps before it are put back."""
    root = a_root(tmp_path / "memory")
    real = changes.insert_route

    def dropping(text, path, line):
        return real(text, path, line).replace("- [A 1](notes/a1.md) — note a1\n", "")

    monkeypatch.setattr(changes, "insert_route", dropping)
    before = snapshot(root)
    with pytest.raises(ApplyError) as exc:
        run(root, Request("save", "notes/new.md", content=summary_file("New")))
    assert exc.value.rule == changes.POSTCONDITION and "drop 1 line" in exc.value.message
    assert "nothing was changed" in exc.value.message and exc.value.done == ()
    assert snapshot(root) == before


# -- complete or put back ----------------------------------------------------------------
def _failing_write(monkeypatch, n: int = 2) -> None:
    """The `n`-th index write of the run fails (a full disk)."""
    real = fs_applier.write_atomic
    calls = []

    def failing(path, text, bom=False, create=False, expected=None):
        calls.append(path)
        if len(calls) == n:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, text, bom=bom, create=create, expected=expected)

    monkeypatch.setattr(fs_applier, "write_atomic", failing)


@pytest.mark.parametrize("op", ["archive", "recover", "delete"])
def test_a_step_that_fails_puts_back_every_step_before_it(tmp_path: Path, monkeypatch, op: str):
    root = a_root(tmp_path / "memory")
    if op in ("recover", "delete"):
        run(root, Request("archive", NOTE, "done"))
    before = snapshot(root)
    request = Request(op, NOTE if op != "delete" else f"_archive/{NOTE}", "done")
    _failing_write(monkeypatch, len(request.plan(context(root, TODAY)).writes()))  # the last one
    with pytest.raises(ApplyError) as exc:
        run(root, request)
    assert "No space left" in exc.value.message
    assert "was put back, so nothing was changed" in exc.value.message and exc.value.done == ()
    assert snapshot(root) == before  # byte for byte, the file back where it was


def test_when_putting_back_fails_the_error_says_what_remains(tmp_path: Path, monkeypatch):
    root = a_root(tmp_path / "memory")
    _failing_write(monkeypatch)

    def cannot(root_, written):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(fs_applier, "undo_write", cannot)
    with pytest.raises(ApplyError) as exc:
        run(root, Request("archive", NOTE, "done"))
    message = exc.value.message
    assert "could not put _archive/_index.md back" in message and "Read-only file system" in message
    assert exc.value.done == (f"moved {NOTE} → _archive/{NOTE}", "updated _archive/_index.md")
    assert "remains done" in message and "pmem check" in message
    assert (root / "_archive" / NOTE).is_file() and not (root / NOTE).exists()  # as it says


def test_a_stopped_purge_puts_its_file_back(tmp_path: Path, monkeypatch):
    """A removal is set aside first: when the record's removal fails, the file comes back."""
    root = a_root(tmp_path / "memory")
    run(root, Request("archive", NOTE, "done"))
    long_ago = dt.date(2000, 1, 1)
    execute(root, Confirmed(Request("delete", f"_archive/{NOTE}"),
                            Request("delete", f"_archive/{NOTE}").plan(context(root, long_ago))), today=long_ago)
    before = snapshot(root)
    monkeypatch.setattr(fs_applier, "write_atomic", lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EIO, "EIO")))
    with pytest.raises(ApplyError) as exc:
        run(root, Request("purge", f"_archive/_trash/{NOTE}"))
    assert "nothing was changed" in exc.value.message
    assert snapshot(root) == before


def _immutable(path: Path) -> bool:
    if shutil.which("chattr") is None or os.geteuid() != 0:
        return False
    return subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0


def test_a_read_only_source_folder_leaves_the_file_once(tmp_path: Path):
    """The hard link into `_archive/` works, the unlink from the source folder does not: the link
    is undone, the file is there once, and the message says nothing was changed (truly)."""
    root = a_root(tmp_path / "memory")
    folder = root / "notes"
    if not _immutable(folder):
        pytest.skip("needs root and `chattr +i` (an immutable folder) on this file system")
    try:
        before = snapshot(root)
        with pytest.raises(Refusal) as exc:
            run(root, Request("archive", NOTE, "done"))
        assert "nothing was changed" in exc.value.message
        assert (root / NOTE).is_file() and not (root / "_archive" / NOTE).exists()
        assert snapshot(root) == before
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


# -- leftovers -----------------------------------------------------------------------------
def test_a_killed_writes_temporary_file_is_reported_and_the_next_write_clears_it(tmp_path: Path):
    root = a_root(tmp_path / "memory")
    temp = root / "._index.md.k1ll3dwr1te.pmem-tmp"
    temp.write_text("# Memory index\n(a whole index, half written)\n", encoding="utf-8")
    assert [(f.path, f.code) for f in findings(root) if f.code == "PM007"] == [("_index.md", "PM007")]
    run(root, Request("route", "loose.md"))
    assert not temp.exists()
    assert not [f for f in findings(root) if f.code == "PM007"]


def test_a_temporary_file_whose_target_is_missing_is_left_and_still_reported(tmp_path: Path):
    root = a_root(tmp_path / "memory")
    temp = root / "notes" / ".fresh.md.k1ll3dwr1te.pmem-tmp"  # a creation killed before its link
    temp.write_text(summary_file("Fresh"), encoding="utf-8")
    run(root, Request("save", "notes/other.md", content=summary_file("Other")))
    assert temp.exists()  # the only copy of that text: never removed blindly
    assert [(f.path, f.code) for f in findings(root) if f.code == "PM007"] == [("notes/fresh.md", "PM007")]


def test_a_stopped_purges_set_aside_file_is_put_back_by_the_next_write(tmp_path: Path):
    root = a_root(tmp_path / "memory")
    run(root, Request("archive", NOTE, "done"))
    aside = root / "_archive" / "notes" / ".a0.md.0123456789ab.purge.pmem-tmp"
    os.rename(root / "_archive" / NOTE, aside)  # killed after setting it aside
    assert {f.code for f in findings(root)} >= {"PM007", "PM302"}
    run(root, Request("archive", "notes/a1.md", "done"))  # the next write in that folder
    assert (root / "_archive" / NOTE).is_file() and not aside.exists()


# -- the quick fixes after a half-done recover --------------------------------------------
def _half_recovered(tmp_path: Path) -> tuple[Path, str]:
    root = a_root(tmp_path / "memory")
    saved = next(line for line in (root / "_index.md").read_text(encoding="utf-8").splitlines() if "(notes/a0.md)" in line)
    saved = saved.replace("note a0", "note a0, as it was")  # a line no generator would make
    index = root / "_index.md"
    index.write_text(index.read_text(encoding="utf-8").replace("note a0\n", "note a0, as it was\n"), encoding="utf-8")
    run(root, Request("archive", NOTE, "done"))
    plan = Request("recover", NOTE).plan(context(root, TODAY))
    apply_step(root, plan.steps[0])  # the file moved back; then the process stopped
    return root, saved


def test_after_a_half_done_recover_the_preferred_fix_restores_the_saved_route_line(tmp_path: Path):
    root, saved = _half_recovered(tmp_path)
    state = scan(root)
    pm302 = next(f for f in findings(root) if f.code == "PM302")
    preferred = [f for f in quick_fixes(state, pm302, TODAY) if f.preferred]
    assert len(preferred) == 1 and "saved route line" in preferred[0].title
    apply_fix(root, state, preferred[0])
    text = (root / "_index.md").read_text(encoding="utf-8")
    assert saved in text.splitlines() and len(routes_to(text, NOTE)) == 1
    assert not [f for f in findings(root) if f.code in ("PM202", "PM302", "PM301") and f.path != "loose.md"]


def test_after_a_half_done_recover_the_route_fix_uses_the_saved_line(tmp_path: Path):
    root, saved = _half_recovered(tmp_path)
    state = scan(root)
    pm202 = next(f for f in findings(root) if f.code == "PM202" and f.path == NOTE)
    fix = next(f for f in quick_fixes(state, pm202, TODAY) if f.preferred)
    apply_fix(root, state, fix)
    assert saved in (root / "_index.md").read_text(encoding="utf-8").splitlines()


def test_an_index_cut_mid_line_by_a_paused_writer_is_waited_for_and_nothing_is_lost(tmp_path: Path):
    """An agent truncates `_index.md`, writes its first half (cut in the middle of a route
    line), pauses, then writes the rest through the same open file. A pmem write that renamed
    its text over the half would send that rest to the replaced file: every route after the
    cut, and the agent's new line, lost (a review lost three routes with a 1 s pause). pmem
    waits for the text to end its line, or to be left so for `MID_LINE_QUIET`."""
    root = a_root(tmp_path / "memory")
    index = root / "_index.md"
    shown = confirmed(root, Request("archive", NOTE, "done"))  # the person confirmed on the whole text
    whole = index.read_bytes() + "- [Agent](notes/ag.md) — the agent's note\n".encode()
    cut = whole.index(b"notes/a2.md") + 3  # in the middle of a2's route line
    handle = open(index, "wb")  # noqa: SIM115 -- the agent's rewrite: truncate (closed by the agent)...
    handle.write(whole[:cut])
    handle.flush()
    started = threading.Event()

    def agent():
        started.wait(30)
        threading.Event().wait(1.0)  # ...pause (a model streaming its output)...
        handle.write(whole[cut:])  # ...then the rest, to the file it opened
        handle.close()

    writer = threading.Thread(target=agent)
    writer.start()
    started.set()
    try:
        execute(root, shown, today=TODAY)
    finally:
        writer.join(30)
    text = index.read_text(encoding="utf-8")
    assert not routes_to(text, NOTE) and (root / "_archive" / NOTE).is_file()
    for rel in ("notes/a1.md", "notes/a2.md", "notes/ag.md"):
        assert len(routes_to(text, rel)) == 1, f"the route of {rel} was lost:\n{text}"
    assert text.endswith("— the agent's note\n")


def test_a_created_file_whose_temporary_name_cannot_be_removed_is_reported_done(tmp_path: Path, monkeypatch):
    """The file is linked into place, then removing the temporary name fails (EIO): the save
    said "failed … nothing was changed" beside the file it had made, with no route. Now the
    step is done, the route written, and the leftover reported for the next write to clear."""
    root = a_root(tmp_path / "memory")
    real = os.unlink
    failed = []

    def unlink(path, *args, **kwargs):
        if str(path).endswith(".pmem-tmp") and not failed:
            failed.append(path)
            raise OSError(errno.EIO, "Input/output error")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(fs_applier.os, "unlink", unlink)
    plan, done = run(root, Request("save", "notes/new.md", content=summary_file("New")))
    monkeypatch.undo()
    assert failed, "the temporary name's removal was made to fail"
    assert (root / "notes/new.md").is_file() and routes_to((root / "_index.md").read_text(encoding="utf-8"),
                                                           "notes/new.md")
    assert any("notes/new.md" in step for step in done)
    assert "PM007" in {f.code for f in findings(root)}
