"""`_archive/_index.md` records (docs/design.md §2.4, §2.5), read tolerantly, in both dialects.

A record is a heading (level 2 or deeper) followed by `- key: value` items. Keys are read in
any case, bold or not, with `_` or spaces for `-`; unknown keys are kept so a rewrite does
not lose them. A heading with no known field is a record only when it names a `.md` file;
otherwise it is a grouping heading (`## Archived`).

Two dialects name the same fields: pmem's own (`## path`, `status`, `original`, `location`,
`index-line`, `archived`, `deleted`, `recover-by`) and the format's v0.10 one (`### path`,
`state`, `original_path`, `active_index_line`, `archived_at`, `deleted_at`, `recover_deadline`;
no location: it follows from the path and the state). Fields are read under pmem's names
whatever the dialect (`RecordField.key`); `written_key` keeps the spelling for rewrites.

The format's reference CLI reads records differently (docs/decisions.md, "Dialects"): only
lines starting with `### ` open a record, every line up to the next one belongs to it, and a
field is a line starting exactly with `- name: `. `reference_blocks` says what it sees, so that
nothing pmem writes is read as part of another record by it.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .memory_file import MemoryFile
from .names import shown, unshown
from .paths import record_path
from .zones import archive_location, trash_location

if TYPE_CHECKING:
    from .root_state import FileEntry

KNOWN_KEYS = ("status", "original", "location", "index-line", "archived", "reason", "deleted", "recover-by")
ARCHIVED, TRASHED = "archived", "trashed"
PMEM, V010 = "pmem", "v0.10"  # the two record dialects (docs/decisions.md, "Dialects")
DIALECTS = (PMEM, V010)
# pmem's name → the v0.10 name (normalised: `_` read as `-`); `reason` is spelled alike.
V010_NAMES = {"status": "state", "original": "original_path", "index-line": "active_index_line",
              "archived": "archived_at", "deleted": "deleted_at", "recover-by": "recover_deadline",
              "reason": "reason"}
_ALIASES = {normalise: key for key, name in V010_NAMES.items() if (normalise := name.replace("_", "-")) != key}
# The reference CLI's `active_index_line` for a file archived with no route: no saved line.
NO_ROUTE = "(no active index line)"
# Field order of a v0.10 record, as the format's reference CLI writes one.
V010_ORDER = ("original", "status", "archived", "reason", "index-line", "deleted", "recover-by")
RECOVERY_DAYS = 30  # a deleted file stays recoverable this long (spec: "30-day recovery deadline")

_RE_FIELD = re.compile(
    # The separator takes the colon (and, for a bold key, the bold marker after it) but no
    # spaces after them, so `index-line:` keeps everything after its one separating space,
    # indentation included. A value of a plain key may start with `**` (`reason: **x** y`).
    r"^(?P<bold>\*\*|__)?(?P<key>[A-Za-z][A-Za-z0-9 _-]{0,39}?)[ \t]*"
    r"(?(bold)(?:(?:\*\*|__)[ \t]*[:：]|[:：](?:[ \t]*(?:\*\*|__))?)|[:：])"
)


@dataclass(frozen=True, slots=True)
class RecordField:
    key: str  # normalised: lower case, `-` for spaces and underscores
    written_key: str
    value: str
    line: int
    last_line: int = -1  # the field's last line: a continued field (a multi-line reason) spans several

    @property
    def end_line(self) -> int:
        return max(self.line, self.last_line)


@dataclass(frozen=True, slots=True)
class ArchiveRecord:
    heading_line: int
    heading_level: int
    title: str
    fields: tuple[RecordField, ...]
    end: int  # line after the record's section

    def get(self, key: str) -> str | None:
        for f in self.fields:
            if f.key == key:
                return f.value
        return None

    def field(self, key: str) -> RecordField | None:
        for f in self.fields:
            if f.key == key:
                return f
        return None

    @property
    def status(self) -> str | None:
        value = self.get("status")
        return value.strip().lower() if value is not None else None

    @property
    def saved_route(self) -> str | None:
        """The exact route line to restore; None when the record has none (legacy, or the
        v0.10 `(no active index line)`)."""
        value = self.get("index-line")
        return None if value is None or value.strip() == NO_ROUTE else value

    @property
    def archived_unrouted(self) -> bool:
        """The file had no route when it was archived: `routed: no` (pmem's dialect) or the
        format's `(no active index line)` (v0.10). Recover brings it back with none unless the
        person asks for one (docs/decisions.md)."""
        return ((self.get("routed") or "").strip().lower() == "no"
                or (self.get("index-line") or "").strip() == NO_ROUTE)

    @property
    def is_legacy(self) -> bool:
        return self.saved_route is None

    @property
    def dialect(self) -> str:
        """v0.10 when any field is spelled the v0.10 way (`original_path`, `state`, …), or when
        it has no field and sits under a `### ` heading; else pmem's own."""
        if any(normalise_key(f.written_key) in _ALIASES for f in self.fields):
            return V010
        if any(f.key in KNOWN_KEYS and f.key != "reason" for f in self.fields):
            return PMEM
        return V010 if self.heading_level == 3 else PMEM


def normalise_key(key: str) -> str:
    return re.sub(r"[\s_]+", "-", key.strip().lower())


def canonical_key(key: str) -> str:
    """The field's pmem name: `original_path` → `original`, `state` → `status`, …"""
    key = normalise_key(key)
    return _ALIASES.get(key, key)


def written_name(key: str, dialect: str) -> str:
    """How `key` (a pmem name) is spelled in a record of `dialect`."""
    return V010_NAMES.get(key, key) if dialect == V010 else key


# The fields that hold a path (the heading holds one too): written in `names.shown` form.
PATH_KEYS = ("original", "location")


def _clean_path(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "`":
        value = value[1:-1].strip()
    if value.startswith("./"):
        value = value[2:]
    # A record is UTF-8 text, so a name that is not UTF-8 is written as `names.shown` gives it
    # (`notes/bad\xff.md`). The safety contract refuses a backslash in any path pmem acts on,
    # so a backslash here is never part of a real name: reading it as an escape is unambiguous
    # (docs/decisions.md, "Any name through the lifecycle").
    return _as_file_system_name(unshown(value)) if "\\" in value else value


def _as_file_system_name(name: str) -> str:
    """`name`'s bytes read as the file system reads them: a hand-written `\\xc3\\xa9` is `é`, the
    name of the file it means (as `validate_relative` makes a path given to pmem)."""
    try:
        return os.fsdecode(os.fsencode(name))
    except UnicodeError:  # a surrogate that stands for no byte: left as read, it names no file
        return name


def record_text(path: str) -> str:
    """How a record writes `path` (its heading, `original`/`original_path`, `location`): itself,
    or, when it is not printable UTF-8 (or holds a backslash), its `names.shown` form."""
    return shown(path)


def parse_field(content: str, line: int) -> RecordField | None:
    m = _RE_FIELD.match(content)
    if not m:
        return None
    key = canonical_key(m.group("key"))
    rest = content[m.end():]
    if key == "index-line":
        # The exact route line removed from _index.md: everything after "index-line: ".
        value = rest[1:] if rest.startswith(" ") else rest
    else:
        value = rest.strip()
        if key in ("original", "location"):
            value = _clean_path(value)
    return RecordField(key, m.group("key"), value, line)


_RE_BULLET = re.compile(r"^[ \t]{0,3}[-*+][ \t]+")


def _record_headings(doc: MemoryFile) -> list[tuple[int, int, int, str]]:
    """(line, last line, level, text) of every heading that may open a record: Markdown's
    top-level headings of level 2 or deeper, and every line starting with `### ` — where the
    format's reference CLI starts a block, even when a field's continuation (a multi-line
    `reason`) opened a fence or an HTML block that hides it from a Markdown reader."""
    found = {h.line: (h.line, h.end_line, h.level, h.text) for h in doc.headings if h.top_level and h.level >= 2}
    for i, line in enumerate(doc.lines):
        if line.startswith("### ") and i not in found:
            found[i] = (i, i, 3, line[4:].strip())
    return [found[i] for i in sorted(found)]


def parse_archive_index(doc: MemoryFile) -> list[ArchiveRecord]:
    """The records, each a heading and the `- key: value` lines up to the next heading. A line
    after a field that is neither blank, a list item nor a heading continues that field (the
    reference CLI writes a multi-line `reason` so), read as one value joined by line breaks,
    whatever Markdown makes of it (a fence, a setext underline, an HTML block)."""
    headings = _record_headings(doc)
    lines = doc.lines
    records: list[ArchiveRecord] = []
    for n, (line, last, level, text) in enumerate(headings):
        end = headings[n + 1][0] if n + 1 < len(headings) else len(lines)
        fields: list[RecordField] = []
        continuing = False
        for i in range(last + 1, end):
            raw = lines[i]
            bullet = _RE_BULLET.match(raw)
            if bullet:
                parsed = parse_field(raw[bullet.end():], i)
                continuing = parsed is not None
                if parsed is not None:
                    fields.append(parsed)
            elif continuing and raw.strip():
                prev = fields[-1]
                fields[-1] = RecordField(prev.key, prev.written_key, f"{prev.value}\n{raw.strip()}", prev.line, i)
            else:
                continuing = False
        title = _clean_path(text)
        if any(f.key in KNOWN_KEYS for f in fields) or title.lower().endswith(".md"):
            records.append(ArchiveRecord(line, level, title, tuple(fields), end))
    return records


_RE_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_date(value: str | None) -> dt.date | None:
    if value is None or not _RE_DATE.match(value.strip()):
        return None
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        return None


def reference_blocks(lines: list[str]) -> list[tuple[int, int, str | None]]:
    """The records as the format's reference CLI reads them: (heading line, end line, its
    `original_path` or None) for every line that starts with `### `, up to the next such line.
    A record under another heading inside that span is, to it, part of the block."""
    starts = [i for i, line in enumerate(lines) if line.startswith("### ")]
    out = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        original = next((line[len("- original_path: "):].strip() for line in lines[start + 1:end]
                         if line.startswith("- original_path: ")), None)
        out.append((start, end, original))
    return out


def dialect_of_records(records: list[ArchiveRecord]) -> str | None:
    """The dialect most records are written in (v0.10 on a tie); None without records."""
    if not records:
        return None
    v010 = sum(1 for r in records if r.dialect == V010)
    return V010 if v010 * 2 >= len(records) else PMEM


def record_location(record: ArchiveRecord) -> str | None:
    """Where the record says the file is: `location:`, else derived from original and status."""
    location = record.get("location")
    if location:
        path, problem = record_path(location)
        return path if problem is None else None
    original = record.get("original") or record.title
    path, problem = record_path(original)
    if problem is not None or not path:
        return None
    return trash_location(path) if record.status == TRASHED else archive_location(path)


def records_of(entry: FileEntry) -> list[ArchiveRecord]:
    """`parse_archive_index` of the archive index's entry in the root state, kept until its text changes."""
    doc = entry.doc
    if doc is None:
        return []
    return entry.cached("records", lambda: parse_archive_index(doc))
