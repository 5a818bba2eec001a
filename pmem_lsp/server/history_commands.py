"""History in the editor (docs/design.md §11): `pmem.history`, `pmem.diff`, `pmem.historyText`,
`pmem.undo`, `pmem.review.accept`, and the review state the history code lens is drawn from.

The lens must not slow typing, and reading the store runs git: so each root's review state
(engine/navigation/history_lens.py) is cached here and read again only when an entry may have
been recorded — when the watcher's changes settle (recorded first, as one entry: a burst is one
entry), after this session's own writes and reviews — never per keystroke. When it changed,
the client is asked to fetch the lenses again (`workspace/codeLens/refresh`).

Undo is a write like the lifecycle actions: previewed, confirmed through
`window/showMessageRequest`, then each file saved back through the engine's one door
(`execute`), exactly as `pmem undo` does; nothing is written without the user's yes.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import os
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict
from pygls.exceptions import JsonRpcInvalidParams

from ..cli.history import UsageError, _reverted, root_relative
from ..engine.history import review
from ..engine.history.git import HistoryOff
from ..engine.history.location import store_dir
from ..engine.history.recording import caught_up_store, history_disabled, record_quietly
from ..engine.history.store import HistoryStore, Writer, open_store
from ..engine.host import MemoryRoot
from ..engine.lifecycle.execute import Confirmed, execute
from ..engine.lifecycle.fs_applier import ApplyError
from ..engine.lifecycle.lock import RootLock
from ..engine.lifecycle.operations import context
from ..engine.lifecycle.preview import Preview, Request, preview
from ..engine.lifecycle.safety import Refusal
from ..engine.navigation.history_lens import HistoryLens, ReviewState, history_lenses, review_state
from ..engine.redaction import redact_text
from ..engine.root_state import read_regular_text as read_disk_text
from .commands import command_args, refuse, session_root
from .convert import path_to_uri, uri_to_path
from .lifecycle_applier import refuse_unsaved, unsaved_in

if TYPE_CHECKING:
    from .app import PmemServer

log = logging.getLogger(__name__)

HISTORY_SCHEME = "pmem-history"  # the VS Code extension serves these as read-only documents
SETTLE = 0.3  # seconds without a watcher batch before the changes are one entry
# A loaded machine can deliver a batch late: the burst settles only once its files have been
# quiet on disk for SETTLE too (by their mtime), waiting at most this many times SETTLE more.
SETTLE_WAITS = 20
LOCK_WAIT = 5.0  # a pmem write in progress: record after it, not half-way through it
UNDO, CANCEL = "Undo", "Cancel"


# -- the cached review state ---------------------------------------------------------------

@dataclass
class _RootReview:
    state: ReviewState | None = None
    own: set[str] = field(default_factory=set)  # entries this session wrote (its own undo, archive…)
    reading: asyncio.Task | None = None
    # The client asked for this root's lenses: only then is it asked to fetch them again (a
    # client that never shows lenses may not even answer `workspace/codeLens/refresh`).
    lenses_asked: bool = False
    settle: asyncio.TimerHandle | None = None
    writer: str = "editor"  # of the changes waiting to settle: "outside" as soon as one is not a save
    settling: set[Path] = field(default_factory=set)  # the paths of the changes waiting to settle
    # Reads of the state one at a time, in the order asked: a read begun before a review (keep)
    # and finished after it would otherwise put the unreviewed file, and its lens, back.
    reads: asyncio.Lock = field(default_factory=asyncio.Lock)


_REVIEWS: weakref.WeakKeyDictionary[Any, dict[Path, _RootReview]] = weakref.WeakKeyDictionary()


def _review(ls: PmemServer, root: MemoryRoot) -> _RootReview:
    return _REVIEWS.setdefault(ls, {}).setdefault(root.path, _RootReview())


def lenses_for(ls: PmemServer, root: MemoryRoot, rel: str) -> list[HistoryLens]:
    """The history lenses of `rel`, from the cache only. The first request of a root reads the
    store in the background (its lenses come with the refresh that follows)."""
    kept = _review(ls, root)
    kept.lenses_asked = True
    if kept.state is None and kept.reading is None and not history_disabled():
        # History starts here for a root that has none yet: its first entry is the baseline.
        _read_again(ls, root, record=Writer("outside", ""), title="changed outside pmem", start=True)
    return history_lenses(kept.state, rel)


def changes_settled(ls: PmemServer, root: MemoryRoot, paths: list[Path]) -> None:
    """The watcher saw `paths` change: once the burst settles, record it as one entry (the
    user's own saves as `editor`, anything else as `outside`) and read the review again."""
    kept = _review(ls, root)
    if not all(_saved_by_editor(ls, path) for path in paths):
        kept.writer = "outside"
    kept.settling.update(paths)
    if kept.settle is not None:
        kept.settle.cancel()
    loop = asyncio.get_running_loop()

    def settled(waits: int = 0) -> None:
        # The batch timer says the watcher has been quiet; the disk says whether the writer is:
        # a write whose batch is still on its way (a starved watcher thread) is part of this burst.
        quiet_for = _quiet_for(kept.settling)
        if quiet_for < SETTLE and waits < SETTLE_WAITS:
            kept.settle = loop.call_later(SETTLE - quiet_for, settled, waits + 1)
            return
        kept.settle = None
        kept.settling = set()
        writer, kept.writer = kept.writer, "editor"
        title = "saved in the editor" if writer == "editor" else "changed outside pmem"
        _read_again(ls, root, record=Writer(writer, ""), title=title)

    kept.settle = loop.call_later(SETTLE, settled)


def _quiet_for(paths: set[Path]) -> float:
    """Seconds since the newest of `paths` was written, by its mtime (a path gone, or dated in
    the future by a copy that kept its times, says nothing)."""
    now, newest = time.time(), None
    for path in paths:
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        if mtime <= now and (newest is None or mtime > newest):
            newest = mtime
    return SETTLE if newest is None else now - newest


def _saved_by_editor(ls: PmemServer, path: Path) -> bool:
    """An open buffer whose text is what the disk now holds: the editor wrote it. (An agent's
    write leaves an open buffer behind the disk until the editor reloads it.)"""
    buffer = ls.host.buffers.get(path)
    return buffer is not None and buffer.disk is not None and buffer.text == buffer.disk


def _read_again(ls: PmemServer, root: MemoryRoot, record: Writer | None = None, title: str = "",
                start: bool = False) -> None:
    """Read the review state again off the loop, after recording what changed (`record`). A root
    without a store yet is recorded only when `start`: the watcher of a session that never used
    history does not make a first entry (a 10k-file root's costs seconds of hashing)."""
    kept = _review(ls, root)

    async def read() -> None:
        await _read_in_turn(ls, kept, lambda: _record_and_read(root.path, record, title, frozenset(kept.own), start))

    task = asyncio.ensure_future(read())
    kept.reading = task
    task.add_done_callback(lambda _t: setattr(kept, "reading", None) if kept.reading is task else None)


async def _read_in_turn(ls: PmemServer, kept: _RootReview, read: Any, always: bool = False) -> ReviewState:
    """Run `read` (off the loop) after the reads asked before it, keep its state, and ask the
    client for the lenses again when the files with changes differ from the state it replaces
    (`always`: whatever they are)."""
    async with kept.reads:
        state: ReviewState = await asyncio.to_thread(read)
        old, kept.state = kept.state, state
    if kept.lenses_asked and (always or old is None or old.files != state.files):
        _refresh_lenses(ls)
    return state


def _record_and_read(root: Path, record: Writer | None, title: str, own: frozenset[str],
                     start: bool = False) -> ReviewState:
    if record is not None and not history_disabled() and (start or store_dir(root).is_dir()):
        lock = RootLock(root, wait=LOCK_WAIT)
        try:
            # Under the root's lock: a pmem write half-way through (the client moved a file, the
            # indexes are next) is not an entry of its own; once it is done there is nothing new.
            with lock:
                record_quietly(root, record, title)
        except Refusal:
            pass  # a long write holds the root: its own entry will say what changed
    return review_state(root, own)


def _refresh_lenses(ls: PmemServer) -> None:
    workspace = ls.client_capabilities.workspace
    lens_caps = workspace.code_lens if workspace is not None else None
    if lens_caps is not None and lens_caps.refresh_support:
        asked = ls.workspace_code_lens_refresh(None)
        # A client that fails it still shows the lenses when it next asks: nothing to tell the user.
        asked.add_done_callback(lambda done: done.cancelled() or done.exception())


async def made_here(ls: PmemServer, root: MemoryRoot) -> None:
    """This session just wrote through the one door: its entry is the user's own change (no lens)."""
    if history_disabled():
        return
    head = await asyncio.to_thread(_head, root.path)
    if head is not None:
        _review(ls, root).own.add(head)
    _read_again(ls, root)


def _head(root: Path) -> str | None:
    try:
        return open_store(root, create=False).head()
    except HistoryOff:
        return None


# -- arguments -----------------------------------------------------------------------------

class HistoryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str | None = None  # relative to the root, or absolute inside it
    root: str | None = None
    show: bool = True  # False: the caller shows the entries itself (the editor plugins do)


class DiffArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    entry: str | None = None  # default: the oldest unreviewed change of the file (what the lens shows)
    root: str | None = None


class TextArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    uri: str | None = None  # a `pmem-history:` URI, as `pmem.diff` made it
    path: str | None = None
    entry: str | None = None
    root: str | None = None


class UndoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entry: str | None = None  # default: the newest unreviewed change of the one path given
    paths: list[str] = []
    root: str | None = None


class AcceptArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entries: list[str] = []
    path: str | None = None  # every unreviewed entry that changed this file (the lens's "keep")
    all: bool = False
    root: str | None = None


def _rel(root: MemoryRoot, given: str) -> str:
    if given.startswith("file:"):
        path = uri_to_path(given)
        given = str(path) if path is not None else given
    try:
        return root_relative(root.path, given)
    except UsageError as exc:
        raise JsonRpcInvalidParams(message=str(exc)) from None


def _store(root: Path) -> HistoryStore:
    """The root's store, after recording what changed since its last entry (as `pmem history` does)."""
    return caught_up_store(root)


async def _in_store(ls: PmemServer, call: Any, *args: Any) -> Any:
    """Run a store call off the loop; why history is off, or a bad entry id, is a refusal."""
    try:
        return await asyncio.to_thread(call, *args)
    except HistoryOff as exc:
        raise refuse(ls, str(exc)) from None
    except (UsageError, ValueError) as exc:
        raise refuse(ls, str(exc)) from None


# -- pmem.history --------------------------------------------------------------------------

async def history(ls: PmemServer, args: tuple[Any, ...]) -> dict[str, Any]:
    parsed = command_args(HistoryArgs, "history", args, '{"path": "notes/a.md"}')
    root = await session_root(ls, "history", parsed.root)
    rel = _rel(root, parsed.path) if parsed.path else None

    def read() -> list[dict[str, Any]]:
        store = _store(root.path)
        unreviewed = {e.commit for e in review.unreviewed(store)}
        return [e.data() | {"reviewed": e.commit not in unreviewed} for e in store.entries(rel)]

    entries = await _in_store(ls, read)
    lines = []
    for entry in entries:
        writer = entry["writer"]
        who = writer["kind"] + (f" ({writer['detail']})" if writer["detail"] else "")
        mark = "" if entry["reviewed"] else "  [not reviewed]"
        files = ", ".join(f"{f['change']} {f['path']}" for f in entry["files"])
        lines.append(f"{entry['id']}  {entry['time']}  {who}: {entry['title']}{mark} — {files}")
    text = "\n".join(lines) if lines else "No entries" + (f" for {rel}." if rel else ".")
    if parsed.show:
        ls.show(lsp.MessageType.Info, text)
    return {"root": str(root.path), "path": rel, "entries": entries, "text": text}


# -- pmem.diff, pmem.historyText --------------------------------------------------------------

def history_uri(root: Path, rel: str, entry: str) -> str:
    """`pmem-history:/<rel>?<json>`: the file's name keeps its extension (the client colours
    it as Markdown); the query says which root and entry, read back by `pmem.historyText`."""
    query = json.dumps({"root": str(root), "path": rel, "entry": entry}, ensure_ascii=False)
    return f"{HISTORY_SCHEME}:/{quote(rel)}?{quote(query, safe='')}"


def _text_before(root: Path, rel: str, entry: str) -> tuple[str, str | None]:
    """The entry's full id and `rel` as it was just before it (None: it did not exist)."""
    store = _store(root)
    commit = store.resolve(entry)
    parent = store.parent_of(commit)
    data = store.text_at(parent, rel) if parent else None
    return commit, data.decode("utf-8", "replace") if data is not None else None


def _current_text(ls: PmemServer, path: Path) -> str | None:
    """The text the diff compares with: the open buffer while it holds unsaved edits, else the
    disk (an unmodified buffer is stale once an agent wrote the file: docs/design.md §5.1)."""
    buffer = ls.host.buffers.get(path)
    return buffer.text if buffer is not None and buffer.modified else read_disk_text(path)


async def diff(ls: PmemServer, args: tuple[Any, ...]) -> dict[str, Any]:
    parsed = command_args(DiffArgs, "diff", args, '{"path": "notes/a.md"}')
    root = await session_root(ls, "diff", parsed.root)
    rel = _rel(root, parsed.path)
    entry = parsed.entry
    if entry is None:
        state = _review(ls, root).state
        change = state.files.get(rel) if state is not None else None
        if change is None:
            def newest() -> str:
                found = _store(root.path).entries(rel)
                if not found:
                    raise UsageError(f"history holds no change of {rel}")
                return found[0].id
            entry = await _in_store(ls, newest)
        else:
            entry = change.first_id
    commit, old = await _in_store(ls, _text_before, root.path, rel, entry)
    current = _current_text(ls, root.path / rel)
    unified = "".join(difflib.unified_diff((old or "").splitlines(keepends=True),
                                           (current or "").splitlines(keepends=True),
                                           f"a/{rel} (before {commit[:12]})", f"b/{rel} (now)"))
    return {"path": rel, "entry": commit[:12], "title": f"{rel}: before {commit[:12]} ↔ now",
            "old": old, "current": current, "diff": unified,
            "oldUri": history_uri(root.path, rel, commit), "uri": path_to_uri(root.path / rel)}


async def history_text(ls: PmemServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """The text behind a `pmem-history:` URI (VS Code's content provider asks for it)."""
    parsed = command_args(TextArgs, "historyText", args, '{"uri": "pmem-history:/notes/a.md?…"}')
    if parsed.uri is not None:
        parts = urlsplit(parsed.uri)
        if parts.scheme != HISTORY_SCHEME:
            raise JsonRpcInvalidParams(message=f"pmem.historyText: not a {HISTORY_SCHEME}: URI")
        try:
            query = json.loads(unquote(parts.query))
            parsed = TextArgs(path=query["path"], entry=query["entry"], root=query.get("root"))
        except (ValueError, KeyError, TypeError):
            raise JsonRpcInvalidParams(message="pmem.historyText: the URI does not name an entry") from None
    if parsed.path is None or parsed.entry is None:
        raise JsonRpcInvalidParams(message='pmem.historyText needs "uri", or "path" and "entry"')
    root = await session_root(ls, "historyText", parsed.root)
    rel = _rel(root, parsed.path)
    _commit, old = await _in_store(ls, _text_before, root.path, rel, parsed.entry)
    return {"text": old or "", "exists": old is not None}


# -- pmem.undo -----------------------------------------------------------------------------

def _undo_previews(root: Path, entry: str, wanted: list[str]) -> tuple[str, list[Preview]]:
    """The saves that take `entry` back out of the files as they are now (cli/history.py's
    three-way merge), previewed; a conflict or a removal is refused with nothing changed."""
    store = _store(root)
    commit = store.resolve(entry)
    results = _reverted(root, store, commit, wanted)
    conflicts = [r for r in results if r.conflict]
    if conflicts:
        named = "; ".join(f"`{r.rel}`: {r.conflict}" for r in conflicts)
        raise UsageError(f"cannot undo entry {commit[:12]}: {named}; nothing was changed")
    removals = [r.rel for r in results if r.text is None and (root / r.rel).exists()]
    if removals:
        raise UsageError(f"undoing entry {commit[:12]} would remove {', '.join(f'`{r}`' for r in removals)}, "
                         "which pmem only does by archiving it; nothing was changed")
    requests = []
    for r in results:
        if r.text is None or ((root / r.rel).exists() and (root / r.rel).read_bytes() == r.text):
            continue
        try:
            text = r.text.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"`{r.rel}` is not UTF-8 text; nothing was changed") from None
        requests.append(Request("save", r.rel, f"undo {commit[:12]}", text, route=False))
    ctx = context(root)
    return commit, [preview(ctx, request, exact=True) for request in requests]


def _newest_unreviewed(root: Path, rel: str) -> str:
    store = _store(root)
    for entry in review.unreviewed(store):
        if entry.parent is not None and any(path == rel for path, _ in entry.files):
            return entry.commit
    raise UsageError(f"no unreviewed change of {rel} to undo (see pmem.history)")


async def undo(ls: PmemServer, args: tuple[Any, ...]) -> dict[str, Any]:
    parsed = command_args(UndoArgs, "undo", args, '{"entry": "1a2b3c4d5e6f"}')
    root = await session_root(ls, "undo", parsed.root)
    wanted = [_rel(root, p) for p in parsed.paths]
    entry = parsed.entry
    if entry is None:
        if len(wanted) != 1:
            raise JsonRpcInvalidParams(message='pmem.undo needs "entry", or one path in "paths" (its newest '
                                               'unreviewed change is undone)')
        entry = await _in_store(ls, _newest_unreviewed, root.path, wanted[0])
    try:
        commit, previews = await _in_store(ls, _undo_previews, root.path, entry, wanted)
    except Refusal as exc:
        raise refuse(ls, exc.message) from None
    if not previews:
        message = f"undo {commit[:12]}: nothing to change (the files are as before that entry)"
        ls.show(lsp.MessageType.Info, f"pmem: {message}")
        return {"applied": False, "message": message, "done": []}
    unsaved = [rel for shown in previews for rel in unsaved_in(ls, root, shown.plan)]
    if unsaved:
        raise refuse(ls, refuse_unsaved(unsaved).message)

    shown_text = f"Undo entry {commit[:12]}:\n" + "\n".join(p.plan.preview for p in previews)
    choice = await ls.window_show_message_request_async(lsp.ShowMessageRequestParams(
        type=lsp.MessageType.Info, message=redact_text(shown_text),
        actions=[lsp.MessageActionItem(title=UNDO), lsp.MessageActionItem(title=CANCEL)]))
    if choice is None or choice.title != UNDO:
        return {"applied": False, "message": "cancelled; nothing was changed", "done": []}

    done: list[str] = []
    for shown in previews:
        try:
            # The one door: the root's lock, the plan made again on the disk of this moment and
            # compared with what the user saw, the save, its history entry.
            plan, _steps = await asyncio.to_thread(execute, root.path, Confirmed(shown.request, shown.plan))
        except (ApplyError, Refusal) as exc:
            before = f" (applied before it: {', '.join(done)})" if done else ""
            await made_here(ls, root)
            ls.publisher.refresh(root)
            raise refuse(ls, f"{exc.message}{before}") from None
        done.append(plan.done or str(shown.request.path))
        await made_here(ls, root)
    message = f"undid entry {commit[:12]}: " + "; ".join(done)
    ls.show(lsp.MessageType.Info, f"pmem: {message}")
    ls.publisher.refresh(root)
    return {"applied": True, "message": message, "done": done}


# -- pmem.review.accept --------------------------------------------------------------------

async def accept(ls: PmemServer, args: tuple[Any, ...]) -> dict[str, Any]:
    parsed = command_args(AcceptArgs, "review.accept", args, '{"path": "notes/a.md"}')
    if not (parsed.all or parsed.entries or parsed.path):
        raise JsonRpcInvalidParams(message='pmem.review.accept needs "path", "entries" or "all": true')
    root = await session_root(ls, "review.accept", parsed.root)
    rel = _rel(root, parsed.path) if parsed.path else None
    own = frozenset(_review(ls, root).own)

    def mark() -> int:
        store = _store(root.path)
        if parsed.all:
            count = len(review.unreviewed(store))
            review.accept_all(store)
            return count
        commits = [store.resolve(given) for given in parsed.entries]
        if rel is not None:
            # What the lens showed: every unreviewed change of the file, whoever made it.
            commits += [e.commit for e in review.unreviewed(store) if rel in {p for p, _ in e.files}]
        review.accept(store, commits)
        return len(set(commits))

    count = await _in_store(ls, mark)
    state = await _read_in_turn(ls, _review(ls, root), lambda: review_state(root.path, own), always=True)
    return {"accepted": count, "unreviewed": sorted(state.files)}


def register(server: PmemServer) -> None:
    # No annotations on the handlers: pygls reads them to type the arguments.
    @server.command("pmem.history")
    async def on_history(ls, *args):
        return await history(ls, args)

    @server.command("pmem.diff")
    async def on_diff(ls, *args):
        return await diff(ls, args)

    @server.command("pmem.historyText")
    async def on_history_text(ls, *args):
        return await history_text(ls, args)

    @server.command("pmem.undo")
    async def on_undo(ls, *args):
        return await undo(ls, args)

    @server.command("pmem.review.accept")
    async def on_accept(ls, *args):
        return await accept(ls, args)



