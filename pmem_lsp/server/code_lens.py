"""Code lenses on each active file's first line — routed or not, references, last change —
listed for free and resolved lazily (`codeLens/resolve`); and on any file of the root an agent
or another program changed since the last review, the history lenses (`changed by an agent 3
min ago · diff · undo · keep`), resolved already, from the cached review state
(history_commands.py: no git call here)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ..engine.navigation import lens_kinds, lens_title
from . import history_commands
from .convert import history_code_lens
from .nav_common import after_first_scan, locate

if TYPE_CHECKING:
    from .app import PmemServer

_LINE_0 = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))


def lenses(ls: PmemServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
    found = locate(ls, params.text_document.uri)
    if found is None:
        return []
    root, state, rel = found
    uri = params.text_document.uri
    changed = [history_code_lens(lens) for lens in history_commands.lenses_for(ls, root, rel)]
    # The ordinary lenses first, always at the same places, the history ones after them. VS Code
    # (1.139, CodeLensWidget.updateCommands) applies the answers of resolves still in flight to
    # a newer answer's lenses of the same line *by index*: with the history lenses first, the
    # three resolved ordinary lenses of the answer before an outside write overwrote the
    # commands of "changed by … · diff · undo" (docs/decisions.md, "Ordinary lenses first").
    # With history lenses the line comes resolved whole: resolved later, the ordinary lenses'
    # titles appear to the left of "diff · undo · keep" and push them right under the pointer
    # that was about to click one (the e2e "history" step clicked beside "diff").
    return [lsp.CodeLens(range=_LINE_0, data={"uri": uri, "kind": kind},
                         command=_titled(lens_title(state, rel, kind)) if changed else None)
            for kind in lens_kinds(state, rel)] + changed


def resolve(ls: PmemServer, lens: lsp.CodeLens) -> lsp.CodeLens:
    data: Any = lens.data
    title = None
    if isinstance(data, dict) and isinstance(data.get("uri"), str):
        found = locate(ls, data["uri"])
        if found is not None:
            _root, state, rel = found
            title = lens_title(state, rel, str(data.get("kind")))
    lens.command = _titled(title)
    return lens


def _titled(title: str | None) -> lsp.Command:
    """An ordinary lens's command: its title only (clicking it does nothing)."""
    return lsp.Command(title=title or "", command="")


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=True))
    @after_first_scan
    def on_code_lens(ls: PmemServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        return lenses(ls, params)

    @server.feature(lsp.CODE_LENS_RESOLVE)
    def on_code_lens_resolve(ls: PmemServer, lens: lsp.CodeLens) -> lsp.CodeLens:
        return resolve(ls, lens)
