"""End to end: hover, links, definition, references, completion, symbols, code lenses and
willRenameFiles through the real server, on a copy of the demo memory (docs/design.md §5).
The read-only features share one server; willRenameFiles, which archives, has its own."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from lsp_helpers import DiskClient, Session, codes, open_doc, start, uri, wait_for
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from roots import navigation_demo


def stat_line(path: Path) -> str:
    st = os.stat(path)
    day = dt.date.fromtimestamp(st.st_mtime).isoformat()
    return f"{st.st_size:,} bytes · ~{round(st.st_size / 4):,} tokens · changed {day}"


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()) if needle in line)


def at(path: Path, line: int, character: int) -> dict:
    return {"text_document": lsp.TextDocumentIdentifier(uri=uri(path)),
            "position": lsp.Position(line=line, character=character)}


def trashed_record(today: dt.date) -> str:
    deleted, recover_by = today - dt.timedelta(days=10), today + dt.timedelta(days=20)
    return ("\n## notes/old-recipes.md\n- status: trashed\n- original: notes/old-recipes.md\n"
            "- location: _archive/_trash/notes/old-recipes.md\n"
            "- index-line: - [Old recipes](notes/old-recipes.md) — recipes from 2024\n"
            f"- archived: 2026-10-01\n- reason: replaced\n- deleted: {deleted}\n- recover-by: {recover_by}\n")


async def scanned(client: LanguageClient, root: Path, profile: str = "neovim") -> lsp.InitializeResult:
    result = await start(client, root, profile)
    await wait_for(client, lambda: "PM202" in codes(client, root / "notes/reading-list.md"))
    return result


# -- read-only: one server for the module ------------------------------------------------------
@pytest.fixture(scope="module")
def shared_root(tmp_path_factory) -> Path:
    """The navigation demo, its trashed record due 20 days from today."""
    root = navigation_demo(tmp_path_factory.mktemp("nav"))
    archive_index = root / "_archive/_index.md"
    text = archive_index.read_text(encoding="utf-8")
    archive_index.write_text(text[:text.index("\n## notes/old-recipes.md")] + trashed_record(dt.date.today()),
                             encoding="utf-8")
    return root


@pytest.fixture
async def nav(shared: Session) -> Session:
    """The shared session once the first scan has been published."""
    await wait_for(shared.client, lambda: "PM202" in codes(shared.client, shared.root / "notes/reading-list.md"))
    return shared


async def test_navigation_capabilities(nav: Session):
    caps = nav.result.capabilities
    assert caps.hover_provider and caps.definition_provider and caps.references_provider
    assert caps.document_link_provider is not None and caps.code_lens_provider.resolve_provider
    assert sorted(caps.completion_provider.trigger_characters) == ["(", "/", "["]


async def test_hover_on_a_route_shows_the_targets_title_summary_size_and_last_change(nav: Session):
    client, root = nav.client, nav.root
    index = root / "_index.md"
    route_line = line_of(index, "(projects/retail-pipeline.md)")
    hover = await client.text_document_hover_async(lsp.HoverParams(**at(index, route_line, 30)))
    assert hover.contents.kind == lsp.MarkupKind.Markdown
    assert hover.contents.value == (
        "**Retail data pipeline — Fjällgården** · `projects/retail-pipeline.md`\n\n"
        "- Client: Fjällgården AB, an outdoor retailer with 41 stores; contract runs to 2027-03-31.\n"
        "- Building a nightly ELT pipeline from the POS, webshop and ERP into BigQuery with dbt.\n"
        "- Decision (2026-10-07): Airflow on Cloud Composer 2, not self-hosted, to reduce on-call load.\n"
        "- Nightly load must land before 06:00 so the store managers' dashboard is fresh at opening.\n"
        "- Current phase: webshop source in production; ERP source in testing.\n\n"
        f"{stat_line(root / 'projects/retail-pipeline.md')}\n")
    assert (hover.range.start.character, hover.range.end.character) == (25, 52)


async def test_hover_on_a_title_without_a_route(nav: Session):
    reading = nav.root / "notes/reading-list.md"
    hover = await nav.client.text_document_hover_async(lsp.HoverParams(**at(reading, 0, 4)))
    assert hover.contents.value == ("**No route** in `_index.md`: agents will not load `notes/reading-list.md` "
                                    "on demand.\n")


async def test_hover_on_a_trashed_record_shows_the_days_left_before_recover_by(nav: Session):
    archive_index = nav.root / "_archive/_index.md"
    hover = await nav.client.text_document_hover_async(lsp.HoverParams(
        **at(archive_index, line_of(archive_index, "- status: trashed"), 3)))
    recover_by = dt.date.today() + dt.timedelta(days=20)
    assert f"- recover-by: {recover_by} — 20 days left\n" in hover.contents.value
    assert hover.contents.value.startswith("**Archive record** `notes/old-recipes.md` — trashed\n")


async def test_definition_and_document_links_lead_to_the_right_files(nav: Session):
    client, root = nav.client, nav.root
    index, talk = root / "_index.md", root / "projects/conference-talk.md"
    talk_line = line_of(talk, "[my Airflow notes]")
    found = await client.text_document_definition_async(lsp.DefinitionParams(**at(talk, talk_line, 70)))
    assert found.uri == uri(root / "notes/airflow-tips.md") and found.range.start.line == 0
    found = await client.text_document_definition_async(lsp.DefinitionParams(
        **at(index, line_of(index, "[[notes/airflow-tips]]"), 6)))
    assert found.uri == uri(root / "notes/airflow-tips.md")
    links = await client.text_document_document_link_async(lsp.DocumentLinkParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(talk))))
    assert [(lk.range.start.line, lk.target) for lk in links] == [
        (line_of(talk, "(retail-pipeline.md)"), uri(root / "projects/retail-pipeline.md")),
        (talk_line, uri(root / "notes/airflow-tips.md"))]


async def test_references_to_a_file_from_its_route_and_from_its_title(nav: Session):
    """References to projects/a.md: the route and the two links, also from the file's own title."""
    client, root = nav.client, nav.root
    index, a = root / "_index.md", root / "projects/a.md"
    expected = [(uri(index), line_of(index, "(projects/a.md)")),
                (uri(root / "notes/airflow-tips.md"), line_of(root / "notes/airflow-tips.md", "../projects/a.md")),
                (uri(root / "projects/recipe-search.md"), line_of(root / "projects/recipe-search.md", "(a.md#"))]
    for params in (at(index, expected[0][1], 10), at(a, 0, 3)):
        refs = await client.text_document_references_async(lsp.ReferenceParams(
            **params, context=lsp.ReferenceContext(include_declaration=False)))
        assert [(r.uri, r.range.start.line) for r in refs] == expected


