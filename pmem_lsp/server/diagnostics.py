"""Push diagnostics: publish every file whose findings changed, and clear the ones that healed.

Push, not pull: Neovim cannot be asked to re-pull, and a change in one file (the index)
changes diagnostics in others (DESIGN §8), so the server decides what to send.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.findings import Finding
from ..engine.host import MemoryRoot
from .convert import path_to_uri, to_diagnostic

if TYPE_CHECKING:
    from .app import PmemServer


def _lines_for(server: PmemServer, root: MemoryRoot, rel: str) -> list[str]:
    """The text positions refer to: the editor's buffer when open, else the snapshot's."""
    uri = path_to_uri(root.path / rel)
    doc = server.workspace.text_documents.get(uri)
    if doc is not None:
        return doc.lines
    if root.snapshot is not None:
        parsed = root.snapshot.doc(rel)
        if parsed is not None:
            return parsed.lines
    return []


def publish_findings(server: PmemServer, root: MemoryRoot, grouped: dict[str, list[Finding]],
                     only: set[str] | None = None, force: bool = False) -> None:
    """Send what changed since the last publication for this root.

    `only` limits publication to those paths (early findings before the scan lands).
    """
    published = server.published.setdefault(root.path, {})
    paths = set(grouped) | set(published) if only is None else only
    codec = server.workspace.position_codec
    for rel in sorted(paths):
        findings = tuple(grouped.get(rel, ()))
        if published.get(rel, ()) == findings and not force:
            continue
        lines = _lines_for(server, root, rel)
        server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=path_to_uri(root.path / rel),
            diagnostics=[to_diagnostic(codec, lines, f) for f in findings],
        ))
        if findings:
            published[rel] = findings
        else:
            published.pop(rel, None)


def publish_paths(server: PmemServer, root: MemoryRoot, paths: set[str]) -> None:
    """Publish the current findings of `paths` (those whose findings may have changed)."""
    if root.analysis is None or not paths:
        return
    final = root.analysis.final
    publish_findings(server, root, {rel: final.get(rel, []) for rel in paths}, only=paths)


def refresh_root(server: PmemServer, root: MemoryRoot) -> None:
    """Analyse what changed in a scanned root and publish the differences — work bounded by
    the change, not by the root (engine/analysis.py)."""
    publish_paths(server, root, server.host.analyse_pending(root))


def publish_early(server: PmemServer, path: Path) -> None:
    """Before the scan lands, show what the open buffer reveals on its own."""
    found = server.host.locate(path)
    if found is None:
        return
    root, rel = found
    # Sent even when empty: the editor learns at once that the file was checked.
    publish_findings(server, root, {rel: server.host.early_findings(path)}, only={rel}, force=True)
