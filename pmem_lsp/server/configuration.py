"""Settings changes from the editor: re-resolve each root's settings and rescan."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from .roots import configure_roots, editor_settings, fetch_configuration, scan_all

if TYPE_CHECKING:
    from .app import PmemServer


def register(server: PmemServer) -> None:
    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: PmemServer, params: lsp.DidChangeConfigurationParams) -> None:
        pushed = editor_settings(params.settings)
        if pushed:
            ls.editor_settings = pushed
        await fetch_configuration(ls)
        configure_roots(ls, ls.folders)
        ls.background(scan_all(ls))
