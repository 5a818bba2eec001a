"""Carry a confirmed lifecycle plan out through the editor (DESIGN §5, §8).

Two steps: first the move (a `RenameFile` with `overwrite: false`), and only once the file is
seen at its destination on disk, the index edits (`TextDocumentEdit`s). The index edits are
computed when they are sent, from what each index holds at that moment (the editor's buffer
with its version when it is open, else the disk): an agent's lines written meanwhile are kept,
and a changed route line or record stops the operation (`WriteText.rebase`, one rule for the
CLI and the server). Before anything moves, the same check runs on every index. Clients answer
`applied: true` even when they skipped a rename (Neovim), so after every step the server
looks at the disk and reports what really happened. Folders — which a workspace edit cannot
create — are made by the server itself, and only folders. A client that cannot rename files
through workspace edits gets the same plan applied by the engine's filesystem applier.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.host import MemoryRoot
from ..engine.lifecycle.fs_applier import ApplyError, apply_plan, apply_step, describe, read_for_rewrite
from ..engine.lifecycle.plan import MakeDir, Move, Plan, Remove, WriteText
from ..engine.lifecycle.safety import Refusal, require_free, require_source
from .convert import open_document, path_to_uri

if TYPE_CHECKING:
    from .app import PmemServer

DISK_WAIT = 3.0  # seconds to wait for a client's rename to reach the disk
OWN_MOVE_GRACE = 30.0  # seconds a lifecycle move stays recognised as the server's own


@dataclass
class Outcome:
    applied: bool
    message: str
    done: list[str] = field(default_factory=list)
    via: str = "editor"  # "editor" (workspace edits) or "server" (filesystem applier)

    def as_result(self) -> dict:
        return {"applied": self.applied, "message": self.message, "done": self.done, "via": self.via}


def client_can_move(ls: PmemServer, plan: Plan) -> bool:
    """Gate on resourceOperations, not on documentChanges: Neovim applies documentChanges
    without advertising them (DESIGN §8)."""
    caps = ls.client_capabilities.workspace
    edit = caps.workspace_edit if caps is not None else None
    if caps is None or not caps.apply_edit or edit is None:
        return False
    ops = {str(getattr(o, "value", o)) for o in (edit.resource_operations or [])}
    needed = set()
    for step in plan.steps:
        if isinstance(step, Move):
            needed.add("rename")
        elif isinstance(step, Remove):
            needed.add("delete")
        elif isinstance(step, WriteText) and step.before is None:
            needed.add("create")
    return needed <= ops


async def _wait_for(check, timeout: float = DISK_WAIT) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if check():
            return True
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)


def _position(text: str, offset: int, codec, lines: list[str]) -> lsp.Position:
    line = text.count("\n", 0, offset)  # the engine splits on \n; \r stays at line ends
    start = text.rfind("\n", 0, offset) + 1
    return codec.position_to_client_units(lines, lsp.Position(line=line, character=offset - start))


def current_text(ls: PmemServer, root: MemoryRoot, rel: str) -> tuple[str | None, int | None]:
    """What `rel` holds now and the version of that text: the editor's buffer when it is open,
    else the disk, read strictly (an index pmem cannot decode exactly is never rewritten)."""
    doc = open_document(ls.workspace, path_to_uri(root.path / rel))
    if doc is not None:
        return doc.source, doc.version
    buffer = ls.host.buffers.get(root.path / rel)
    if buffer is not None:
        return buffer, None
    return read_for_rewrite(root.path / rel)[0], None


def text_edit_for(ls: PmemServer, root: MemoryRoot, step: WriteText, version: int | None = None) -> list:
    """The workspace-edit parts for one text change, against `step.before` (which is the text
    of `version` when the document is open)."""
    uri = path_to_uri(root.path / step.path)
    codec = ls.workspace.position_codec
    if step.before is None:
        return [
            lsp.CreateFile(uri=uri, options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=False)),
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[lsp.TextEdit(range=lsp.Range(start=lsp.Position(line=0, character=0),
                                                    end=lsp.Position(line=0, character=0)), new_text=step.after)],
            ),
        ]
    splice = step.splice
    lines = step.before.split("\n")
    rng = lsp.Range(start=_position(step.before, splice.start, codec, lines),
                    end=_position(step.before, splice.end, codec, lines))
    return [lsp.TextDocumentEdit(
        text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=[lsp.TextEdit(range=rng, new_text=splice.new)],
    )]


async def _apply(ls: PmemServer, label: str, changes: list) -> lsp.ApplyWorkspaceEditResult | None:
    return await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(
        edit=lsp.WorkspaceEdit(document_changes=changes), label=label))


async def apply_through_client(ls: PmemServer, root: MemoryRoot, plan: Plan) -> Outcome:
    base = root.path
    done: list[str] = []

    def failed(message: str) -> Outcome:
        tail = f" (already done: {'; '.join(done)}; `pmem check` shows what is left)" if done else "; nothing was changed"
        return Outcome(False, message + tail, done)

    # Before anything changes: every index write still applies to what the index holds now.
    for step in plan.writes():
        try:
            step.rebase(current_text(ls, root, step.path)[0])
        except Refusal as exc:
            return failed(exc.message)
        except OSError as exc:
            return failed(f"cannot read {step.path}: {exc.strerror or exc}")

    # Folders first, by the server: the only thing it writes itself on this path.
    for step in plan.steps:
        if isinstance(step, MakeDir):
            try:
                apply_step(base, step)
            except (Refusal, OSError) as exc:
                return failed(f"could not create {step.path}/: {exc}")
            done.append(describe(step))

    # Step 1: moves and removals, each confirmed on disk before anything else happens.
    for step in plan.steps:
        if isinstance(step, Move):
            try:
                require_source(base, step.source)
                require_free(base, step.destination)
                (base / step.destination).parent.mkdir(parents=True, exist_ok=True)
            except (Refusal, OSError) as exc:
                return failed(str(exc))
            own = (base / step.source, base / step.destination)
            ls.own_moves.add(own)
            try:
                # VS Code asks willRenameFiles while it applies this edit (DESIGN §8).
                await _apply(ls, f"pmem: {plan.action.lower()} {plan.target}", [lsp.RenameFile(
                    old_uri=path_to_uri(base / step.source), new_uri=path_to_uri(base / step.destination),
                    options=lsp.RenameFileOptions(overwrite=False, ignore_if_exists=False))])
            finally:
                # Forgotten a little later (clients may notify just after answering), so that a
                # later manual move of the same path is treated as the user's.
                asyncio.get_running_loop().call_later(OWN_MOVE_GRACE, ls.own_moves.discard, own)
            moved = await _wait_for(lambda: os.path.lexists(base / step.destination)
                                    and not os.path.lexists(base / step.source))
            if not moved:
                return failed(f"the editor did not move {step.source} to {step.destination} "
                              "(it may have refused because the destination exists)")
            done.append(describe(step))
        elif isinstance(step, Remove):
            await _apply(ls, f"pmem: {plan.action.lower()} {step.path}", [lsp.DeleteFile(
                uri=path_to_uri(base / step.path),
                options=lsp.DeleteFileOptions(recursive=False, ignore_if_not_exists=False))])
            if not await _wait_for(lambda: not os.path.lexists(base / step.path)):
                return failed(f"the editor did not delete {step.path}")
            done.append(describe(step))
    for rel in plan.touched():
        ls.host.disk_changed(base / rel)

    # Step 2: the index edits, in one workspace edit, computed from what the indexes hold now.
    writes = plan.writes()
    if writes:
        changes: list = []
        for step in writes:
            try:
                current, version = current_text(ls, root, step.path)
                rebased = step.rebase(current)
            except Refusal as exc:
                return failed(exc.message)
            except OSError as exc:
                return failed(f"cannot read {step.path}: {exc.strerror or exc}")
            if rebased.after != current:
                changes += text_edit_for(ls, root, rebased, version)
        result = await _apply(ls, f"pmem: {plan.action.lower()} — update the indexes", changes) if changes else \
            lsp.ApplyWorkspaceEditResult(applied=True)
        if result is None or not result.applied:
            reason = result.failure_reason if result is not None else "no answer"
            return failed(f"the editor did not apply the index edits ({reason})")
        done += [describe(s) for s in writes]
        for step in writes:
            ls.host.disk_changed(base / step.path)  # an open buffer stays the truth
    return Outcome(True, f"{plan.done[:1].upper()}{plan.done[1:]}. Save _index.md and _archive/_index.md "
                         "if your editor left them unsaved.", done)


def apply_on_disk(ls: PmemServer, root: MemoryRoot, plan: Plan) -> Outcome:
    """Fallback for clients without resource operations: the engine's filesystem applier."""
    try:
        done = apply_plan(root.path, plan)
    except ApplyError as exc:
        return Outcome(False, exc.message, list(exc.done), via="server")
    for rel in plan.touched():
        ls.host.disk_changed(root.path / rel)
    return Outcome(True, f"{plan.done[:1].upper()}{plan.done[1:]}. Your editor cannot move files through the "
                         "language server, so pmem applied the change on disk; reload open index files.",
                   done, via="server")
