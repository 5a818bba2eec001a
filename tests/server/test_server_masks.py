"""Issue 40: one mask for every output of the language server. Fake secrets sit in every field
a feature shows — a route's description and link text, a file's name and title, a link's text,
an archive record's reason and index line — and every feature is asked about every file: no
secret value appears in the JSON of any answer, except where the text is not shown but used
exactly (edits written into files, URIs, command arguments and data that come back to the
server), which must stay exact (`convert.EXACT_KEYS`)."""

from __future__ import annotations

import ast
import json
import random
import string
from pathlib import Path
from typing import Any

from lsp_helpers import codes, open_doc, start, uri, wait_for
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from pmem_lsp.server.convert import EXACT_KEYS
from roots import base_files, summary_file, write_root

rng = random.Random(20261207)


def _rand(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


# Built at run time in real formats; never real credentials.
AWS = "AK" + "IA" + _rand(string.ascii_uppercase + string.digits, 16)
GITHUB = "gh" + "p_" + _rand(string.ascii_letters + string.digits, 36)
SECRETS = {"aws": AWS, "github": GITHUB}
KEY_FILE = f"projects/{AWS}.md"


def masks_root(base: Path) -> Path:
    files = base_files()
    files["_index.md"] += (f"- [Vault {GITHUB}]({KEY_FILE}) — the deploy key {GITHUB}\n"
                           "- [Links](notes/links.md) — where the key is named\n"
                           "- [[\n- [Open](projects/\n- \n")  # left open for completion (the last three lines)
    files[f"notes/unrouted-{AWS}.md"] = summary_file(f"Unrouted {GITHUB}")  # offered as a route
    files[KEY_FILE] = summary_file(f"Key {GITHUB}")
    # Its last line is left open for completion.
    files["notes/links.md"] = summary_file("Links", extra=f"\nSee [the key {GITHUB}](../{KEY_FILE}).\n\nSee [k](../projects/\n")
    files[f"_archive/notes/old-{AWS}.md"] = summary_file("Old key")
    files["_archive/_index.md"] = (
        f"# Archive index\n\n## notes/old-{AWS}.md\n- status: archived\n- original: notes/old-{AWS}.md\n"
        f"- location: _archive/notes/old-{AWS}.md\n"
        f"- index-line: - [Old {GITHUB}](notes/old-{AWS}.md) — rotated {GITHUB}\n"
        f"- archived: 2026-01-02\n- reason: rotated {GITHUB} after the leak\n")
    return write_root(base, files)


def shown(client: LanguageClient, answer: Any) -> str:
    """The answer as JSON, without the values that are used exactly rather than shown."""
    def strip(value: Any) -> Any:
        command = value.get("command") if isinstance(value, dict) else None
        if isinstance(command, str) and command.startswith("{"):  # (lsp_helpers.action_commands)
            value = {**value, "command": ast.literal_eval(command)}
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in EXACT_KEYS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return json.dumps(strip(client.protocol._converter.unstructure(answer)), ensure_ascii=False)


def assert_masked(where: str, text: str) -> None:
    for name, value in SECRETS.items():
        assert value not in text, f"the {name} secret is shown unmasked in {where}: {text[:2000]}"


async def test_no_feature_shows_a_secret(client: LanguageClient, tmp_path: Path):
    root = masks_root(tmp_path / "memory")
    await start(client, root, profile="visual-studio-code")  # (document link tooltips)
    key_file = root / KEY_FILE
    await wait_for(client, lambda: "PM401" in codes(client, key_file))
    rels = ["_index.md", KEY_FILE, "notes/links.md", "_archive/_index.md"]
    answers: list[tuple[str, Any]] = []
    for rel in rels:
        path = root / rel
        text = open_doc(client, path)
        doc = lsp.TextDocumentIdentifier(uri=uri(path))
        lines = text.split("\n")
        answers.append((f"documentSymbol {rel}", await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=doc))))
        answers.append((f"documentLink {rel}", await client.text_document_document_link_async(
            lsp.DocumentLinkParams(text_document=doc))))
        lenses = await client.text_document_code_lens_async(lsp.CodeLensParams(text_document=doc))
        answers.append((f"codeLens {rel}", lenses))
        for lens in lenses or []:
            answers.append((f"codeLens/resolve {rel}", await client.code_lens_resolve_async(lens)))
        whole = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=len(lines), character=0))
        for number, line in enumerate(lines):
            at_line = lsp.Range(start=lsp.Position(line=number, character=0),
                                end=lsp.Position(line=number, character=len(line)))
            for the_range in (at_line, whole) if number == 0 else (at_line,):
                answers.append((f"codeAction {rel}:{number}", await client.text_document_code_action_async(
                    lsp.CodeActionParams(text_document=doc, range=the_range,
                                         context=lsp.CodeActionContext(diagnostics=[])))))
            for column in range(0, len(line) + 1, 3):  # every word of the line: routes, titles, links, records
                position = lsp.Position(line=number, character=column)
                answers.append((f"hover {rel}:{number}:{column}", await client.text_document_hover_async(
                    lsp.HoverParams(text_document=doc, position=position))))
        # Completion in the open links and route lines: names and titles are offered.
        opened = {"notes/links.md": [len(lines) - 2], "_index.md": [len(lines) - 4, len(lines) - 3, len(lines) - 2]}
        if rel in opened:
            for number in opened[rel]:
                position = lsp.Position(line=number, character=len(lines[number]))
                answers.append((f"completion {number}", await client.text_document_completion_async(
                    lsp.CompletionParams(text_document=doc, position=position))))
    answers.append(("workspace/symbol", await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query=""))))
    answers.append(("workspace/symbol key", await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="key"))))
    for command in ("pmem.status", "pmem.health"):
        answers.append((command, await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(command=command))))

    # The premise: the secrets are in the answers (else this test proves nothing) — in what is
    # used exactly, and, masked, in what is shown.
    everything = json.dumps([client.protocol._converter.unstructure(a) for _, a in answers], ensure_ascii=False)
    assert AWS in everything and "AKIA…" in everything and "ghp_…" in everything
    for where, answer in answers:
        assert_masked(where, shown(client, answer))
    messages = [m.message for m in client.messages] + [m.message for m in client.log_messages]
    assert_masked("window messages", json.dumps(messages, ensure_ascii=False))
    assert_masked("diagnostics", shown(client, list(client.diagnostics.values())))
