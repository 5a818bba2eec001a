"""Document links and go to definition: routes, relative links and record locations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import definition, document_links
from . import convert
from .nav_common import after_first_scan, locate

if TYPE_CHECKING:
    from .app import PmemServer


def links(ls: PmemServer, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return []
    root, state, rel = found
    text_caps = ls.client_capabilities.text_document
    link_caps = text_caps.document_link if text_caps is not None else None
    tooltips = bool(link_caps is not None and link_caps.tooltip_support)
    at = convert.positions(ls, state, rel)
    return [convert.document_link(at, root, d, tooltips) for d in document_links(state, rel)]


def goto(ls: PmemServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return None
    root, state, rel = found
    target = definition(state, rel, *convert.positions(ls, state, rel).from_client(params.position))
    return convert.line_location(root, target.path, target.line) if target is not None else None


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_LINK, lsp.DocumentLinkOptions(resolve_provider=False))
    @after_first_scan
    def on_document_link(ls: PmemServer, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
        return links(ls, params)

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    @after_first_scan
    def on_definition(ls: PmemServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        return goto(ls, params)
