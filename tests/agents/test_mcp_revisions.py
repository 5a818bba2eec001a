"""`pmem mcp` speaks both protocol revisions from one server (issue 43): 2025-11-25 (the
`initialize` handshake; the confirmation is an `elicitation/create` request) and 2026-07-28
(stateless: `server/discover`, and the confirmation is an `input_required` result that the client
answers by calling again). Driven by the 2.x SDK's `Client` in each mode.

In both, `memory_apply` asks where the client can, only an explicit yes applies, and only an
explicit no is recorded as the user's decline (a dismissed question is not).
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from mcp import types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment

from pmem_lsp.mcp.server import DESCRIPTIONS
from roots import make_root

pytestmark = pytest.mark.e2e  # the server runs as a subprocess

NOTE = ("# Kiln firing log\n\n## Summary\n\n- Bisque firings run to cone 04.\n- Glaze firings run to cone 6.\n"
        "- The kiln sits in the garage.\n\n## Details\nTimes and temperatures.\n")
MODES = {"2025-11-25": "legacy", "2026-07-28": "2026-07-28"}


@asynccontextmanager
async def connected(root: Path, revision: str, elicitation_callback=None):
    params = StdioServerParameters(command=sys.executable, args=["-m", "pmem_lsp.mcp", "--root", str(root)],
                                   env={**get_default_environment(), "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]})
    async with Client(params, mode=MODES[revision], elicitation_callback=elicitation_callback,
                      read_timeout_seconds=60) as client:
        assert client.protocol_version == revision
        yield client


async def call(client: Client, name: str, arguments: dict) -> tuple[bool, dict]:
    result = await client.call_tool(name, arguments)
    text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
    return bool(result.is_error), json.loads(text)


def answering(action: str, content: dict | None, asked: list[str]):
    async def callback(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=action, content=content)
    return callback


async def preview_save(client: Client) -> dict:
    error, shown = await call(client, "memory_preview", {"operation": "save", "path": "projects/kiln.md",
                                                        "content": NOTE})
    assert not error
    return shown


@pytest.mark.parametrize("revision", list(MODES))
async def test_the_tools_are_listed_in_either_revision(tmp_path, revision):
    async with connected(make_root(tmp_path), revision) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert len(names) == len(DESCRIPTIONS) and "memory_apply" in names


@pytest.mark.parametrize("revision", list(MODES))
@pytest.mark.parametrize("action, content, applied, kind", [
    ("accept", {"confirm": True}, True, None),
    ("accept", {"confirm": False}, False, "declined"),
    ("decline", None, False, "declined"),
    ("cancel", None, False, "cancelled"),
])
async def test_apply_asks_and_only_a_yes_applies(tmp_path, revision, action, content, applied, kind):
    root = make_root(tmp_path)
    asked: list[str] = []
    async with connected(root, revision, answering(action, content, asked)) as client:
        shown = await preview_save(client)
        error, data = await call(client, "memory_apply", {"token": shown["token"]})
        assert len(asked) == 1 and shown["preview"] in asked[0], "asked once, with the preview"
        assert data["applied"] is applied and error is (not applied)
        assert (root / "projects/kiln.md").exists() is applied
        if not applied:
            assert data["error"]["kind"] == kind
            error, data = await call(client, "memory_apply", {"token": shown["token"]})
            assert error and data["error"]["kind"] == "unknown-token", "the token went with the answer"


@pytest.mark.parametrize("revision", list(MODES))
@pytest.mark.parametrize("action, recorded", [("decline", True), ("cancel", False)])
async def test_only_an_explicit_no_is_recorded(tmp_path, revision, action, recorded):
    # A later session that cannot ask refuses a change the user declined, and applies one whose
    # question was only dismissed.
    root = make_root(tmp_path)
    async with connected(root, revision, answering(action, None, [])) as client:
        shown = await preview_save(client)
        error, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert error
    async with connected(root, revision) as client:  # declares no elicitation: nobody is asked
        shown = await preview_save(client)
        error, data = await call(client, "memory_apply", {"token": shown["token"]})
    assert error is recorded
    if recorded:
        assert data["error"]["kind"] == "declined"
    assert (root / "projects/kiln.md").exists() is not recorded


@pytest.mark.parametrize("revision", list(MODES))
async def test_without_elicitation_the_token_alone_decides(tmp_path, revision):
    root = make_root(tmp_path)
    async with connected(root, revision) as client:
        shown = await preview_save(client)
        error, data = await call(client, "memory_apply", {"token": shown["token"]})
    assert not error and data["applied"] is True
