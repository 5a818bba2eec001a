"""End to end: history in the editor (docs/design.md §11) — the "changed by" code lens drawn from
the history store, `pmem.history`, `pmem.diff` and the `pmem-history:` text behind it,
`pmem.undo` confirmed like a lifecycle action, and `pmem.review.accept` that takes the lens away.
A real store needs `git`."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest
from lsp_helpers import DiskClient, open_doc, replace_all, start, uri
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pmem_lsp.engine.history.store import Writer, open_store
from roots import base_files, summary_file, write_root

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with the `git` command")

ALPHA = "projects/alpha.md"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_root(tmp_path / "memory", base_files())


async def command(client: LanguageClient, name: str, args: dict | None):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=f"pmem.{name}", arguments=[args] if args is not None else None))


async def lens_titles(client: LanguageClient, path: Path) -> list[str]:
    found = await client.text_document_code_lens_async(lsp.CodeLensParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(path))))
    titles = []
    for lens in found or []:
        if lens.command is None:  # the navigation lenses are resolved when shown
            lens = await client.code_lens_resolve_async(lens)
        assert lens.command is not None
        titles.append(lens.command.title)
    return titles


async def until_lens(client: LanguageClient, path: Path, wanted, timeout: float = 30.0) -> list[str]:
    """Ask for the lenses until `wanted(titles)`: the review state is read in the background."""
    deadline = time.monotonic() + timeout
    while True:
        titles = await lens_titles(client, path)
        if wanted(titles):
            return titles
        if time.monotonic() > deadline:
            raise AssertionError(f"lenses of {path.name} never matched: {titles}")
        await asyncio.sleep(0.1)


def changed_by(titles: list[str]) -> list[str]:
    return [t for t in titles if t.startswith("changed by ")]


@pytest.mark.parametrize("profile", ["neovim", "visual-studio-code"])
async def test_agent_change_gets_a_lens_diff_undo_and_keep(client: LanguageClient, root: Path, profile: str):
    refreshes: list[None] = []
    client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)(lambda _params: refreshes.append(None))  # before start's
    await start(client, root, profile=profile)
    ui = DiskClient(client, answer=None)
    alpha = root / ALPHA
    original = alpha.read_text(encoding="utf-8")

    # The baseline: history begins with the root as it is (no lens for that).
    listed = await command(client, "history", {"show": False})
    assert len(listed["entries"]) == 1
    titles = await until_lens(client, alpha, lambda t: "no route" in t or "routed" in t)
    assert changed_by(titles) == []

    # An agent writes, and its hook records the entry (as `pmem hook post-write` does).
    changed = original.replace("fact number 1 about alpha", "fact number 1, rewritten by the agent")
    assert changed != original
    alpha.write_text(changed, encoding="utf-8")
    open_store(root).record(Writer("agent", "Claude Code"), f"Write {ALPHA}")
    titles = await until_lens(client, alpha, lambda t: bool(changed_by(t)))
    assert changed_by(titles) == ["changed by an agent (Claude Code) just now"]
    assert {"diff", "undo", "keep"} <= set(titles)
    if profile == "visual-studio-code":  # it shows lenses without asking: it is told when they change
        assert refreshes

    # pmem.history: the entries of the file as data, newest first, unreviewed marked.
    listed = await command(client, "history", {"path": ALPHA, "show": False})
    assert listed["entries"][0]["writer"] == {"kind": "agent", "detail": "Claude Code"}
    assert listed["entries"][0]["reviewed"] is False

    # pmem.diff: the text before the agent's change, the text now, and a URI serving the old one.
    shown = await command(client, "diff", {"path": ALPHA})
    assert shown["old"] == original and shown["current"] == changed
    assert shown["oldUri"].startswith("pmem-history:/projects/alpha.md?")
    assert shown["uri"] == uri(alpha)
    assert "+- fact number 1, rewritten by the agent" in shown["diff"]
    served = await command(client, "historyText", {"uri": shown["oldUri"]})
    assert served == {"text": original, "exists": True}

    # pmem.undo: confirmed first; a cancel changes nothing.
    entry = listed["entries"][0]["id"]
    cancelled = await command(client, "undo", {"entry": entry, "paths": [ALPHA]})
    assert cancelled["applied"] is False
    assert [a.title for a in ui.requests[-1].actions] == ["Undo", "Cancel"]
    assert "projects/alpha.md" in ui.requests[-1].message
    assert alpha.read_text(encoding="utf-8") == changed

    ui.answer = "Undo"  # without an entry: the file's newest unreviewed change, the agent's
    undone = await command(client, "undo", {"paths": [ALPHA]})
    assert entry in undone["message"]
    assert undone["applied"] is True, undone
    assert alpha.read_text(encoding="utf-8") == original
    # The undo is the user's own write: the agent's entry is still unreviewed, nothing more.
    listed = await command(client, "history", {"path": ALPHA, "show": False})
    assert listed["entries"][0]["writer"]["kind"] == "pmem"

    # keep: marks the file's unreviewed entries reviewed, and the lens goes away.
    kept = await command(client, "review.accept", {"path": ALPHA})
    assert kept["accepted"] >= 1 and ALPHA not in kept["unreviewed"]
    titles = await until_lens(client, alpha, lambda t: not changed_by(t))
    assert "diff" not in titles


async def test_outside_write_seen_by_the_watcher_is_one_entry(client: LanguageClient, root: Path):
    await start(client, root)
    alpha = root / ALPHA
    await command(client, "history", {"show": False})  # the baseline
    await until_lens(client, alpha, lambda t: "no route" in t or "routed" in t)
    for n in range(3):  # a burst: one entry once it settles
        alpha.write_text(summary_file("Alpha", extra=f"\nsync tool pass {n}\n"), encoding="utf-8")
        # The writer's pauses are its own (not the client loop's, which a loaded machine can
        # hold far past SETTLE); a batch the server receives late still joins the burst, as
        # settled is measured on the disk (tests/server/test_history_settle.py).
        time.sleep(0.02)
    titles = await until_lens(client, alpha, lambda t: bool(changed_by(t)))
    assert changed_by(titles) == ["changed by another program just now"]
    listed = await command(client, "history", {"path": ALPHA, "show": False})
    assert [e["writer"]["kind"] for e in listed["entries"]] == ["outside", "outside"]  # the burst, the baseline


async def test_history_lenses_come_after_the_ordinary_ones_which_keep_their_places(client: LanguageClient, root: Path):
    """VS Code applies the resolves of an older answer still in flight to a newer answer's lenses
    of the same line by index (CodeLensWidget.updateCommands): the ordinary lenses, listed before
    an outside write, must be the first ones after it too, or their titles overwrite the
    commands of "changed by … · diff · undo" (the flaky e2e "history" step)."""
    await start(client, root)
    alpha = root / ALPHA
    await command(client, "history", {"show": False})  # the baseline
    await until_lens(client, alpha, lambda t: "no route" in t or "routed" in t)
    doc = lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=uri(alpha)))
    before = await client.text_document_code_lens_async(doc)
    assert before and all(lens.command is None for lens in before)  # resolved when shown
    alpha.write_text(summary_file("Alpha", extra="\nrewritten by a sync tool\n"), encoding="utf-8")
    await until_lens(client, alpha, lambda t: bool(changed_by(t)))
    after = await client.text_document_code_lens_async(doc)
    assert [lens.data for lens in after[:len(before)]] == [lens.data for lens in before]
    assert [lens.command.title for lens in after[len(before):]][1:] == ["diff", "undo", "keep"]
    # With history lenses the ordinary ones come resolved too: a late title would push
    # "diff · undo · keep" to the right under the pointer.
    shown = [await client.code_lens_resolve_async(lens) for lens in before]
    assert [lens.command.title if lens.command else None for lens in after[:len(before)]] == [
        lens.command.title for lens in shown]


async def test_undo_conflict_and_bad_arguments_are_refused(client: LanguageClient, root: Path):
    await start(client, root)
    ui = DiskClient(client, answer="Undo")
    alpha = root / ALPHA
    await command(client, "history", {"show": False})
    first = alpha.read_text(encoding="utf-8").replace("fact number 2 about alpha", "Fact 2 by an agent")
    alpha.write_text(first, encoding="utf-8")
    entry = open_store(root).record(Writer("agent", "Codex"), "Write")
    alpha.write_text(first.replace("Fact 2 by an agent", "Fact 2 by an agent, then the user"), encoding="utf-8")
    open_store(root).record(Writer("outside"), "changed outside pmem")

    with pytest.raises(JsonRpcException, match="a later change touched the same lines"):
        await command(client, "undo", {"entry": entry, "paths": [ALPHA]})
    assert ui.requests == []  # refused before anything is asked
    with pytest.raises(JsonRpcException, match="no entry"):
        await command(client, "undo", {"entry": "0123456789ab"})
    with pytest.raises(JsonRpcException, match="needs"):
        await command(client, "review.accept", {})
    with pytest.raises(JsonRpcException, match="needs"):
        await command(client, "undo", {})



async def test_a_save_in_the_editor_is_the_users_own_change(client: LanguageClient, root: Path):
    await start(client, root)
    alpha = root / ALPHA
    await command(client, "history", {"show": False})  # the baseline
    await until_lens(client, alpha, lambda t: "no route" in t or "routed" in t)
    text = open_doc(client, alpha)
    edited = text + "\nTyped in the editor.\n"
    replace_all(client, alpha, edited, version=2)
    alpha.write_text(edited, encoding="utf-8")  # the editor writes the buffer, then says so
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri(alpha))))
    deadline = time.monotonic() + 30
    while True:  # read the store without recording (pmem.history would record the save as `outside`)
        entries = open_store(root).entries(ALPHA)
        if len(entries) == 2 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert [e.writer.kind for e in entries] == ["editor", "outside"]
    assert changed_by(await lens_titles(client, alpha)) == []
