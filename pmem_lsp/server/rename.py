"""`workspace/willRenameFiles`: moving memory files or folders in the editor keeps their
routes and relative links correct. Moves the server asked for itself (lifecycle actions,
`ls.own_moves`) get no edits (docs/design.md §8); moves into or out of `_archive/` get a message."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.host import MemoryRoot
from ..engine.navigation import rename_edits
from ..engine.root_state import RootState
from .convert import uri_to_path, workspace_edit

if TYPE_CHECKING:
    from .app import PmemServer

FILTERS = lsp.FileOperationRegistrationOptions(filters=[
    lsp.FileOperationFilter(scheme="file", pattern=lsp.FileOperationPattern(
        glob="**/*.md", matches=lsp.FileOperationPatternKind.File)),
    lsp.FileOperationFilter(scheme="file", pattern=lsp.FileOperationPattern(
        glob="**", matches=lsp.FileOperationPatternKind.Folder)),
])


def _own(ls: PmemServer, old: Path, new: Path) -> bool:
    return (old, new) in ls.own_moves


def will_rename(ls: PmemServer, params: lsp.RenameFilesParams) -> lsp.WorkspaceEdit | None:
    moves: dict[int, tuple[MemoryRoot, RootState, list[tuple[str, str]]]] = {}
    for f in params.files:
        old, new = uri_to_path(f.old_uri), uri_to_path(f.new_uri)
        if old is None or new is None or _own(ls, old, new):
            continue
        source, dest = ls.host.locate(old), ls.host.locate(new)
        if source is None or dest is None or source[0] is not dest[0]:
            continue  # into, out of or between roots: no link can be kept correct
        root = source[0]
        if root.state is None:
            continue  # not scanned yet
        moves.setdefault(id(root), (root, root.state, []))[2].append((source[1], dest[1]))
    edits = []
    for root, state, pairs in moves.values():
        result = rename_edits(state, pairs)
        for message in result.messages:
            ls.show(lsp.MessageType.Warning, f"pmem: {message}")
        if result.edits:
            edits.append((root, result.edits))
    if not edits:
        return None
    changes: list[lsp.TextDocumentEdit | lsp.CreateFile | lsp.RenameFile | lsp.DeleteFile] = []
    for root, root_edits in edits:
        changes += workspace_edit(ls, root, root_edits).document_changes or []
    return lsp.WorkspaceEdit(document_changes=changes)


def register(server: PmemServer) -> None:
    @server.feature(lsp.WORKSPACE_WILL_RENAME_FILES, FILTERS)
    def on_will_rename(ls: PmemServer, params: lsp.RenameFilesParams) -> lsp.WorkspaceEdit | None:
        return will_rename(ls, params)
