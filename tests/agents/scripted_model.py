"""A scripted local model server for live sessions of the real agent clients (tests/agents/
test_live_sessions.py): the model is replaced by a script, nothing leaves the machine.

It speaks the two wire formats the clients use, streamed as server-sent events:

- Anthropic's Messages API (`POST /v1/messages`, Claude Code): `message_start`,
  `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
  `content_block_stop`, `message_delta` (the `stop_reason`), `message_stop`; a JSON message when
  the request does not ask to stream.
- OpenAI's Responses API (`POST /v1/responses`, Codex): `response.created`,
  `response.output_item.added` / `response.output_item.done` (a `message` or a `function_call`),
  `response.completed`.

Every request is recorded (path and JSON body) so a test can read what the client sent back: the
tool list it offered the model, the tool result of the call the script made. What the model says
is `script(body) -> list of replies`, a reply being `Text(text)` or `ToolCall(name, input)`; the
stdlib's threading HTTP server, in a thread of the test process.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]
    id: str = ""
    namespace: str = ""  # Responses API: the tool's namespace (Codex puts an MCP server's tools in one)


Reply = Text | ToolCall
Script = Callable[[str, dict[str, Any]], list[Reply]]


@dataclass
class Recorded:
    method: str
    path: str
    body: Any


@dataclass
class ScriptedModel:
    """`with ScriptedModel(script) as model:` serves on `model.url` until the block ends."""

    script: Script
    requests: list[Recorded] = field(default_factory=list)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def __enter__(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet: the requests are recorded
                pass

            def do_HEAD(self) -> None:
                model.requests.append(Recorded("HEAD", self.path, None))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                model.requests.append(Recorded("GET", self.path, None))
                if self.path.split("?")[0].endswith("/models"):
                    self._json(200, {"data": [], "models": [], "object": "list"})
                else:
                    self._json(404, {"error": {"type": "not_found_error", "message": f"no {self.path} here"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"raw": raw.decode("utf-8", "replace")}
                path = self.path.split("?")[0]
                model.requests.append(Recorded("POST", path, body))
                if path.endswith("/messages/count_tokens"):
                    self._json(200, {"input_tokens": 100})
                elif path.endswith("/messages"):
                    self._anthropic(body, model.script("anthropic", body))
                elif path.endswith("/responses"):
                    self._responses(body, model.script("responses", body))
                else:
                    self._json(404, {"error": {"type": "not_found_error", "message": f"no {path} here"}})

            def _json(self, status: int, data: Any) -> None:
                out = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def _events(self, events: list[tuple[str, dict[str, Any]]]) -> None:
                out = b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                self.wfile.flush()

            def _anthropic(self, body: dict[str, Any], replies: list[Reply]) -> None:
                ident = f"msg_scripted_{next(model._ids)}"
                blocks: list[dict[str, Any]] = []
                for reply in replies:
                    if isinstance(reply, Text):
                        blocks.append({"type": "text", "text": reply.text})
                    else:
                        blocks.append({"type": "tool_use", "id": reply.id or f"toolu_scripted_{next(model._ids)}",
                                       "name": reply.name, "input": reply.input})
                stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
                usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 0}
                message = {"id": ident, "type": "message", "role": "assistant", "model": body.get("model", "scripted"),
                           "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}
                if not body.get("stream"):
                    self._json(200, message)
                    return
                events: list[tuple[str, dict[str, Any]]] = [
                    ("message_start", {"type": "message_start",
                                       "message": {**message, "content": [], "stop_reason": None,
                                                   "usage": {**usage, "output_tokens": 1}}})]
                for index, block in enumerate(blocks):
                    if block["type"] == "text":
                        start = {"type": "text", "text": ""}
                        delta = {"type": "text_delta", "text": block["text"]}
                    else:
                        start = {**block, "input": {}}
                        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                    events += [("content_block_start", {"type": "content_block_start", "index": index,
                                                        "content_block": start}),
                               ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                               ("content_block_stop", {"type": "content_block_stop", "index": index})]
                events += [("message_delta", {"type": "message_delta",
                                              "delta": {"stop_reason": stop, "stop_sequence": None},
                                              "usage": {"output_tokens": 20}}),
                           ("message_stop", {"type": "message_stop"})]
                self._events(events)

            def _responses(self, body: dict[str, Any], replies: list[Reply]) -> None:
                ident = f"resp_scripted_{next(model._ids)}"
                items: list[dict[str, Any]] = []
                for reply in replies:
                    if isinstance(reply, Text):
                        items.append({"type": "message", "id": f"msg_scripted_{next(model._ids)}", "role": "assistant",
                                      "status": "completed",
                                      "content": [{"type": "output_text", "text": reply.text, "annotations": []}]})
                    else:
                        call = reply.id or f"call_scripted_{next(model._ids)}"
                        item = {"type": "function_call", "id": f"fc_{call}", "call_id": call, "name": reply.name,
                                "arguments": json.dumps(reply.input), "status": "completed"}
                        if reply.namespace:
                            item["namespace"] = reply.namespace
                        items.append(item)
                response = {"id": ident, "object": "response", "created_at": 0, "status": "in_progress",
                            "model": body.get("model", "scripted"), "output": []}
                usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
                         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}
                seq = itertools.count()
                events: list[tuple[str, dict[str, Any]]] = [
                    ("response.created", {"type": "response.created", "sequence_number": next(seq),
                                          "response": response})]
                for index, item in enumerate(items):
                    events += [("response.output_item.added", {"type": "response.output_item.added",
                                                               "sequence_number": next(seq), "output_index": index,
                                                               "item": item}),
                               ("response.output_item.done", {"type": "response.output_item.done",
                                                              "sequence_number": next(seq), "output_index": index,
                                                              "item": item})]
                events.append(("response.completed", {"type": "response.completed", "sequence_number": next(seq),
                                                      "response": {**response, "status": "completed",
                                                                   "output": items, "usage": usage}}))
                self._events(events)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def posts(self, suffix: str) -> list[dict[str, Any]]:
        """The JSON bodies of the POSTs to a path ending in `suffix`, in order."""
        return [r.body for r in self.requests if r.method == "POST" and r.path.endswith(suffix)]