async def test_completion_in_the_index_offers_the_file_without_a_route_first(nav: Session):
    client, index = nav.client, nav.root / "_index.md"
    buffer = index.read_text(encoding="utf-8") + "- [New](\n"
    open_doc(client, index, buffer)
    try:
        last = buffer.count("\n") - 1
        completions = await client.text_document_completion_async(lsp.CompletionParams(
            **at(index, last, len("- [New](")),
            context=lsp.CompletionContext(trigger_kind=lsp.CompletionTriggerKind.TriggerCharacter,
                                          trigger_character="(")))
        items = sorted(completions.items, key=lambda c: c.sort_text)
        assert items[0].label == "notes/reading-list.md" and items[0].detail == "no route yet"
        assert items[0].text_edit.new_text == "notes/reading-list.md"
        assert items[0].text_edit.range.start == lsp.Position(line=last, character=len("- [New]("))
        assert all(item.detail == "routed in _index.md" for item in items[1:])
    finally:  # the other tests of the module read the disk's index
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri(index))))


async def test_document_symbols_mark_the_summary_and_workspace_symbols_match_fuzzily(nav: Session):
    client, root = nav.client, nav.root
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(root / "projects/retail-pipeline.md"))))
    (title,) = symbols
    assert (title.children[0].name, title.children[0].detail) == ("Summary", "summary · 5 bullets")
    found = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="rtlpipe"))
    assert found[0].name == "Retail data pipeline — Fjällgården"
    assert found[0].location.uri == uri(root / "projects/retail-pipeline.md")


async def test_code_lenses_come_without_titles_and_resolve_one_by_one(nav: Session):
    client, a = nav.client, nav.root / "projects/a.md"
    lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(a))))
    assert len(lenses) == 3 and all(lens.command is None and lens.range.start.line == 0 for lens in lenses)
    titles = [(await client.code_lens_resolve_async(lens)).command.title for lens in lenses]
    assert titles == ["routed", "3 references", "changed " + stat_line(a).rsplit(" ", 1)[-1]]


# -- renames and moves change the root: a server of their own ------------------------------------
def _rename(old: Path, new: Path) -> lsp.RenameFilesParams:
    return lsp.RenameFilesParams(files=[lsp.FileRename(old_uri=uri(old), new_uri=uri(new))])


async def test_will_rename_files_keeps_the_route_and_links_correct(client: LanguageClient, tmp_path: Path):
    root = navigation_demo(tmp_path)
    result = await scanned(client, root, "visual_studio_code")
    will_rename = result.capabilities.workspace.file_operations.will_rename
    assert sorted((f.pattern.glob, f.pattern.matches) for f in will_rename.filters) == [
        ("**", lsp.FileOperationPatternKind.Folder), ("**/*.md", lsp.FileOperationPatternKind.File)]
    index, tips, search = root / "_index.md", root / "notes/airflow-tips.md", root / "projects/recipe-search.md"

    edit = await client.workspace_will_rename_files_async(_rename(root / "projects/a.md", root / "projects/b.md"))
    changes = {change.text_document.uri: [(e.range.start.line, e.new_text) for e in change.edits]
               for change in edit.document_changes}
    assert changes == {
        uri(index): [(line_of(index, "(projects/a.md)"), "projects/b.md")],
        uri(tips): [(line_of(tips, "../projects/a.md"), "../projects/b.md")],
        uri(search): [(line_of(search, "(a.md#summary)"), "b.md#summary")],
    }
    (tips_edit,) = next(c for c in edit.document_changes if c.text_document.uri == uri(tips)).edits
    line = tips.read_text(encoding="utf-8").splitlines()[tips_edit.range.start.line]
    assert line[tips_edit.range.start.character:tips_edit.range.end.character] == "../projects/a.md"

    # A move into _archive/ is not archiving: no edits, and the user is told what to use.
    edit = await client.workspace_will_rename_files_async(
        _rename(root / "projects/a.md", root / "_archive/projects/a.md"))
    assert edit is None
    await wait_for(client, lambda: any("Archive action" in m.message for m in client.messages))

    # The server's own lifecycle move (VS Code reports it too) gets no edits and no message.
    DiskClient(client, answer="Archive")
    outcome = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="pmem.archive", arguments=[{"path": "projects/garden-sensors.md"}]))
    assert outcome["applied"] is True, outcome
    shown = len(client.messages)
    edit = await client.workspace_will_rename_files_async(
        _rename(root / "projects/garden-sensors.md", root / "_archive/projects/garden-sensors.md"))
    assert edit is None
    assert not any("Archive action" in m.message for m in client.messages[shown:])
