"""`pmem mcp` (docs/design.md §10) driven through the MCP SDK's own client over stdio: the tools
and their annotations, summary-first reading, checks, preview → apply with single-use tokens,
stale previews, elicitation, refusals that keep the session alive, and no secret in any output.

Each test starts the server as a process (`python -m pmem_lsp.mcp --root DIR`, what `pmem mcp`
runs) on a root built in tmp_path.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import get_default_environment, stdio_client

from pmem_lsp.engine.health_proposal import memory_health
from pmem_lsp.engine.secrets import mask_text
from pmem_lsp.engine.settings import resolve_settings
from pmem_lsp.engine.status_report import memory_status
from roots import active_file, make_root

pytestmark = pytest.mark.e2e  # every test here runs `pmem mcp` as a subprocess

FAKE_KEY = "AKIA" + "J7QX2M4RZ8KD5N3V"  # the shape of an AWS access key id
NOTE = ("# Kiln firing log\n\n## Summary\n\n- Bisque firings run to cone 04.\n- Glaze firings run to cone 6.\n"
        "- The kiln sits in the garage.\n\n## Details\nTimes and temperatures.\n")
READ_ONLY = ("memory_load", "memory_read", "memory_status", "memory_health", "memory_check", "memory_history",
             "memory_diff")
ALL_TOOLS = {*READ_ONLY, "memory_preview", "memory_apply"}


def digest(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".pmem") or rel.endswith(".lock"):
            continue
        out[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@asynccontextmanager
async def session(root: Path, log: Path, elicitation_callback=None, env: dict[str, str] | None = None):
    params = StdioServerParameters(command=sys.executable, args=["-m", "pmem_lsp.mcp", "--root", str(root)],
                                   # The tests' own cache folder (tests/conftest.py): locks and a
                                   # save's pending text never go to the user's.
                                   env={**get_default_environment(), "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
                                        **(env or {})})
    with open(log, "a", encoding="utf-8") as errlog:
        async with (stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write, elicitation_callback=elicitation_callback) as client):
            await client.initialize()
            yield client


async def call(client: ClientSession, name: str, arguments: dict[str, Any] | None = None) -> tuple[bool, dict, str]:
    """(is it an error, the structured result, the text the model reads)."""
    result = await client.call_tool(name, arguments or {})
    text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
    assert result.structured_content == json.loads(text), "the text and the structured result are the same JSON"
    return bool(result.is_error), result.structured_content, text


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "server-stderr.log"


# -- the tools ---------------------------------------------------------------------------
async def test_the_tools_are_listed_with_their_annotations(tmp_path, log):
    root = make_root(tmp_path)
    async with session(root, log) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == ALL_TOOLS
    for name in READ_ONLY:
        hints = listed[name].annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == \
            (True, False, True, False), name
    apply = listed["memory_apply"].annotations
    assert (apply.read_only_hint, apply.destructive_hint, apply.idempotent_hint) == (False, True, False)
    # A preview writes no memory, but keeps a save's text in the user's cache and mints a new
    # token each call: neither read-only nor idempotent (issue 43).
    preview = listed["memory_preview"].annotations
    assert (preview.read_only_hint, preview.destructive_hint, preview.idempotent_hint, preview.open_world_hint) == \
        (False, False, False, False)
    assert set(listed["memory_apply"].input_schema["required"]) == {"token"}
    assert set(listed["memory_read"].input_schema["properties"]) == {"path", "full", "archived", "offset"}
    assert listed["memory_read"].input_schema["required"] == ["path"]
    operation = listed["memory_preview"].input_schema["properties"]["operation"]
    assert operation["enum"] == ["save", "route", "upgrade", "archive", "delete", "recover", "purge", "init",
                                 "undo", "restore"]
    for tool in listed.values():
        assert tool.description and len(tool.description) < 1200, tool.name


async def test_the_instructions_tell_an_agent_to_preview_and_ask_before_applying(tmp_path, log):
    root = make_root(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-m", "pmem_lsp.mcp", "--root", str(root)])
    with open(log, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            init = await client.initialize()
    assert init.server_info.name == "pmem"
    head = init.instructions[:512]  # Codex keeps the first 512 characters
    assert "memory_load" in head and "memory_preview" in head and "memory_apply" in head and "yes" in head


# -- reading -------------------------------------------------------------------------------
async def test_load_gives_the_core_text_and_the_routes_never_the_archive(tmp_path, log):
    root = make_root(tmp_path, {"_archive/projects/old.md": "# Old\n\nARCHIVED-MARKER-7731\n"})
    async with session(root, log) as client:
        error, data, text = await call(client, "memory_load")
    assert not error
    assert [c["path"] for c in data["core"]] == ["_core/preferences.md", "_core/profile.md"]
    assert data["core"][1]["text"] == (root / "_core/profile.md").read_text(encoding="utf-8")
    assert {r["path"] for r in data["index"]["routes"]} == {"projects/alpha.md", "notes/beta.md"}
    assert all(r["description"] for r in data["index"]["routes"])
    assert "ARCHIVED-MARKER-7731" not in text and "_archive/projects/old.md" not in text


async def test_read_is_summary_first_and_whole_on_request_or_without_a_valid_summary(tmp_path, log):
    two_bullets = active_file("Two", summary="## Summary\n- One fact.\n- Another fact.\n")
    root = make_root(tmp_path, {"notes/plain.md": "# Plain\n\nJust prose, no summary.\n",
                                "notes/two.md": two_bullets})
    async with session(root, log) as client:
        error, data, text = await call(client, "memory_read", {"path": "projects/alpha.md"})
        assert not error and data["summary_only"] is True
        assert data["summary"] == [f"Fact number {i} about the work." for i in (1, 2, 3)]
        assert "text" not in data and "Some details that live below the summary" not in text
        assert "full: true" in data["next"]

        error, data, _ = await call(client, "memory_read", {"path": "projects/alpha.md", "full": True})
        assert not error and data["summary_only"] is False
        assert data["text"] == (root / "projects/alpha.md").read_text(encoding="utf-8")

        error, data, _ = await call(client, "memory_read", {"path": "notes/plain.md"})
        assert not error and data["summary_only"] is False and "Just prose" in data["text"]
        assert "no valid summary" in data["why"]

        # Two bullets: not a valid summary (3 to 6), so the whole file.
        error, data, _ = await call(client, "memory_read", {"path": "notes/two.md"})
        assert not error and data["summary_only"] is False and data["text"] == two_bullets

        # `_core/` and `_index.md` are always read whole.
        error, data, _ = await call(client, "memory_read", {"path": "_core/profile.md"})
        assert not error and data["summary_only"] is False and "Test Person" in data["text"]


async def test_read_refuses_paths_outside_the_root_hidden_ones_and_the_archive(tmp_path, log):
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nOUTSIDE-MARKER\n", encoding="utf-8")
    root = make_root(tmp_path, {"_archive/projects/old.md": "# Old\n\nARCHIVED-MARKER-7731\n",
                                ".hidden/x.md": "# Hidden\n"})
    (root / "notes/link.md").symlink_to(outside)
    async with session(root, log) as client:
        for path, kind in (("../outside.md", "relative-path"), (str(outside), "relative-path"),
                           (".hidden/x.md", "protected-path"), ("notes/link.md", "inside-root"),
                           ("_archive/projects/old.md", "archive"), ("notes/none.md", "source-exists")):
            error, data, text = await call(client, "memory_read", {"path": path})
            assert error, path
            assert data["error"]["kind"] == kind, (path, data)
            assert "OUTSIDE-MARKER" not in text and "ARCHIVED-MARKER" not in text
        # Archived memory only when the user explicitly asks for it.
        error, data, _ = await call(client, "memory_read", {"path": "_archive/projects/old.md", "archived": True})
        assert not error and "ARCHIVED-MARKER-7731" in data["text"]


async def test_no_secret_reaches_the_output_not_even_a_pem_block(tmp_path, log):
    body = "".join(chr(65 + (i * 7) % 26) + chr(97 + (i * 11) % 26) + str(i % 10) for i in range(150))
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) \
          + "\n-----END RSA PRIVATE KEY-----\n"
    root = make_root(tmp_path, {"_core/profile.md": f"# Profile\n\n- Work key: {FAKE_KEY}\n",
                                "notes/keys.md": f"# Keys\n\n{pem}"})
    async with session(root, log) as client:
        _, _, loaded = await call(client, "memory_load")
        _, read, text = await call(client, "memory_read", {"path": "notes/keys.md"})
        _, _, status = await call(client, "memory_status")
    assert "AKIA" in loaded and FAKE_KEY not in loaded
    assert "BEGIN RSA PRIVATE KEY" in read["text"]
    for chunk in (body[i:i + 64] for i in range(0, len(body), 64)):
        assert chunk not in text
    assert FAKE_KEY not in log.read_text(encoding="utf-8")


def test_mask_text_masks_a_secret_across_lines():
    text = "a\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"] * 4) \
           + "\n-----END OPENSSH PRIVATE KEY-----\nz"
    masked = mask_text(text)
    assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" not in masked
    assert masked.startswith("a\n-----BEGIN OPENSSH PRIVATE KEY-----") and masked.endswith("KEY-----\nz")
    assert mask_text("plain text\nno secrets") == "plain text\nno secrets"


# -- status, health, check -------------------------------------------------------------------
async def test_status_and_health_are_the_cli_json(tmp_path, log):
    root = make_root(tmp_path, {"notes/unrouted.md": active_file("Unrouted"),
                                "_index.md": "# Memory index\n\n- [Alpha](projects/alpha.md) — about alpha\n"})
    async with session(root, log) as client:
        error, status, _ = await call(client, "memory_status")
        assert not error
        error, health, _ = await call(client, "memory_health")
        assert not error
    assert status == json.loads(json.dumps(memory_status(root, resolve_settings(root).excluded).as_dict()))
    assert status["active"]["unrouted"] == ["notes/beta.md", "notes/unrouted.md"]
    assert health == json.loads(json.dumps(memory_health(root, resolve_settings(root)).as_dict()))


async def test_check_of_a_proposed_text_finds_the_secret_and_never_shows_it(tmp_path, log):
    root = make_root(tmp_path)
    before = digest(root)
    proposed = f"# Cloud\n\n## Summary\n- Uses AWS.\n- Key {FAKE_KEY} is the deploy key.\n- Region eu-north-1.\n"
    async with session(root, log) as client:
        error, report, text = await call(client, "memory_check", {"path": "notes/cloud.md", "content": proposed})
    assert not error
    assert {d["path"] for d in report["diagnostics"]} == {"notes/cloud.md"}
    assert "PM401" in {d["code"] for d in report["diagnostics"]}
    assert report["files"] == 1 and report["counts"]["error"] >= 1
    assert FAKE_KEY not in text and FAKE_KEY not in log.read_text(encoding="utf-8")
    assert digest(root) == before, "a check writes nothing"


async def test_check_narrows_to_the_paths_asked_and_refuses_a_missing_one(tmp_path, log):
    root = make_root(tmp_path, {"notes/plain.md": "# Plain\n\nNo summary.\n"})
    async with session(root, log) as client:
        error, report, _ = await call(client, "memory_check", {"paths": ["notes/plain.md"]})
        assert not error and report["files"] == 1
        assert {d["path"] for d in report["diagnostics"]} == {"notes/plain.md"}
        assert "PM100" in {d["code"] for d in report["diagnostics"]}
        error, whole, _ = await call(client, "memory_check")
        assert not error and whole["files"] > 1
        error, data, _ = await call(client, "memory_check", {"paths": ["notes/none.md"]})
        assert error and data["error"]["kind"] == "source-exists"
        error, data, _ = await call(client, "memory_check", {"paths": ["../elsewhere.md"]})
        assert error and data["error"]["kind"] == "inside-root"


# -- preview and apply ---------------------------------------------------------------------------
async def test_preview_then_apply_saves_the_file_and_its_route(tmp_path, log):
    root = make_root(tmp_path)
    before = digest(root)
    async with session(root, log) as client:
        error, shown, _ = await call(client, "memory_preview",
                                     {"operation": "save", "path": "projects/kiln.md", "content": NOTE})
        assert not error
        assert shown["operation"] == "save" and shown["path"] == "projects/kiln.md" and shown["applied"] is False
        assert "Bisque firings" in shown["preview"] and shown["token"]
        assert [c["kind"] for c in shown["changes"]] == ["create", "update"]
        assert isinstance(shown["findings"], list)
        assert digest(root) == before, "a preview writes nothing"

        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
    assert not error, done
    assert done["applied"] is True and done["outcome"] == "saved projects/kiln.md and routed it"
    assert (root / "projects/kiln.md").read_text(encoding="utf-8") == NOTE
    index = (root / "_index.md").read_text(encoding="utf-8").splitlines()
    assert "- [Kiln firing log](projects/kiln.md) — Bisque firings run to cone 04." in index
    # The text kept for the person's command is spent with the change.
    kept = shlex.split(shown["command"])[shlex.split(shown["command"]).index("--content-file") + 1]
    assert not Path(kept).exists(), "a pending save's text stays after it was applied"


async def test_a_pending_save_applied_by_the_persons_command_is_removed(tmp_path, log):
    root = make_root(tmp_path)
    async with session(root, log) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "save", "path": "projects/kiln.md",
                                                            "content": NOTE})
    argv = shlex.split(shown["command"])
    kept = Path(argv[argv.index("--content-file") + 1])
    assert kept.is_file()
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *argv[1:], "--yes"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (root / "projects/kiln.md").read_text(encoding="utf-8") == NOTE and not kept.exists()


async def test_a_token_is_spent_by_its_first_use(tmp_path, log):
    root = make_root(tmp_path)
    async with session(root, log) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "archive", "path": "notes/beta.md",
                                                            "reason": "the note is done"})
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert not error and done["applied"] is True
        after = digest(root)
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert error and data == {"applied": False, "error": data["error"]}
        assert data["error"]["kind"] == "unknown-token"
        error, data, _ = await call(client, "memory_apply", {"token": "save-000000000000000000000000"})
        assert error and data["error"]["kind"] == "unknown-token"
    assert digest(root) == after
    assert (root / "_archive/notes/beta.md").is_file() and not (root / "notes/beta.md").exists()
    assert "reason: the note is done" in (root / "_archive/_index.md").read_text(encoding="utf-8")


async def test_a_stale_preview_writes_nothing(tmp_path, log):
    root = make_root(tmp_path)
    new = active_file("Alpha project", body="## Context\nRewritten by the agent.\n")
    async with session(root, log) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "save", "path": "projects/alpha.md",
                                                            "content": new})
        assert shown["token"]
        edited = (root / "projects/alpha.md").read_text(encoding="utf-8") + "A line the user added meanwhile.\n"
        (root / "projects/alpha.md").write_text(edited, encoding="utf-8")
        before = digest(root)
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert error and data["applied"] is False and data["error"]["kind"] == "stale-preview"
        assert "nothing was written" in data["error"]["message"]
        assert digest(root) == before
        # A route preview goes stale when the index changes under it.
        (root / "notes/loose.md").write_text(active_file("Loose"), encoding="utf-8")
        _, shown, _ = await call(client, "memory_preview", {"operation": "route", "path": "notes/loose.md"})
        with open(root / "_index.md", "a", encoding="utf-8") as fh:
            fh.write("- [Other](notes/beta.md) — another line\n")
        before = digest(root)
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert error and data["error"]["kind"] == "stale-preview"
        assert digest(root) == before
    assert (root / "projects/alpha.md").read_text(encoding="utf-8") == edited


# -- elicitation -------------------------------------------------------------------------------
def answering(action: str, content: dict | None, asked: list[str]):
    async def callback(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content=content)
    return callback


@pytest.mark.parametrize("action, content, applied, kind", [
    ("accept", {"confirm": True}, True, None),
    ("accept", {"confirm": False}, False, "declined"),
    ("decline", None, False, "declined"),
    ("cancel", None, False, "cancelled"),
])
async def test_apply_asks_the_user_where_the_client_can(tmp_path, log, action, content, applied, kind):
    root = make_root(tmp_path)
    asked: list[str] = []
    async with session(root, log, answering(action, content, asked)) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "save", "path": "projects/kiln.md",
                                                            "content": NOTE})
        assert asked == [], "previewing asks nothing"
        before = digest(root)
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert len(asked) == 1 and shown["preview"] in asked[0]
        assert data["applied"] is applied and error is (not applied)
        if applied:
            assert (root / "projects/kiln.md").read_text(encoding="utf-8") == NOTE
        else:
            assert data["error"]["kind"] == kind and "nothing was written" in data["error"]["message"]
            assert digest(root) == before
            # The token went with the answer: a "no" cannot be turned into a yes by retrying.
            error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
            assert error and data["error"]["kind"] == "unknown-token"
            assert digest(root) == before


async def test_without_elicitation_the_token_alone_decides(tmp_path, log):
    root = make_root(tmp_path)
    async with session(root, log) as client:  # no callback: the client declares no elicitation
        _, shown, _ = await call(client, "memory_preview", {"operation": "save", "path": "projects/kiln.md",
                                                            "content": NOTE})
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
    assert not error and data["applied"] is True


async def test_elicitation_can_be_turned_off_for_clients_that_decline_on_their_own(tmp_path, log):
    root = make_root(tmp_path)
    asked: list[str] = []
    async with session(root, log, answering("decline", None, asked), env={"PMEM_MCP_ELICITATION": "off"}) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "save", "path": "projects/kiln.md",
                                                            "content": NOTE})
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
    assert asked == [] and not error and data["applied"] is True


# -- refusals -------------------------------------------------------------------------------------
async def test_refusals_are_tool_errors_and_the_session_goes_on(tmp_path, log):
    root = make_root(tmp_path)
    before = digest(root)
    async with session(root, log) as client:
        error, data, _ = await call(client, "memory_preview", {"operation": "save", "path": "_archive/x.md",
                                                               "content": NOTE})
        assert error and data["applied"] is False and data["error"]["kind"] == "protected-path"
        secret = NOTE.replace("The kiln sits in the garage.", f"The kiln key is {FAKE_KEY}.")
        error, data, text = await call(client, "memory_preview", {"operation": "save", "path": "notes/k.md",
                                                                  "content": secret})
        assert error and data["error"]["kind"] == "no-secrets" and FAKE_KEY not in text
        for extra in ({"operation": "route", "path": "notes/beta.md", "description": f"deploy key {FAKE_KEY}"},
                      {"operation": "archive", "path": "notes/beta.md", "reason": f"rotated {FAKE_KEY}"}):
            error, data, text = await call(client, "memory_preview", extra)
            assert error and data["error"]["kind"] == "no-secrets" and FAKE_KEY not in text
        error, data, _ = await call(client, "memory_preview", {"operation": "archive", "path": "_core/profile.md"})
        assert error and data["error"]["kind"] == "protected-path"
        error, data, _ = await call(client, "memory_preview", {"operation": "save", "path": "notes/k.md"})
        assert error and data["error"]["kind"] == "arguments"
        error, data, _ = await call(client, "memory_preview", {"operation": "explode", "path": "notes/k.md"})
        assert error and data["error"]["kind"] == "arguments"
        error, data, _ = await call(client, "memory_read", {"path": ["not", "a", "string"]})
        assert error and data["error"]["kind"] == "arguments"
        # After all that, the session still answers.
        error, data, _ = await call(client, "memory_status")
        assert not error and data["active"]["files"] == 2
    assert digest(root) == before
    assert FAKE_KEY not in log.read_text(encoding="utf-8")


async def test_an_unexpected_failure_names_its_kind_only(tmp_path, monkeypatch):
    import logging

    from pmem_lsp.mcp import server, tools

    def boom(root, *_args):
        raise RuntimeError(f"text from memory: {FAKE_KEY}")

    monkeypatch.setattr(tools, "status", boom)
    # The SDK configures the root logger when a server is built: keep this process's as it was.
    monkeypatch.setattr(logging.getLogger(), "handlers", list(logging.getLogger().handlers))
    monkeypatch.setattr(logging.getLogger(), "level", logging.getLogger().level)
    app = server.build_server(make_root(tmp_path))
    result = await app.call_tool("memory_status", {})
    assert result.is_error
    assert result.structured_content["error"]["kind"] == "internal"
    assert "RuntimeError" in result.content[0].text and FAKE_KEY not in result.content[0].text
    result = await app.call_tool("memory_load", {})  # the server goes on
    assert not result.is_error


def test_without_the_sdk_run_says_how_to_install_it(tmp_path):
    root = make_root(tmp_path)
    code = ("import sys; sys.modules['mcp'] = None; from pathlib import Path; "
            "from pmem_lsp.mcp.server import run; sys.exit(run(Path(sys.argv[1])))")
    done = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    # The package is installed here but cannot be imported: the message names the version.
    assert "pip install -U 'pmem-lsp[mcp]'" in done.stderr and "mcp 2." in done.stderr


def test_a_missing_sdk_is_named_as_missing(monkeypatch):
    import importlib.metadata

    from pmem_lsp.mcp import server

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert server._sdk_problem(ImportError("No module named 'mcp'")) == \
        "pmem mcp needs the MCP Python SDK 2.x: pip install 'pmem-lsp[mcp]'"


# -- any name, reads inside, bounded replies (issue 23) ------------------------------------------
BAD_NAME = b"notes/bad\xff name.md"  # not valid UTF-8


def _bad_root(tmp_path: Path) -> Path:
    root = make_root(tmp_path)
    (root / "notes").mkdir(exist_ok=True)
    with open(os.path.join(os.fsencode(root), BAD_NAME), "wb") as fh:
        fh.write(b"# Bad name\n\nA note whose name is not UTF-8.\n")
    return root


async def test_an_undecodable_name_is_escaped_and_the_session_goes_on(tmp_path, log):
    root = _bad_root(tmp_path)
    async with session(root, log) as client:
        for name, args in (("memory_status", {}), ("memory_check", {}), ("memory_load", {}),
                           ("memory_health", {})):
            error, data, text = await call(client, name, args)
            assert not error, (name, data)
        error, data, text = await call(client, "memory_check")
        paths = {d["path"] for d in data["diagnostics"]}
        assert "notes/bad\\xff name.md" in paths  # escaped, never lost
        error, status, _ = await call(client, "memory_status")
        assert "notes/bad\\xff name.md" in status["active"]["unrouted"]
        # The session is alive afterwards: a later call still answers.
        error, data, _ = await call(client, "memory_read", {"path": "projects/alpha.md"})
        assert not error and data["summary_only"] is True


OUTSIDE_MARKER = "OUTSIDE-ONLY-LINE-4417"


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "elsewhere.md"
    outside.write_text(f"# Elsewhere\n\n- [{OUTSIDE_MARKER}](projects/alpha.md) — {OUTSIDE_MARKER}\n"
                       f"{OUTSIDE_MARKER}\n", encoding="utf-8")
    return outside


@pytest.mark.parametrize("linked", ["_index.md", "_core/profile.md"])
async def test_a_link_leading_out_of_the_root_is_named_never_read(tmp_path, log, linked):
    root = make_root(tmp_path)
    outside = _outside(tmp_path)
    (root / linked).unlink()
    (root / linked).symlink_to(outside)
    async with session(root, log) as client:
        texts = []
        for name, args in (("memory_load", {}), ("memory_status", {}), ("memory_check", {}),
                           ("memory_read", {"path": linked}),
                           ("memory_preview", {"operation": "save", "path": "notes/new.md",
                                               "content": "# New\n\nA new note.\n"})):
            _error, _data, text = await call(client, name, args)
            texts.append(text)
    assert all(OUTSIDE_MARKER not in t for t in texts), [t for t in texts if OUTSIDE_MARKER in t][0][:400]
    load = json.loads(texts[0])
    if linked == "_index.md":
        assert "leads out of the memory root" in load["index"]["error"]
    else:
        assert any("leads out of the memory root" in (c.get("error") or "") for c in load["core"])


def _big_index(tmp_path: Path, n: int) -> Path:
    routes = "".join(f"- [Note {i}](notes/n{i:05d}.md) — the description of note number {i}\n" for i in range(n))
    files = {"_index.md": "# Memory index\n\n" + routes}
    files.update({f"notes/n{i:05d}.md": f"# Note {i}\n" for i in range(0, n, 97)})
    return make_root(tmp_path, files)


async def _all_pages(client: ClientSession, name: str, key: tuple[str, ...], limit: int | None = None):
    items, offset, sizes = [], 0, []
    args: dict[str, Any] = {} if limit is None else {"limit": limit}
    for _ in range(1000):
        error, data, text = await call(client, name, {**args, "offset": offset})
        assert not error, data
        sizes.append(len(text))
        part = data
        for k in key:
            part = part[k]
        items += part
        page = data.get("page")
        if page is None or "next_offset" not in page:
            return items, sizes, data
        assert page["note"] and page["total"] >= len(items)
        offset = page["next_offset"]
    raise AssertionError("paging never ended")


async def test_status_load_and_check_replies_are_bounded_and_page_through_everything(tmp_path, log):
    from pmem_lsp.mcp.tools import MAX_REPLY_CHARS

    root = _big_index(tmp_path, 3000)
    cli = memory_status(root, resolve_settings(root).excluded).as_dict()
    async with session(root, log) as client:
        routes, sizes, _ = await _all_pages(client, "memory_status", ("routes",))
        assert routes == json.loads(json.dumps(cli["routes"]))  # every route, in order, once
        assert len(sizes) > 1 and max(sizes) < MAX_REPLY_CHARS * 1.5
        loaded, sizes, _ = await _all_pages(client, "memory_load", ("index", "routes"), limit=700)
        assert [r["path"] for r in loaded] == [r["path"] for r in cli["routes"]]
        assert max(sizes) < MAX_REPLY_CHARS * 1.5
        found, sizes, last = await _all_pages(client, "memory_check", ("diagnostics",), limit=1000)
        assert len(found) == sum(last["counts"].values()) and max(sizes) < MAX_REPLY_CHARS * 1.5
        error, data, _ = await call(client, "memory_status", {"limit": 0})
        assert error and data["error"]["kind"] == "arguments"


async def test_a_long_file_is_read_in_pieces(tmp_path, log):
    from pmem_lsp.mcp.tools import TEXT_CHARS

    body = "".join(f"Line {i} of a long note, with some words to fill it.\n" for i in range(6000))
    text = "# Long\n\n" + body
    root = make_root(tmp_path, {"notes/long.md": text})
    async with session(root, log) as client:
        pieces, offset = [], 0
        while True:
            error, data, _ = await call(client, "memory_read", {"path": "notes/long.md", "offset": offset})
            assert not error and len(data["text"]) <= TEXT_CHARS
            pieces.append(data["text"])
            if "next_offset" not in data.get("page", {}):
                break
            offset = data["page"]["next_offset"]
    assert len(pieces) > 1 and "".join(pieces) == text


async def test_a_huge_save_previews_its_size_head_and_tail_only(tmp_path, log):
    lines = [f"Paragraph {i}: ordinary words about the garden and the kiln." for i in range(60000)]
    content = "# Huge\n\n" + "\n".join(lines) + "\nTHE-LAST-LINE\n"
    root = make_root(tmp_path)
    async with session(root, log) as client:
        error, data, text = await call(client, "memory_preview", {"operation": "save", "path": "notes/huge.md",
                                                                  "content": content})
    assert not error, data
    assert len(text) < 60_000 < len(content)
    assert "MiB" in data["preview"] and "# Huge" in data["preview"] and "THE-LAST-LINE" in data["preview"]
    assert "not shown" in data["preview"] and "Paragraph 30000:" not in text


async def test_a_route_preview_of_a_file_named_as_a_token_is_refused_and_never_shows_it(tmp_path, log):
    # A file a shell write made (the hooks cannot see it): routing it would copy the token
    # into `_index.md`, and the reply must not show it either.
    token = "ghp_" + "x8Kd93LmQp2ZrT7vNw4YbH6sJc1FgA5eUo0i"
    root = make_root(tmp_path)
    (root / f"notes/{token}.md").write_text("# T\n", encoding="utf-8")
    before = digest(root)
    async with session(root, log) as client:
        error, data, text = await call(client, "memory_preview", {"operation": "route", "path": f"notes/{token}.md"})
        assert error and data["error"]["kind"] == "no-secrets", data
        assert token not in text
        error, checked, text = await call(client, "memory_check", {})
        assert token not in text and any(d["code"] == "PM401" for d in checked["diagnostics"]), checked
    assert digest(root) == before


async def test_recover_adds_a_route_only_when_asked_and_the_command_says_so(tmp_path, log):
    """A file archived with no route comes back with none; `add_route` is the explicit choice
    (issue 26), and the headless command a person runs asks for the same."""
    root = make_root(tmp_path, {
        "_archive/projects/quiet.md": "# Quiet\n\n## Summary\n- a quiet project\n",
        "_archive/_index.md": ("# Archive index\n\n## projects/quiet.md\n- status: archived\n"
                               "- original: projects/quiet.md\n- location: _archive/projects/quiet.md\n"
                               "- routed: no\n- archived: 2026-01-01\n- reason: done\n")})
    async with session(root, log) as client:
        error, plain, _ = await call(client, "memory_preview", {"operation": "recover", "path": "projects/quiet.md"})
        assert not error, plain
        assert "none is added" in plain["preview"] and "--add-route" not in plain["command"]
        error, wrong, _ = await call(client, "memory_preview",
                                     {"operation": "archive", "path": "projects/quiet.md", "add_route": True})
        assert error and "recover only" in json.dumps(wrong)
        error, asked, _ = await call(client, "memory_preview",
                                     {"operation": "recover", "path": "projects/quiet.md", "add_route": True})
        assert not error, asked
        assert "add this PROPOSED route" in asked["preview"] and asked["command"].endswith("--add-route")
        error, done, _ = await call(client, "memory_apply", {"token": asked["token"]})
    assert not error and done["applied"] is True, done
    assert "projects/quiet.md" in (root / "_index.md").read_text(encoding="utf-8")
