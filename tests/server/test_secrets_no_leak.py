"""No secret value, nor any 12-character piece of it, leaves pmem: CLI in every format,
status, diagnostics, hover, code action titles and the server's log."""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

from lsp_helpers import codes, start, uri, wait_for
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root

rng = random.Random(20261129)


def _rand(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


# Built at run time in real formats; never real credentials.
SECRETS = {
    "github": "gh" + "p_" + _rand(string.ascii_letters + string.digits, 36),
    "aws": "AK" + "IA" + _rand(string.ascii_uppercase + string.digits, 16),
    "password": _rand(string.ascii_letters + string.digits + "!#%", 18),
    "url": _rand(string.ascii_letters + string.digits, 16),
}


def pieces(value: str, size: int = 12) -> list[str]:
    return [value[i:i + size] for i in range(0, max(1, len(value) - size + 1))]


def assert_no_leak(text: str) -> None:
    for name, value in SECRETS.items():
        for piece in pieces(value):
            assert piece not in text, f"a piece of the {name} secret leaked"


def secrets_root(tmp_path: Path) -> Path:
    files = base_files()
    files["_index.md"] += f"- [Keys](notes/keys.md) — deploy notes, token {SECRETS['github']}\n"
    files["notes/keys.md"] = summary_file("Keys", extra=(
        f"\nAWS key: {SECRETS['aws']}\n\npassword: {SECRETS['password']}\n\n"
        f"Database: postgres://admin:{SECRETS['url']}@db.internal:5432/app\n"))
    files["_core/profile.md"] += f"\napi_key = {SECRETS['github']}\n"
    return write_root(tmp_path / "memory", files)


def pmem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


def test_cli_outputs_never_contain_the_values(tmp_path: Path):
    root = secrets_root(tmp_path)
    for fmt in ("text", "json", "github"):
        result = pmem("--root", str(root), "check", "--format", fmt)
        assert result.returncode == 1  # PM401 is an error
        assert_no_leak(result.stdout + result.stderr)
    report = json.loads(pmem("--root", str(root), "check", "--format", "json").stdout)
    found = {(d["path"], d["code"]) for d in report["diagnostics"] if d["code"] == "PM401"}
    assert {("notes/keys.md", "PM401"), ("_core/profile.md", "PM401"), ("_index.md", "PM401")} <= found
    status = pmem("--root", str(root), "status")
    assert status.returncode == 0
    assert_no_leak(status.stdout + status.stderr)


async def test_server_never_sends_the_values(client: LanguageClient, tmp_path: Path):
    root = secrets_root(tmp_path)
    await start(client, root)
    keys = root / "notes/keys.md"
    await wait_for(client, lambda: "PM401" in codes(client, keys))
    sent = json.dumps([[d.message for d in ds] for ds in client.diagnostics.values()])
    index_lines = (root / "_index.md").read_text(encoding="utf-8").splitlines()
    route_line = next(i for i, line in enumerate(index_lines) if "notes/keys.md" in line)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(root / "_index.md")),
        position=lsp.Position(line=route_line, character=4)))
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(keys)),
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=40, character=0)),
        context=lsp.CodeActionContext(diagnostics=list(client.diagnostics[uri(keys)]))))
    titles = [a.title for a in actions or []]
    assert "Redact the secret" in titles
    logs = json.dumps([m.message for m in client.log_messages] + [m.message for m in client.messages])
    for text in (sent, str(hover.contents if hover else ""), json.dumps(titles), logs):
        assert_no_leak(text)
