"""Carry a confirmed lifecycle plan out, complete on disk when the command ends (docs/design.md §5.1).

Agents read the disk, so the indexes are written on disk by the server, every time, in every
client: never left as unsaved buffers for the user to save (Neovim and a bare client leave
`workspace/applyEdit` text edits unsaved, VS Code leaves them as dirty tabs when autosave is
off). Before anything moves, a file the plan touches whose buffer holds the user's unsaved
edits stops the operation: it is never saved behind their back, nor overwritten.

The server has no applier of its own: it goes through the engine's one door
(`engine/lifecycle/execute.py`), in a worker thread so that the loop keeps serving, with two
hooks that run on the loop:

- the guard, under the root's lock on the plan made again from the disk: no file it touches
  has unsaved edits in the editor;
- the mover: moves go through the editor (`RenameFile`), so its open tabs follow the file, and
  each is confirmed on disk (clients answer `applied: true` even when they skipped one) —
  except a move onto a path the editor has open without a file there (an empty buffer never
  written), which Neovim refuses, and the server makes. The move keeps the file's modification
  time (Neovim rewrites a loaded buffer's file when it renames it, which would make an old note
  look fresh to PM501). A client that cannot rename files gets its moves made on disk.

Folders, removals (set aside, then deleted) and index writes are the engine's; a step that fails
puts back what was done, moves back through the editor too. Afterwards the client is told which
open documents changed on disk (`pmem/filesChanged`), so that it can reload them, and where the
moved ones went (`moved`: `[{"from", "to"}]`); VS Code
reloads unmodified editors by itself.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as lsp

from ..engine.folders import make_folders
from ..engine.host import MemoryRoot
from ..engine.lifecycle.consequences import prune_emptied
from ..engine.lifecycle.execute import Confirmed, execute
from ..engine.lifecycle.fs_applier import ApplyError, apply_step
from ..engine.lifecycle.operations import LifecycleContext
from ..engine.lifecycle.plan import Move, Plan
from ..engine.lifecycle.safety import Refusal, require_free, require_source
from .convert import path_to_uri

if TYPE_CHECKING:
    from .app import PmemServer

DISK_WAIT = 3.0  # seconds to wait for a client's rename to reach the disk
OWN_MOVE_GRACE = 30.0  # seconds a lifecycle move stays recognised as the server's own
EDITOR_WAIT = 60.0  # seconds a step waits for the editor to answer before it counts as failed
T = TypeVar("T")
FILES_CHANGED = "pmem/filesChanged"  # notification: open documents changed on disk, reload them


@dataclass
class Outcome:
    applied: bool
    message: str
    done: list[str] = field(default_factory=list)
    via: str = "editor"  # "editor" (the client moved the files) or "server" (the server did)

    def as_result(self) -> dict:
        return {"applied": self.applied, "message": self.message, "done": self.done, "via": self.via}


def client_can_move(ls: PmemServer, plan: Plan) -> bool:
    """Gate on resourceOperations, not on documentChanges: Neovim applies documentChanges
    without advertising them (docs/design.md §8)."""
    caps = ls.client_capabilities.workspace
    edit = caps.workspace_edit if caps is not None else None
    if caps is None or not caps.apply_edit or edit is None:
        return False
    ops = {str(getattr(o, "value", o)) for o in (edit.resource_operations or [])}
    return "rename" in ops or not plan.moves()


def unsaved_in(ls: PmemServer, root: MemoryRoot, plan: Plan) -> list[str]:
    """The files the plan touches whose editor buffer holds unsaved edits, the disk under each
    read again first (`sync_buffer`: the editor may have saved or reloaded it just now)."""
    for rel in plan.touched():
        ls.host.sync_buffer(root.path / rel)
    return [rel for rel in plan.touched() if ls.host.unsaved(root.path / rel)]


def refuse_unsaved(rels: list[str]) -> Refusal:
    names = " and ".join(f"`{rel}`" for rel in rels)
    return Refusal("unsaved-edits", f"{names} {'has' if len(rels) == 1 else 'have'} unsaved changes in the editor; "
                                    "save or discard them, then try again (pmem never saves them for you, nor "
                                    "overwrites them); nothing was changed")


async def _wait_for(check: Callable[[], bool], timeout: float = DISK_WAIT) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if check():
            return True
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)


async def _apply(ls: PmemServer, label: str, changes: list) -> lsp.ApplyWorkspaceEditResult | None:
    return await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(
        edit=lsp.WorkspaceEdit(document_changes=changes), label=label))


def _keep_mtime(path: Path, st: os.stat_result) -> None:
    """Give the moved file back the modification time it had before the move."""
    try:
        now = os.stat(path)
        if now.st_mtime_ns != st.st_mtime_ns:
            os.utime(path, ns=(now.st_atime_ns, st.st_mtime_ns))
    except OSError:
        pass  # a time not kept is not worth failing a move that happened


async def _move_through_client(ls: PmemServer, root: MemoryRoot, plan: Plan, step: Move) -> str | None:
    """Ask the editor to move one file; None when it is on disk at its destination, else why not."""
    base = root.path
    source, dest = base / step.source, base / step.destination
    try:
        require_source(base, step.source)
        require_free(base, step.destination)
        make_folders(dest.parent)
        before = os.stat(source)
    except (Refusal, OSError) as exc:
        return str(exc)
    own = (source, dest)
    ls.own_moves.add(own)
    try:
        # VS Code asks willRenameFiles while it applies this edit (docs/design.md §8).
        await _apply(ls, f"pmem: {plan.action.lower()} {plan.target}", [lsp.RenameFile(
            old_uri=path_to_uri(source), new_uri=path_to_uri(dest),
            options=lsp.RenameFileOptions(overwrite=False, ignore_if_exists=False))])
    finally:
        # Forgotten a little later (clients may notify just after answering), so that a
        # later manual move of the same path is treated as the user's.
        asyncio.get_running_loop().call_later(OWN_MOVE_GRACE, ls.own_moves.discard, own)
    if not await _wait_for(lambda: os.path.lexists(dest) and not os.path.lexists(source)):
        return (f"the editor did not move {step.source} to {step.destination} "
                "(it may have refused because the destination exists)")
    _keep_mtime(dest, before)
    prune_emptied(base, step.source)  # a recover or delete leaves no empty folder in `_archive/`
    return None


async def _move(ls: PmemServer, root: MemoryRoot, plan: Plan, step: Move) -> None:
    """One move of `plan` (or of its undo), on the loop: through the editor, or by the server
    onto a path the editor has open without a file there (Neovim refuses a rename onto a
    loaded buffer; the editor reloads that buffer, `pmem/filesChanged`)."""
    if root.path / step.destination in ls.host.buffers:
        apply_step(root.path, step)
        return
    why = await _move_through_client(ls, root, plan, step)
    if why is not None:
        raise Refusal("editor", why)


async def carry_out(ls: PmemServer, root: MemoryRoot, confirmed: Confirmed, ctx: LifecycleContext) -> Outcome:
    """Carry out what the user confirmed through the engine's one door, and tell the host and the
    client what changed on disk. Raises a Refusal when nothing was changed."""
    loop = asyncio.get_running_loop()
    via_editor = client_can_move(ls, confirmed.plan)

    def on_loop(coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(EDITOR_WAIT)

    async def unsaved(plan: Plan) -> list[str]:
        return unsaved_in(ls, root, plan)

    def guard(plan: Plan) -> None:
        found = on_loop(unsaved(plan))
        if found:
            raise refuse_unsaved(found)

    def move(base: Path, step: Move) -> None:
        on_loop(_move(ls, root, confirmed.plan, step))

    try:
        plan, done = await asyncio.to_thread(execute, root.path, confirmed, ctx=ctx, guard=guard,
                                             move=move if via_editor else None)
        outcome = Outcome(True, f"{plan.done[:1].upper()}{plan.done[1:]}.", done)
    except ApplyError as exc:
        plan, outcome = confirmed.plan, Outcome(False, exc.message, list(exc.done))
    outcome.via = "editor" if via_editor and plan.moves() else "server"
    changed = [root.path / rel for rel in plan.touched()]
    for path in changed:
        ls.host.disk_changed(path)
    reopen = [path_to_uri(p) for p in changed if p in ls.host.buffers]
    if reopen:
        ls.protocol.notify(FILES_CHANGED, {"uris": reopen, "moved": moved_open(ls, root, plan)})
    return outcome


def moved_open(ls: PmemServer, root: MemoryRoot, plan: Plan) -> list[dict[str, str]]:
    """The moves of `plan` that happened, from a file open in the editor: where its buffer's
    file went, for clients whose buffer stays at the old path (the server moved the file, as
    for eglot): they follow it there instead of writing it back on the next save."""
    out = []
    for move in plan.moves():
        source, dest = root.path / move.source, root.path / move.destination
        if source in ls.host.buffers and os.path.lexists(dest) and not os.path.lexists(source):
            out.append({"from": path_to_uri(source), "to": path_to_uri(dest)})
    return out
