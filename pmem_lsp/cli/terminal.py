"""Text for a terminal: memory supplies paths and messages, and a file name may hold a line
break (which would forge a `path:line:col` line), an escape sequence (which the terminal
would obey) or bytes that are not UTF-8. The rules are the engine's (`engine/names.py`):
paths through `shown`, other text through `one_line` or `lines`.

A terminal also obeys the invisible formatting characters: a right-to-left override (U+202E)
prints `notes/cod.md` for `notes/\u202edm.doc`, an isolate or a zero-width space makes two
names look alike. Text output escapes them as `\\uNNNN` (docs/decisions.md, "Any name, any
output"); JSON keeps the exact name, which a program compares rather than reads."""

from __future__ import annotations

import re

from ..engine import names

# Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the
# direction marks (U+200E, U+200F, U+061C), the zero-width space, word joiner and invisible
# operators (U+200B, U+2060–U+2064), the byte order mark and U+180E. Left alone: the
# zero-width joiner and non-joiner (U+200C, U+200D), which emoji and Persian words need.
_INVISIBLE = re.compile("[\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def visible(text: str) -> str:
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _INVISIBLE.search(text) else text


def shown(name: str) -> str:
    """`names.shown`, with the invisible formatting characters escaped too (`names.unshown`
    still gives the name back: a backslash in a name is shown doubled)."""
    return visible(names.shown(name))


def one_line(text: str) -> str:
    return visible(names.one_line(text))


def lines(text: str) -> str:
    return visible(names.lines(text))


__all__ = ["lines", "one_line", "shown", "visible"]
