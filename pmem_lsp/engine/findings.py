"""What a rule reports: plain data in editor vocabulary (root-relative path, 0-based lines,
character offsets). The server converts it to LSP; the CLI prints it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .native import core_for
from .secrets import mask_secrets

if TYPE_CHECKING:
    from .memory_file import MemoryFile
    from .root_state import FileEntry


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.HINT: 0, Severity.INFORMATION: 1, Severity.WARNING: 2, Severity.ERROR: 3}


# The slots `Finding.with_severity` sets, in order.
WITH_SEVERITY_SLOTS = ("path", "line", "col", "end_line", "end_col", "code", "message", "severity", "data")


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    message: str
    # None: the rule's default (or the user's override). Set only where the rule itself
    # decides, e.g. PM303 on a legacy record is information.
    severity: Severity | None = None
    # What the rule found, as data for whatever acts on the finding — health's reasons, the
    # fixes, the client (`Diagnostic.data`): dates, paths, a similarity. Never a secret (the
    # message is masked; data holds what the rule computed, not text it quoted).
    data: Mapping[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        # Messages name paths and quote text (a route's target, a link, a record's location);
        # any of them can hold a secret, and no finding may show one (docs/design.md §7). Masked
        # here, where every finding is made, rather than in each rule.
        masked = _masked(self.message)
        if masked is not self.message:
            object.__setattr__(self, "message", masked)

    def with_severity(self, severity: Severity | None) -> Finding:
        """This finding with `severity`: `dataclasses.replace(self, severity=…)` without its
        walk over the fields, nor the frozen `__init__`'s `object.__setattr__` by name for each
        (a check gives thousands of findings their final severity: 1.3 µs each, 0.7 here). The
        slots are set through their descriptors, the message masked as `__post_init__` does.
        Every field is passed on: a new one must be added here too (tests/engine/test_findings.py
        holds the slots to this list)."""
        f = _new(Finding)
        _set_path(f, self.path)
        _set_line(f, self.line)
        _set_col(f, self.col)
        _set_end_line(f, self.end_line)
        _set_end_col(f, self.end_col)
        _set_code(f, self.code)
        _set_message(f, _masked(self.message))
        _set_severity(f, severity)
        _set_data(f, self.data)
        return f

    def sort_key(self) -> tuple:
        return SORT_KEY(self)


# `Finding.sort_key` as a C function, for sorts of many findings (no Python call for each).
SORT_KEY = attrgetter("path", "line", "col", "code", "message")
_new = object.__new__
(_set_path, _set_line, _set_col, _set_end_line, _set_end_col, _set_code, _set_message, _set_severity,
 _set_data) = (getattr(Finding, name).__set__ for name in WITH_SEVERITY_SLOTS)


def made(path: str, line: int, col: int, end_line: int, end_col: int, code: str, message: str,
         severity: Severity | None = None, data: Mapping[str, Any] | None = None) -> Finding:
    """`Finding(path, line, …)` without the frozen dataclass's `__init__`, which sets each field
    through `object.__setattr__` by name (1.1 µs a finding; 0.6 here): the slots are set through
    their descriptors, the message masked as `__post_init__` does. For the findings made in
    thousands (one or two a file: `at_line`, `entry_finding`; `with_severity` sets them the same
    way). Every field is set: a new one must be added here too (tests/engine/test_findings.py
    holds the slots to WITH_SEVERITY_SLOTS and `made` to `Finding`)."""
    f = _new(Finding)
    _set_path(f, path)
    _set_line(f, line)
    _set_col(f, col)
    _set_end_line(f, end_line)
    _set_end_col(f, end_col)
    _set_code(f, code)
    _set_message(f, _masked(message))
    _set_severity(f, severity)
    _set_data(f, data)
    return f


_NATIVE = core_for("secrets")  # only where the build was written for this Python code (docs/native.md)


def _mask_message(message: str) -> str:
    """`mask_secrets(message)`, skipped where the core's PM401 verdict on the message as a
    one-line text holds (docs/native.md, "The PM401 verdict": no door of the scan is open on it,
    whatever its mode, so `find_secrets([message], honour_marker=False)` finds nothing;
    tests/engine/test_native_secrets.py holds the verdict to that). A message of a path and a
    number — most of them — is one native pass rather than a scan (~1 µs against ~37 µs)."""
    if _NATIVE is not None and _NATIVE.secrets_clear([message]):
        return message
    return mask_secrets(message)


# `mask_secrets` is a function of the message alone, and a root's findings repeat a few hundred
# messages (a rule's template with a path, or nothing, filled in): each distinct message is masked
# once. A finding given its final severity is made again from its masked message, which is then
# found here too. Measured on 2,000-file real-shaped roots: 7,964 maskings (37 µs each) became
# some 300 (docs/performance.md, issue 44).
_masked = lru_cache(maxsize=4096)(_mask_message)


def at_line(path: str, lines: list[str], line: int, code: str, message: str,
            severity: Severity | None = None, data: Mapping[str, Any] | None = None) -> Finding:
    """A finding covering the text of one line (trailing whitespace excluded)."""
    start, end = _line_span(lines, line)
    return made(path, line, start, line, end, code, message, severity, data)


def at_doc_line(path: str, doc: MemoryFile, line: int, code: str, message: str,
                data: Mapping[str, Any] | None = None) -> Finding:
    """`at_line` of the document's line, read without splitting its text where no rule has
    (`MemoryFile.line_text`): most findings about a file are on its title, near the top."""
    start, end = _text_span(doc.line_text(line))
    return made(path, line, start, line, end, code, message, None, data)


def _line_span(lines: list[str], line: int) -> tuple[int, int]:
    return _text_span(lines[line] if 0 <= line < len(lines) else "")


def _text_span(text: str) -> tuple[int, int]:
    """The columns of a line's text, its leading and trailing whitespace excluded."""
    stripped = text.rstrip()
    return len(stripped) - len(stripped.lstrip()), len(stripped)


