"""The disk is the truth (issue 14, docs/design.md §5.1), end to end through the real server: what the
user confirms is complete on disk when the command ends, a stale buffer never overwrites an
agent's write, a buffer with unsaved edits is never saved or overwritten behind the user's
back, moves keep the modification time, and a query never swallows diagnostics."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsp_helpers import DiskClient, codes, edit, open_doc, replace_all, start, uri, wait_for, watching
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root

OLD = "- [Old project](projects/old.md) — shipped in March"
TAX = "- [Tax](notes/tax.md) — tax return notes"
YEAR = 365 * 86400


@pytest.fixture
def root(tmp_path: Path) -> Path:
    files = base_files()
    files["_index.md"] += OLD + "\n\n## Notes\n" + TAX + "\n"
    files["projects/old.md"] = summary_file("Old project")
    files["notes/tax.md"] = summary_file("Tax")
    root = write_root(tmp_path / "memory", files)
    old = time.time() - YEAR
    os.utime(root / "projects/old.md", (old, old))
    return root


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)


def check(root: Path) -> list[tuple[str, str]]:
    """What `pmem check` finds on the disk, as an agent would see it: no lifecycle drift."""
    import json

    done = cli(root, "check", "--format", "json", "--select", "PM2,PM3")
    return sorted((d["path"], d["code"]) for d in json.loads(done.stdout)["diagnostics"])


async def command(client: LanguageClient, op: str, path: str):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=f"pmem.{op}", arguments=[{"path": path}]))


class SaveasClient(DiskClient):
    """Neovim's way of renaming a loaded buffer: write its text at the new path (`saveas!`, a
    new modification time) and delete the old file. Index edits are never sent to it."""

    def _apply(self, params):
        from pygls.uris import to_fs_path

        self.edits.append(params.edit)
        for change in params.edit.document_changes or []:
            if isinstance(change, lsp.RenameFile):
                old, new = Path(to_fs_path(change.old_uri)), Path(to_fs_path(change.new_uri))
                new.parent.mkdir(parents=True, exist_ok=True)
                new.write_bytes(old.read_bytes())
                old.unlink()
        return lsp.ApplyWorkspaceEditResult(applied=True)


async def test_archive_is_complete_on_disk_with_the_indexes_open_and_nothing_saved_by_hand(
        client: LanguageClient, root: Path):
    await start(client, root)
    ui = SaveasClient(client, answer="Archive")
    index, archive_index = root / "_index.md", root / "_archive/_index.md"
    open_doc(client, index)
    open_doc(client, archive_index)
    mtime = os.stat(root / "projects/old.md").st_mtime_ns
    outcome = await command(client, "archive", "projects/old.md")
    assert outcome["applied"] is True, outcome
    # On disk, now, without any save: moved, route gone, record written.
    assert OLD not in index.read_text(encoding="utf-8")
    assert f"- index-line: {OLD}\n" in archive_index.read_text(encoding="utf-8")
    assert check(root) == []
    # The move kept the file's modification time, though the editor rewrote the file.
    assert os.stat(root / "_archive/projects/old.md").st_mtime_ns == mtime
    # No text edit was sent for the editor to leave unsaved; it was told to reload instead.
    assert all(isinstance(c, lsp.RenameFile) for e in ui.edits for c in e.document_changes or [])
    assert outcome["message"] == "Archived projects/old.md to _archive/projects/old.md."


async def test_the_client_is_told_which_open_documents_changed_on_disk(client: LanguageClient, root: Path):
    await start(client, root)
    DiskClient(client, answer="Archive")
    told: list[list[str]] = []
    client.feature("pmem/filesChanged")(lambda params: told.append(sorted(params.uris)))
    open_doc(client, root / "_index.md")
    outcome = await command(client, "archive", "projects/old.md")
    assert outcome["applied"] is True
    await wait_for(client, lambda: bool(told))
    assert told == [[uri(root / "_index.md")]]  # the open one; the closed ones need no reload


async def test_a_stale_buffer_never_overwrites_an_agents_archive(client: LanguageClient, root: Path):
    """Issue 14, point 2: `_index.md` is open and unmodified; an agent archives a note with the
    CLI; the user archives another from the editor. The agent's record and route removal stay."""
    await start(client, root)
    DiskClient(client, answer="Archive")
    index = root / "_index.md"
    open_doc(client, index)  # loaded, unmodified, never reloaded by this client
    agent = cli(root, "archive", "notes/tax.md", "--reason", "filed", "--yes")
    assert agent.returncode == 0, agent.stderr
    await wait_for(client, lambda: codes(client, root / "_archive/_index.md") == [])
    outcome = await command(client, "archive", "projects/old.md")
    assert outcome["applied"] is True, outcome
    text = index.read_text(encoding="utf-8")
    assert TAX not in text and OLD not in text
    record = (root / "_archive/_index.md").read_text(encoding="utf-8")
    assert "## notes/tax.md" in record and "- reason: filed" in record and "## projects/old.md" in record
    assert check(root) == []


