"""pmem's writers serialise on one lock per root, and every index write is compare-and-swap
(issue 14, docs/design.md §5.1): two processes archiving different notes at once lose no record and
resurrect no route; an agent's line written between pmem's read and its rename survives."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from engine_helpers import findings
from pmem_lsp.engine.lifecycle.execute import Confirmed, execute
from pmem_lsp.engine.lifecycle.fs_applier import write_index
from pmem_lsp.engine.lifecycle.lock import RootLock, lock_target
from pmem_lsp.engine.lifecycle.operations import context, make_plan
from pmem_lsp.engine.lifecycle.plan import WriteText
from pmem_lsp.engine.lifecycle.preview import Request
from roots import base_files, summary_file, write_root

N = 100  # notes each process archives


def a_root(base: Path, n: int = N) -> Path:
    files = base_files()
    lines = []
    for side in ("a", "b"):
        for i in range(n):
            rel = f"notes/{side}{i:03}.md"
            files[rel] = summary_file(f"{side} {i}")
            lines.append(f"- [{side} {i}]({rel}) — note {side}{i}\n")
    files["_index.md"] += "\n## Notes\n" + "".join(lines)
    return write_root(base, files)


def archive_all(root: str, side: str, start_gate) -> None:
    start_gate.wait()
    for i in range(N):
        rel = f"notes/{side}{i:03}.md"
        ctx = context(Path(root))
        execute(ctx.root, Confirmed(Request("archive", rel, f"by {side}"), make_plan(ctx, "archive", rel, f"by {side}")),
                ctx=ctx)


@pytest.mark.slow
def test_two_processes_archiving_at_once_lose_nothing(tmp_path: Path):
    root = a_root(tmp_path / "memory")
    fork = multiprocessing.get_context("fork")
    gate = fork.Barrier(2)
    workers = [fork.Process(target=archive_all, args=(str(root), side, gate)) for side in ("a", "b")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(300)
    assert [w.exitcode for w in workers] == [0, 0]
    index = (root / "_index.md").read_text(encoding="utf-8")
    records = (root / "_archive/_index.md").read_text(encoding="utf-8")
    for side in ("a", "b"):
        for i in range(N):
            rel = f"notes/{side}{i:03}.md"
            assert f"({rel})" not in index, f"the route of {rel} came back"
            assert f"## {rel}\n" in records, f"the record of {rel} was lost"
            assert (root / "_archive" / rel).is_file() and not (root / rel).exists()
    assert records.count("- status: archived") == 2 * N
    assert [(f.path, f.code) for f in findings(root) if f.code.startswith(("PM2", "PM3"))] == []


def test_the_lock_excludes_a_second_writer_and_is_kept_out_of_the_root(tmp_path: Path):
    root = a_root(tmp_path / "memory")
    with RootLock(root):
        other = RootLock(root, wait=0.2)
        assert other.try_acquire() is False
        other.release()
    again = RootLock(root)
    assert again.try_acquire() is True
    again.release()
    assert not any(p.name.startswith(".pmem") for p in root.iterdir())  # nothing in the memory
    assert lock_target(root) == root.resolve()  # the root folder itself: no lock file anywhere


def test_an_agents_write_between_read_and_rename_survives(tmp_path: Path, monkeypatch):
    """Compare-and-swap: pmem reads `_index.md`, makes its change; an agent adds a line before
    pmem renames its temporary file over the index. The write is made again on the agent's
    text, so the agent's line and pmem's change are both there."""
    root = a_root(tmp_path / "memory")
    plan = make_plan(context(root), "archive", "notes/a000.md", "done")
    step = next(s for s in plan.writes() if s.path == "_index.md")
    index = root / "_index.md"
    agent_line = "- [Agent](notes/agent.md) — written by an agent in the instant\n"
    real_rebase = WriteText.rebase
    calls = []

    def rebase_then_agent_writes(self, current):
        result = real_rebase(self, current)
        if not calls:
            index.write_text(index.read_text(encoding="utf-8") + agent_line, encoding="utf-8")
        calls.append(1)
        return result

    monkeypatch.setattr(WriteText, "rebase", rebase_then_agent_writes)
    assert write_index(root, step) is not None
    text = index.read_text(encoding="utf-8")
    assert agent_line in text and "(notes/a000.md)" not in text
    assert len(calls) == 2  # read, changed meanwhile, read again


def test_cas_refuses_a_file_that_keeps_changing(tmp_path: Path, monkeypatch):
    from pmem_lsp.engine.lifecycle.safety import Refusal

    root = a_root(tmp_path / "memory")
    plan = make_plan(context(root), "archive", "notes/a000.md", "done")
    step = next(s for s in plan.writes() if s.path == "_index.md")
    index = root / "_index.md"
    real_rebase = WriteText.rebase

    def always_changed(self, current):
        result = real_rebase(self, current)
        index.write_text(index.read_text(encoding="utf-8") + "x\n", encoding="utf-8")
        return result

    monkeypatch.setattr(WriteText, "rebase", always_changed)
    from pmem_lsp.engine.lifecycle import fs_applier

    monkeypatch.setattr(fs_applier, "SETTLE_LIMIT", 0.5)  # retried with backoff for a bounded time
    before_rename = index.read_text(encoding="utf-8")
    with pytest.raises(Refusal) as exc:
        write_index(root, step)
    assert "kept changing" in exc.value.message
    assert "(notes/a000.md)" in index.read_text(encoding="utf-8")  # never replaced
    assert index.read_text(encoding="utf-8").startswith(before_rename)
    assert not [p for p in os.listdir(root) if p.endswith(".pmem-tmp")]


def test_a_plan_made_before_another_pmem_archived_many_notes_still_applies(tmp_path: Path):
    """The race CI met: one process read the root, then waited on the lock while the other
    archived nine notes. Their routes left with their notes; that is no rewrite in progress,
    and the waiting archive goes through (before: refused as 'lost 9 of its 14 routes')."""
    root = a_root(tmp_path / "memory", n=7)
    late = context(root)
    plan = make_plan(late, "archive", "notes/b000.md", "late")
    for rel in [f"notes/a{i:03}.md" for i in range(7)] + ["notes/b006.md", "notes/b005.md"]:
        ctx = context(root)
        execute(root, Confirmed(Request("archive", rel, "first"), make_plan(ctx, "archive", rel, "first")), ctx=ctx)
    execute(root, Confirmed(Request("archive", "notes/b000.md", "late"), plan), ctx=late)
    index = (root / "_index.md").read_text(encoding="utf-8")
    assert "(notes/b000.md)" not in index and "(notes/b001.md)" in index
    assert "(notes/a000.md)" not in index  # no archived route came back
    assert (root / "_archive/notes/b000.md").is_file()


def test_a_rewrite_that_dropped_routes_of_notes_still_there_is_still_gutted(tmp_path: Path):
    from pmem_lsp.engine.lifecycle.fs_applier import _gutted

    root = a_root(tmp_path / "memory")
    before = (root / "_index.md").read_text(encoding="utf-8")
    kept = "".join(line for line in before.splitlines(keepends=True) if "notes/" not in line or "a000" in line)
    assert _gutted(before, kept.encode(), root) is not None  # the notes exist: a rewrite in progress
    for side in ("a", "b"):
        for i in range(1, N):
            (root / f"notes/{side}{i:03}.md").unlink()
    assert _gutted(before, kept.encode(), root) is None  # they left with their notes
