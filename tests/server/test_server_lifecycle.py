"""End to end: lifecycle commands through the real server, confirmed like a user would.
Refusals and a cancelled confirmation share one server; operations that go through each
have their own."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from lsp_helpers import DiskClient, Session, action_commands, codes, start, uri, wait_for
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities

from roots import base_files, summary_file, write_root

ROUTE = "- [Old project](projects/old.md) — shipped in March, kept for reference"


def old_project_root(base: Path) -> Path:
    files = base_files()
    files["_index.md"] += ROUTE + "\n"
    files["projects/old.md"] = summary_file("Old project")
    return write_root(base / "memory", files)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return old_project_root(tmp_path)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def command(client: LanguageClient, op: str, args: dict | None):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=f"pmem.{op}", arguments=[args] if args is not None else None))


def encoding_of(result: lsp.InitializeResult) -> str:
    return str(result.capabilities.position_encoding or "utf-16")


@pytest.mark.parametrize("profile", ["neovim", "visual-studio-code"])
async def test_archive_delete_recover_round_trip(client: LanguageClient, root: Path, profile: str):
    result = await start(client, root, profile=profile)
    ui = DiskClient(client, answer=None, encoding=encoding_of(result))
    original_bytes = (root / "projects/old.md").read_bytes()
    today = dt.date.today()

    ui.answer = "Archive"
    outcome = await command(client, "archive", {"path": "projects/old.md", "reason": "project finished"})
    assert outcome["applied"] is True, outcome
    assert "projects/old.md → _archive/projects/old.md" in ui.requests[-1].message
    assert [a.title for a in ui.requests[-1].actions] == ["Archive", "Cancel"]
    assert not (root / "projects/old.md").exists()
    assert (root / "_archive/projects/old.md").read_bytes() == original_bytes
    assert ROUTE not in (root / "_index.md").read_text(encoding="utf-8")
    record = (root / "_archive/_index.md").read_text(encoding="utf-8")
    assert ("## projects/old.md\n- status: archived\n- original: projects/old.md\n"
            "- location: _archive/projects/old.md\n"
            f"- index-line: {ROUTE}\n- index-after: - [Alpha](projects/alpha.md) — the alpha project\n"
            f"- archived: {today.isoformat()}\n- reason: project finished\n") in record

    ui.answer = "Delete"
    outcome = await command(client, "delete", {"path": "projects/old.md"})
    assert outcome["applied"] is True, outcome
    assert (root / "_archive/_trash/projects/old.md").read_bytes() == original_bytes
    record = (root / "_archive/_index.md").read_text(encoding="utf-8")
    assert "- status: trashed" in record and "- location: _archive/_trash/projects/old.md" in record
    assert f"- deleted: {today.isoformat()}" in record
    assert f"- recover-by: {(today + dt.timedelta(days=30)).isoformat()}" in record

    ui.answer = "Recover"
    outcome = await command(client, "recover", {"path": "projects/old.md"})
    assert outcome["applied"] is True, outcome
    assert (root / "projects/old.md").read_bytes() == original_bytes
    assert ROUTE + "\n" in (root / "_index.md").read_text(encoding="utf-8")
    assert "projects/old.md" not in (root / "_archive/_index.md").read_text(encoding="utf-8")
    assert (root / "_archive/_index.md").read_text(encoding="utf-8") == "# Archive index\n"
    # Every confirmation went through showMessageRequest and the moves through RenameFile.
    renames = [c for e in ui.edits for c in e.document_changes or [] if isinstance(c, lsp.RenameFile)]
    assert len(renames) == 3 and all(r.options.overwrite is False for r in renames)
    # The indexes were written on disk by the server, never sent as edits for the user to save.
    assert [c for e in ui.edits for c in e.document_changes or [] if not isinstance(c, lsp.RenameFile)] == []


async def test_client_without_resource_operations_gets_the_change_from_the_server(client: LanguageClient, root: Path):
    caps = client_capabilities("neovim")
    caps.workspace.workspace_edit.resource_operations = []
    caps.workspace.workspace_edit.document_changes = False
    await client.initialize_session(lsp.InitializeParams(
        capabilities=caps, workspace_folders=[lsp.WorkspaceFolder(uri=uri(root), name="memory")]))
    ui = DiskClient(client, answer="Archive")
    outcome = await command(client, "archive", {"path": "projects/old.md"})
    assert outcome["applied"] is True and outcome["via"] == "server", outcome
    assert ui.edits == []
    assert (root / "_archive/projects/old.md").exists() and not (root / "projects/old.md").exists()
    assert ROUTE not in (root / "_index.md").read_text(encoding="utf-8")
    assert any(m.message == "pmem: Archived projects/old.md to _archive/projects/old.md." for m in client.messages)


# -- refusals and a cancelled confirmation change nothing: one server for them --------------------
@pytest.fixture(scope="module")
def shared_root(tmp_path_factory) -> Path:
    return old_project_root(tmp_path_factory.mktemp("shared"))


async def test_cancel_changes_nothing(shared: Session):
    shared.ui.answer = "Cancel"
    before = tree(shared.root)
    outcome = await command(shared.client, "archive", {"path": "projects/old.md"})
    assert outcome["applied"] is False
    assert shared.ui.edits == []
    assert tree(shared.root) == before


@pytest.mark.parametrize("hostile", ["../outside.md", "/etc/passwd", "~/x.md", "_core/profile.md", "_index.md",
                                     "projects\\old.md", "C:/x.md", "projects/\x00old.md", "$HOME/x.md"])
async def test_hostile_paths_are_refused_with_request_failed(shared: Session, hostile: str):
    shared.ui.answer = "Archive"
    before = tree(shared.root)
    with pytest.raises(JsonRpcException) as info:
        await command(shared.client, "archive", {"path": hostile})
    assert info.value.code == -32803
    assert shared.ui.requests == [] and shared.ui.edits == []
    assert tree(shared.root) == before


@pytest.mark.parametrize("args", [{"pth": "projects/old.md"}, {"path": 3}, {}])
async def test_malformed_arguments_are_invalid_params(shared: Session, args: dict):
    shared.ui.answer = "Archive"
    with pytest.raises(JsonRpcException) as info:
        await command(shared.client, "archive", args)
    assert info.value.code == -32602


async def test_delete_of_an_active_file_is_refused_and_archive_is_offered_separately(shared: Session):
    client, root = shared.client, shared.root
    shared.ui.answer = "Delete"
    before = tree(root)
    with pytest.raises(JsonRpcException) as info:
        await command(client, "delete", {"path": "projects/old.md"})
    assert "archive it first" in info.value.message
    assert tree(root) == before and shared.ui.edits == []
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(root / "projects/old.md")),
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=[])))
    titles = [a.title for a in actions]
    assert "Archive projects/old.md" in titles
    assert not any(t.startswith("Delete") for t in titles)


# -- upgrade and purge change the root: a server each -------------------------------------------
async def test_upgrade_from_pm001_creates_only_what_is_missing(client: LanguageClient, tmp_path: Path):
    files = {k: v for k, v in base_files().items() if not k.startswith("_archive")}
    root = write_root(tmp_path / "memory", files)
    result = await start(client, root)
    DiskClient(client, answer="Upgrade", encoding=encoding_of(result))
    index = root / "_index.md"
    await wait_for(client, lambda: codes(client, index) == ["PM001"])
    before = tree(root)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(index)),
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=list(client.diagnostics[uri(index)]))))
    commands = action_commands(actions)
    upgrade = next((c for c in commands if c.command == "pmem.upgrade"), None)
    assert upgrade is not None, actions
    outcome = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=upgrade.command, arguments=upgrade.arguments))
    assert outcome["applied"] is True, outcome
    assert (root / "_archive").is_dir() and (root / "_archive/_trash").is_dir()
    assert (root / "_archive/_index.md").read_text(encoding="utf-8") == "# Archive index\n"
    after = tree(root)
    assert {k: v for k, v in after.items() if k in before} == before  # nothing else touched
    await wait_for(client, lambda: codes(client, index) == [])


async def test_record_code_actions_offer_recover_and_purge_once_expired(client: LanguageClient, tmp_path: Path):
    files = base_files()
    files["_archive/_trash/projects/gone.md"] = summary_file("Gone")
    files["_archive/_index.md"] = (
        "# Archive index\n\n## projects/gone.md\n- status: trashed\n- original: projects/gone.md\n"
        "- location: _archive/_trash/projects/gone.md\n- index-line: - [Gone](projects/gone.md) — old\n"
        "- archived: 2020-01-01\n- reason: done\n- deleted: 2020-01-02\n- recover-by: 2020-02-01\n")
    root = write_root(tmp_path / "memory", files)
    await start(client, root)
    ui = DiskClient(client, answer="Delete permanently")
    archive_index = root / "_archive/_index.md"
    await wait_for(client, lambda: codes(client, archive_index) == ["PM304"])
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(archive_index)),
        range=lsp.Range(start=lsp.Position(line=4, character=0), end=lsp.Position(line=4, character=0)),
        context=lsp.CodeActionContext(diagnostics=[])))
    commands = action_commands(actions)
    assert [c.title for c in commands] == ["Recover _archive/_trash/projects/gone.md",
                                           "Delete _archive/_trash/projects/gone.md permanently"]
    purge = commands[1]
    outcome = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=purge.command, arguments=purge.arguments))
    assert outcome["applied"] is True, outcome
    assert "PERMANENTLY" in ui.requests[-1].message
    assert not (root / "_archive/_trash/projects/gone.md").exists()
    assert archive_index.read_text(encoding="utf-8") == "# Archive index\n"
    await wait_for(client, lambda: codes(client, archive_index) == [])



def test_a_purge_answers_the_pm304_of_its_own_record_only(tmp_path: Path):
    """Two expired trash records, both PM304s in the request's context: the purge of one is the
    quick fix of its own record's finding, not of the other's. (Raw JSON: pytest-lsp's client
    structures command actions as bare commands and loses their diagnostics.)"""
    from raw_lsp import MOVING_CLIENT, RawServer

    record = ("## projects/{n}.md\n- status: trashed\n- original: projects/{n}.md\n"
              "- location: _archive/_trash/projects/{n}.md\n- index-line: - [{n}](projects/{n}.md) — old\n"
              "- archived: 2020-01-01\n- reason: done\n- deleted: 2020-01-02\n- recover-by: 2020-02-01\n")
    files = base_files()
    for n in ("one", "two"):
        files[f"_archive/_trash/projects/{n}.md"] = summary_file(n.title())
    files["_archive/_index.md"] = "# Archive index\n\n" + record.format(n="one") + "\n" + record.format(n="two")
    root = write_root(tmp_path / "memory", files)
    archive_index = root / "_archive/_index.md"
    first = archive_index.read_text(encoding="utf-8").splitlines().index("## projects/one.md")
    session = RawServer(tmp_path)
    try:
        session.initialize(root, MOVING_CLIENT)
        shown = session.wait_for_code(archive_index, "PM304")
        assert len([d for d in shown if d["code"] == "PM304"]) == 2, shown
        answer = session.request("textDocument/codeAction", {
            "textDocument": {"uri": uri(archive_index)},
            "range": {"start": {"line": first, "character": 0}, "end": {"line": first, "character": 0}},
            "context": {"diagnostics": shown}})["result"]
    finally:
        session.close()
    purge = next(a for a in answer if a["title"].startswith("Delete"))
    assert purge["kind"] == "quickfix"
    assert [d["range"]["start"]["line"] for d in purge["diagnostics"]] == [first]


async def test_a_file_archived_without_a_route_is_offered_recover_with_and_without_one(
        client: LanguageClient, tmp_path: Path):
    """Recover returns the root to its earlier state: a file archived with no route comes back
    with none; a route is its own explicit choice, offered beside it (issue 26)."""
    files = base_files()
    files["_archive/projects/quiet.md"] = summary_file("Quiet")
    files["_archive/_index.md"] = (
        "# Archive index\n\n## projects/quiet.md\n- status: archived\n- original: projects/quiet.md\n"
        "- location: _archive/projects/quiet.md\n- routed: no\n- archived: 2026-01-01\n- reason: done\n")
    root = write_root(tmp_path / "memory", files)
    await start(client, root)
    ui = DiskClient(client, answer="Recover")
    archive_index = root / "_archive/_index.md"
    await wait_for(client, lambda: codes(client, archive_index) == [])
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(archive_index)),
        range=lsp.Range(start=lsp.Position(line=3, character=0), end=lsp.Position(line=3, character=0)),
        context=lsp.CodeActionContext(diagnostics=[])))
    commands = action_commands(actions)
    assert [c.title for c in commands] == ["Recover _archive/projects/quiet.md",
                                           "Recover _archive/projects/quiet.md and add a route",
                                           "Delete _archive/projects/quiet.md (move to trash)"]
    assert commands[0].arguments == [{"path": "_archive/projects/quiet.md"}]
    on_the_file = action_commands(await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(root / "_archive/projects/quiet.md")),
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
        context=lsp.CodeActionContext(diagnostics=[]))))
    assert [c.title for c in on_the_file] == [c.title for c in commands]  # the file offers the same
    with pytest.raises(JsonRpcException, match="add_route"):
        await command(client, "archive", {"path": "projects/alpha.md", "add_route": True})
    index_before = (root / "_index.md").read_text(encoding="utf-8")
    outcome = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=commands[1].command, arguments=commands[1].arguments))
    assert outcome["applied"] is True, outcome
    assert "add this PROPOSED route (asked for" in ui.requests[-1].message
    assert (root / "projects/quiet.md").is_file()
    index = (root / "_index.md").read_text(encoding="utf-8")
    added = [line for line in index.splitlines() if line not in index_before.splitlines()]
    assert len(added) == 1 and "projects/quiet.md" in added[0], index
