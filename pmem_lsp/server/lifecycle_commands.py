"""`pmem.upgrade|archive|delete|recover|purge` (the registry's editor operations,
engine/lifecycle/registry.py): validate, confirm through
`window/showMessageRequest`, validate again under the root's lock, apply (docs/design.md §5, §5.1).

Malformed arguments get invalid params (-32602); a well-formed request that the safety
contract refuses gets RequestFailed (-32803) with the reason, also shown to the user
(`commands.py`). Either way nothing changes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict
from pygls.exceptions import JsonRpcInvalidParams

from ..engine.host import MemoryRoot
from ..engine.lifecycle.execute import Confirmed
from ..engine.lifecycle.operations import LifecycleContext, disk_reader, make_plan
from ..engine.lifecycle.preview import Request
from ..engine.lifecycle.registry import BY_NAME, Safety, Surface, names_on
from ..engine.lifecycle.safety import Refusal
from ..engine.redaction import redact_text
from . import history_commands
from .commands import command_args, refuse, session_root
from .lifecycle_applier import carry_out, refuse_unsaved, unsaved_in

if TYPE_CHECKING:
    from .app import PmemServer

OPERATIONS = names_on(Surface.EDITOR)
CANCEL = "Cancel"


class LifecycleArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)
    path: str | None = None
    reason: str | None = None
    root: str | None = None  # which root, when the session has several (absolute path)
    add_route: bool = False  # recover: add the proposed route for a file archived with none


def parse_args(op: str, args: tuple[Any, ...]) -> LifecycleArgs:
    parsed = command_args(LifecycleArgs, op, args, '{"path": "projects/a.md"}')
    if BY_NAME[op].takes_path and parsed.path is None:
        raise JsonRpcInvalidParams(message=f'pmem.{op} needs "path", relative to the memory root')
    if parsed.add_route and not BY_NAME[op].add_route:
        takers = ", ".join(f"pmem.{name}" for name in OPERATIONS if BY_NAME[name].add_route)
        raise JsonRpcInvalidParams(message=f'"add_route" is for {takers}, not pmem.{op}')
    return parsed


def server_context(ls: PmemServer, root: MemoryRoot) -> LifecycleContext:
    """Plans read the disk: it is what agents read and what the change is made on
    (docs/design.md §5.1). A file the plan touches with unsaved edits in the editor stops it (`run`).
    The session's scanned state tells the preview which links a move breaks, without a rescan."""
    return LifecycleContext(root.path, dt.date.today(), disk_reader(root.path),
                            state=root.state, dialect=root.settings.dialect)


def _plans(ls: PmemServer, root: MemoryRoot, op: str, args: LifecycleArgs) -> bool:
    try:
        make_plan(server_context(ls, root), op, args.path, args.reason, add_route=args.add_route)
        return True
    except Refusal:
        return False


async def run(ls: PmemServer, op: str, args: tuple[Any, ...]) -> dict:
    parsed = parse_args(op, args)
    root = await session_root(ls, op, parsed.root, fits=lambda r: _plans(ls, r, op, parsed))
    try:
        plan = make_plan(server_context(ls, root), op, parsed.path, parsed.reason, add_route=parsed.add_route)
        unsaved = unsaved_in(ls, root, plan)
        if unsaved:
            raise refuse_unsaved(unsaved)
    except Refusal as exc:
        raise refuse(ls, exc.message) from None
    if plan.empty:
        ls.show(lsp.MessageType.Info, f"pmem: {plan.preview}")
        return {"applied": False, "message": plan.preview, "done": []}

    # The button is the plan's own word, which the registry names for every operation (a test
    # holds them equal); what cannot be undone is asked as a warning.
    permanent = BY_NAME[op].safety is Safety.REMOVES_PERMANENTLY
    choice = await ls.window_show_message_request_async(lsp.ShowMessageRequestParams(
        type=lsp.MessageType.Warning if permanent else lsp.MessageType.Info,
        message=redact_text(plan.preview),  # masked by the plan already; redacted as everywhere
        actions=[lsp.MessageActionItem(title=plan.action), lsp.MessageActionItem(title=CANCEL)],
    ))
    if choice is None or choice.title != plan.action:
        return {"applied": False, "message": "cancelled; nothing was changed", "done": []}

    try:
        # The one door: the root's lock, the safety contract again on the disk of this moment
        # (and no unsaved edits among the files it touches), then the steps, undone on failure.
        confirmed = Confirmed(Request(op, parsed.path, parsed.reason, add_route=parsed.add_route), plan)
        outcome = await carry_out(ls, root, confirmed, server_context(ls, root))
    except Refusal as exc:
        raise refuse(ls, exc.message) from None
    ls.show(lsp.MessageType.Info if outcome.applied else lsp.MessageType.Error, f"pmem: {outcome.message}")
    ls.publisher.refresh(root)
    await history_commands.made_here(ls, root)  # the user's own action: no "changed by" lens for it
    return outcome.as_result()


def register(server: PmemServer) -> None:
    for op in OPERATIONS:
        def make(op: str) -> Callable[..., Awaitable[Any]]:
            async def handler(ls, *args):
                return await run(ls, op, args)
            return handler
        server.command(f"pmem.{op}")(make(op))

