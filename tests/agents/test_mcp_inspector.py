"""`pmem mcp` under the official MCP Inspector's CLI mode (issue 43: "tested with … the Inspector in
both modes"), installed from npm by the `inspector` fixture (tests/agents/conftest.py).

Each run is one `inspector --cli … --method M` against `python -m pmem_lsp.cli.main --root ROOT mcp`:
the Inspector starts the server, connects, makes the one request, prints the result (`--format
json`) and exits. Two modes:

- the default (ad-hoc runs negotiate the `legacy` era): the `initialize` handshake, 2025-11-25;
- `--protocol-era modern`: stateless 2026-07-28, `server/discover` and `_meta` on each request
  (`--protocol-era auto` must choose it too, since pmem answers the discover probe).

The server's stdin goes through `tee` into a log, so each test also proves which revision the
Inspector actually spoke (a silent fall back to the handshake would otherwise pass unnoticed).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from pmem_lsp.mcp.server import DESCRIPTIONS
from roots import make_root

pytestmark = pytest.mark.e2e  # the server (and the Inspector) run as subprocesses

MODES = {"default": [], "2026-07-28": ["--protocol-era", "modern"],
         "auto": ["--protocol-era", "auto"]}  # probes `server/discover`: pmem answers, so stateless
BOTH = ["default", "2026-07-28"]
NOTE = ("# Kiln firing log\n\n## Summary\n\n- Bisque firings run to cone 04.\n- Glaze firings run to cone 6.\n"
        "- The kiln sits in the garage.\n\n## Details\nTimes and temperatures.\n")


def inspect(inspector: Path, root: Path, tmp_path: Path, mode: str, *request: str) -> tuple[dict, list[dict]]:
    """One Inspector CLI run: its printed result, and every message it sent the server."""
    sent = tmp_path / f"sent-{len(list(tmp_path.glob('sent-*')))}.jsonl"
    server = f"tee {shlex.quote(str(sent))} | " + shlex.join(
        [sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "mcp"])
    home = tmp_path / "home"  # the Inspector keeps a catalog and client config under ~/.mcp-inspector
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json"),
           "MCP_CLIENT_CONFIG_PATH": str(home / "client.json")}
    # The stdio server gets only a default environment (PATH, HOME, …) plus `-e`: hand on the
    # test run's cache and state folders, so pmem never writes the real ones.
    passed = [arg for key in ("XDG_CACHE_HOME", "XDG_STATE_HOME") if key in os.environ
              for arg in ("-e", f"{key}={os.environ[key]}")]
    done = subprocess.run([str(inspector), "--cli", "--format", "json", *passed, *MODES[mode],
                           "sh", "-c", server, *request], capture_output=True, text=True, timeout=180, env=env)
    if done.returncode != 0:
        pytest.fail(f"the Inspector failed ({mode}, exit {done.returncode}):\nstdout: {done.stdout[-2000:]}\n"
                    f"stderr: {done.stderr[-2000:]}")
    messages = [json.loads(line) for line in sent.read_text().splitlines() if line.strip()]
    check_revision(mode, messages)
    return json.loads(done.stdout)["result"], messages


def check_revision(mode: str, messages: list[dict]) -> None:
    methods = [m.get("method") for m in messages]
    if mode == "default":
        assert methods[0] == "initialize" and messages[0]["params"]["protocolVersion"] == "2025-11-25"
    else:
        assert "initialize" not in methods and methods[0] == "server/discover"
        requests = [m for m in messages if "method" in m]
        assert all(m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
                   for m in requests)


def call(inspector: Path, root: Path, tmp_path: Path, mode: str, tool: str, arguments: dict) -> dict:
    result, _ = inspect(inspector, root, tmp_path, mode, "--method", "tools/call", "--tool-name", tool,
                        "--tool-args-json", json.dumps(arguments))
    assert not result.get("isError"), result
    (text,) = [c["text"] for c in result["content"] if c["type"] == "text"]
    assert json.loads(text) == result["structuredContent"]
    return result["structuredContent"]


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


@pytest.mark.parametrize("mode", list(MODES))
def test_the_inspector_lists_the_servers_tools(inspector, tmp_path, mode):
    result, _ = inspect(inspector, make_root(tmp_path), tmp_path, mode, "--method", "tools/list")
    assert sorted(t["name"] for t in result["tools"]) == sorted(DESCRIPTIONS)


@pytest.mark.parametrize("mode", BOTH)
def test_the_inspector_calls_memory_status(inspector, tmp_path, mode):
    root = make_root(tmp_path)
    status = call(inspector, root, tmp_path, mode, "memory_status", {})
    cli = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "status", "--format",
                          "json"], capture_output=True, text=True, timeout=120)
    assert status == json.loads(cli.stdout)  # the same status the CLI prints
    assert status["root"] == str(root) and status["core"]["files"]


@pytest.mark.parametrize("mode", BOTH)
def test_a_preview_through_the_inspector_gives_a_token_and_changes_no_file(inspector, tmp_path, mode):
    root = make_root(tmp_path)
    before = snapshot(root)
    shown = call(inspector, root, tmp_path, mode, "memory_preview",
                 {"operation": "save", "path": "projects/kiln.md", "content": NOTE})
    assert shown["token"] and shown["applied"] is False
    assert [c["path"] for c in shown["changes"]][0] == "projects/kiln.md"
    assert snapshot(root) == before
