"""`pmem.upgrade|archive|delete|recover|purge`: validate, confirm through
`window/showMessageRequest`, validate again, apply (DESIGN §5).

Malformed arguments get invalid params (-32602); a well-formed request that the safety
contract refuses gets RequestFailed (-32803) with the reason, also shown to the user.
Either way nothing changes.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..engine.host import MemoryRoot
from ..engine.lifecycle.operations import LifecycleContext, disk_reader, make_plan, replan
from ..engine.lifecycle.safety import Refusal
from ..engine.redaction import redact_text
from .diagnostics import refresh_root
from .lifecycle_applier import carry_out, refuse_unsaved, root_lock, unsaved_in

if TYPE_CHECKING:
    from .app import PmemServer

log = logging.getLogger(__name__)
REQUEST_FAILED = -32803
OPERATIONS = ("upgrade", "archive", "delete", "recover", "purge")
CANCEL = "Cancel"


class LifecycleArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)
    path: str | None = None
    reason: str | None = None
    root: str | None = None  # which root, when the session has several (absolute path)


M = TypeVar("M", bound=BaseModel)


def command_args(model: type[M], command: str, args: tuple[Any, ...], example: str) -> M:
    """The one argument object of `pmem.<command>` (none, or null, is `{}`), validated; a
    malformed one is invalid params (-32602), naming what is wrong."""
    if len(args) > 1:
        raise JsonRpcInvalidParams(message=f"pmem.{command} takes one argument object, got {len(args)} arguments")
    raw = args[0] if args and args[0] is not None else {}
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(message=f"pmem.{command} takes an object like {example}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'argument'}: {e['msg']}" for e in exc.errors())
        raise JsonRpcInvalidParams(message=f"pmem.{command}: {problems}") from None


def parse_args(op: str, args: tuple[Any, ...]) -> LifecycleArgs:
    parsed = command_args(LifecycleArgs, op, args, '{"path": "projects/a.md"}')
    if op != "upgrade" and parsed.path is None:
        raise JsonRpcInvalidParams(message=f'pmem.{op} needs "path", relative to the memory root')
    return parsed


def server_context(ls: PmemServer, root: MemoryRoot) -> LifecycleContext:
    """Plans read the disk: it is what agents read and what the change is made on (DESIGN
    §5.1). A file the plan touches with unsaved edits in the editor stops it (`run`)."""
    return LifecycleContext(root.path, dt.date.today(), disk_reader(root.path))


def refuse(ls: PmemServer, message: str) -> JsonRpcException:
    message = redact_text(message)  # it can repeat the path it refuses, and a path can be a secret
    ls.show(lsp.MessageType.Error, f"pmem: {message}")
    return JsonRpcException(message=message, code=REQUEST_FAILED)


async def session_root(ls: PmemServer, command: str, wanted: str | None,
                       fits: Callable[[MemoryRoot], bool] | None = None) -> MemoryRoot:
    """The root `pmem.<command>` acts on: the one named by `wanted` (an absolute path), else
    the only one open, else the only one where `fits` says the command makes sense."""
    try:
        await asyncio.wait_for(ls.roots_ready.wait(), timeout=10)
    except asyncio.TimeoutError:
        raise refuse(ls, "the server is not initialised yet") from None
    roots = ls.host.roots
    if wanted is not None:
        for root in roots:
            if wanted in (str(root.path), str(root.resolved)):
                return root
        raise refuse(ls, f"{wanted} is not one of the memory roots of this session")
    if not roots:
        raise refuse(ls, "no memory root is open (a folder with _index.md, _core/ or _archive/)")
    if len(roots) == 1:
        return roots[0]
    fitting = [root for root in roots if fits is not None and fits(root)]
    if len(fitting) == 1:
        return fitting[0]
    raise refuse(ls, f'several memory roots are open; pass "root" to pmem.{command}')


def _plans(ls: PmemServer, root: MemoryRoot, op: str, args: LifecycleArgs) -> bool:
    try:
        make_plan(server_context(ls, root), op, args.path, args.reason)
        return True
    except Refusal:
        return False


async def run(ls: PmemServer, op: str, args: tuple[Any, ...]) -> dict:
    parsed = parse_args(op, args)
    root = await session_root(ls, op, parsed.root, fits=lambda r: _plans(ls, r, op, parsed))
    try:
        plan = make_plan(server_context(ls, root), op, parsed.path, parsed.reason)
        unsaved = unsaved_in(ls, root, plan)
        if unsaved:
            raise refuse_unsaved(unsaved)
    except Refusal as exc:
        raise refuse(ls, exc.message) from None
    if plan.empty:
        ls.show(lsp.MessageType.Info, f"pmem: {plan.preview}")
        return {"applied": False, "message": plan.preview, "done": []}

    choice = await ls.window_show_message_request_async(lsp.ShowMessageRequestParams(
        type=lsp.MessageType.Warning if op == "purge" else lsp.MessageType.Info,
        message=redact_text(plan.preview),  # masked by the plan already; redacted as everywhere
        actions=[lsp.MessageActionItem(title=plan.action), lsp.MessageActionItem(title=CANCEL)],
    ))
    if choice is None or choice.title != plan.action:
        return {"applied": False, "message": "cancelled; nothing was changed", "done": []}

    try:
        async with root_lock(root.path):
            # The safety contract again, on the disk of this moment, with the root locked.
            plan = replan(server_context(ls, root), plan, parsed.path, parsed.reason)
            unsaved = unsaved_in(ls, root, plan)
            if unsaved:
                raise refuse_unsaved(unsaved)
            outcome = await carry_out(ls, root, plan)
    except Refusal as exc:
        raise refuse(ls, exc.message) from None
    ls.show(lsp.MessageType.Info if outcome.applied else lsp.MessageType.Error, f"pmem: {outcome.message}")
    refresh_root(ls, root)
    return outcome.as_result()


def register(server: PmemServer) -> None:
    for op in OPERATIONS:
        def make(op: str):
            async def handler(ls, *args):
                return await run(ls, op, args)
            return handler
        server.command(f"pmem.{op}")(make(op))

