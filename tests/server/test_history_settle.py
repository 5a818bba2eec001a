"""The watcher's burst becomes one history entry once it settles (docs/design.md §11): settled is
measured on the disk, so a batch that reaches the loop late — a starved watcher thread on a
loaded machine — still joins its burst instead of making an entry of its own."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pmem_lsp.server import history_commands
from pmem_lsp.server.history_commands import SETTLE, _quiet_for, changes_settled


class _Server:  # what changes_settled reads of the server: its open buffers (none here)
    def __init__(self) -> None:
        self.host = SimpleNamespace(buffers={})


class _Recorded:
    def __init__(self, paths: list[Path]) -> None:
        self.paths, self.calls = paths, []

    def __call__(self, ls, root, record=None, title="", start=False) -> None:
        newest = max(p.stat().st_mtime for p in self.paths)
        self.calls.append((record.kind, title, time.time() - newest))


@pytest.fixture
def recorded(monkeypatch, tmp_path: Path):
    note = tmp_path / "note.md"
    note.write_text("one\n", encoding="utf-8")
    spy = _Recorded([note])
    monkeypatch.setattr(history_commands, "_read_again", spy)
    server = _Server()
    root = SimpleNamespace(path=tmp_path)
    return server, root, note, spy


async def _until(condition, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "never settled"
        await asyncio.sleep(0.02)


async def test_a_write_whose_batch_is_late_joins_its_burst(recorded) -> None:
    server, root, note, spy = recorded
    changes_settled(server, root, [note])  # the batch of the first write
    # The writer writes again at once; the watcher has not delivered that batch (and never
    # will, here): the timer fires with the disk not yet quiet, so it waits for the disk.
    await asyncio.sleep(SETTLE * 0.8)
    note.write_text("two\n", encoding="utf-8")
    await _until(lambda: spy.calls)
    await asyncio.sleep(SETTLE)  # nothing more comes of it
    assert len(spy.calls) == 1
    kind, title, quiet = spy.calls[0]
    assert (kind, title) == ("outside", "changed outside pmem")
    assert quiet >= SETTLE  # recorded only once the disk was quiet, however late the loop ran


async def test_a_burst_of_batches_is_one_entry(recorded) -> None:
    server, root, note, spy = recorded
    for n in range(4):
        note.write_text(f"pass {n}\n", encoding="utf-8")
        changes_settled(server, root, [note])
        await asyncio.sleep(0.02)
    await _until(lambda: spy.calls)
    await asyncio.sleep(SETTLE)
    assert len(spy.calls) == 1


def test_quiet_for_ignores_gone_paths_and_future_times(tmp_path: Path) -> None:
    future = tmp_path / "kept-times.md"
    future.write_text("x", encoding="utf-8")
    ahead = time.time() + 3600
    os.utime(future, (ahead, ahead))  # a copy that kept a clock-skewed time: never "just written"
    assert _quiet_for({future, tmp_path / "gone.md"}) == SETTLE
    now = tmp_path / "now.md"
    now.write_text("x", encoding="utf-8")
    assert _quiet_for({future, now}) < SETTLE
