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


def _snippets(ls: PmemServer) -> bool:
    doc = ls.client_capabilities.text_document
    item = doc.completion.completion_item if doc is not None and doc.completion is not None else None
    return bool(item is not None and item.snippet_support)


def _snippet_text(text: str) -> str:
    """Plain text as a snippet that inserts exactly it: `\\`, `$` and `}` escaped."""
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


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
    # Neovim's built-in completion inserts a plain-text edit only up to its first space (DESIGN
    # §8): a whole route line (`[Wine](notes/wine.md) — …`) goes as a snippet, where it can.
    snippets = _snippets(ls)
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
            **_insertion(c.new_text, rng, snippets),
        ))
    return lsp.CompletionList(is_incomplete=result.incomplete, items=items)


def _insertion(text: str, rng: lsp.Range, snippets: bool) -> dict:
    if snippets and any(ch.isspace() for ch in text):
        return {"text_edit": lsp.TextEdit(range=rng, new_text=_snippet_text(text)),
                "insert_text_format": lsp.InsertTextFormat.Snippet}
    return {"text_edit": lsp.TextEdit(range=rng, new_text=text)}


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=TRIGGERS))
    @after_first_scan
    def on_completion(ls: PmemServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        return completion(ls, params)