def whole_file_line(doc: MemoryFile | None) -> int:
    """Where a finding about the whole file goes: its title, else line 1 (docs/design.md §4)."""
    return doc.title.line if doc is not None and doc.title is not None else 0


def file_finding(path: str, doc: MemoryFile | None, code: str, message: str,
                 data: Mapping[str, Any] | None = None) -> Finding:
    """A finding about a whole file: on its title line, or at 1:1 when it has no text."""
    if doc is None:
        return Finding(path, 0, 0, 0, 0, code, message, data=data)
    return at_doc_line(path, doc, whole_file_line(doc), code, message, data)


def _whole_file_span(entry: FileEntry) -> tuple[int, int, int]:
    doc = entry.doc
    assert doc is not None  # a Markdown file with text (`entry_finding`)
    line = whole_file_line(doc)
    # The title's line, without splitting the whole text where no rule has split it yet (a
    # tenth of a real-shaped root's files: ~7 µs each for one line).
    return (line, *_text_span(doc.line_text(line)))


def entry_finding(entry: FileEntry, code: str, message: str, data: Mapping[str, Any] | None = None) -> Finding:
    """`file_finding` for a file of the root state (its text parsed only for a Markdown file),
    with the position kept with the text: the pool's workers (engine/pool.py) find it, so the
    process that reports need not parse the file again."""
    if entry.text is None or not entry.markdown:
        return made(entry.rel, 0, 0, 0, 0, code, message, None, data)
    line, start, end = whole_file_span(entry)
    return made(entry.rel, line, start, line, end, code, message, None, data)


def whole_file_span(entry: FileEntry) -> tuple[int, int, int]:
    """(line, start, end) of where a finding about the whole Markdown file `entry` goes."""
    return entry.cached("whole-file", _whole_file_span, entry)
