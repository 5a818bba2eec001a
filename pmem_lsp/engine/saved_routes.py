"""The route line an archive record saved, for a file that is back at its original path.

A recover moves the file back first and writes `_index.md` second; when it stops between the
two (a full disk, a kill, a competing writer), the file is active again without its route and
its record still holds the exact line the user once wrote (the seed: "restore the saved active
`_index.md` entry exactly"). Every path that then adds a route for the file — the PM202 quick
fix and `pmem.addRoute`, `pmem route add`, `pmem save`, MCP's `route` and `save` previews —
asks `saved_line` first, and uses that line byte for byte, or refuses and says where the line
is; a line made from the file's first Summary bullet would lose the user's own words
(docs/decisions.md, "A saved route line is never replaced by a made-up one").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .archive_index import record_location
from .index_edit import find_records, reads_back


@dataclass(frozen=True, slots=True)
class SavedLine:
    """What a half-done recover's record saved for a file: `line`, when it still reads as a
    route to the file (else None: the record holds a line pmem cannot restore as it is), and
    the record's heading line in `_archive/_index.md` (0-based), for a message."""

    line: str | None
    record_line: int

    def where(self) -> str:
        return f"line {self.record_line + 1} of `_archive/_index.md`"


def saved_line(archive_text: str | None, rel: str, is_file: Callable[[str], bool]) -> SavedLine | None:
    """The saved route of `rel` when a record names `rel` as its original path, saved a route
    line, and its location holds no file (the file came back); None otherwise, also for a
    legacy record or one of a file archived with no route (nothing was saved)."""
    if not archive_text:
        return None
    for record in find_records(archive_text):
        if (record.get("original") or record.title) != rel:
            continue
        location = record_location(record)
        saved = record.saved_route
        if not location or is_file(location) or saved is None or not saved.strip():
            continue
        line = saved.rstrip("\r\n")
        return SavedLine(line if reads_back(line, rel) else None, record.heading_line)
    return None
