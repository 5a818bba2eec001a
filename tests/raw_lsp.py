"""A raw stdio client for the server: it writes bytes, not typed messages, so tests can send
what a broken client would (bad JSON, wrong shapes, requests out of order).

A reader thread collects everything the server sends. Requests the server makes of the
client are answered as a cautious client would: no confirmation, no edit applied.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

_CLIENT_ANSWERS: dict[str, Any] = {
    "window/showMessageRequest": None,  # dismissed: nothing is ever confirmed
    "workspace/applyEdit": {"applied": False},
    "window/workDoneProgress/create": None,
    "client/registerCapability": None,
    "client/unregisterCapability": None,
    "workspace/codeLens/refresh": None,
    "workspace/diagnostic/refresh": None,
}


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    def __init__(self, cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "pmem_lsp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
        self.received: list[dict] = []
        self.stderr: list[str] = []
        self._lock = threading.Lock()
        self._next_id = 10_000
        self.answers = dict(_CLIENT_ANSWERS)  # what this client answers to the server's requests
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- sending -------------------------------------------------------------------
    def send_raw(self, body: bytes) -> None:
        try:
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

    def request(self, method: str, params: Any = None, timeout: float = 10.0) -> dict:
        """Send a request and wait for its response (the whole response message)."""
        msg_id = self.new_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.response(msg_id, timeout)

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    # -- receiving -----------------------------------------------------------------
    def response(self, msg_id: Any, timeout: float = 10.0) -> dict:
        return self.wait(lambda m: "method" not in m and m.get("id") == msg_id, timeout,
                         f"a response to {msg_id!r}")

    def wait(self, predicate: Callable[[dict], bool], timeout: float = 10.0, what: str = "a message") -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for message in self.received:
                    if predicate(message):
                        return message
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited ({self.proc.returncode}) waiting for {what}; "
                                     f"stderr: {''.join(self.stderr)[-2000:]}")
            time.sleep(0.01)
        raise AssertionError(f"timed out waiting for {what}")

    def responses(self) -> dict[Any, list[dict]]:
        out: dict[Any, list[dict]] = {}
        with self._lock:
            for message in self.received:
                if "method" not in message:
                    out.setdefault(message.get("id"), []).append(message)
        return out

    def diagnostics(self, uri: str) -> list[dict] | None:
        """The last diagnostics published for `uri`, or None if none were."""
        with self._lock:
            found = [m["params"]["diagnostics"] for m in self.received
                     if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]
        return found[-1] if found else None

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
            message = json.loads(stream.read(length))
            with self._lock:
                self.received.append(message)
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"],
                           "result": self._answer(message["method"], message.get("params"))})

    def _answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = params.get("items", []) if isinstance(params, dict) else []
            return [None] * len(items)
        return self.answers.get(method)

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    # -- the usual session ---------------------------------------------------------
    def initialize(self, root: Path) -> dict:
        result = self.request("initialize", {
            "processId": None, "rootUri": root.as_uri(),
            "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": True,
                                                             "resourceOperations": ["rename"]}}},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        })
        self.notify("initialized", {})
        return result

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.request("shutdown", None, timeout=5)
                self.notify("exit")
                self.proc.wait(timeout=5)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


