"""A client of the SDK's 1.x line (what clients built before the 2.x SDK run) against `pmem mcp`
on the 2.x line: the handshake, the tool list, and a confirmed apply through elicitation.

The 1.x client lives in a venv of its own (the project's has the 2.x SDK), made once by the
`mcp1_python` fixture (tests/agents/conftest.py) under `.cache/mcp1`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pmem_lsp.mcp.server import DESCRIPTIONS
from roots import make_root

pytestmark = pytest.mark.e2e  # the server runs as a subprocess

NOTE = "# Kiln\n\n## Summary\n\n- Bisque to cone 04.\n- Glaze to cone 6.\n- The kiln is in the garage.\n"

# Run by the 1.x venv's interpreter: argv = server python, root, note text, cache folder.
# Prints one JSON line.
CLIENT = r'''
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import get_default_environment, stdio_client

async def main():
    server, root, note, cache = sys.argv[1:5]
    asked = []
    async def confirm(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})
    # The tests' own cache folder (tests/conftest.py): a save's pending text never goes to the user's.
    params = StdioServerParameters(command=server, args=["-m", "pmem_lsp.mcp", "--root", root],
                                   env={**get_default_environment(), "XDG_CACHE_HOME": cache})
    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, elicitation_callback=confirm) as client:
        init = await client.initialize()
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        shown = await client.call_tool("memory_preview", {"operation": "save", "path": "projects/kiln.md",
                                                          "content": note})
        token = shown.structuredContent["token"]
        applied = await client.call_tool("memory_apply", {"token": token})
    print(json.dumps({"version": init.protocolVersion, "server": init.serverInfo.name, "tools": tools,
                      "asked": len(asked), "applied": applied.structuredContent}))

asyncio.run(main())
'''


def test_a_1x_client_lists_the_tools_and_applies_after_its_yes(tmp_path, mcp1_python: Path):
    root = make_root(tmp_path)
    done = subprocess.run([str(mcp1_python), "-c", CLIENT, sys.executable, str(root), NOTE, os.environ["XDG_CACHE_HOME"]],
                          capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["version"] == "2025-11-25" and got["server"] == "pmem"
    assert len(got["tools"]) == len(DESCRIPTIONS) and "memory_apply" in got["tools"]
    assert got["asked"] == 1 and got["applied"]["applied"] is True
    assert (root / "projects/kiln.md").read_text(encoding="utf-8") == NOTE
