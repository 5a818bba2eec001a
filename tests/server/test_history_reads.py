"""The cached review state is read again off the loop, and reads overlap (the watcher's settle,
this session's own write, a keep): they are kept in the order they were asked, so a read begun
before a review and finished after it cannot put the reviewed file's lens back (seen in the e2e
history step: after "keep" the server still answered the history lenses, and sent no refresh)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace

from pmem_lsp.engine.navigation.history_lens import ReviewState
from pmem_lsp.server import history_commands


class _Server:  # only a key of the per-server cache (a weak one): nothing of it is read here
    pass


async def test_a_slow_read_asked_first_does_not_overwrite_a_newer_one(monkeypatch, tmp_path: Path) -> None:
    stale = ReviewState(files={"notes/a.md": None})  # type: ignore[dict-item]  # (its changes are not read here)
    fresh = ReviewState(files={})
    answers = iter([(0.3, stale), (0.0, fresh)])

    def record_and_read(*_args, **_kwargs) -> ReviewState:
        pause, state = next(answers)
        time.sleep(pause)
        return state

    refreshes: list[None] = []
    monkeypatch.setattr(history_commands, "_record_and_read", record_and_read)
    monkeypatch.setattr(history_commands, "_refresh_lenses", lambda _ls: refreshes.append(None))
    server, root = _Server(), SimpleNamespace(path=tmp_path)
    kept = history_commands._review(server, root)  # type: ignore[arg-type]
    kept.lenses_asked = True

    history_commands._read_again(server, root)  # type: ignore[arg-type]  # begun before the review…
    await asyncio.sleep(0.05)
    history_commands._read_again(server, root)  # type: ignore[arg-type]  # …which this one reads
    deadline = time.monotonic() + 10
    while len(refreshes) < 2:  # each read stored a state the client was told of
        assert time.monotonic() < deadline, f"the reads never finished: {len(refreshes)} refreshes"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.1)
    assert kept.state is fresh
    assert len(refreshes) == 2
