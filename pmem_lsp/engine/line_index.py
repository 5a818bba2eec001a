"""What a line is, in one place: LF, CRLF and a lone CR end a line — as CommonMark and LSP say,
and as editors count. (Python's `str.splitlines` also breaks at U+2028, form feeds and more,
which no editor does: positions computed that way land on the wrong line.)

`LineIndex` maps character offsets to (line, column) and back for one text; the engine keeps
one per file text (`line_index_of`), and the server converts positions with the same lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

_BREAK = re.compile(r"\r\n|\r|\n")
BOM = "\ufeff"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their endings (no empty last line after a final break)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def line_of(text: str, line: int, lines: list[str] | None = None) -> str:
    """`split_lines(text)[line]`, "" past the last line (`lines`: that split, where made). Without
    it, only the text up to the line's end is read: a finding on a title near the top needs one
    line, and splitting a whole text for it cost a real-shaped root ~6 µs a file (issue 44)."""
    if line < 0:
        return ""
    if lines is None and "\r" not in text:
        start = 0
        for _ in range(line):
            start = text.find("\n", start) + 1
            if not start:
                return ""
        end = text.find("\n", start)
        return text[start:] if end < 0 else text[start:end]
    if lines is None:
        lines = split_lines(text)
    return lines[line] if line < len(lines) else ""


def strip_bom(text: str) -> tuple[str, bool]:
    """An editor's buffer as the disk's text is read (`root_state.decode` drops a leading BOM):
    (the text without it, whether it had one). The one place a buffer's BOM is taken off; the
    host keeps the answer (`Buffer.bom`) and positions on line 0 are shifted by it
    (`client_column`, `engine_column`)."""
    if text.startswith(BOM):
        return text[1:], True
    return text, False


def client_lines(lines: Sequence[str], bom: bool) -> Sequence[str]:
    """The lines as the client's buffer holds them: a BOM back at the start of line 0."""
    if not bom:
        return lines
    return [BOM + lines[0], *lines[1:]] if lines else [BOM]


def client_column(line: int, col: int, bom: bool) -> int:
    """An engine column (in the text without the BOM) → the column in the client's buffer."""
    return col + 1 if bom and line == 0 else col


def engine_column(line: int, col: int, bom: bool) -> int:
    """A column in the client's buffer → the engine's (a position before the BOM is column 0)."""
    return max(0, col - 1) if bom and line == 0 else col


def split_keepends(text: str) -> list[str]:
    """The lines of `text` with their endings, split where `split_lines` splits them."""
    return _LINE.findall(text)


def newline_of(text: str) -> str:
    """The line ending a text uses (its first one), "\\n" when it has none."""
    m = _BREAK.search(text)
    return m.group(0) if m else "\n"


class LineIndex:
    """Line starts of one text, for offset ↔ (line, column) in Python characters."""

    __slots__ = ("text", "starts", "_lines")

    def __init__(self, text: str, lines: list[str] | None = None) -> None:
        self.text = text
        self.starts = [0]
        self.starts += [m.end() for m in _BREAK.finditer(text)]
        self._lines = lines  # `split_lines(text)`, when the caller has it already

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def start(self, line: int) -> int:
        """The offset where `line` starts; the text's length past the last line."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def position(self, offset: int) -> tuple[int, int]:
        """The (line, column) of a character offset (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]

    def offset(self, line: int, column: int) -> int:
        """The character offset of (line, column), clamped to the line and the text (LSP clamps a
        position past a line's end to that end)."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        content_end = end
        while content_end > start and self.text[content_end - 1] in "\r\n":
            content_end -= 1
        return start + max(0, min(column, content_end - start))
