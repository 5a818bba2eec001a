"""`pmem mcp`'s writes (memory_preview, then memory_apply), through the MCP SDK's own client,
against a hostile external writer (tests/hostile.py) and a second pmem — the CLI, with another
cache folder — at once (issue 23). Afterwards every invariant holds, and every apply that did not
apply said that it wrote nothing."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from test_mcp_server import call, session

from hostile import Hostile, Ledger, check_invariants, cli_writer, hostile_root
from roots import summary_file

pytestmark = pytest.mark.e2e  # `pmem mcp` and `pmem` run as subprocesses

N = 2
ATTEMPTS = 5  # an agent previews again when its token went stale (the index changed meanwhile)


async def apply(client, ledger: Ledger, lock: threading.Lock, op: str, rel: str, **args) -> None:
    for _ in range(ATTEMPTS):
        error, shown, _ = await call(client, "memory_preview", {"operation": op, "path": rel, **args})
        if error or not shown.get("token"):
            with lock:
                ledger.refused.append("preview: nothing was changed")
            return
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
        with lock:
            if not error:
                assert done["applied"] is True
                ledger.done(op, rel, args.get("content"))
                return
            message = done["error"]["message"]
            assert "nothing was written" in message or "nothing was changed" in message, message
            ledger.refused.append(message)


async def test_mcp_writes_with_a_hostile_writer_and_a_second_pmem_lose_nothing(tmp_path: Path):
    root = hostile_root(tmp_path / "memory", {"m": N, "c": N})
    ledger = Ledger()
    ledger.start(root)
    lock = threading.Lock()
    with Hostile(root, append_every=10) as hostile:
        cli = asyncio.create_task(asyncio.to_thread(cli_writer, root, "c", {"PMEM_CACHE_DIR": str(tmp_path / "other")},
                                                    ledger, lock, N))
        async with session(root, tmp_path / "mcp.log", env={"PMEM_CACHE_DIR": str(tmp_path / "mcp-cache")}) as client:
            for i in range(N):
                rel = f"notes/m{i}.md"
                await apply(client, ledger, lock, "archive", rel, reason="done")
                if i % 2 == 0:
                    await apply(client, ledger, lock, "recover", rel)
                new = f"notes/new-m{i}.md"
                await apply(client, ledger, lock, "save", new, content=summary_file(f"New m {i}"))
                await apply(client, ledger, lock, "route", f"loose/m{i}.md")
        await cli
    assert hostile.cycles.value > 10
    check_invariants(root, ledger)
    assert ledger.applied, f"nothing was applied at all: {ledger.refused}"
