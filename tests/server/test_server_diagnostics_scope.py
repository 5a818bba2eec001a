"""`diagnostics.scope = "changes"` (issue 25), end to end: an agent's client (the Claude Code
plugin sets it in `.lsp.json`'s `initializationOptions`) hears the findings of the files it
opened or changed and what its changes broke elsewhere, never the root's old problems; an
editor (the default, `root`) keeps every file's."""

from __future__ import annotations

from pathlib import Path

from lsp_helpers import codes, edit, open_doc, replace_all, start, wait_for
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root


def old_problems_root(base: Path) -> Path:
    files = base_files()
    files["_index.md"] += "- [Gone](projects/gone.md) — was renamed\n- [Kept](notes/kept.md) — a kept note\n"
    files["projects/two.md"] = summary_file("Two", bullets=2)  # PM102, PM202: old problems
    files["notes/loose.md"] = summary_file("Loose")  # PM202: an old problem
    files["notes/kept.md"] = summary_file("Kept")  # routed: nothing wrong, yet
    return write_root(base / "memory", files)


async def test_an_agents_client_hears_what_its_changes_did_not_the_old_problems(client: LanguageClient, tmp_path):
    root = old_problems_root(tmp_path)
    await start(client, root, settings={"diagnostics": {"scope": "changes"}})
    alpha, index = root / "projects/alpha.md", root / "_index.md"
    text = open_doc(client, alpha)
    first = text.split("\n").index("- fact number 1 about alpha")
    edit(client, alpha, first + 2, 0, first + 4, 0, "", version=2)  # two bullets remain
    await wait_for(client, lambda: codes(client, alpha) == ["PM102"])
    # The index edit breaks another file: its new PM202 is this change's doing.
    on_disk = open_doc(client, index)
    replace_all(client, index, on_disk.replace("- [Kept](notes/kept.md) — a kept note\n", ""), version=2)
    kept = root / "notes/kept.md"
    await wait_for(client, lambda: codes(client, kept) == ["PM202"])
    # Published after the whole-root analysis: the old problems would have come before.
    assert codes(client, root / "projects/two.md") == [] and codes(client, root / "notes/loose.md") == []
    assert codes(client, index) == ["PM201"], "a file the client opened: all of it"
    # Put back, the news clears.
    replace_all(client, index, on_disk, version=3)
    await wait_for(client, lambda: codes(client, kept) == [])


async def test_an_editor_keeps_every_files_diagnostics(client: LanguageClient, tmp_path):
    root = old_problems_root(tmp_path)
    await start(client, root)
    await wait_for(client, lambda: codes(client, root / "projects/two.md") == ["PM102", "PM202"]
                   and codes(client, root / "notes/loose.md") == ["PM202"])
