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

from .early import Handover, id_key


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


def streams(handover: Handover) -> tuple[IO[str], IO[str]]:
    """stdin and stdout for the SDK's stdio transport, as text (UTF-8, as the SDK's own)."""
    stdin = io.TextIOWrapper(io.BufferedReader(ReplayedInput(handover.replay, sys.stdin.fileno())),
                             encoding="utf-8", errors="replace")
    stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
    return stdin, cast(IO[str], DroppingOutput(stdout, handover.answered))
