"""Any name, any output (issue 23): a file name that is not UTF-8, present at start or made
while the server runs, is published under the URI of its exact bytes and shown escaped in
hovers; the watcher and the publisher go on serving the root afterwards."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_helpers import codes, open_doc, start, uri, wait_for, watching
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root


def bad(root: Path, name: bytes) -> Path:
    """A file whose name holds bytes that are not UTF-8, as Python names it."""
    path = Path(os.fsdecode(os.path.join(os.fsencode(root), name)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(summary_file("Undecodable"), encoding="utf-8")
    return path


async def test_undecodable_names_are_published_and_the_watcher_survives(client: LanguageClient, tmp_path: Path):
    root = write_root(tmp_path / "memory", base_files())
    before = bad(root, b"notes/old\xff.md")
    await start(client, root)
    await wait_for(client, lambda: codes(client, before) == ["PM202"])
    assert "%FF" in uri(before) and uri(before) in client.diagnostics
    await watching(client, root)

    made = bad(root, b"notes/new\xfe one.md")  # made while the server runs: watchfiles cannot decode it
    await wait_for(client, lambda: codes(client, made) == ["PM202"])
    later = root / "notes/later.md"  # the watcher still runs, and the root still publishes
    later.write_text(summary_file("Later"), encoding="utf-8")
    await wait_for(client, lambda: codes(client, later) == ["PM202"])
    made.unlink()
    await wait_for(client, lambda: codes(client, made) == [])


async def test_a_hover_shows_an_undecodable_name_escaped(client: LanguageClient, tmp_path: Path):
    root = write_root(tmp_path / "memory", base_files())
    path = bad(root, b"notes/odd\xff\nname.md")
    await start(client, root)
    await wait_for(client, lambda: codes(client, path) == ["PM202"])
    open_doc(client, path)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(path)), position=lsp.Position(line=0, character=3)))
    assert hover is not None
    text = hover.contents.value
    assert "notes/odd\\xff\\x0aname.md" in text
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in text) and "\n name.md" not in text


async def test_an_index_that_links_out_of_the_root_is_never_shown(client: LanguageClient, tmp_path: Path):
    marker = "OUTSIDE-ONLY-LINE-5120"
    outside = tmp_path / "outside.md"
    outside.write_text(f"# {marker}\n\n- [{marker}](projects/alpha.md) — {marker}\n", encoding="utf-8")
    root = write_root(tmp_path / "memory", base_files())
    (root / "_index.md").unlink()
    (root / "_index.md").symlink_to(outside)
    await start(client, root)
    status = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="pmem.status"))
    assert "leads out of the memory root" in status["indexError"]
    shown = [str(status), *(str(m) for m in client.messages), *(str(m) for m in client.log_messages),
             *(str(d) for ds in client.diagnostics.values() for d in ds)]
    assert not any(marker in text for text in shown)
