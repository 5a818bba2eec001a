"""`pmem mcp` is always there (issue 25), through the MCP SDK's own client over stdio: it starts
without a memory root and each tool says how to create one (an `init` preview, applied like any
other); when nobody can confirm a change (a headless run dismisses or declines every question)
the answer says so and gives the `pmem` command a person runs to review and apply it.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from mcp import types
from test_mcp_server import NOTE, call, digest, session

from pty_terminal import run_at_terminal
from roots import make_root

pytestmark = pytest.mark.e2e  # every test here runs `pmem mcp` as a subprocess

NO_ROOT_CALLS = [
    ("memory_load", {}), ("memory_read", {"path": "notes/a.md"}), ("memory_status", {}), ("memory_health", {}),
    ("memory_check", {}), ("memory_preview", {"operation": "save", "path": "notes/a.md", "content": NOTE}),
    ("memory_preview", {"operation": "upgrade"}),
]


async def test_without_a_root_the_server_starts_and_every_tool_says_how_to_create_one(tmp_path, log):
    root = tmp_path / "memory"
    async with session(root, log) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "memory_apply" in listed and "memory_load" in listed
        for name, arguments in NO_ROOT_CALLS:
            error, data, text = await call(client, name, arguments)
            assert error and data["error"]["kind"] == "no-root", name
            assert f"no memory root at {root}" in text and "`init`" in text and "pmem --root" in text, name
        assert not root.exists(), "asking wrote nothing"
        # Creating it is a previewed write like any other.
        error, shown, _ = await call(client, "memory_preview", {"operation": "init"})
        assert not error and shown["token"] and str(root) in shown["preview"]
        assert not root.exists()
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert not error and done["applied"] is True
        assert (root / "_index.md").is_file() and (root / "_core").is_dir()
        # The same session now serves the new root.
        error, loaded, _ = await call(client, "memory_load")
        assert not error and loaded["index"]["routes"] == []


def headless(action: str):
    async def callback(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=action)  # what `claude -p` / `codex exec` answer: nobody is there
    return callback


@pytest.mark.parametrize("action", ["cancel", "decline"])
async def test_when_nobody_can_confirm_the_answer_gives_the_command_a_person_runs(tmp_path, log, action):
    root = make_root(tmp_path)
    cache = tmp_path / "cache"
    async with session(root, log, headless(action), env={"PMEM_CACHE_DIR": str(cache)}) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "save", "path": "projects/kiln.md",
                                                            "content": NOTE, "description": "kiln firings"})
        assert shown["command"].startswith(f"pmem --root {shlex.quote(str(root))} save projects/kiln.md")
        before = digest(root)
        error, data, text = await call(client, "memory_apply", {"token": shown["token"]})
    assert error and "nothing was written" in text and "headless" in text
    assert data["command"] == shown["command"] and shown["command"] in data["error"]["message"]
    assert digest(root) == before
    assert not any(p.is_relative_to(root) for p in cache.rglob("*")), "the pending text is kept outside the root"
    # The person runs it in their terminal and says yes to the prompt: exactly that change.
    argv = shlex.split(shown["command"])
    assert argv[0] == "pmem"
    code, screen = run_at_terminal(argv[1:], "y", env={"PATH": "/usr/bin:/bin", "PMEM_CACHE_DIR": str(cache)})
    assert code == 0, screen
    assert (root / "projects/kiln.md").read_text(encoding="utf-8") == NOTE
    assert "kiln firings" in (root / "_index.md").read_text(encoding="utf-8")


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "server-stderr.log"


# Words that would tell the agent how to get a check out of its way.
BYPASS = ("allow-secret", "<!--", "PMEM_MCP_ELICITATION", "enabled = false", "ignore =", "exclude =")
TOKEN = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"


async def test_nothing_the_model_reads_says_how_to_suppress_a_check(tmp_path, log):
    root = make_root(tmp_path, {"notes/keys.md": f"# Keys\n\ntoken: {TOKEN}\n"})
    seen: list[str] = []
    async with session(root, log, headless("cancel")) as client:
        init_tools = (await client.list_tools()).tools
        seen += [t.description or "" for t in init_tools]
        seen += [json.dumps(t.input_schema) for t in init_tools]
        for name, arguments in [("memory_check", {}), ("memory_check", {"path": "notes/new.md", "content": f"token: {TOKEN}"}),
                                ("memory_preview", {"operation": "save", "path": "notes/new.md",
                                                    "content": f"# New\n\ntoken: {TOKEN}\n"}),
                                ("memory_read", {"path": "notes/keys.md"}), ("memory_status", {})]:
            seen.append((await call(client, name, arguments))[2])
        _, shown, text = await call(client, "memory_preview", {"operation": "save", "path": "notes/ok.md", "content": NOTE})
        seen += [text, (await call(client, "memory_apply", {"token": shown["token"]}))[2]]
    assert any("likely GitHub token" in t for t in seen), "the secret was found"
    for text in seen:
        assert TOKEN not in text
        for word in BYPASS:
            assert word not in text, (word, text[:300])


def test_nor_does_the_cli_json_an_agent_reads(tmp_path):
    root = make_root(tmp_path, {"notes/keys.md": f"# Keys\n\ntoken: {TOKEN}\n"})
    outputs = []
    for args, stdin in ((["check", "--format", "json"], ""), (["rules", "PM401"], ""),
                        (["rules", "PM401", "--format", "json"], ""),
                        (["save", "notes/new.md", "--format", "json"], f"# New\n\ntoken: {TOKEN} <!-- pmem: allow-secret -->\n")):
        done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args], input=stdin,
                              capture_output=True, text=True, timeout=120)
        outputs.append(done.stdout + done.stderr)
    assert "likely GitHub token" in outputs[0] and "no-secrets" in outputs[3]
    for text in outputs:
        assert TOKEN not in text
        for word in BYPASS:
            assert word not in text, (word, text[:300])
