"""Watch each root for changes made outside the editor (agents write memory files too).

watchfiles runs in the server's asyncio loop, batches events (it debounces bursts), skips
hidden folders, and hands each changed path to the host; the analysis then re-checks only
what the change touches. A file open in the editor with unsaved edits keeps its buffer
(the root state ignores disk events for it until the buffer is saved or closed); any other
open file follows the disk. Watching starts before a root's scan (what changes while the
scan runs is read again when it lands, `MemoryHost.install`) and stops on shutdown or when
the root is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.host import MemoryRoot
from .diagnostics import refresh_root

if TYPE_CHECKING:
    from .app import PmemServer

log = logging.getLogger(__name__)
DEBOUNCE_MS = 20  # watchfiles groups a burst of events arriving within this window


def _visible(root: Path, path: str) -> bool:
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return False
    return not any(part.startswith(".") for part in parts)


async def _watch(server: PmemServer, root: MemoryRoot, stop: asyncio.Event) -> None:
    from watchfiles import awatch  # imported here: the first response does not wait for it

    base = root.path
    try:
        async for changes in awatch(base, watch_filter=lambda _change, path: _visible(base, path),
                                    debounce=DEBOUNCE_MS, step=10, stop_event=stop,
                                    ignore_permission_denied=True):
            for _change, path in changes:
                server.host.disk_changed(Path(path))
            refresh_root(server, root)
    except FileNotFoundError:
        log.warning("pmem: stopped watching %s: it no longer exists", base)
    except Exception:  # watching is a convenience: a failure must not take the server down
        log.exception("pmem: watching %s failed", base)


def watch_root(server: PmemServer, root: MemoryRoot) -> None:
    if root.path in server.watchers:
        return
    stop = asyncio.Event()
    task = asyncio.ensure_future(_watch(server, root, stop))
    server.watchers[root.path] = (stop, task)


def stop_watching(server: PmemServer, root: MemoryRoot) -> None:
    entry = server.watchers.pop(root.path, None)
    if entry is not None:
        stop, task = entry
        stop.set()
        task.cancel()


async def stop_all(server: PmemServer) -> None:
    entries = list(server.watchers.values())
    server.watchers.clear()
    for stop, _task in entries:
        stop.set()
    for _stop, task in entries:
        try:
            await asyncio.wait_for(task, timeout=2)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            task.cancel()
