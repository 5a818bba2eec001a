"""`pmem.addRoute` (docs/design.md §5): route an active file in `_index.md`, by path.

The same edit as the PM202 quick fix (`engine.rules.routes.route_fix`), for key bindings and
plugins that act on a file rather than on a diagnostic. The argument is
`{"path": "<relative path>", "root": "/abs/path"}` (`root` only when several roots are open).
It is a text edit, so it is applied through `workspace/applyEdit` like any quick fix: the
editor shows it and it can be undone there. A path the safety contract refuses, a file that
is routed already or is not an active Markdown file, gets -32803 with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict

from ..engine.lifecycle.safety import Refusal, validate_target
from ..engine.rules.routes import route_fix
from .commands import command_args, refuse, scanned_root
from .convert import workspace_edit
from .nav_common import FIRST_SCAN_WAIT

if TYPE_CHECKING:
    from .app import PmemServer


class AddRouteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    root: str | None = None


def _parse(args: tuple[Any, ...]) -> AddRouteArgs:
    return command_args(AddRouteArgs, "addRoute", args, '{"path": "notes/x.md"}')


async def add_route(ls: PmemServer, args: tuple[Any, ...]) -> dict[str, Any]:
    parsed = _parse(args)
    root = await scanned_root(ls, "addRoute", parsed.root, FIRST_SCAN_WAIT)
    try:
        rel = validate_target(root.path, parsed.path)
    except Refusal as exc:
        raise refuse(ls, exc.message) from None
    assert root.state is not None  # scanned_root waited for the first scan
    fix = route_fix(root.state, rel)
    if fix is None:
        raise refuse(ls, f"`{rel}` is routed already, or is not an active Markdown file in the root")
    result = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(
        edit=workspace_edit(ls, root, fix.edits), label=fix.title))
    return {"applied": bool(result and result.applied)}


def register(server: PmemServer) -> None:
    # No annotations on the handler: pygls reads them to type the arguments.
    @server.command("pmem.addRoute")
    async def on_add_route(ls, *args):
        return await add_route(ls, args)
