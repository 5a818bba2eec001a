"""`pmem mcp`'s early path (pmem_lsp/mcp/early_answers.py): `initialize` and `tools/list` answered from
the committed listing.json before the SDK is imported, then the session handed to the SDK
server. The listing must be what the SDK server answers itself; the client must get exactly
one answer per request, however its messages fall around the handover.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from pmem_lsp.mcp import early_answers as early
from pmem_lsp.mcp import make_listing
from pmem_lsp.mcp.server import DESCRIPTIONS
from roots import make_root

pytestmark = pytest.mark.e2e  # the server runs as a subprocess

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                         "clientInfo": {"name": "test", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
STATUS = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_status", "arguments": {}}}
# The stateless revision: no handshake; each request names its revision in `_meta`.
META = {early.PROTOCOL_VERSION_KEY: "2026-07-28", "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
LIST_STATELESS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}}
STATUS_STATELESS = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "memory_status", "arguments": {}, "_meta": META}}


def exchange(root: Path, batches: list[list[dict[str, Any]]], early_path: bool, quiet: float = 1.0) -> list[dict]:
    """Send each batch once every request of the one before is answered; then read on for
    `quiet` seconds (a duplicate answer would come then). Every message the server wrote."""
    env = {**os.environ, early.OFF: "0" if early_path else "1"}
    proc = subprocess.Popen([sys.executable, "-m", "pmem_lsp.mcp", "--root", str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    received: list[dict] = []
    buffered = b""

    def read_until(done, seconds: float) -> None:
        nonlocal buffered
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline:
            readable, _, _ = select.select([proc.stdout], [], [], 0.05)
            if readable:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    return
                buffered += chunk
                while b"\n" in buffered:
                    line, buffered = buffered.split(b"\n", 1)
                    received.append(json.loads(line))

    try:
        for batch in batches:
            proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in batch))
            proc.stdin.flush()
            wanted = {m["id"] for m in batch if "id" in m}
            read_until(lambda wanted=wanted: wanted <= {m.get("id") for m in received}, 60)
        read_until(lambda: False, quiet)
    finally:
        proc.kill()
        proc.wait()
    return received


def answers(received: list[dict]) -> dict[Any, list[dict]]:
    out: dict[Any, list[dict]] = {}
    for message in received:
        if "id" in message and "method" not in message:
            out.setdefault(message["id"], []).append(message)
    return out


def test_the_committed_listing_is_what_the_sdk_server_answers():
    assert early.load_listing() == make_listing.listing(), \
        "listing.json is stale: run `python -m pmem_lsp.mcp.make_listing`"


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "1999-01-01"])
def test_the_early_answers_are_the_sdk_servers_answers(tmp_path, version):
    root = make_root(tmp_path)
    init = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
    batches = [[init], [INITIALIZED, LIST]]
    fast, plain = answers(exchange(root, batches, True)), answers(exchange(root, batches, False))
    assert fast == plain
    assert [len(fast[i]) for i in (1, 2)] == [1, 1]


@pytest.mark.parametrize("discover", [False, True], ids=["list-alone", "discover-then-list"])
def test_discover_and_the_stateless_list_are_the_sdk_servers_answers(tmp_path, discover):
    root = make_root(tmp_path)
    batches = [[DISCOVER], [LIST_STATELESS]] if discover else [[LIST_STATELESS]]
    fast, plain = answers(exchange(root, batches, True)), answers(exchange(root, batches, False))
    assert fast == plain and all(len(v) == 1 for v in fast.values())
    assert len(fast[2][0]["result"]["tools"]) == len(DESCRIPTIONS)


@pytest.mark.parametrize("stateless", [False, True], ids=["2025-11-25", "2026-07-28"])
def test_a_tool_call_after_the_early_answers_is_answered_once_by_the_full_server(tmp_path, stateless):
    root = make_root(tmp_path)
    batches = ([[DISCOVER], [LIST_STATELESS], [STATUS_STATELESS]] if stateless
               else [[INITIALIZE], [INITIALIZED, LIST], [STATUS]])
    got = answers(exchange(root, batches, True))
    assert sorted(got) == [1, 2, 3] and all(len(v) == 1 for v in got.values())
    result = got[3][0]["result"]
    assert not result.get("isError") and "core" in result["structuredContent"]


def test_everything_sent_at_once_still_gets_one_answer_each(tmp_path):
    # The tool call reaches the early loop before the SDK is imported: it hands over there and
    # the full server answers the call; initialize and tools/list stay answered once.
    root = make_root(tmp_path)
    got = answers(exchange(root, [[INITIALIZE, INITIALIZED, LIST, STATUS]], True))
    assert sorted(got) == [1, 2, 3] and all(len(v) == 1 for v in got.values())


def test_a_request_before_initialize_goes_to_the_full_server(tmp_path):
    root = make_root(tmp_path)
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    fast = answers(exchange(root, [[ping], [INITIALIZE], [INITIALIZED, LIST]], True))
    plain = answers(exchange(root, [[ping], [INITIALIZE], [INITIALIZED, LIST]], False))
    assert fast == plain


def test_the_loop_answers_from_the_listing_alone_and_hands_over_at_a_tool_call():
    # In process, with the full server never ready: what the client gets comes from the listing.
    import threading

    client_out, server_in = os.pipe()
    server_out, client_in = os.pipe()
    sent = b"".join(json.dumps(m).encode() + b"\n" for m in (INITIALIZE, INITIALIZED, LIST, STATUS))
    os.write(server_in, sent)
    listing = early.load_listing()
    assert listing is not None
    handover = early.answer_early(threading.Event(), listing, read_fd=client_out, write_fd=client_in)
    os.close(client_in)
    with os.fdopen(server_out, "rb") as out:
        replies = [json.loads(line) for line in out.read().splitlines()]
    for fd in (client_out, server_in):
        os.close(fd)
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[1]["result"] == listing["tools/list"]
    assert handover.replay == sent and handover.answered == {"1": 1, "2": 1}
    assert "tools/call" in handover.reason


def test_a_stateless_request_without_the_clients_capabilities_goes_to_the_full_server(tmp_path):
    root = make_root(tmp_path)
    bare = {**LIST_STATELESS, "params": {"_meta": {early.PROTOCOL_VERSION_KEY: "2026-07-28"}}}
    fast, plain = answers(exchange(root, [[bare]], True)), answers(exchange(root, [[bare]], False))
    assert fast == plain and "error" in fast[2][0]


NOISY = """
import os, subprocess, sys, threading, time
from pathlib import Path
from pmem_lsp.mcp import server

