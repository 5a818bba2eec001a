"""Hover: the file a route, link or record points to; the route of a file's title (DESIGN §5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import hover as engine_hover
from .nav_common import after_first_scan, client_range, engine_position, locate, published

if TYPE_CHECKING:
    from .app import PmemServer


def hover(ls: PmemServer, params: lsp.HoverParams) -> lsp.Hover | None:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return None
    root, snap, rel = found
    line, char = engine_position(ls, snap, rel, params.position)
    result = engine_hover(snap, rel, line, char, published(ls, root))
    if result is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=result.markdown),
                     range=client_range(ls, snap, rel, result.line, result.start, result.line, result.end))


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    @after_first_scan
    def on_hover(ls: PmemServer, params: lsp.HoverParams) -> lsp.Hover | None:
        return hover(ls, params)
