"""What every `pmem.*` command shares: its one argument object, the root it acts on, and how it
refuses (docs/design.md §5).

Malformed arguments get invalid params (-32602), naming what is wrong; a well-formed request
that cannot be carried out gets RequestFailed (-32803) with the reason, also shown to the user.
Either way nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types as lsp
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from ..engine.host import MemoryRoot
from ..engine.redaction import redact_text

if TYPE_CHECKING:
    from .app import PmemServer

REQUEST_FAILED = -32803
ROOTS_WAIT = 10.0  # seconds a command waits for the session's roots to be known

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


def refuse(ls: PmemServer, message: str) -> JsonRpcException:
    """The error to raise for a refused command, after showing the reason to the user."""
    message = redact_text(message)  # it can repeat the path it refuses, and a path can be a secret
    ls.show(lsp.MessageType.Error, f"pmem: {message}")
    return JsonRpcException(message=message, code=REQUEST_FAILED)


async def session_root(ls: PmemServer, command: str, wanted: str | None,
                       fits: Callable[[MemoryRoot], bool] | None = None) -> MemoryRoot:
    """The root `pmem.<command>` acts on: the one named by `wanted` (an absolute path), else
    the only one open, else the only one where `fits` says the command makes sense."""
    if not await ls.roots_known(ROOTS_WAIT):
        raise refuse(ls, "the server is not initialised yet")
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


async def scanned_root(ls: PmemServer, command: str, wanted: str | None, wait: float) -> MemoryRoot:
    """`session_root`, once its first scan has landed (refused if it takes longer than `wait`)."""
    root = await session_root(ls, command, wanted)
    if not await ls.scanned(root, wait):
        raise refuse(ls, f"{root.path} is still being scanned; try again in a moment")
    return root