def noisy():  # once the full server runs (fd 1 is then stderr's file), print and run a child
    while not os.path.samestat(os.fstat(1), os.fstat(2)):
        time.sleep(0.01)
    print("STRAY-PRINT", flush=True)
    subprocess.run(["echo", "STRAY-CHILD"], check=False)

threading.Thread(target=noisy, daemon=True).start()
sys.exit(server.run(Path(sys.argv[1])))
"""


def test_after_the_handover_a_stray_print_goes_to_stderr_never_into_the_session(tmp_path):
    root = make_root(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", NOISY, str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in (INITIALIZE, INITIALIZED, LIST, STATUS)))
    proc.stdin.flush()
    lines = [json.loads(proc.stdout.readline()) for _ in range(3)]  # each line is a message
    # The noisy thread prints once it sees the swap: wait for its output (a generous bound) before
    # ending the session, else a fast server ends first and the race decides, not the server.
    err = bytearray()
    stderr_fd = proc.stderr.fileno()

    def pump() -> None:
        while chunk := os.read(stderr_fd, 4096):
            err.extend(chunk)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    deadline = time.monotonic() + 60
    while not (b"STRAY-PRINT" in err and b"STRAY-CHILD" in err) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.stdin.close()
    proc.wait(timeout=30)
    reader.join(timeout=30)
    assert sorted(m["id"] for m in lines) == [1, 2, 3]
    assert b"STRAY-PRINT" in err and b"STRAY-CHILD" in err, bytes(err)
