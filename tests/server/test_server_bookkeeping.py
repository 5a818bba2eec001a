"""The server's per-message bookkeeping does not grow with the session (issue 9, "memory
stays flat"): driven in-process through the real protocol object, no client needed."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from pygls.io_ import StdoutWriter

from pmem_lsp.server.app import create_server


def _deliver(server, message: dict) -> None:
    protocol = server.protocol
    protocol.handle_message(json.loads(json.dumps(message), object_hook=protocol.structure_message))


async def test_notifications_leave_no_handler_futures_behind(tmp_path: Path):
    server = create_server()
    server.protocol.set_writer(StdoutWriter(io.BytesIO()))
    _deliver(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    uri = (tmp_path / "note.md").as_uri()  # outside every root: only the bookkeeping runs
    _deliver(server, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "markdown", "version": 1, "text": "# Note\n"}}})
    for version in range(2, 502):
        _deliver(server, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": 1, "character": 0},
                                          "end": {"line": 1, "character": 0}}, "text": "x"}]}})
    for _ in range(5):
        await asyncio.sleep(0.01)
    # pygls 2.1.1 alone keeps one future per notification here: 501.
    assert len(server.protocol._request_futures) == 0
    assert server.workspace.get_text_document(uri).source == "# Note\n" + "x" * 500
