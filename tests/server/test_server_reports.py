"""End to end: `pmem.status` and `pmem.health` through the real server, and the PM501–PM503
quick fixes that archive with the finding's reason."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from lsp_helpers import DiskClient, Session, action_commands, codes, start, uri, wait_for
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from roots import CRANES, base_files, edited, write_root

DAY = 86400.0


def make(tmp_path: Path) -> Path:
    files = base_files()
    files["projects/cranes.md"] = CRANES
    files["notes/cranes-copy.md"] = edited(CRANES, ("fifteen", "five"))
    files["projects/done.md"] = "# Done project\n\nStatus: done\n\n## Summary\n- A.\n- B.\n- C.\n"
    files["_index.md"] += ("- [Cranes](projects/cranes.md) — crane dashboard\n"
                           "- [Cranes copy](notes/cranes-copy.md) — crane dashboard again\n"
                           "- [Done](projects/done.md) — finished work\n")
    root = write_root(tmp_path / "memory", files)
    for rel, days in (("projects/cranes.md", 5), ("projects/alpha.md", 120)):
        when = time.time() - days * DAY
        os.utime(root / rel, (when, when))
    return root


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def execute(client: LanguageClient, command: str, args: dict | None = None):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=command, arguments=[args] if args is not None else None))


@pytest.fixture(scope="module")
def shared_root(tmp_path_factory) -> Path:
    """The reports and the refused arguments share one server: they change nothing."""
    return make(tmp_path_factory.mktemp("shared"))


async def test_status_and_health_return_their_report_and_show_it(shared: Session):
    client, root = shared.client, shared.root
    before = tree(root)
    shown_before = len(client.messages)

    status = await execute(client, "pmem.status")
    assert status["text"].startswith(f"Memory root: {root}\nCore: 2 files, ")
    assert status["active"]["files"] == 4 and status["active"]["routed"] == 4
    assert [r["path"] for r in status["routes"]] == ["projects/alpha.md", "projects/cranes.md",
                                                     "notes/cranes-copy.md", "projects/done.md"]

    health = await execute(client, "pmem.health", {"root": str(root)})
    assert health["text"].startswith(f"Memory health: {root} (")
    assert [(i["number"], i["proposal"], i["path"]) for i in health["items"]] == [
        (1, "delete", "notes/cranes-copy.md"), (2, "archive", "projects/done.md"),
        (3, "archive", "projects/alpha.md"), (4, "keep active", "projects/cranes.md")]
    assert health["items"][1]["command"] == {"command": "pmem.archive", "arguments": [
        {"path": "projects/done.md", "reason": "concluded: Status: done"}]}
    assert health["expiredTrash"] == []
    await wait_for(client, lambda: len(client.messages) >= shown_before + 2)
    shown = [m.message for m in client.messages[shown_before:]]
    assert shown[-2] == status["text"].rstrip("\n") and shown[-1] == health["text"].rstrip("\n")
    assert tree(root) == before  # reports change nothing


async def test_report_arguments_are_checked(shared: Session):
    for args, code in (({"bogus": 1}, -32602), ({"root": str(shared.root.parent / "elsewhere")}, -32803)):
        try:
            await execute(shared.client, "pmem.health", args)
        except JsonRpcException as exc:
            assert exc.code == code
        else:
            raise AssertionError(f"{args} was accepted")


async def test_health_quick_fixes_archive_with_the_reason(client: LanguageClient, tmp_path: Path):
    root = make(tmp_path)
    result = await start(client, root)
    ui = DiskClient(client, answer=None, encoding=str(result.capabilities.position_encoding or "utf-16"))
    done, copy, alpha = root / "projects/done.md", root / "notes/cranes-copy.md", root / "projects/alpha.md"
    await wait_for(client, lambda: codes(client, done) == ["PM502"] and codes(client, copy) == ["PM503"]
                   and codes(client, alpha) == ["PM501"])

    async def fixes(path: Path) -> list[lsp.Command]:
        diags = client.diagnostics[uri(path)]
        actions = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri(path)), range=diags[0].range,
            context=lsp.CodeActionContext(diagnostics=diags, only=[lsp.CodeActionKind.QuickFix])))
        return action_commands(actions)

    since = time.strftime("%Y-%m-%d", time.localtime(time.time() - 120 * DAY))
    expected = {
        done: ("projects/done.md", "concluded: Status: done"),
        copy: ("notes/cranes-copy.md", "duplicate of projects/cranes.md"),
        alpha: ("projects/alpha.md", f"stale: unchanged since {since}"),
    }
    for path, (rel, reason) in expected.items():
        commands = await fixes(path)
        assert [(c.title, c.command, c.arguments) for c in commands] == [
            (f"Archive {rel} ({reason})", "pmem.archive", [{"path": rel, "reason": reason}])]

    command = (await fixes(done))[0]
    ui.answer = "Archive"
    outcome = await execute(client, command.command, command.arguments[0])
    assert outcome["applied"] is True, outcome
    assert not done.exists() and (root / "_archive/projects/done.md").exists()
    assert "- reason: concluded: Status: done\n" in (root / "_archive/_index.md").read_text(encoding="utf-8")
