"""Engine data to LSP and back, in one place (rust-analyzer's to_proto/from_proto).

The engine speaks in root-relative paths, 0-based lines and Python character offsets into the
text it holds for a file; the client speaks in URIs and positions counted in its negotiated
encoding (UTF-8 for Neovim, UTF-16 for VS Code). Lines are the engine's own
(`engine/line_index.py`: LF, CRLF, lone CR), for the text the engine analysed — the buffer
while it holds unsaved edits, else the disk, which is what the client shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types as lsp

from ..engine.actions import Action
from ..engine.catalogue import RULES, severity_of
from ..engine.findings import Finding, Severity
from ..engine.fixes import Fix, TextEdit
from ..engine.host import MemoryRoot
from ..engine.line_index import LineIndex, client_column, client_lines, engine_column, strip_bom
from ..engine.names import clean
from ..engine.navigation import Completion, DocLink, DocSymbol, HoverText, Location, WorkspaceSymbol
from ..engine.navigation.history_lens import HistoryLens
from ..engine.navigation.path_completion import FOLDER
from ..engine.navigation.symbol_tree import FILE, ROUTE, SECTION, SUMMARY, TITLE
from ..engine.root_state import RootState
from .session import path_to_uri
from .session import uri_to_path as uri_to_path  # the feature modules import it from here

if TYPE_CHECKING:
    from .app import PmemServer

SOURCE = "pmem"
LIFECYCLE_KIND = lsp.CodeActionKind.Refactor + ".pmem"  # refactor.pmem.<op>: Ctrl+. shows it

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFORMATION: lsp.DiagnosticSeverity.Information,
    Severity.HINT: lsp.DiagnosticSeverity.Hint,
}
_SYMBOL_KINDS = {TITLE: lsp.SymbolKind.Namespace, SECTION: lsp.SymbolKind.String, SUMMARY: lsp.SymbolKind.Key,
                 ROUTE: lsp.SymbolKind.File, FILE: lsp.SymbolKind.File}


# -- files ------------------------------------------------------------------------------
def uri_of(root: MemoryRoot, rel: str) -> str:
    return path_to_uri(root.path / rel)


def open_document(workspace: Any, uri: str) -> Any:
    """The editor's document for `uri` if it is open, else None. pygls keys documents by the
    unquoted uri, and `path_to_uri` quotes (a space or an `é` in a name would miss it)."""
    return workspace.text_documents.get(unquote(uri))


def analysed_version(ls: PmemServer, state: RootState | None, rel: str, uri: str) -> int | None:
    """The open document's version when the findings of `rel` were made from exactly its text
    (a buffer the root state holds), else None: a file not open, or one analysed from the disk
    (a stale unmodified buffer) or only up to the size cap. Clients may drop diagnostics of an
    older version, and tests can tell a stale analysis from the latest."""
    doc = open_document(ls.workspace, uri)
    entry = state.files.get(rel) if state is not None else None
    if doc is None or entry is None or not entry.from_buffer or entry.text != strip_bom(doc.source)[0]:
        return None
    return doc.version


# -- positions --------------------------------------------------------------------------
class Positions:
    """Positions of one file: engine (line, character) ↔ the client's units. `bom`: the
    client's buffer begins with a BOM that the engine's text lacks (`MemoryHost.client_bom`),
    so its line 0 is one character longer."""

    def __init__(self, ls: PmemServer, index: LineIndex | Sequence[str] | None, bom: bool = False) -> None:
        self.codec = ls.workspace.position_codec
        lines = index.lines if isinstance(index, LineIndex) else index if index is not None else []
        self.bom = bom
        self.lines = client_lines(lines, bom)

    def to_client(self, line: int, col: int) -> lsp.Position:
        position = lsp.Position(line=max(0, line), character=client_column(line, max(0, col), self.bom))
        if 0 <= line < len(self.lines):  # past the text (a capped file): as it is
            position = self.codec.position_to_client_units(self.lines, position)
        return position

    def range(self, line: int, col: int, end_line: int, end_col: int) -> lsp.Range:
        return lsp.Range(start=self.to_client(line, col), end=self.to_client(end_line, end_col))

    def from_client(self, position: lsp.Position) -> tuple[int, int]:
        if not 0 <= position.line < len(self.lines):
            return position.line, position.character
        pos = self.codec.position_from_client_units(self.lines, position)
        return pos.line, engine_column(pos.line, pos.character, self.bom)


def positions(ls: PmemServer, state: RootState | None, rel: str) -> Positions:
    entry = state.files.get(rel) if state is not None else None
    bom = state is not None and ls.host.client_bom(state.root / rel)
    # (`position_lines`: a file restored from its record is not read for its findings' lines.)
    return Positions(ls, entry.position_lines() if entry is not None else None, bom)


# -- diagnostics ------------------------------------------------------------------------
def to_diagnostic(at: Positions, f: Finding) -> lsp.Diagnostic:
    rule = RULES[f.code]
    data = {"name": rule.name, **(f.data or {})}
    return lsp.Diagnostic(range=at.range(f.line, f.col, f.end_line, f.end_col), message=clean(f.message),
                          severity=_SEVERITY[severity_of(f)], code=f.code, source=SOURCE, data=data)


# -- edits and code actions ---------------------------------------------------------------
def workspace_edit(ls: PmemServer, root: MemoryRoot, edits: Sequence[TextEdit]) -> lsp.WorkspaceEdit:
    """Text edits grouped by file, each tied to the open document's version."""
    by_path: dict[str, list[lsp.TextEdit]] = {}
    for e in edits:
        at = positions(ls, root.state, e.path)
        by_path.setdefault(e.path, []).append(
            lsp.TextEdit(range=at.range(e.line, e.col, e.end_line, e.end_col), new_text=e.new_text))
    changes = []
    for rel, text_edits in by_path.items():
        uri = uri_of(root, rel)
        doc = open_document(ls.workspace, uri)
        changes.append(lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version if doc else None),
            edits=text_edits))
    return lsp.WorkspaceEdit(document_changes=changes)


