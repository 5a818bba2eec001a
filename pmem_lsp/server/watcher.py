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
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.host import MemoryRoot

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


_UNDECODABLE = re.compile(r'Unable to decode path "(.*)" to string', re.S)
_RUST_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u\{[0-9A-Fa-f]+\}|[tnr0\\\"'])")
_SIMPLE = {"t": b"\t", "n": b"\n", "r": b"\r", "0": b"\0", "\\": b"\\", '"': b'"', "'": b"'"}


def undecodable_path(exc: BaseException) -> str | None:
    """The path named by watchfiles' "Unable to decode path" error (raised for a name that is
    not UTF-8, inside an exception group), as the file system's bytes decoded the way Python
    names such files; None when `exc` is no such error. The path is written in Rust's debug
    form: `\\xNN` for a byte, `\\u{…}` and `\\n`-style escapes for characters."""
    group = getattr(exc, "exceptions", None)  # an exception group (anyio's task group raises one)
    if isinstance(group, (list, tuple)):
        for inner in group:
            found = undecodable_path(inner)
            if found is not None:
                return found
        return None
    m = _UNDECODABLE.search(str(exc))
    if m is None:
        return None
    out = bytearray()
    pos = 0
    text = m.group(1)
    for esc in _RUST_ESCAPE.finditer(text):
        out += text[pos:esc.start()].encode("utf-8")
        code = esc.group(1)
        if code[0] == "x" and len(code) == 3:
            out.append(int(code[1:], 16))
        elif code[0] == "u":
            out += chr(int(code[2:-1], 16)).encode("utf-8")
        else:
            out += _SIMPLE[code]
        pos = esc.end()
    out += text[pos:].encode("utf-8")
    return os.fsdecode(bytes(out))


async def _watch(server: PmemServer, root: MemoryRoot, stop: asyncio.Event) -> None:
    from watchfiles import awatch  # imported here: the first response does not wait for it

    base = root.path
    reread: Path | None = None  # a folder to read again once a restarted watcher watches
    while not stop.is_set():
        try:
            batches = awatch(base, watch_filter=lambda _change, path: _visible(base, path),
                             debounce=DEBOUNCE_MS, step=10, stop_event=stop,
                             ignore_permission_denied=True).__aiter__()
            first = asyncio.ensure_future(batches.__anext__())
            if reread is not None:
                # The new watcher's first step sets up its watches before it waits; a change made
                # while there was none (since the error) is found by reading the folder after it.
                await asyncio.sleep(0)
                server.host.disk_changed(reread)
                server.publisher.refresh(root)
                reread = None
            changes = await first
            while True:
                for _change, path in changes:
                    server.host.disk_changed(Path(path))
                server.publisher.refresh(root)
                changes = await batches.__anext__()
        except StopAsyncIteration:
            return
        except FileNotFoundError:
            log.warning("pmem: stopped watching %s: it no longer exists", base)
            return
        except Exception as exc:  # watching is a convenience: a failure must not take the server down
            bad = undecodable_path(exc)
            if bad is None:
                log.exception("pmem: watching %s failed", base)
                return
            # watchfiles gives up on a batch holding a name that is not UTF-8 (and stops): the
            # folder that holds it is read again (so that file and its neighbours are current),
            # now and once the next watcher watches, and watching goes on. Other changes of the
            # same 20 ms batch elsewhere in the root are read at their next change
            # (docs/decisions.md, "Any name, any output").
            log.info("pmem: a file name in %s is not UTF-8; reading its folder again", base)
            folder = Path(bad).parent
            reread = folder if folder != base else Path(bad)
            server.host.disk_changed(reread)
            server.publisher.refresh(root)
            await asyncio.sleep(0.01)  # never a busy loop, whatever happens


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
