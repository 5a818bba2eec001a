"""`python -m pmem_lsp.mcp.make_listing`: write listing.json, the full server's own answers to
`initialize` and `tools/list`, which the early loop (early.py) sends before the SDK is imported.

Run it after changing a tool's name, description, annotations or arguments, the instructions,
or the SDK; tests/agents/test_mcp_early.py fails until it is run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .early_answers import LISTING, OFF, PROTOCOL_VERSION_KEY


def sdk_answers(messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """The SDK server's results to `messages`, by request id, from a server started without
    the early path and without a root (every tool lists the same either way)."""
    wanted = {m["id"] for m in messages if "id" in m}
    payload = "".join(json.dumps(m) + "\n" for m in messages)
    no_root = Path(os.devnull) / "no-root"  # never a folder
    proc = subprocess.Popen([sys.executable, "-m", "pmem_lsp.mcp", "--root", str(no_root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, OFF: "1"})
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(payload)
    proc.stdin.flush()
    results: dict[Any, dict[str, Any]] = {}
    try:  # stdin stays open until every answer came: the SDK drops answers pending at its end
        for line in proc.stdout:
            reply = json.loads(line)
            results[reply["id"]] = reply["result"]
            if wanted <= set(results):
                break
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return results


def listing() -> dict[str, Any]:
    from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

    meta = {PROTOCOL_VERSION_KEY: MODERN_PROTOCOL_VERSIONS[-1],
            "io.modelcontextprotocol/clientInfo": {"name": "make_listing", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    results = sdk_answers([
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {},
                    "clientInfo": {"name": "make_listing", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
    # The stateless revision (2026-07-28), from a server of its own: each request names it.
    results.update(sdk_answers([
        {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": meta}}]))
    initialize = results[1]
    initialize.pop("protocolVersion")
    # `initialize` answers with the revision asked for when the SDK speaks it, else its latest;
    # a stateless request names its revision, answered here only when it is one of `modern_versions`.
    return {"protocol_versions": list(HANDSHAKE_PROTOCOL_VERSIONS), "latest": LATEST_HANDSHAKE_VERSION,
            "modern_versions": list(MODERN_PROTOCOL_VERSIONS),
            "initialize": initialize, "tools/list": results[2],
            "server/discover": results[3], "tools/list (stateless)": results[4]}


def main() -> None:
    LISTING.write_text(json.dumps(listing(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {LISTING}")


if __name__ == "__main__":
    main()
