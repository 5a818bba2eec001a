"""The language server's lifecycle commands (`pmem.archive`, `pmem.recover`, confirmed by the
client, moves through the editor) against a hostile external writer (tests/hostile.py) and a
second pmem — the CLI, with another cache folder — at once (issue 23). Afterwards every
invariant holds, and every command that did not apply said that nothing was changed."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from lsp_helpers import DiskClient, start
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from hostile import Hostile, Ledger, check_invariants, cli_writer, hostile_root

N = 3
ATTEMPTS = 3  # the user confirms again when the preview went stale meanwhile


async def command(client: LanguageClient, ui: DiskClient, ledger: Ledger, lock: threading.Lock,
                  op: str, rel: str) -> bool:
    for _ in range(ATTEMPTS):
        if await attempt(client, ui, ledger, lock, op, rel):
            return True
    return False


async def attempt(client: LanguageClient, ui: DiskClient, ledger: Ledger, lock: threading.Lock,
                  op: str, rel: str) -> bool:
    ui.answer = {"archive": "Archive", "recover": "Recover"}[op]
    args = {"path": rel, **({"reason": "done"} if op == "archive" else {})}
    asked = len(ui.requests)
    try:
        outcome = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command=f"pmem.{op}", arguments=[args]))
    except JsonRpcException as exc:  # refused before anything moved
        with lock:  # after the user's yes, it must say that nothing changed
            ledger.refused.append(f"{'at execution: ' if len(ui.requests) > asked else ''}{exc.message}")
        return False
    with lock:
        if outcome["applied"]:
            ledger.done(op, rel)
            return True
        assert outcome["done"] == [], outcome  # a partial state would be named here
        ledger.refused.append(f"at execution: {outcome['message']}")
        return False


async def test_server_commands_with_a_hostile_writer_and_a_second_pmem_lose_nothing(client: LanguageClient,
                                                                                    tmp_path: Path):
    root = hostile_root(tmp_path / "memory", {"s": N, "c": 2})
    ledger = Ledger()
    ledger.start(root)
    lock = threading.Lock()
    await start(client, root)
    ui = DiskClient(client, "Archive")
    with Hostile(root) as hostile:
        cli = asyncio.create_task(asyncio.to_thread(cli_writer, root, "c", {"PMEM_CACHE_DIR": str(tmp_path / "other")},
                                                    ledger, lock, 2))
        served = []
        for i in range(N):
            rel = f"notes/s{i}.md"
            served.append(await command(client, ui, ledger, lock, "archive", rel))
            if i % 2 == 0 and served[-1]:
                served.append(await command(client, ui, ledger, lock, "recover", rel))
        await cli
    assert hostile.cycles.value > 10
    check_invariants(root, ledger)
    assert any(served), f"the server applied nothing: {ledger.refused}"
    assert ui.edits, "no move went through the editor"
