"""Hover: the file a route, link or record points to; the route of a file's title (docs/design.md §5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import hover as engine_hover
from . import convert
from .nav_common import after_first_scan, locate

if TYPE_CHECKING:
    from .app import PmemServer


def hover(ls: PmemServer, params: lsp.HoverParams) -> lsp.Hover | None:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return None
    root, state, rel = found
    at = convert.positions(ls, state, rel)
    result = engine_hover(state, rel, *at.from_client(params.position), ls.publisher.view(root).shown)
    return convert.hover(at, result) if result is not None else None


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    @after_first_scan
    def on_hover(ls: PmemServer, params: lsp.HoverParams) -> lsp.Hover | None:
        return hover(ls, params)
