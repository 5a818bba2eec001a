"""File names and memory text as every output shows them (docs/decisions.md, "Any name, any output").

A POSIX file name is bytes. Python hands a name that is not valid UTF-8 to pmem as a string
holding lone surrogates (`\\udcff` for the byte 0xff, PEP 383), which no UTF-8 writer (a
terminal, JSON, an MCP or LSP message) can encode; and a name or title may hold a line break
or an escape sequence, which would forge a line of output or drive the terminal. So:

- `shown(name)`: the one printable form of a file name, used by every output (text, JSON,
  SARIF, hovers, MCP). A name made of printable characters and no backslash is itself; any
  other character is escaped — an undecodable byte as `\\xNN` (80 to ff), an ASCII control
  character as `\\xNN` (00 to 7f), any other (C1 controls, line and paragraph separators)
  as `\\uNNNN`, a backslash as `\\\\` — so two names
  never look alike (`unshown` gives the name back).
- `clean(text)`: any other text (a message, a title, a description) made writable: lone
  surrogates become `\\xNN`; `one_line` also escapes every control character.
- `clean_data(value)`: `clean` over every string of a JSON-ready value, keys included.
- `uri_quote(rel)`: the exact bytes of a path, percent-escaped, for URIs.

The names themselves stay as the file system gave them inside the engine, so a file with
such a name is read, checked, and moved like any other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, unquote_to_bytes

# Lone surrogates (undecodable bytes arrive as U+DC80–U+DCFF), C0 and C1 controls, DEL, and
# the characters that other readers take for a line break (NEL is C1; U+2028, U+2029).
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_PLAIN = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_CONTROL_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    if c == "\\":
        return "\\\\"
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:  # an undecodable byte (surrogateescape)
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n < 0x80 else f"\\u{n:04x}"  # \\x80 and up are bytes


def shown(name: str) -> str:
    """A file name as outputs show it: itself when plain, else escaped so that no other name
    is shown the same way."""
    return _NOT_PLAIN.sub(_escape, name) if _NOT_PLAIN.search(name) else name


_ESCAPED = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4})")


def unshown(text: str) -> str:
    """The name `shown` gave `text` for (its inverse)."""

    def back(m: re.Match[str]) -> str:
        code = m.group(1)
        if code == "\\":
            return "\\"
        n = int(code[1:], 16)
        return chr(0xDC00 + n) if code[0] == "x" and n >= 0x80 else chr(n)

    return _ESCAPED.sub(back, text)


def clean(text: str) -> str:
    """`text` writable by any UTF-8 writer: each lone surrogate shown as `\\xNN` (or `\\uNNNN`)."""
    return _SURROGATE.sub(_escape, text) if _SURROGATE.search(text) else text


def one_line(text: str) -> str:
    """`text` on one line: every control character, line break and separator escaped."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def lines(text: str) -> str:
    """A multi-line report: its line breaks kept, every other control character escaped."""
    return _CONTROL_BUT_NEWLINE.sub(_escape, text) if _CONTROL_BUT_NEWLINE.search(text) else text


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """`fn` over every string in a JSON-ready value (dicts, lists, tuples), keys too."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {fn(k) if isinstance(k, str) else k: map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [map_strings(v, fn) for v in value]
    return value


def clean_data(value: Any) -> Any:
    """`clean` over every string in a JSON-ready value, keys too."""
    return map_strings(value, clean)


def uri_quote(rel: str) -> str:
    """A path's exact bytes, percent-escaped (`/` kept), for a URI."""
    return quote(os.fsencode(rel), safe="/")


def uri_unquote(path: str) -> str:
    """The path a URI's percent-escaped part names, undecodable bytes kept (`uri_quote`'s inverse)."""
    return os.fsdecode(unquote_to_bytes(path))
