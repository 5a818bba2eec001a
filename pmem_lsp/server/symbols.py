"""Document symbols (headings, the Summary marked, routes in `_index.md`) and workspace
symbols (files by title and headings across every root, fuzzy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import document_symbols, workspace_symbols
from ..engine.navigation.symbol_tree import WORKSPACE_LIMIT
from . import convert
from .nav_common import after_first_scan, locate

if TYPE_CHECKING:
    from .app import PmemServer


def doc_symbols(ls: PmemServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return []
    _root, state, rel = found
    at = convert.positions(ls, state, rel)
    return [convert.document_symbol(at, sym) for sym in document_symbols(state, rel)]


def ws_symbols(ls: PmemServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.WorkspaceSymbol]:
    out: list[lsp.WorkspaceSymbol] = []
    for root in ls.host.roots:
        if root.state is None or len(out) >= WORKSPACE_LIMIT:
            continue
        out += [convert.workspace_symbol(root, sym)
                for sym in workspace_symbols(root.state, params.query, WORKSPACE_LIMIT - len(out))]
    return out


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @after_first_scan
    def on_document_symbol(ls: PmemServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        return doc_symbols(ls, params)

    @server.feature(lsp.WORKSPACE_SYMBOL)
    @after_first_scan
    def on_workspace_symbol(ls: PmemServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.WorkspaceSymbol]:
        return ws_symbols(ls, params)
