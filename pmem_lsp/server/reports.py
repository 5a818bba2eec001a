"""`pmem.status` and `pmem.health`: the CLI's reports, returned and shown (docs/design.md §5).

Each returns `{"text": <the report as text>, …the report's data…}` and shows the text with
`window/showMessage`. Health items carry the command that would carry them out
(`pmem.archive` with `{"path", "reason"}`, `pmem.purge` with `{"path"}`) — the same commands
the code actions run, which confirm before they change anything. Neither report changes a
file. The optional argument is `{"root": "/abs/path", "show": false}`: `root` only when several
roots are open; `show: false` when the caller displays the report itself (the editor plugins
do: a multi-line `window/showMessage` is a toast squashed into one line in VS Code, and a
hit-enter prompt in Neovim).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict

from ..engine.health_proposal import health_report
from ..engine.status_report import memory_status
from .commands import command_args, scanned_root, session_root

if TYPE_CHECKING:
    from .app import PmemServer

SCAN_WAIT = 60.0  # seconds a report waits for the root's first scan


class ReportArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    root: str | None = None
    show: bool = True  # False: the caller shows the returned text itself


def _parse(name: str, args: tuple[Any, ...]) -> ReportArgs:
    return command_args(ReportArgs, name, args, '{"root": "/path/to/memory"}')


def _show(ls: PmemServer, text: str) -> None:
    ls.show(lsp.MessageType.Info, text.rstrip("\n"))


async def status(ls: PmemServer, args: tuple[Any, ...]) -> dict[str, Any]:
    parsed = _parse("status", args)
    root = await session_root(ls, "status", parsed.root)
    report = await asyncio.to_thread(memory_status, root.path, root.settings.excluded)
    text = report.text()
    if parsed.show:
        _show(ls, text)
    return {"text": text, **report.as_dict()}


async def health(ls: PmemServer, args: tuple[Any, ...]) -> dict[str, Any]:
    parsed = _parse("health", args)
    root = await scanned_root(ls, "health", parsed.root, SCAN_WAIT)
    view = ls.publisher.catch_up(root, settle=True)  # up to date with the buffers, near-duplicates included
    assert root.analysis is not None
    report = health_report(root.analysis, view.current)
    text = report.text()
    if parsed.show:
        _show(ls, text)
    return {"text": text, **report.as_dict(editor=True)}


def register(server: PmemServer) -> None:
    # No annotations on the handlers: pygls reads them to type the arguments.
    @server.command("pmem.status")
    async def on_status(ls, *args):
        return await status(ls, args)

    @server.command("pmem.health")
    async def on_health(ls, *args):
        return await health(ls, args)
