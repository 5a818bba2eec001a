"""The early path of `pmem mcp`: `initialize` and `tools/list` answered before the SDK is imported.

Importing the MCP SDK (its pydantic models, its client and server sessions) takes most of a
second of CPU, more on a loaded machine, and clients do not wait that long: Codex's `codex
exec` leaves out a server slower than about a second, headless Claude Code's first calls
failed with "still connecting" (issue 43). So `pmem mcp` first runs this loop, which needs
only the standard library and `listing.json` (the SDK server's own answers, committed; a test
holds them equal, tests/agents/test_mcp_early.py), while the SDK is imported and the server
built in a thread:

1. answer, from the listing, `initialize` (the protocol revision chosen as the SDK chooses
   it), `notifications/initialized` (noted) and `tools/list` of protocol revision 2025-11-25,
   and `server/discover` and `tools/list` of the stateless revision 2026-07-28 (which carry
   the revision in their `_meta`);
2. hand over once the server is built, or at the first message this loop does not answer
   (a tool call, a ping, a paged listing, anything of an unusual shape), or at the end of the
   input: the full server reads every byte this loop read (`Handover.replay`) and then the
   rest of stdin, so its session is exactly the client's; its answers to the requests
   answered here are dropped (`Handover.answered`), so the client gets one answer each.

Off with `PMEM_MCP_NO_EARLY=1` (the full server then answers everything itself).
"""

from __future__ import annotations

import json
import os
import select
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OFF = "PMEM_MCP_NO_EARLY"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"  # a stateless request's revision
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LISTING = Path(__file__).with_name("listing.json")
POLL = 0.02  # seconds between looks at the server being built while the client is quiet
MAX_LINE = 1024 * 1024  # a longer message is left to the full server


@dataclass
class Handover:
    """What the full server needs from the early loop."""

    replay: bytes = b""  # every byte read from stdin, in order
    # JSON of each request id answered here → how many answers of the full server to drop.
    answered: dict[str, int] = field(default_factory=dict)
    reason: str = ""


def enabled(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(OFF, "").strip().lower() in ("", "0", "no", "false", "off")


def load_listing() -> dict[str, Any] | None:
    """The committed answers (None when the file is missing or unreadable: no early path)."""
    try:
        data = json.loads(LISTING.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def id_key(request_id: Any) -> str:
    return json.dumps(request_id, sort_keys=True)


def _plain_initialize(params: Any) -> bool:
    """An `initialize` of the shape the SDK accepts (anything else goes to the SDK, which
    answers it, or refuses it, itself)."""
    if not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (isinstance(params.get("protocolVersion"), str) and isinstance(params.get("capabilities"), dict)
            and isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str))


def _stateless_envelope(meta: Any, versions: list[str]) -> bool:
    """A 2026-07-28 request's `_meta` as the SDK accepts it: a revision it speaks and the
    client's capabilities (a request without them, the SDK refuses; it does so itself)."""
    if not isinstance(meta, dict) or meta.get(PROTOCOL_VERSION_KEY) not in versions:
        return False
    info = meta.get(CLIENT_INFO_KEY)
    return isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict) and (info is None or isinstance(info, dict))


class _Loop:
    def __init__(self, listing: dict[str, Any], write_fd: int) -> None:
        self.listing = listing
        self.write_fd = write_fd
        self.initialized = False
        self.answered: dict[str, int] = {}

    def answer(self, request_id: Any, result: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, ensure_ascii=False,
                          separators=(",", ":")) + "\n"
        data = body.encode("utf-8")
        while data:
            data = data[os.write(self.write_fd, data):]
        key = id_key(request_id)
        self.answered[key] = self.answered.get(key, 0) + 1

    def handle(self, line: bytes) -> str:
        """'' when this loop dealt with the line, else why the full server must take over."""
        if not line.strip():
            return ""
        try:
            message = json.loads(line)
        except ValueError:
            return "not JSON"
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return "not a JSON-RPC message"
        method, has_id = message.get("method"), "id" in message
        if method == "initialize" and has_id and not self.initialized and _plain_initialize(message.get("params")):
            requested = message["params"]["protocolVersion"]
            chosen = requested if requested in self.listing["protocol_versions"] else self.listing["latest"]
            self.answer(message["id"], {"protocolVersion": chosen, **self.listing["initialize"]})
            self.initialized = True
            return ""
        if method == "notifications/initialized" and not has_id and self.initialized:
            return ""
        params = message.get("params")
        plain = params is None or (isinstance(params, dict) and set(params) <= {"_meta"})  # no cursor
        meta = params.get("_meta") if isinstance(params, dict) else None
        # 2026-07-28 is stateless: no handshake, each request names its revision in `_meta`.
        stateless = _stateless_envelope(meta, self.listing["modern_versions"])
        if method == "server/discover" and has_id and stateless and not self.initialized:
            self.answer(message["id"], self.listing["server/discover"])
            return ""
        if method == "tools/list" and has_id and plain and stateless and not self.initialized:
            self.answer(message["id"], self.listing["tools/list (stateless)"])
            return ""
        if method == "tools/list" and has_id and plain and self.initialized and not stateless:
            self.answer(message["id"], self.listing["tools/list"])
            return ""
        return f"{method or 'a message'} is the full server's"


def answer_early(ready: threading.Event, listing: dict[str, Any], read_fd: int = 0,
                 write_fd: int = 1) -> Handover:
    """Answer what the listing can until `ready` is set (the full server is built) or a message
    needs the full server; never waits for `ready` while a complete message is unanswered."""
    loop = _Loop(listing, write_fd)
    replay = bytearray()
    pending = b""
    reason = ""
    while not reason:
        while b"\n" in pending and not reason:
            line, pending = pending.split(b"\n", 1)
            reason = loop.handle(line)
        if reason:
            break
        if len(pending) > MAX_LINE:
            reason = "a long message"
            break
        if ready.is_set():
            reason = "the full server is ready"
            break
        readable, _, _ = select.select([read_fd], [], [], POLL)
        if not readable:
            continue
        chunk = os.read(read_fd, 65536)
        if not chunk:
            reason = "the end of the input"
            break
        replay += chunk
        pending += chunk
    return Handover(replay=bytes(replay), answered=loop.answered, reason=reason)
