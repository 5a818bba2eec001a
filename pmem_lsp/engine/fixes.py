"""Quick fixes: text-only edits that resolve a finding — what they are, and how one is made.

Plain data in engine coordinates (root-relative paths, 0-based lines, character offsets into
the text the root state holds — the editor's buffer while it holds unsaved edits). Each rule
module makes its own fixes with these (`FIXES` there; `catalogue.quick_fixes` dispatches); the
server turns them into LSP code actions. Nothing here moves a file (that is lifecycle's job).
"""

from __future__ import annotations

from dataclasses import dataclass

from .line_index import LineIndex
from .root_state import RootState


@dataclass(frozen=True, slots=True)
class TextEdit:
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    new_text: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    code: str  # the finding's rule code
    edits: tuple[TextEdit, ...]
    preferred: bool = False


# -- coordinates ----------------------------------------------------------------
def splice(path: str, old: str, new: str) -> TextEdit | None:
    """One edit turning `old` into `new`: the smallest change, started at a line start.

    Unless the change is a plain append, the common prefix is cut back to the start of its
    line, so an inserted route line is an insertion of whole lines rather than a rotated
    piece of text starting inside another line.
    """
    if old == new:
        return None
    index = LineIndex(old)
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    if prefix < len(old):
        prefix = index.start(index.position(prefix)[0])
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    # Never split a CRLF pair between the replaced text and the kept suffix.
    while suffix and old[len(old) - suffix] == "\n" and old[len(old) - suffix - 1] == "\r":
        suffix -= 1
    line, col = index.position(prefix)
    end_line, end_col = index.position(len(old) - suffix)
    return TextEdit(path, line, col, end_line, end_col, new[prefix:len(new) - suffix])


def text_of(state: RootState, rel: str) -> str | None:
    """The text a fix may edit: readable and whole (a truncated file's end is not its end)."""
    entry = state.files.get(rel)
    if entry is None or entry.text is None or entry.truncated:
        return None
    return entry.text


def text_fix(title: str, code: str, path: str, old: str, new: str, preferred: bool = False) -> list[Fix]:
    edit = splice(path, old, new)
    return [Fix(title, code, (edit,), preferred)] if edit is not None else []


