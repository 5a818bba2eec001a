"""References to a file: every route and relative link that points to it, across the root."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import references
from .nav_common import after_first_scan, client_range, engine_position, locate, uri_of

if TYPE_CHECKING:
    from .app import PmemServer


def find_references(ls: PmemServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return []
    root, snap, rel = found
    line, char = engine_position(ls, snap, rel, params.position)
    return [lsp.Location(uri=uri_of(root, loc.path),
                         range=client_range(ls, snap, loc.path, loc.line, loc.start, loc.line, loc.end))
            for loc in references(snap, rel, line, char, params.context.include_declaration)]


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    @after_first_scan
    def on_references(ls: PmemServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        return find_references(ls, params)
