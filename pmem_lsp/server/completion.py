"""Path completion in `_index.md` (files without a route first) and inside Markdown links."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.navigation import complete
from ..engine.navigation.completion import FOLDER
from .nav_common import after_first_scan, client_range, engine_position, locate, published

if TYPE_CHECKING:
    from .app import PmemServer

TRIGGERS = ["(", "/", "["]


def completion(ls: PmemServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return None
    root, snap, rel = found
    line, char = engine_position(ls, snap, rel, params.position)
    result = complete(snap, rel, line, char, published(ls, root))
    if result is None:
        return None
    items = []
    ranges: dict[tuple[int, int], lsp.Range] = {}
    for c in result.items:
        rng = ranges.get((c.start, c.end))
        if rng is None:
            rng = ranges[(c.start, c.end)] = client_range(ls, snap, rel, line, c.start, line, c.end)
        items.append(lsp.CompletionItem(
            label=c.label,
            kind=lsp.CompletionItemKind.Folder if c.kind == FOLDER else lsp.CompletionItemKind.File,
            detail=c.detail,
            documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=c.documentation)
            if c.documentation else None,
            sort_text=c.sort_text,
            filter_text=c.filter_text,
            text_edit=lsp.TextEdit(range=rng, new_text=c.new_text),
        ))
    return lsp.CompletionList(is_incomplete=result.incomplete, items=items)


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=TRIGGERS))
    @after_first_scan
    def on_completion(ls: PmemServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        return completion(ls, params)
