"""`_archive/_index.md` records (docs/design.md §2.4), read tolerantly.

A record is a heading (level 2 or deeper) followed by `- key: value` items. Keys are read in
any case, bold or not, with `_` or spaces for `-`; unknown keys are kept so a rewrite does
not lose them. A heading with no known field is a record only when it names a `.md` file;
otherwise it is a grouping heading (`## Archived`).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .memory_file import MemoryFile
from .paths import normalize_target
from .zones import archive_location, trash_location

if TYPE_CHECKING:
    from .root_state import FileEntry

KNOWN_KEYS = ("status", "original", "location", "index-line", "archived", "reason", "deleted", "recover-by")
ARCHIVED, TRASHED = "archived", "trashed"
RECOVERY_DAYS = 30  # a deleted file stays recoverable this long (spec: "30-day recovery deadline")

_RE_FIELD = re.compile(
    # The separator takes the colon (and a bold marker after it) but no spaces after them,
    # so `index-line:` keeps everything after its one separating space, indentation included.
    r"^(?:\*\*|__)?(?P<key>[A-Za-z][A-Za-z0-9 _-]{0,39}?)[ \t]*(?:(?:\*\*|__)[ \t]*[:：]|[:：](?:[ \t]*(?:\*\*|__))?)"
)


@dataclass(frozen=True, slots=True)
class RecordField:
    key: str  # normalised: lower case, `-` for spaces and underscores
    written_key: str
    value: str
    line: int


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
    def is_legacy(self) -> bool:
        return self.get("index-line") is None


def normalise_key(key: str) -> str:
    return re.sub(r"[\s_]+", "-", key.strip().lower())


def _clean_path(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "`":
        value = value[1:-1].strip()
    if value.startswith("./"):
        value = value[2:]
    return value


def parse_field(content: str, line: int) -> RecordField | None:
    m = _RE_FIELD.match(content)
    if not m:
        return None
    key = normalise_key(m.group("key"))
    rest = content[m.end():]
    if key == "index-line":
        # The exact route line removed from _index.md: everything after "index-line: ".
        value = rest[1:] if rest.startswith(" ") else rest
    else:
        value = rest.strip()
        if key in ("original", "location"):
            value = _clean_path(value)
    return RecordField(key, m.group("key"), value, line)


def parse_archive_index(doc: MemoryFile) -> list[ArchiveRecord]:
    headings = [h for h in doc.headings if h.top_level and h.level >= 2]
    items = {item.line: item for item in doc.items}
    records: list[ArchiveRecord] = []
    for n, heading in enumerate(headings):
        end = headings[n + 1].line if n + 1 < len(headings) else len(doc.lines)
        fields = []
        for i in range(heading.end_line + 1, end):
            item = items.get(i)
            if item is None or item.ordered:
                continue
            parsed = parse_field(doc.lines[i][item.content_col:], i)
            if parsed is not None:
                fields.append(parsed)
        title = _clean_path(heading.text)
        if any(f.key in KNOWN_KEYS for f in fields) or title.lower().endswith(".md"):
            records.append(ArchiveRecord(heading.line, heading.level, title, tuple(fields), end))
    return records


_RE_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_date(value: str | None) -> dt.date | None:
    if value is None or not _RE_DATE.match(value.strip()):
        return None
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        return None


def record_location(record: ArchiveRecord) -> str | None:
    """Where the record says the file is: `location:`, else derived from original and status."""
    location = record.get("location")
    if location:
        path, problem = normalize_target(location)
        return path if problem is None else None
    original = record.get("original") or record.title
    path, problem = normalize_target(original)
    if problem is not None or not path:
        return None
    return trash_location(path) if record.status == TRASHED else archive_location(path)


def records_of(entry: FileEntry) -> list[ArchiveRecord]:
    """`parse_archive_index` of the archive index's entry in the root state, kept until its text changes."""
    doc = entry.doc
    if doc is None:
        return []
    return entry.cached("records", lambda: parse_archive_index(doc))
