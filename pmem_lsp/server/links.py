"""Document links and go to definition: routes, relative links and record locations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import definition, document_links
from .nav_common import after_first_scan, client_range, engine_position, locate, uri_of

if TYPE_CHECKING:
    from .app import PmemServer


def links(ls: PmemServer, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return []
    root, snap, rel = found
    text_caps = ls.client_capabilities.text_document
    link_caps = text_caps.document_link if text_caps is not None else None
    tooltips = bool(link_caps is not None and link_caps.tooltip_support)
    return [lsp.DocumentLink(range=client_range(ls, snap, rel, d.line, d.start, d.line, d.end),
                             target=uri_of(root, d.target), tooltip=d.tooltip if tooltips else None)
            for d in document_links(snap, rel)]


def goto(ls: PmemServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return None
    root, snap, rel = found
    line, char = engine_position(ls, snap, rel, params.position)
    target = definition(snap, rel, line, char)
    if target is None:
        return None
    at = lsp.Position(line=target.line, character=0)
    return lsp.Location(uri=uri_of(root, target.path), range=lsp.Range(start=at, end=at))


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_LINK, lsp.DocumentLinkOptions(resolve_provider=False))
    @after_first_scan
    def on_document_link(ls: PmemServer, params: lsp.DocumentLinkParams) -> list[lsp.DocumentLink]:
        return links(ls, params)

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    @after_first_scan
    def on_definition(ls: PmemServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        return goto(ls, params)
