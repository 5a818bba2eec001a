"""A buffer that begins with a BOM (U+FEFF), as some clients send it in `didOpen`/`didChange`:
analysed as the disk is (the disk's reader drops the BOM), every position on its line 0 counted
one character further in the client's units, and the server's edits keep the BOM."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import open_doc, start, uri, wait_for
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from roots import base_files, write_root

BOM = "\ufeff"
# On disk with a BOM (its bytes); a reader that kept it would see no title and no heading on
# line 0, and report PM101 for a.md and PM100 for b.md.
NOTES = {
    "notes/a.md": "# Café ☕ note\n\n## Summary\n- one\n- two\n- three\n",
    "notes/b.md": "## summary\n- one\n- two\n- three\n",
    "notes/c.md": "# [Alpha](../projects/alpha.md) ☕ notes\n\n## Summary\n- one\n- two\n- three\n",
}


def _units(text: str, encoding: str) -> int:
    return len(text.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(text.encode("utf-8"))


def _shape(diagnostics: list[lsp.Diagnostic], shift: int = 0) -> list[tuple]:
    """Each diagnostic's code and range, line 0's columns moved by `shift`."""
    def col(p: lsp.Position) -> int:
        return p.character + shift if p.line == 0 else p.character
    return sorted((str(d.code), d.range.start.line, col(d.range.start), d.range.end.line, col(d.range.end))
                  for d in diagnostics)


def _apply(text: str, edits: list[lsp.TextEdit], encoding: str) -> str:
    """The client's side of text edits: positions in its units, on its own text (BOM included)."""
    lines = text.split("\n")

    def offset(p: lsp.Position) -> int:
        line, units, i = lines[p.line], 0, 0
        while i < len(line) and units < p.character:
            units += _units(line[i], encoding)
            i += 1
        return sum(len(x) + 1 for x in lines[:p.line]) + i
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


@pytest.mark.parametrize("profile", ["neovim", "visual_studio_code"])
async def test_a_buffer_with_a_bom_is_analysed_as_the_disk_at_the_right_columns(
        client: LanguageClient, tmp_path: Path, profile: str):
    files = base_files()
    root = write_root(tmp_path / "memory", files)
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    # twin of c.md without a BOM, for navigation that has no diagnostic to compare with
    (root / "notes/twin.md").write_text(NOTES["notes/c.md"], encoding="utf-8")
    result = await start(client, root, profile=profile)
    encoding = str(result.capabilities.position_encoding or "utf-16")
    shift = _units(BOM, encoding)  # one UTF-16 code unit; three bytes in UTF-8
    a, b, c, twin = (root / rel for rel in ("notes/a.md", "notes/b.md", "notes/c.md", "notes/twin.md"))
    # The scan's publications (files not open: the client reads them without the BOM).
    await wait_for(client, lambda: all(client.diagnostics.get(uri(p)) for p in (a, b, c)))
    disk = {p: _shape(client.diagnostics[uri(p)]) for p in (a, b, c)}
    assert [x[0] for x in disk[a]] == ["PM202"] and [x[0] for x in disk[b]] == ["PM106", "PM202"]

    # A client that keeps the BOM in the buffer: the same findings, line 0 shifted by it.
    for p in (a, b, c):
        open_doc(client, p, BOM + NOTES[p.relative_to(root).as_posix()])
    for p in (a, b, c):
        expected = [(code, l0, c0 + shift if l0 == 0 else c0, l1, c1 + shift if l1 == 0 else c1)
                    for code, l0, c0, l1, c1 in disk[p]]
        await wait_for(client, lambda p=p, expected=expected: _shape(client.diagnostics.get(uri(p), [])) == expected)

    # The quick fix edits the client's line 0 where the heading is, and keeps the BOM.
    diagnostic = next(d for d in client.diagnostics[uri(b)] if d.code == "PM106")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(b)), range=diagnostic.range,
        context=lsp.CodeActionContext(diagnostics=[diagnostic])))
    rename = next(a for a in actions or [] if a.kind == lsp.CodeActionKind.QuickFix and a.edit is not None)
    (change,) = rename.edit.document_changes
    fixed = _apply(BOM + NOTES["notes/b.md"], list(change.edits), encoding)
    assert fixed == BOM + "## Summary\n- one\n- two\n- three\n"

    # Links and hover on line 0 read the client's columns: as the twin's, moved by the BOM.
    open_doc(client, twin)

    async def links(p: Path) -> list[tuple]:
        found = await client.text_document_document_link_async(
            lsp.DocumentLinkParams(text_document=lsp.TextDocumentIdentifier(uri=uri(p))))
        return sorted((d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character,
                       d.target) for d in found or [])
    twin_links, bom_links = await links(twin), await links(c)
    assert twin_links and twin_links[0][0] == 0
    assert bom_links == [(l0, c0 + shift if l0 == 0 else c0, l1, c1 + shift if l1 == 0 else c1, t)
                         for l0, c0, l1, c1, t in twin_links]

    async def hover(p: Path, character: int) -> lsp.Hover | None:
        return await client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri(p)), position=lsp.Position(line=0, character=character)))
    inside = twin_links[0][1] + 1  # a column inside the link, in the twin
    plain, shifted = await hover(twin, inside), await hover(c, inside + shift)
    assert plain is not None and shifted is not None and shifted.contents == plain.contents
    assert shifted.range is not None and plain.range is not None
    assert (shifted.range.start.character, shifted.range.end.character) == (
        plain.range.start.character + shift, plain.range.end.character + shift)

    # Completion inside the link's target on line 0: the same items, their edits moved by the BOM.
    async def completion(p: Path, character: int) -> list[tuple]:
        found = await client.text_document_completion_async(lsp.CompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri(p)), position=lsp.Position(line=0, character=character)))
        items = found.items if isinstance(found, lsp.CompletionList) else found or []
        return sorted((i.label, i.text_edit.range.start.character, i.text_edit.range.end.character)
                      for i in items if isinstance(i.text_edit, lsp.TextEdit))
    target = NOTES["notes/c.md"].index("../projects/") + len("../projects/")  # after the folder's slash
    target_units = _units(NOTES["notes/c.md"][:target], encoding)
    plain_items = await completion(twin, target_units)
    assert plain_items
    assert await completion(c, target_units + shift) == [(label, s + shift, e + shift) for label, s, e in plain_items]