def _answered(codes: Sequence[str], diagnostics: Sequence[lsp.Diagnostic]) -> list[lsp.Diagnostic] | None:
    """The client's diagnostics of these codes (a code action lists those it fixes)."""
    return [d for d in diagnostics if str(d.code) in codes and d.source == SOURCE] or None


def fix_action(ls: PmemServer, root: MemoryRoot, fix: Fix, diagnostics: Sequence[lsp.Diagnostic]) -> lsp.CodeAction:
    return lsp.CodeAction(title=fix.title, kind=lsp.CodeActionKind.QuickFix,
                          diagnostics=_answered([fix.code], diagnostics), is_preferred=fix.preferred or None,
                          edit=workspace_edit(ls, root, fix.edits))


def lifecycle_action(action: Action, diagnostics: Sequence[lsp.Diagnostic]) -> lsp.CodeAction:
    """A lifecycle action runs its command (which confirms first): a quick fix when it is the fix
    of a finding in view, else a refactoring (`refactor.pmem.<op>`)."""
    args: dict[str, str | bool] = {} if action.path is None else {"path": action.path}
    if action.reason:
        args["reason"] = action.reason
    if action.add_route:
        args["add_route"] = True
    # The client's diagnostics of exactly those findings (code and line: a purge of one trash
    # record answers the PM304 on its own heading, not every PM304 in view).
    answered = [d for d in diagnostics if d.source == SOURCE
                and any(str(d.code) == f.code and d.range.start.line == f.line for f in action.answers)] or None
    kind = lsp.CodeActionKind.QuickFix if answered else f"{LIFECYCLE_KIND}.{action.op}"
    return lsp.CodeAction(title=action.title, kind=kind, diagnostics=answered,
                          command=lsp.Command(title=action.title, command=f"pmem.{action.op}", arguments=[args]))


# -- navigation ---------------------------------------------------------------------------
def hover(at: Positions, h: HoverText) -> lsp.Hover:
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=h.markdown),
                     range=at.range(h.line, h.start, h.line, h.end))


def location(ls: PmemServer, root: MemoryRoot, loc: Location) -> lsp.Location:
    at = positions(ls, root.state, loc.path)
    return lsp.Location(uri=uri_of(root, loc.path), range=at.range(loc.line, loc.start, loc.line, loc.end))


def line_location(root: MemoryRoot, rel: str, line: int) -> lsp.Location:
    start = lsp.Position(line=line, character=0)
    return lsp.Location(uri=uri_of(root, rel), range=lsp.Range(start=start, end=start))


