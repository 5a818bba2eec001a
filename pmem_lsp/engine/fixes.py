"""Quick fixes: text-only edits that resolve a finding (DESIGN §4 "fix" column).

Plain data in engine coordinates (root-relative paths, 0-based lines, character offsets into
the text the snapshot holds — the editor's buffer when the file is open). The server turns
them into LSP code actions; nothing here moves a file (that is lifecycle's job).
"""

from __future__ import annotations

from dataclasses import dataclass


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
