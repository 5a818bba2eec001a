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
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine import names
from ..engine.host import MemoryRoot
from ..engine.root_state import stat_sig
from . import history_commands

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


class _Catalogue:
    """What the watcher last saw of the root's folders: each folder's `lstat` signature with
    the folders and files it held. A folder whose signature is unchanged holds the same names
    (adding, removing or renaming an entry moves its mtime), so the catch-up walk after a lost
    batch lists only folders that changed: listing a folder whose name is not UTF-8 fails
    watchfiles' next batch again, and a walk that listed it every time would never end."""

    def __init__(self) -> None:
        self.folders: dict[str, tuple[bytes, list[str], list[str]]] = {}

    def names(self, folder: Path, rel: str) -> tuple[list[str], list[str]] | None:
        """The visible sub-folders and files of `folder`, listed only if it changed; None
        when it cannot be read (gone, or unlistable: the root state's own refresh says so)."""
        try:
            sig = stat_sig(os.lstat(folder))
        except OSError:
            self.folders.pop(rel, None)
            return None
        known = self.folders.get(rel)
        if known is not None and known[0] == sig:
            return known[1], known[2]
        subfolders: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(folder) as listing:
                for item in listing:
                    if item.name.startswith("."):
                        continue
                    (subfolders if item.is_dir(follow_symlinks=False) else files).append(item.name)
        except OSError:
            self.folders.pop(rel, None)
            return None
        self.folders[rel] = (sig, subfolders, files)
        return subfolders, files


def changed_by_stat(root: MemoryRoot, catalogue: _Catalogue) -> list[Path]:
    """The paths of `root` that differ from its root state, found by `lstat` alone (nothing is
    opened: opening a file whose name is not UTF-8 fails watchfiles' next batch): files new,
    gone or with another signature, folders new or gone. What a lost batch held is among them.
    Files the state keeps without a signature (buffers, unreadable files) are compared by
    presence only; excluded paths are skipped, as the scan skips them."""
    state = root.state
    if state is None:
        return []
    base = root.path
    changed: list[Path] = []
    seen_files: set[str] = set()
    seen_folders: set[str] = set()
    walked: set[str] = set()  # the folders listed (or known unchanged) in this walk
    pending = [""]
    while pending:
        rel = pending.pop()
        found = catalogue.names(base / rel if rel else base, rel)
        if found is None:
            continue
        subfolders, files = found
        walked.add(rel)
        for name in subfolders:
            sub = f"{rel}/{name}" if rel else name
            if state.settings.excluded(sub):
                continue
            seen_folders.add(sub)
            if sub in state.dirs:
                pending.append(sub)
            elif sub not in state.linked_dirs:
                changed.append(base / sub)  # new: the state's refresh reads what it holds
        for name in files:
            file = f"{rel}/{name}" if rel else name
            if file in state.excluded or state.settings.excluded(file):
                continue
            seen_files.add(file)
            entry = state.files.get(file)
            if entry is None:
                if file not in state.dirs and file not in state.linked_dirs:
                    changed.append(base / file)
                continue
            if entry.sig is None:
                continue
            try:
                st = os.lstat(base / file)
                if stat.S_ISLNK(st.st_mode):
                    st = os.stat(base / file)  # a link's entry is signed through the link
            except OSError:
                changed.append(base / file)
                continue
            if stat_sig(st) != entry.sig:
                changed.append(base / file)
    # Gone: what the state holds under a folder that was listed and is not there any more.
    for gone in sorted(state.dirs - seen_folders):
        if gone and gone.rpartition("/")[0] in walked and not state.unseen(gone):
            changed.append(base / gone)
    for gone, entry in state.files.items():
        if (gone not in seen_files and gone.rpartition("/")[0] in walked
                and not entry.from_buffer and not state.unseen(gone)):
            changed.append(base / gone)
    return changed


async def _catch_up(server: PmemServer, root: MemoryRoot, catalogue: _Catalogue) -> None:
    """After a lost batch: once the root is scanned, read again what changed, by `lstat`."""
    await server.scan_event(root).wait()
    for path in changed_by_stat(root, catalogue):
        server.host.disk_changed(path)
    server.publisher.refresh(root)


async def _watch(server: PmemServer, root: MemoryRoot, stop: asyncio.Event) -> None:
    from watchfiles import awatch  # imported here: the first response does not wait for it

    base = root.path
    catalogue = _Catalogue()
    lost_batch = False  # a batch failed: the root is compared with its state once watching again
    while not stop.is_set():
        try:
            batches = awatch(base, watch_filter=lambda _change, path: _visible(base, path),
                             debounce=DEBOUNCE_MS, step=10, stop_event=stop,
                             ignore_permission_denied=True).__aiter__()
            first = asyncio.ensure_future(batches.__anext__())
            if lost_batch:
                # The new watcher's first step sets up its watches before it waits; a change made
                # while there was none (since the error) is found by the walk after it.
                await asyncio.sleep(0)
                await _catch_up(server, root, catalogue)
                lost_batch = False
            changes = await first
            while True:
                for _change, path in changes:
                    server.host.disk_changed(Path(path))
                server.publisher.refresh(root)
                # History: the burst becomes one entry once it settles, and the lens follows.
                history_commands.changes_settled(server, root, [Path(path) for _change, path in changes])
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
            # watchfiles fails (and stops) on a batch naming a path that is not UTF-8 — even a
            # file or folder that was only opened or listed (the scan reading it) — and the
            # batch's other changes are lost. So the watcher restarts and then compares the
            # whole root with its state by `lstat`, opening only what changed (re-reading
            # the odd file's folder each time opened the odd file again and looped for ever:
            # issue 40; docs/decisions.md, "Any name, any output").
            server.log(f"pmem: watching again after a file name that is not UTF-8 in {names.shown(str(base))}")
            lost_batch = True
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
