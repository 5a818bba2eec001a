"""Shared by the navigation features: find the root of a document, convert positions and
ranges at the edge (engine: Python characters; client: its negotiated encoding), and turn
engine edits into a workspace edit tied to open buffers' versions."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from ..engine.findings import Finding
from ..engine.fixes import TextEdit
from ..engine.host import MemoryRoot
from ..engine.navigation.text import lines_of
from ..engine.snapshot import RootSnapshot
from .convert import open_document, path_to_uri, uri_to_path

if TYPE_CHECKING:
    from .app import PmemServer


def locate(ls: PmemServer, uri: str) -> tuple[MemoryRoot, RootSnapshot, str] | None:
    """The scanned root holding the document at `uri`, its snapshot and the relative path."""
    path = uri_to_path(uri)
    found = ls.host.locate(path) if path is not None else None
    if found is None or found[0].snapshot is None:
        return None
    root, rel = found
    return root, root.snapshot, rel


FIRST_SCAN_WAIT = 30.0  # seconds a request waits for its root's first scan (10k files: ~5 s)


async def wait_scanned(root: MemoryRoot, timeout: float = FIRST_SCAN_WAIT) -> bool:
    """Wait until `root` has been scanned once; False if it still has not after `timeout`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while root.snapshot is None or root.analysis is None:
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def first_scan(ls: PmemServer, uri: str | None) -> None:
    """Wait until the root holding `uri` (every root, without a uri) has been scanned once.
    Until then navigation knows nothing, and answering null would look like "nothing here"."""
    try:
        await asyncio.wait_for(ls.roots_ready.wait(), FIRST_SCAN_WAIT)
    except asyncio.TimeoutError:
        return
    path = uri_to_path(uri) if uri else None
    if path is not None:
        found = ls.host.locate(path)
        waiting = [found[0]] if found is not None else []
    else:
        waiting = list(ls.host.roots)
    for root in waiting:
        await wait_scanned(root)


def after_first_scan(handler: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A navigation handler that answers once the document's root has been scanned."""
    @functools.wraps(handler)
    async def wrapped(ls, params):
        document = getattr(params, "text_document", None)
        await first_scan(ls, getattr(document, "uri", None))
        return handler(ls, params)
    return wrapped




def engine_position(ls: PmemServer, snap: RootSnapshot, rel: str, position: lsp.Position) -> tuple[int, int]:
    lines = lines_of(snap, rel)
    if not lines or position.line >= len(lines):
        return position.line, position.character
    pos = ls.workspace.position_codec.position_from_client_units(lines, position)
    return pos.line, pos.character


def client_range(ls: PmemServer, snap: RootSnapshot, rel: str, line: int, start: int,
                 end_line: int, end: int) -> lsp.Range:
    lines = lines_of(snap, rel)
    first, last = lsp.Position(line=line, character=start), lsp.Position(line=end_line, character=end)
    if lines and end_line < len(lines):
        codec = ls.workspace.position_codec
        first, last = codec.position_to_client_units(lines, first), codec.position_to_client_units(lines, last)
    return lsp.Range(start=first, end=last)


def uri_of(root: MemoryRoot, rel: str) -> str:
    return path_to_uri(root.path / rel)


def published(ls: PmemServer, root: MemoryRoot) -> Mapping[str, Sequence[Finding]]:
    """The findings last published for the root: what the user sees, already computed."""
    return ls.published.get(root.path, {})


def workspace_edit(ls: PmemServer, root: MemoryRoot, edits: Sequence[TextEdit]) -> lsp.WorkspaceEdit:
    snap = root.snapshot
    by_uri: dict[str, list[lsp.TextEdit]] = {}
    for e in edits:
        rng = client_range(ls, snap, e.path, e.line, e.col, e.end_line, e.end_col) if snap else \
            lsp.Range(start=lsp.Position(line=e.line, character=e.col), end=lsp.Position(line=e.end_line, character=e.end_col))
        by_uri.setdefault(uri_of(root, e.path), []).append(lsp.TextEdit(range=rng, new_text=e.new_text))
    changes = []
    for uri, text_edits in by_uri.items():
        doc = open_document(ls.workspace, uri)
        changes.append(lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version if doc else None),
            edits=text_edits))
    return lsp.WorkspaceEdit(document_changes=changes)
