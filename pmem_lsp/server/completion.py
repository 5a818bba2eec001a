"""Path completion in `_index.md` (files without a route first) and inside Markdown links."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import complete
from . import convert
from .nav_common import after_first_scan, locate

if TYPE_CHECKING:
    from .app import PmemServer

TRIGGERS = ["(", "/", "["]


def _snippets(ls: PmemServer) -> bool:
    doc = ls.client_capabilities.text_document
    item = doc.completion.completion_item if doc is not None and doc.completion is not None else None
    return bool(item is not None and item.snippet_support)


def completion(ls: PmemServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return None
    root, state, rel = found
    at = convert.positions(ls, state, rel)
    line, char = at.from_client(params.position)
    result = complete(state, rel, line, char, ls.publisher.view(root).shown)
    if result is None:
        return None
    snippets = _snippets(ls)
    ranges: dict[tuple[int, int], lsp.Range] = {}
    items = []
    for c in result.items:
        rng = ranges.get((c.start, c.end))
        if rng is None:
            rng = ranges[(c.start, c.end)] = at.range(line, c.start, line, c.end)
        items.append(convert.completion_item(c, rng, snippets))
    return lsp.CompletionList(is_incomplete=result.incomplete, items=items)


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=TRIGGERS))
    @after_first_scan
    def on_completion(ls: PmemServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        return completion(ls, params)