async def test_diagnostics_follow_the_disk_under_an_unmodified_buffer(client: LanguageClient, root: Path):
    await start(client, root)
    await watching(client, root)  # the agent's writes below come after the server watches
    index = root / "_index.md"
    text = open_doc(client, index)
    (root / "notes/new.md").write_text(summary_file("New"), encoding="utf-8")
    await wait_for(client, lambda: "PM202" in codes(client, root / "notes/new.md"), timeout=60)
    # An agent routes it on disk; the editor's buffer of the index is unmodified: disk wins.
    index.write_text(text + "- [New](notes/new.md) — a new note\n", encoding="utf-8")
    await wait_for(client, lambda: codes(client, root / "notes/new.md") == [], timeout=60)


async def test_an_index_with_unsaved_edits_stops_the_operation_before_anything_moves(
        client: LanguageClient, root: Path):
    await start(client, root)
    ui = DiskClient(client, answer="Archive")
    index = root / "_index.md"
    text = open_doc(client, index)
    replace_all(client, index, text + "- a line the user is still typing\n", 2)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(JsonRpcException) as exc:
        await command(client, "archive", "projects/old.md")
    assert exc.value.code == -32803
    assert "`_index.md` has unsaved changes in the editor; save or discard them" in exc.value.message
    assert ui.requests == [] and ui.edits == []
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    # Saved: the operation goes through, on the saved text, which keeps the user's line.
    index.write_text(text + "- a line the user is still typing\n", encoding="utf-8")
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri(index))))
    outcome = await command(client, "archive", "projects/old.md")
    assert outcome["applied"] is True, outcome
    assert "- a line the user is still typing\n" in index.read_text(encoding="utf-8")


async def test_a_file_with_unsaved_edits_is_not_moved(client: LanguageClient, root: Path):
    await start(client, root)
    ui = DiskClient(client, answer="Archive")
    note = root / "projects/old.md"
    text = open_doc(client, note)
    replace_all(client, note, text + "A sentence not saved yet.\n", 2)
    with pytest.raises(JsonRpcException) as exc:
        await command(client, "archive", "projects/old.md")
    assert "`projects/old.md` has unsaved changes" in exc.value.message
    assert note.exists() and ui.edits == []


class BufferListClient(DiskClient):
    """Neovim's `vim.lsp.util.rename`: a rename onto a path that has a loaded buffer is skipped
    (with overwrite false), even when that buffer was never written — and answered applied."""

    def __init__(self, client: LanguageClient, answer: str, loaded: set[str]) -> None:
        super().__init__(client, answer)
        self.loaded = loaded

    def _apply(self, params):
        if any(isinstance(c, lsp.RenameFile) and c.new_uri in self.loaded for c in params.edit.document_changes or []):
            self.edits.append(params.edit)
            return lsp.ApplyWorkspaceEditResult(applied=True)
        return super()._apply(params)


