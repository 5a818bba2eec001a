"""Text for a terminal: memory supplies paths and messages, and a file name may hold a line
break (which would forge a `path:line:col` line) or an escape sequence (which the terminal
would obey). Control characters are shown as `\\xNN` instead."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _escape(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group()):02x}"


def one_line(text: str) -> str:
    """`text` on one line, every control character escaped (line breaks included)."""
    return _CONTROL.sub(_escape, text)


def lines(text: str) -> str:
    """A multi-line report: line breaks kept, every other control character escaped."""
    return _CONTROL_BUT_NEWLINE.sub(_escape, text)
