"""Open, edited and closed documents: the editor's buffer is the truth while it holds unsaved edits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from .convert import uri_to_path
from .session import valid_unicode

if TYPE_CHECKING:
    from .app import PmemServer


def _buffer_changed(server: PmemServer, uri: str, opened: bool, version: int | None = None) -> None:
    path = uri_to_path(uri)
    if path is None:
        return
    text = valid_unicode(server.workspace.get_text_document(uri).source)
    host = server.host
    if opened and (uri, version) in server.opened_disk:  # read by the early path as it came
        root = host.opened_with_disk(path, text, server.opened_disk.pop((uri, version)))
    else:
        root = host.open_buffer(path, text) if opened else host.change_buffer(path, text)
    if root is None:
        return  # outside every memory root: not ours
    if root.state is None:
        server.publisher.early(path)
    elif not opened:
        server.publisher.changed(root)
    else:
        rel = root.rel(path)
        if rel:
            server.publisher.opened(root, rel)  # sent even if unchanged (eglot drops what came before)


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PmemServer, params: lsp.DidOpenTextDocumentParams) -> None:
        _buffer_changed(ls, params.text_document.uri, opened=True,  # first diagnostics at once
                        version=params.text_document.version)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PmemServer, params: lsp.DidChangeTextDocumentParams) -> None:
        _buffer_changed(ls, params.text_document.uri, opened=False)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def did_save(ls: PmemServer, params: lsp.DidSaveTextDocumentParams) -> None:
        # The buffer is the disk's text now: it no longer wins over the disk as an edit.
        path = uri_to_path(params.text_document.uri)
        root = ls.host.saved_buffer(path) if path is not None else None
        if root is not None and root.state is not None:
            ls.publisher.refresh(root)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PmemServer, params: lsp.DidCloseTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is None:
            return
        root = ls.host.close_buffer(path)
        ls.publisher.closed(path)
        if root is not None:
            ls.publisher.refresh(root)
