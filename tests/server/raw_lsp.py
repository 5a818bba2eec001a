"""A raw stdio client for the server: it writes bytes, not typed messages, so tests can send
what a broken client would (bad JSON, wrong shapes, requests out of order), and it keeps
every byte the server writes (the no-leak tests read all of it).

A reader thread collects everything the server sends. Requests the server makes of the
client are answered as a cautious client would: no edit applied, and no confirmation unless
`confirm` is set (then the first action offered, what a user clicks to proceed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERVER_COMMAND = [sys.executable, "-m", "pmem_lsp"]

_CLIENT_ANSWERS: dict[str, Any] = {
    "workspace/applyEdit": {"applied": False},
    "window/workDoneProgress/create": None,
    "client/registerCapability": None,
    "client/unregisterCapability": None,
    "workspace/codeLens/refresh": None,
    "workspace/diagnostic/refresh": None,
}

# A client that can rename files through workspace edits (the editor flow).
MOVING_CLIENT: dict = {"workspace": {"workspaceEdit": {"documentChanges": True, "resourceOperations": ["rename"]}}}


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    def __init__(self, cwd: Path | None = None, *, command: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(command or SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, env=env)
        self.received: list[dict] = []
        self.raw: list[bytes] = []  # every body the server wrote, as written
        self.server_requests: list[dict] = []
        self.stderr: list[str] = []
        self.answers = dict(_CLIENT_ANSWERS)  # what this client answers to the server's requests
        self.confirm = False  # answer a showMessageRequest with its first action
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()  # the reader thread answers the server meanwhile
        self._next_id = 10_000
        self._threads = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()

    # -- sending -------------------------------------------------------------------
    def send_raw(self, body: bytes) -> None:
        try:
            with self._send_lock:
                self.proc.stdin.write(frame(body))
                self.proc.stdin.flush()
        except BrokenPipeError:
            self.proc.wait(timeout=5)
            raise AssertionError(f"the server exited ({self.proc.returncode}); "
                                 f"stderr: {''.join(self.stderr)[-3000:]}") from None

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps(message).encode())

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any = None, timeout: float = 60.0) -> dict:
        """Send a request and wait for its response (the whole response message)."""
        msg_id = self.new_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.response(msg_id, timeout)

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    # -- receiving -----------------------------------------------------------------
    def response(self, msg_id: Any, timeout: float = 60.0) -> dict:
        return self.wait(lambda m: "method" not in m and m.get("id") == msg_id, timeout,
                         f"a response to {msg_id!r}")

    def wait(self, predicate: Callable[[dict], bool], timeout: float = 60.0, what: str = "a message") -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for message in self.received:
                    if predicate(message):
                        return message
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited ({self.proc.returncode}) waiting for {what}; "
                                     f"stderr: {''.join(self.stderr)[-3000:]}")
            time.sleep(0.01)
        raise AssertionError(f"timed out waiting for {what}; stderr: {''.join(self.stderr)[-3000:]}")

    def logged(self, text: str, since: int = 0, timeout: float = 60.0) -> bool:
        """Whether the server writes a stderr line holding `text` (after its first `since`
        lines), waiting for it: stderr is read by a thread of its own, so a line the server
        wrote before its last answer may not have been read yet."""
        deadline = time.monotonic() + timeout
        while True:
            if any(text in line for line in self.stderr[since:]):
                return True
            if time.monotonic() > deadline or self.proc.poll() is not None:
                return any(text in line for line in self.stderr[since:])
            time.sleep(0.01)

    def responses(self) -> dict[Any, list[dict]]:
        out: dict[Any, list[dict]] = {}
        with self._lock:
            for message in self.received:
                if "method" not in message:
                    out.setdefault(message.get("id"), []).append(message)
        return out

    def diagnostics(self, target: Path | str) -> list[dict]:
        """The last diagnostics published for a path or uri ([] if none were)."""
        uri = target.as_uri() if isinstance(target, Path) else target
        with self._lock:
            found = [m["params"]["diagnostics"] for m in self.received
                     if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]
        return found[-1] if found else []

    def wait_for_code(self, target: Path | str, code: str, timeout: float = 60.0) -> list[dict]:
        """Wait until `code` is published for the file; its diagnostics then."""
        uri = target.as_uri() if isinstance(target, Path) else target
        self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                  and any(d.get("code") == code for d in m["params"]["diagnostics"]), timeout, f"{code} on {uri}")
        return self.diagnostics(uri)

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = stream.read(length)
            message = json.loads(body)
            with self._lock:
                self.raw.append(body)
                self.received.append(message)
            if "method" in message and "id" in message:
                self.server_requests.append(message)
                try:
                    self.send({"jsonrpc": "2.0", "id": message["id"],
                               "result": self._answer(message["method"], message.get("params"))})
                except AssertionError:
                    return  # the server is gone

    def _answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = params.get("items", []) if isinstance(params, dict) else []
            return [None] * len(items)
        if method == "window/showMessageRequest" and "window/showMessageRequest" not in self.answers:
            actions = (params or {}).get("actions") or []
            return actions[0] if self.confirm and actions else None
        return self.answers.get(method)

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    # -- the usual session ---------------------------------------------------------
    def initialize(self, root: Path, capabilities: dict | None = None) -> dict:
        result = self.request("initialize", {
            "processId": None, "rootUri": root.as_uri(),
            "capabilities": MOVING_CLIENT if capabilities is None else capabilities,
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        })
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str | None = None, version: int = 1) -> str:
        text = path.read_text(encoding="utf-8") if text is None else text
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "markdown", "version": version, "text": text}})
        return text

    def close(self) -> int:
        """Shut down as a client does; the server's exit code."""
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout=60)
                self.notify("exit")
                self.proc.wait(timeout=60)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=5)
        return self.proc.returncode
