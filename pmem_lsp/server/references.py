"""References to a file: every route and relative link that points to it, across the root."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import references
from . import convert
from .nav_common import after_first_scan, locate

if TYPE_CHECKING:
    from .app import PmemServer


def find_references(ls: PmemServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return []
    root, state, rel = found
    line, char = convert.positions(ls, state, rel).from_client(params.position)
    return [convert.location(ls, root, loc)
            for loc in references(state, rel, line, char, params.context.include_declaration)]


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    @after_first_scan
    def on_references(ls: PmemServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        return find_references(ls, params)