def document_link(at: Positions, root: MemoryRoot, d: DocLink, tooltips: bool) -> lsp.DocumentLink:
    return lsp.DocumentLink(range=at.range(d.line, d.start, d.line, d.end), target=uri_of(root, d.target),
                            tooltip=d.tooltip if tooltips else None)


def document_symbol(at: Positions, sym: DocSymbol) -> lsp.DocumentSymbol:
    return lsp.DocumentSymbol(
        name=sym.name, kind=_SYMBOL_KINDS[sym.kind], detail=sym.detail or None,
        range=at.range(sym.line, 0, sym.end_line, sym.end_col),
        selection_range=at.range(sym.line, sym.sel_start, sym.line, sym.sel_end),
        children=[document_symbol(at, child) for child in sym.children] or None)


def workspace_symbol(root: MemoryRoot, sym: WorkspaceSymbol) -> lsp.WorkspaceSymbol:
    return lsp.WorkspaceSymbol(name=sym.name, kind=_SYMBOL_KINDS[sym.kind], container_name=sym.container or None,
                               location=line_location(root, sym.path, sym.line))


def history_code_lens(lens: HistoryLens) -> lsp.CodeLens:
    """A history lens, resolved already (its title is computed from the cached review state):
    on the first line, where the other lenses are."""
    line_0 = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
    return lsp.CodeLens(range=line_0, command=lsp.Command(title=lens.title, command=lens.command,
                                                          arguments=[lens.arguments]))


def _snippet_text(text: str) -> str:
    """Plain text as a snippet that inserts exactly it: `\\`, `$` and `}` escaped."""
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


def completion_item(c: Completion, rng: lsp.Range, snippets: bool) -> lsp.CompletionItem:
    """One item. Neovim's built-in completion inserts a plain-text edit only up to its first
    space (docs/design.md §8): text with spaces (a whole route line) goes as a snippet, where it can."""
    snippet = snippets and any(ch.isspace() for ch in c.new_text)
    return lsp.CompletionItem(
        label=c.label,
        kind=lsp.CompletionItemKind.Folder if c.kind == FOLDER else lsp.CompletionItemKind.File,
        detail=c.detail,
        documentation=(lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=c.documentation)
                       if c.documentation else None),
        sort_text=c.sort_text, filter_text=c.filter_text,
        text_edit=lsp.TextEdit(range=rng, new_text=_snippet_text(c.new_text) if snippet else c.new_text),
        insert_text_format=lsp.InsertTextFormat.Snippet if snippet else None)


# -- what the client is shown -------------------------------------------------------------
# Every message the server sends passes here (`PmemProtocol._send_data`): one mask for every
# human-readable string of every answer, notification and request — symbols, hovers, code
# action and lens titles, completion labels, link tooltips, command results, messages — so no
# feature can forget it (docs/decisions.md, "One mask at the server's edge"). The values of
# these keys are not read by a person but used exactly: URIs the client opens, text written
# into files (edits, completion inserts, rename edits), data and command arguments that come
# back to the server, ids and tokens. Masking them would corrupt files or break a round trip.
EXACT_KEYS = frozenset({
    "jsonrpc", "id", "method", "token",
    "uri", "targetUri", "oldUri", "newUri", "target", "scopeUri",
    "newText", "insertText", "textEdit", "additionalTextEdits", "edit", "changes", "documentChanges",
    "data", "arguments", "filterText", "sortText", "commitCharacters",
})


def shown_to_client(value: Any) -> Any:
    """A JSON value (a whole message) with every likely secret masked in its human-readable
    strings (`secrets.mask_text`: the hint of `mask`, names and multi-line blocks included);
    the values of `EXACT_KEYS` are kept as they are. A string without a secret comes back as
    the same object, and so does a container in which nothing changed."""
    from ..engine.secrets import mask_text

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return mask_text(item) if item else item
        if isinstance(item, dict):
            out = {key: sub if key in EXACT_KEYS else walk(sub) for key, sub in item.items()}
            return item if all(out[k] is item[k] for k in item) else out
        if isinstance(item, list):
            items = [walk(sub) for sub in item]
            return item if all(a is b for a, b in zip(items, item, strict=True)) else items
        return item

    return walk(value)