async def test_an_empty_buffer_never_written_is_not_a_file(client: LanguageClient, root: Path):
    """`:edit notes/tax.md` in Neovim opens an empty buffer for a file that does not exist; a
    recover to that path must not fail on it (Neovim refuses to rename onto a loaded buffer)."""
    await start(client, root)
    loaded: set[str] = set()
    ui = BufferListClient(client, answer="Archive", loaded=loaded)
    assert (await command(client, "archive", "notes/tax.md"))["applied"] is True
    open_doc(client, root / "notes/tax.md", text="")  # the user opens the old path, empty
    loaded.add(uri(root / "notes/tax.md"))
    ui.answer = "Recover"
    outcome = await command(client, "recover", "notes/tax.md")
    assert outcome["applied"] is True, outcome
    assert (root / "notes/tax.md").read_text(encoding="utf-8") == summary_file("Tax")


async def test_two_edits_and_a_code_action_in_the_debounce_window_lose_no_diagnostics(
        client: LanguageClient, root: Path):
    await start(client, root)
    note = root / "projects/old.md"
    text = open_doc(client, note)
    await wait_for(client, lambda: uri(note) in client.diagnostics)
    lines = text.split("\n")
    bullets = [i for i, line in enumerate(lines) if line.startswith("- fact")]
    # Two edits that leave two bullets (PM102), then at once a code action request.
    edit(client, note, bullets[-1], 0, bullets[-1] + 1, 0, "", 2)
    edit(client, note, bullets[-2], 0, bullets[-2] + 1, 0, "", 3)
    await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(note)),
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=[])))
    await wait_for(client, lambda: codes(client, note) == ["PM102", "PM501"])


async def test_code_actions_asked_before_the_first_scan_wait_for_it(client: LanguageClient, tmp_path: Path):
    """The quick fix for a diagnostic the editor still shows (from an earlier session) needs the
    scan; asked at once, the server waits for it instead of answering without it."""
    files = base_files()
    for i in range(1500):
        files[f"notes/n{i}.md"] = summary_file(f"Note {i}")
    root = write_root(tmp_path / "memory", files)
    await start(client, root)  # the scan of 1,500 files starts now; ask at once
    unrouted = lsp.Diagnostic(range=lsp.Range(start=lsp.Position(line=0, character=0),
                                              end=lsp.Position(line=0, character=8)),
                              message="no route in `_index.md`", code="PM202", source="pmem")
    answer = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(root / "notes/n7.md")),
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=[unrouted])))
    assert [a.title for a in answer or []] == ["Add route to _index.md", "Archive notes/n7.md"]


def test_lifecycle_actions_have_kinds_ctrl_dot_shows(root: Path):
    """VS Code's Ctrl+. and lightbulb show `quickfix` and `refactor.*`, never `source.*`
    (issue 15): the action a diagnostic calls for is a quick fix carrying it, the others are
    `refactor.pmem.<operation>`. (Raw JSON: pytest-lsp's client structures command actions as
    bare commands and loses their kind.)"""
    from raw_lsp import MOVING_CLIENT, RawServer

    session = RawServer(root.parent)
    try:
        session.initialize(root, MOVING_CLIENT)
        note = root / "projects/old.md"
        stale = session.wait_for_code(note, "PM501")
        answer = session.request("textDocument/codeAction", {
            "textDocument": {"uri": uri(note)},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [d for d in stale if d["code"] == "PM501"]}})["result"]
    finally:
        session.close()
    kinds = {a["title"]: (a["kind"], [d["code"] for d in a.get("diagnostics") or []]) for a in answer}
    assert kinds[next(t for t in kinds if t.startswith("Archive projects/old.md (stale"))] == ("quickfix", ["PM501"])
    assert kinds["Archive projects/old.md"] == ("refactor.pmem.archive", [])
    assert not any(kind.startswith("source") for kind, _ in kinds.values())
