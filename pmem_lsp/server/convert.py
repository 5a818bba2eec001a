"""Engine data to LSP and back, in one place: URIs, positions (encoding-aware), diagnostics."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote
from typing import Sequence

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace.position_codec import PositionCodec

from ..engine.catalogue import RULES, severity_of
from ..engine.findings import Finding, Severity

SOURCE = "pmem"

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFORMATION: lsp.DiagnosticSeverity.Information,
    Severity.HINT: lsp.DiagnosticSeverity.Hint,
}


def uri_to_path(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs) if fs else None


def path_to_uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def open_document(workspace, uri: str):
    """The editor's document for `uri` if it is open, else None. pygls keys documents by the
    unquoted uri, and `path_to_uri` quotes (a space or an `é` in a name would miss it)."""
    return workspace.text_documents.get(unquote(uri))


def to_range(codec: PositionCodec, lines: Sequence[str], f: Finding) -> lsp.Range:
    """Engine offsets are Python characters; the client counts in its negotiated encoding."""
    start = lsp.Position(line=f.line, character=f.col)
    end = lsp.Position(line=f.end_line, character=f.end_col)
    if not lines:
        return lsp.Range(start=start, end=end)
    return lsp.Range(
        start=codec.position_to_client_units(lines, start),
        end=codec.position_to_client_units(lines, end),
    )


def to_diagnostic(codec: PositionCodec, lines: Sequence[str], f: Finding) -> lsp.Diagnostic:
    rule = RULES[f.code]
    severity = severity_of(f)
    return lsp.Diagnostic(
        range=to_range(codec, lines, f),
        message=f.message,
        severity=_SEVERITY[severity],
        code=f.code,
        source=SOURCE,
        data={"name": rule.name},
    )
