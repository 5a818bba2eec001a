"""The full server takes a session over from the early loop (early.py).

It reads the session from its first byte: what the early loop read (`Handover.replay`), then
the rest of stdin; and its answers to the requests the early loop answered are dropped, once
each, so the client gets exactly one answer per request.
"""

from __future__ import annotations

import io
import json
import os
import sys
from typing import IO, Any, cast

from .early_answers import Handover, id_key


class ReplayedInput(io.RawIOBase):
    """The bytes already read, then the file descriptor's."""

    def __init__(self, replay: bytes, fd: int) -> None:
        self._replay = memoryview(replay)
        self._fd = fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._replay:
            n = min(len(buffer), len(self._replay))
            buffer[:n] = self._replay[:n]
            self._replay = self._replay[n:]
            return n
        data = os.read(self._fd, len(buffer))
        buffer[:len(data)] = data
        return len(data)


class DroppingOutput:
    """A text stream that leaves out the full server's answers to requests already answered.
    The SDK writes each message as one `write` of a line."""

    def __init__(self, out: IO[str], answered: dict[str, int]) -> None:
        self._out = out
        self._answered = dict(answered)

    def _already_answered(self, text: str) -> bool:
        if not self._answered:
            return False
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or "id" not in message or "method" in message:
            return False
        key = id_key(message["id"])
        if self._answered.get(key, 0) <= 0:
            return False
        self._answered[key] -= 1
        if not self._answered[key]:
            del self._answered[key]  # once all are dropped, no message is parsed again
        return True

    def write(self, text: str) -> int:
        if self._already_answered(text):
            return len(text)
        return self._out.write(text)

    def flush(self) -> None:
        self._out.flush()


def claim_wire() -> tuple[int, int]:
    """Descriptors of the session's stdin and stdout, with fds 0 and 1 pointed elsewhere (the
    null device, stderr) while the server runs, as the SDK's own stdio transport does when it
    opens the streams itself: a stray read or print (a child process's included) never takes
    a byte of the session or writes into it."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    sys.stdout.flush()
    os.dup2(2, 1)
    return wire_in, wire_out


def streams(handover: Handover) -> tuple[IO[str], IO[str]]:
    """stdin and stdout for the SDK's stdio transport, as text (UTF-8, as the SDK's own)."""
    wire_in, wire_out = claim_wire()
    stdin = io.TextIOWrapper(io.BufferedReader(ReplayedInput(handover.replay, wire_in)),
                             encoding="utf-8", errors="replace")
    stdout = io.TextIOWrapper(io.FileIO(wire_out, "wb"), encoding="utf-8")  # lives as long as the server
    return stdin, cast(IO[str], DroppingOutput(stdout, handover.answered))
