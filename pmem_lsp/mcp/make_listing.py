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

from .early import LISTING, OFF


def sdk_answers(protocol_version: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The SDK server's results for `initialize` (in `protocol_version`) and `tools/list`,
    from a server started without the early path and without a root."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": protocol_version, "capabilities": {},
                            "clientInfo": {"name": "make_listing", "version": "0"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    payload = "".join(json.dumps(m) + "\n" for m in messages)
    no_root = Path(os.devnull) / "no-root"  # never a folder: every tool lists the same either way
    proc = subprocess.Popen([sys.executable, "-m", "pmem_lsp.mcp", "--root", str(no_root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, OFF: "1"})
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(payload)
    proc.stdin.flush()
    results: dict[int, dict[str, Any]] = {}
    try:
        for line in proc.stdout:
            reply = json.loads(line)
            results[reply["id"]] = reply["result"]
            if len(results) == 2:
                break
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return results[1], results[2]


def listing() -> dict[str, Any]:
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
    from mcp.types import LATEST_PROTOCOL_VERSION

    initialize, tools = sdk_answers(LATEST_PROTOCOL_VERSION)
    initialize.pop("protocolVersion")
    return {"protocol_versions": list(SUPPORTED_PROTOCOL_VERSIONS), "latest": LATEST_PROTOCOL_VERSION,
            "initialize": initialize, "tools/list": tools}


def main() -> None:
    LISTING.write_text(json.dumps(listing(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {LISTING}")


if __name__ == "__main__":
    main()
