"""End to end: quick fixes arrive as code actions whose edits resolve the finding."""

from __future__ import annotations

from pathlib import Path

from lsp_helpers import DiskClient, codes, open_doc, start, uri, wait_for
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root


async def fixes_for(client: LanguageClient, path: Path, code: str) -> list[lsp.CodeAction]:
    diags = [d for d in client.diagnostics[uri(path)] if d.code == code]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(path)), range=diags[0].range,
        context=lsp.CodeActionContext(diagnostics=diags, only=[lsp.CodeActionKind.QuickFix])))
    return [a for a in actions or [] if isinstance(a, lsp.CodeAction)]


async def test_add_route_quick_fix_clears_pm202(client: LanguageClient, tmp_path: Path):
    files = base_files()
    files["_index.md"] += "\n## Notes\n- [Other](notes/other.md) — another note\n"
    files["notes/other.md"] = summary_file("Other")
    files["notes/loose.md"] = summary_file("Loose note")
    root = write_root(tmp_path / "memory", files)
    result = await start(client, root)
    ui = DiskClient(client, answer=None, encoding=str(result.capabilities.position_encoding or "utf-16"))
    loose = root / "notes/loose.md"
    await wait_for(client, lambda: codes(client, loose) == ["PM202"])
    actions = await fixes_for(client, loose, "PM202")
    assert [a.title for a in actions] == ["Add route to _index.md"]
    assert actions[0].kind == lsp.CodeActionKind.QuickFix
    ui._apply(lsp.ApplyWorkspaceEditParams(edit=actions[0].edit))
    index_text = (root / "_index.md").read_text(encoding="utf-8")
    assert index_text.endswith("- [Other](notes/other.md) — another note\n"
                               "- [Loose note](notes/loose.md) — fact number 1 about loose note\n")
    # The server sees the saved index (the editor would send didChange/didSave; here: open it).
    open_doc(client, root / "_index.md")
    await wait_for(client, lambda: codes(client, loose) == [])


async def test_quick_fix_is_computed_against_the_open_buffer(client: LanguageClient, tmp_path: Path):
    files = base_files()
    files["projects/gone-route.md"] = summary_file("Gone")
    root = write_root(tmp_path / "memory", files)
    await start(client, root)
    index = root / "_index.md"
    await wait_for(client, lambda: codes(client, root / "projects/gone-route.md") == ["PM202"])
    # Unsaved buffer: a dangling route added at the top; the fix must address the buffer's line.
    buffer = "# Memory index\n\n- [Lost](projects/lost.md) — was here\n" + index.read_text(encoding="utf-8").split("\n", 1)[1]
    open_doc(client, index, buffer)
    await wait_for(client, lambda: codes(client, index) == ["PM201"])
    actions = await fixes_for(client, index, "PM201")
    remove = next(a for a in actions if a.title.startswith("Remove route"))
    (change,) = remove.edit.document_changes
    assert change.text_document.version == 1  # tied to the buffer the user sees
    (edit,) = change.edits
    assert (edit.range.start.line, edit.range.end.line, edit.new_text) == (2, 3, "")


async def test_an_edit_to_an_open_file_with_a_space_and_an_accent_in_its_name_carries_its_version(
        client: LanguageClient, tmp_path: Path):
    """pygls keys open documents by the unquoted uri; looking one up by the quoted uri missed
    it, and the edit lost the version guard that keeps it off a changed buffer."""
    files = base_files()
    files["my notes/été note.md"] = "# Été\n\n## TL;DR\n- one\n- two\n- three\n"
    files["_index.md"] += "- [Été](my notes/été note.md) — summer\n"
    root = write_root(tmp_path / "memory", files)
    await start(client, root)
    note = root / "my notes/été note.md"
    open_doc(client, note, version=7)
    await wait_for(client, lambda: "PM106" in codes(client, note))
    actions = await fixes_for(client, note, "PM106")
    assert actions, "the rename-heading fix is offered"
    changes = actions[0].edit.document_changes
    assert [c.text_document.version for c in changes] == [7]
