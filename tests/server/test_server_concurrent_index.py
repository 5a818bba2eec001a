"""Concurrent edits of the indexes during a lifecycle operation, through the real server: the
agent edits while the confirmation waits, or while the editor moves the file; `_index.md`
closed (the disk) or open in the editor (the buffer, whose version the index edits carry).
The rule, the engine's and the CLI's side: tests/engine/test_concurrent_index.py, whose root
and agent edits these tests share.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import DiskClient, open_doc, replace_all, start, uri
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from test_concurrent_index import (
    agent_edits,
    assert_archived,
    change_route,
    everywhere,
    files,
    remove_route,
)

from roots import write_root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_root(tmp_path / "memory", files())


class AgentClient(DiskClient):
    """`DiskClient`, with an agent that edits `_index.md` on disk before the user answers the
    confirmation (`at="ask"`) or right after the editor applied the move (`at="move"`). With
    `buffer`, `_index.md` is open in the editor, which reloads it from disk (a full-text change
    with the next version) as editors do for an unmodified buffer."""

    def __init__(self, client: LanguageClient, root: Path, edit, at: str, buffer: bool = False) -> None:
        super().__init__(client, "Archive")
        self.client, self.root, self.edit, self.at, self.buffer = client, root, edit, at, buffer
        self.version = 1
        self.text: str | None = None
        self.versions: list[int | None] = []

    def _agent(self) -> None:
        index = self.root / "_index.md"
        self.text = agent_edits(index, self.edit)
        if self.buffer:
            self.version += 1
            replace_all(self.client, index, self.text, self.version)

    def _ask(self, params):
        if self.at == "ask":
            self._agent()
        return super()._ask(params)

    def _apply(self, params):
        for change in params.edit.document_changes or []:
            if isinstance(change, lsp.TextDocumentEdit) and change.text_document.uri == uri(self.root / "_index.md"):
                self.versions.append(change.text_document.version)
        result = super()._apply(params)
        if self.at == "move" and any(isinstance(c, lsp.RenameFile) for c in params.edit.document_changes or []):
            self._agent()
        return result


async def archive(client: LanguageClient):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="pmem.archive", arguments=[{"path": "projects/old.md", "reason": "done"}]))


@pytest.mark.parametrize("buffer", [False, True], ids=["closed", "open"])
@pytest.mark.parametrize("at", ["ask", "move"])
async def test_server_keeps_the_agents_lines(client: LanguageClient, root: Path, at: str, buffer: bool):
    await start(client, root)
    ui = AgentClient(client, root, everywhere, at, buffer)
    if buffer:
        open_doc(client, root / "_index.md")
    outcome = await archive(client)
    assert outcome["applied"] is True, outcome
    assert_archived(root, ui.text)
    # The indexes were written on disk by the server, on the text of that moment: no edit was
    # sent for the editor to apply (and leave unsaved), open or not.
    assert ui.versions == []
    if buffer:
        assert ui.version == 2


@pytest.mark.parametrize("buffer", [False, True], ids=["closed", "open"])
@pytest.mark.parametrize("edit", [change_route, remove_route], ids=["changed", "removed"])
async def test_server_refuses_when_the_route_line_changed_while_asking(client: LanguageClient, root: Path, edit,
                                                                      buffer: bool):
    await start(client, root)
    ui = AgentClient(client, root, edit, "ask", buffer)
    if buffer:
        open_doc(client, root / "_index.md")
    with pytest.raises(JsonRpcException) as exc:
        await archive(client)
    assert exc.value.code == -32803
    assert "`_index.md` changed since the preview: the route line to `projects/old.md`" in exc.value.message
    assert ui.edits == []  # nothing was sent to the editor: nothing moved
    assert (root / "projects/old.md").is_file() and not (root / "_archive/projects").exists()
    assert (root / "_index.md").read_text(encoding="utf-8") == ui.text
    assert any("changed since the preview" in m.message for m in client.messages)


async def test_server_puts_back_the_move_when_the_route_line_changed_meanwhile(client: LanguageClient, root: Path):
    """Complete or roll back (issue 23): the route line changed while the editor moved the file,
    so the record written after the move is removed and the file is moved back (through the
    editor, so its tab follows), and the message says that nothing was changed."""
    await start(client, root)
    records = (root / "_archive/_index.md").read_text(encoding="utf-8")
    ui = AgentClient(client, root, change_route, "move")
    outcome = await archive(client)
    assert outcome["applied"] is False
    assert "`_index.md` changed since the preview" in outcome["message"]
    assert "was put back, so nothing was changed" in outcome["message"] and outcome["done"] == []
    assert (root / "projects/old.md").is_file() and not (root / "_archive/projects/old.md").exists()
    assert (root / "_index.md").read_text(encoding="utf-8") == ui.text  # the agent's text, untouched
    assert (root / "_archive/_index.md").read_text(encoding="utf-8") == records  # the record is gone again
    renames = [c for e in ui.edits for c in e.document_changes or [] if isinstance(c, lsp.RenameFile)]
    assert len(renames) == 2  # there and back, both through the editor
