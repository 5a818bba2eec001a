"""Changes made outside the editor (an agent writing files) reach the diagnostics by themselves."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import codes, open_doc, start, wait_for, watching
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    files = base_files()
    files["_index.md"] += "\n## Notes\n- [Kept](notes/kept.md) — a note that stays\n"
    files["notes/kept.md"] = summary_file("Kept")
    return write_root(tmp_path / "memory", files)


async def ready(client: LanguageClient, root: Path) -> None:
    await start(client, root)
    await watching(client, root)


async def test_external_create_edit_rename_delete(client: LanguageClient, root: Path):
    await ready(client, root)
    new = root / "notes/new.md"
    new.write_text(summary_file("New", bullets=2), encoding="utf-8")  # created: unrouted, 2 bullets
    await wait_for(client, lambda: codes(client, new) == ["PM102", "PM202"], timeout=3)

    new.write_text(summary_file("New", bullets=4), encoding="utf-8")  # edited: 4 bullets
    await wait_for(client, lambda: codes(client, new) == ["PM202"], timeout=3)

    moved = root / "notes/moved.md"
    new.rename(moved)  # renamed: the old path clears, the new one is checked
    await wait_for(client, lambda: codes(client, new) == [] and codes(client, moved) == ["PM202"], timeout=3)

    kept = root / "notes/kept.md"
    kept.unlink()  # deleted: its route dangles now
    await wait_for(client, lambda: codes(client, root / "_index.md") == ["PM201"], timeout=3)


async def test_open_buffer_is_not_overwritten_by_the_disk(client: LanguageClient, root: Path):
    await ready(client, root)
    kept = root / "notes/kept.md"
    open_doc(client, kept, "# Kept\n\n## Summary\n- only one\n")
    await wait_for(client, lambda: codes(client, kept) == ["PM102"])
    kept.write_text(summary_file("Kept", bullets=4), encoding="utf-8")  # the disk says 4 bullets
    other = root / "notes/other.md"
    other.write_text(summary_file("Other"), encoding="utf-8")  # proves the watcher ran after
    await wait_for(client, lambda: codes(client, other) == ["PM202"], timeout=3)
    assert codes(client, kept) == ["PM102"]  # the buffer is still the truth


async def test_shutdown_stops_the_watchers(tmp_path: Path):
    from pmem_lsp.engine.settings import Settings
    from pmem_lsp.server.app import create_server
    from pmem_lsp.server.watcher import stop_all, watch_root

    root_path = write_root(tmp_path / "memory", base_files())
    server = create_server()
    root = server.host.add_root(root_path, Settings())
    watch_root(server, root)
    await asyncio.sleep(0.3)
    (_stop, task), = server.watchers.values()
    await stop_all(server)
    await asyncio.sleep(0.1)
    assert task.done() and server.watchers == {}
    assert [t for t in asyncio.all_tasks() if t.get_coro().__qualname__ == "_watch"] == []
    # No thread is still inside watchfiles (anyio may keep an idle pool thread, which is fine).
    import sys
    import traceback

    in_watchfiles = [tid for tid, frame in sys._current_frames().items()
                     if any("watchfiles" in f.filename for f in traceback.extract_stack(frame))]
    assert in_watchfiles == []


async def test_a_long_first_scan_reports_work_done_progress(client: LanguageClient, tmp_path: Path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from generate_root import generate

    root = generate(tmp_path / "big", 2500)  # takes well over half a second to scan and check
    await start(client, root)
    await wait_for(client, lambda: codes(client, root / "_index.md") != [], timeout=60)
    await asyncio.sleep(0.2)
    kinds = [getattr(v, "kind", None) for reports in client.progress_reports.values() for v in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end", client.progress_reports
