"""Changes made outside the editor (an agent writing files) reach the diagnostics by themselves."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import codes, open_doc, start, wait_for, watching
from pytest_lsp import ClientServerConfig, LanguageClient

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
    await wait_for(client, lambda: codes(client, new) == ["PM102", "PM202"])

    new.write_text(summary_file("New", bullets=4), encoding="utf-8")  # edited: 4 bullets
    await wait_for(client, lambda: codes(client, new) == ["PM202"])

    moved = root / "notes/moved.md"
    new.rename(moved)  # renamed: the old path clears, the new one is checked
    await wait_for(client, lambda: codes(client, new) == [] and codes(client, moved) == ["PM202"])

    kept = root / "notes/kept.md"
    kept.unlink()  # deleted: its route dangles now
    await wait_for(client, lambda: codes(client, root / "_index.md") == ["PM201"])


async def test_open_buffer_is_not_overwritten_by_the_disk(client: LanguageClient, root: Path):
    await ready(client, root)
    kept = root / "notes/kept.md"
    open_doc(client, kept, "# Kept\n\n## Summary\n- only one\n")
    await wait_for(client, lambda: codes(client, kept) == ["PM102"])
    kept.write_text(summary_file("Kept", bullets=4), encoding="utf-8")  # the disk says 4 bullets
    other = root / "notes/other.md"
    other.write_text(summary_file("Other"), encoding="utf-8")  # proves the watcher ran after
    await wait_for(client, lambda: codes(client, other) == ["PM202"])
    assert codes(client, kept) == ["PM102"]  # the buffer is still the truth


def _threads_in_watchfiles() -> list[int]:
    """Threads inside watchfiles' `RustNotify.watch` (awatch runs it in an anyio worker
    thread; being native code it has no Python frame of its own, so the worker's frames are
    searched for the bound method they are calling)."""
    import sys

    def calls_watch(frame) -> bool:
        while frame is not None:
            for value in list(frame.f_locals.values()):
                owner = getattr(value, "__self__", None)
                if getattr(value, "__name__", "") == "watch" and type(owner).__name__ == "RustNotify":
                    return True
            frame = frame.f_back
        return False

    return [tid for tid, frame in sys._current_frames().items() if calls_watch(frame)]


async def _until(condition, what: str, timeout: float = 60.0) -> None:
    """Wait for `condition()` on the loop; a generous bound, reported, never a speed goal."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.02)


async def test_shutdown_stops_the_watchers(tmp_path: Path):
    from pmem_lsp.engine.settings import Settings
    from pmem_lsp.server.app import create_server
    from pmem_lsp.server.watcher import stop_all, watch_root

    root_path = write_root(tmp_path / "memory", base_files())
    server = create_server()
    root = server.host.add_root(root_path, Settings())
    watch_root(server, root)
    # Watching for real first (else "no thread is inside watchfiles" below would prove nothing).
    await _until(lambda: _threads_in_watchfiles() != [], "the watcher to start")
    (_stop, task), = server.watchers.values()
    await stop_all(server)
    assert server.watchers == {}
    await _until(task.done, "the watcher's task to end")
    assert [t for t in asyncio.all_tasks() if t.get_coro().__qualname__ == "_watch"] == []
    # No thread stays inside watchfiles (anyio may keep an idle pool thread, which is fine).
    await _until(lambda: _threads_in_watchfiles() == [], "the watcher's thread to leave watchfiles")


# A scan shows progress once it has taken PROGRESS_AFTER (0.5 s); how long 2,500 files take
# depends on the machine (a quiet one with the native core scans them in less), so this
# server shows it for any scan.
PROGRESS_SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "pmem_lsp"],
                                     server_env={**os.environ, "PMEM_PROGRESS_AFTER": "0"})


@pytest_lsp.fixture(config=PROGRESS_SERVER)
async def progress_client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def test_a_long_first_scan_reports_work_done_progress(progress_client: LanguageClient, tmp_path: Path):
    client = progress_client
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from generate_root import generate

    root = generate(tmp_path / "big", 2500)
    await start(client, root)

    def kinds() -> list[str | None]:
        return [getattr(v, "kind", None) for reports in client.progress_reports.values() for v in reports]

    # The scan reports its start, and its end once it is done (the end follows the install,
    # in the same step as the first publication).
    await _until(lambda: "end" in kinds(), "the scan's progress to end")
    assert kinds()[0] == "begin" and kinds()[-1] == "end", client.progress_reports
    await wait_for(client, lambda: codes(client, root / "_index.md") != [], timeout=60)
