"""Settings and workspace-folder changes: re-resolve each root's settings and rescan."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from .convert import uri_to_path
from .roots import configure_roots, editor_settings, fetch_configuration, scan_all

if TYPE_CHECKING:
    from .app import PmemServer


def register(server: PmemServer) -> None:
    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: PmemServer, params: lsp.DidChangeConfigurationParams) -> None:
        pushed = editor_settings(params.settings)
        if pushed:
            ls.editor_settings = {**ls.init_settings, **pushed}
        await fetch_configuration(ls)
        configure_roots(ls, ls.folders)
        ls.background(scan_all(ls))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(ls: PmemServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            path = uri_to_path(folder.uri)
            if path is None:
                continue
            ls.folders = [f for f in ls.folders if f != path]
        for folder in params.event.added:
            path = uri_to_path(folder.uri)
            if path is not None and path not in ls.folders:
                ls.folders.append(path)
        configure_roots(ls, ls.folders)
        ls.background(scan_all(ls))
