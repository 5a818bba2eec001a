"""End to end: the real server over stdio, a real root on disk, pushed diagnostics. Tests that
only read them share one server; those that edit buffers, settings or roots have their own."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import Session, codes, edit, open_doc, replace_all, start, uri, wait_for
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root


def planted_root(base: Path) -> Path:
    """A dangling route, a summary of two bullets and an unrouted note."""
    files = base_files()
    files["_index.md"] += "- [Gone](projects/gone.md) — was renamed\n"
    files["projects/two.md"] = summary_file("Two", bullets=2)
    files["notes/loose.md"] = summary_file("Loose")
    return write_root(base / "memory", files)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return planted_root(tmp_path)


@pytest.fixture(scope="module")
def shared_root(tmp_path_factory) -> Path:
    """Tests that only read the diagnostics share one server on the planted root."""
    return planted_root(tmp_path_factory.mktemp("shared"))


async def test_unopened_files_get_diagnostics_with_codes_and_ranges(shared: Session):
    client, root = shared.client, shared.root
    index, two, loose = root / "_index.md", root / "projects/two.md", root / "notes/loose.md"
    await wait_for(client, lambda: codes(client, index) and codes(client, two) and codes(client, loose))

    assert codes(client, index) == ["PM201"]
    dangling = client.diagnostics[uri(index)][0]
    # `- [Gone](projects/gone.md) — …` on line 5: the range is the path inside the parentheses.
    assert dangling.range == lsp.Range(start=lsp.Position(line=4, character=9), end=lsp.Position(line=4, character=25))
    assert dangling.severity == lsp.DiagnosticSeverity.Error
    assert dangling.source == "pmem"

    # projects/two.md: summary with 2 bullets, and no route.
    assert codes(client, two) == ["PM102", "PM202"]
    by_code = {d.code: d for d in client.diagnostics[uri(two)]}
    assert by_code["PM102"].range.start == lsp.Position(line=4, character=0)  # the `## Summary` line
    assert by_code["PM202"].range.start.line == 0  # a whole-file finding sits on the title

    assert codes(client, loose) == ["PM202"]
    assert codes(client, root / "projects/alpha.md") == []


async def test_did_change_raises_and_clears_pm102(client: LanguageClient, root: Path):
    await start(client, root)
    alpha = root / "projects/alpha.md"
    await wait_for(client, lambda: codes(client, root / "_index.md") == ["PM201"])
    text = open_doc(client, alpha)
    lines = text.split("\n")
    first_bullet = lines.index("- fact number 1 about alpha")

    # Delete bullets 3 and 4: two remain.
    edit(client, alpha, first_bullet + 2, 0, first_bullet + 4, 0, "", version=2)
    await wait_for(client, lambda: codes(client, alpha) == ["PM102"])
    message = client.diagnostics[uri(alpha)][0].message
    assert "2 bullets" in message

    # Back to four bullets.
    edit(client, alpha, first_bullet + 2, 0, first_bullet + 2, 0,
         "- fact number 3 about alpha\n- fact number 4 about alpha\n", version=3)
    await wait_for(client, lambda: codes(client, alpha) == [])
    assert alpha.read_text(encoding="utf-8") == text  # nothing was written to disk


async def test_editing_the_index_buffer_clears_pm202_without_saving(client: LanguageClient, root: Path):
    await start(client, root)
    index, loose = root / "_index.md", root / "notes/loose.md"
    await wait_for(client, lambda: codes(client, loose) == ["PM202"])
    on_disk = index.read_text(encoding="utf-8")
    open_doc(client, index)
    replace_all(client, index, on_disk + "\n## Notes\n- [Loose](notes/loose.md) — a loose note\n", version=2)
    await wait_for(client, lambda: codes(client, loose) == [])
    assert codes(client, root / "projects/two.md") == ["PM102", "PM202"]
    assert index.read_text(encoding="utf-8") == on_disk

    # Undo in the buffer: the route is gone again and so is the file's cover.
    replace_all(client, index, on_disk, version=3)
    await wait_for(client, lambda: codes(client, loose) == ["PM202"])


async def test_closing_a_buffer_returns_to_the_disk(client: LanguageClient, root: Path):
    await start(client, root)
    alpha = root / "projects/alpha.md"
    await wait_for(client, lambda: codes(client, root / "_index.md") == ["PM201"])
    open_doc(client, alpha, "# Alpha\n\n## Summary\n- one\n")
    await wait_for(client, lambda: codes(client, alpha) == ["PM102"])
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri(alpha))))
    await wait_for(client, lambda: codes(client, alpha) == [])


async def test_positions_follow_the_negotiated_encoding(client: LanguageClient, tmp_path: Path):
    files = base_files()
    # CJK and an emoji before the dangling target: UTF-8, UTF-16 and code points all differ.
    files["_index.md"] += "- [中文😀](gone.md) — x\n"
    root = write_root(tmp_path / "memory", files)
    result = await start(client, root, profile="neovim")
    index = root / "_index.md"
    await wait_for(client, lambda: codes(client, index) == ["PM201"])
    diag = client.diagnostics[uri(index)][0]
    prefix = "- [中文😀]("
    encoding = result.capabilities.position_encoding
    expected = {"utf-8": len(prefix.encode("utf-8")), "utf-16": len(prefix.encode("utf-16-le")) // 2,
                "utf-32": len(prefix)}[encoding]
    assert diag.range.start.character == expected
    assert diag.range.end.character == expected + len("gone.md")


async def test_files_outside_every_root_are_ignored(client: LanguageClient, root: Path, tmp_path: Path):
    await start(client, root)
    await wait_for(client, lambda: codes(client, root / "_index.md") == ["PM201"])
    stray = tmp_path / "elsewhere" / "notes.md"
    stray.parent.mkdir()
    stray.write_text("# Stray\n\n## Summary\n- one\n", encoding="utf-8")
    open_doc(client, stray)
    # A later, observable event proves the server handled the stray didOpen first.
    alpha = root / "projects/alpha.md"
    open_doc(client, alpha, "# Alpha\n\n## Summary\n- one\n")
    await wait_for(client, lambda: codes(client, alpha) == ["PM102"])
    assert uri(stray) not in client.diagnostics


async def test_settings_from_initialization_options(client: LanguageClient, root: Path):
    await start(client, root, settings={"ignore": ["PM2"], "severity": {"PM102": "error"}})
    two = root / "projects/two.md"
    await wait_for(client, lambda: codes(client, two) == ["PM102"])
    assert client.diagnostics[uri(two)][0].severity == lsp.DiagnosticSeverity.Error
    assert codes(client, root / "_index.md") == []


async def test_workspace_folders_added_and_removed(client: LanguageClient, root: Path, tmp_path: Path):
    other = write_root(tmp_path / "other", {**base_files(), "notes/n.md": summary_file("N", bullets=1)})
    await start(client, root)
    await wait_for(client, lambda: codes(client, root / "_index.md") == ["PM201"])
    note = other / "notes/n.md"
    assert uri(note) not in client.diagnostics
    client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(
        event=lsp.WorkspaceFoldersChangeEvent(added=[lsp.WorkspaceFolder(uri=uri(other), name="other")], removed=[])))
    await wait_for(client, lambda: codes(client, note) == ["PM102", "PM202"])
    client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(
        event=lsp.WorkspaceFoldersChangeEvent(added=[], removed=[lsp.WorkspaceFolder(uri=uri(root), name="memory")])))
    await wait_for(client, lambda: codes(client, root / "_index.md") == [])
    assert codes(client, note) == ["PM102", "PM202"]


async def test_opening_a_file_resends_its_diagnostics(shared: Session):
    # eglot drops diagnostics of files that were not open when they arrived.
    client, root = shared.client, shared.root
    two = root / "projects/two.md"
    await wait_for(client, lambda: codes(client, two) == ["PM102", "PM202"])
    del client.diagnostics[uri(two)]
    open_doc(client, two)
    await wait_for(client, lambda: codes(client, two) == ["PM102", "PM202"])
