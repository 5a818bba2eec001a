"""Document symbols (headings, the Summary marked, routes in `_index.md`) and workspace
symbols (files by title and headings across every root, fuzzy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import DocSymbol, document_symbols, workspace_symbols
from ..engine.navigation.symbols import FILE, ROUTE, SECTION, SUMMARY, TITLE, WORKSPACE_LIMIT
from .nav_common import after_first_scan, client_range, locate, uri_of

if TYPE_CHECKING:
    from .app import PmemServer

KINDS = {TITLE: lsp.SymbolKind.Namespace, SECTION: lsp.SymbolKind.String, SUMMARY: lsp.SymbolKind.Key,
         ROUTE: lsp.SymbolKind.File, FILE: lsp.SymbolKind.File}


def _convert(ls: PmemServer, snap, rel: str, sym: DocSymbol) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(
        name=sym.name, kind=KINDS[sym.kind], detail=sym.detail or None,
        range=client_range(ls, snap, rel, sym.line, 0, sym.end_line, sym.end_col),
        selection_range=client_range(ls, snap, rel, sym.line, sym.sel_start, sym.line, sym.sel_end),
        children=[_convert(ls, snap, rel, child) for child in sym.children] or None)


def doc_symbols(ls: PmemServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return []
    _root, snap, rel = found
    return [_convert(ls, snap, rel, sym) for sym in document_symbols(snap, rel)]


def ws_symbols(ls: PmemServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.WorkspaceSymbol]:
    out: list[lsp.WorkspaceSymbol] = []
    for root in ls.host.roots:
        if root.snapshot is None or len(out) >= WORKSPACE_LIMIT:
            continue
        for sym in workspace_symbols(root.snapshot, params.query, WORKSPACE_LIMIT - len(out)):
            at = lsp.Position(line=sym.line, character=0)
            out.append(lsp.WorkspaceSymbol(
                name=sym.name, kind=KINDS[sym.kind], container_name=sym.container or None,
                location=lsp.Location(uri=uri_of(root, sym.path), range=lsp.Range(start=at, end=at))))
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
