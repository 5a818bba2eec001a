"""Hover text (docs/design.md §5): what a route, link or record points to, and whether a file is routed.

A file is described the way an agent meets it on demand: its title and Summary bullets (the
first lines when it has none), its size and approximate tokens (bytes / 4), when it last
changed, and its open problems. Nothing beyond those lines is ever shown, every line shown
has likely secrets masked: the text of each PM401 finding replaced by `[secret]` (a line of a
multi-line secret, a PEM block, hidden whole), and anything else that looks like one masked.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..archive_index import TRASHED, ArchiveRecord, parse_date, record_location, written_name
from ..catalogue import RULES
from ..findings import Finding
from ..memory_file import MemoryFile
from ..names import clean, shown
from ..root_state import FileEntry, RootState
from ..secrets import mask_secrets
from ..zones import ARCHIVE_INDEX, INDEX, Zone, archive_location, original_of, trash_location, zone_of
from .refs import routes_of
from .spots import LINK, RECORD, ROUTE, TITLE, archive_records, spot_at

FIRST_LINES = 5  # shown when a file has no summary
Findings = Mapping[str, Sequence[Finding]]

_RE_ESCAPE = re.compile(r"([\\`*_\[\]<>|])")


@dataclass(frozen=True, slots=True)
class HoverText:
    markdown: str
    line: int  # the text the hover is about
    start: int
    end: int


def escape(text: str) -> str:
    """Plain text for a Markdown paragraph (titles, names)."""
    return _RE_ESCAPE.sub(r"\\\1", text)


def code(text: str) -> str:
    """`text` (a path, a record's title) as one code span, whatever backticks it holds; a name
    that is not printable UTF-8 shown escaped (engine/names.py), so a line break cannot end it."""
    text = shown(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(lines: Sequence[str], info: str = "markdown") -> list[str]:
    longest = max((len(m) for line in lines for m in re.findall(r"`{3,}", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *lines, fence]


def has_secret(findings: Findings, rel: str) -> bool:
    return any(f.code == "PM401" for f in findings.get(rel, ()))


def changed_date(entry: FileEntry) -> str:
    if entry.mtime is None:
        return "not saved yet"
    try:
        return dt.date.fromtimestamp(entry.mtime).isoformat()
    except (OverflowError, OSError, ValueError):
        return "unknown"


def size_line(entry: FileEntry) -> str:
    return f"{entry.size:,} bytes · ~{round(entry.size / 4):,} tokens · changed {changed_date(entry)}"


def first_lines(doc: MemoryFile, limit: int = FIRST_LINES) -> list[tuple[int, str]]:
    """The first non-blank lines after the title (front matter skipped), with their numbers."""
    start = doc.title.end_line + 1 if doc.title is not None else doc.front_matter_end
    out = []
    for n in range(start, len(doc.lines)):
        line = doc.lines[n]
        if line.strip():
            out.append((n, line.rstrip()))
            if len(out) == limit:
                break
    return out


SECRET_SHOWN = "[secret]"
SECRET_LINE = "[a line of a secret, hidden]"


def _secret_spans(findings: Findings, rel: str) -> list[Finding]:
    return [f for f in findings.get(rel, ()) if f.code == "PM401"]


def _shown(line: str, n: int, secrets: Sequence[Finding]) -> str:
    """Line `n` as hover may show it: each PM401 finding's text on it replaced (by the
    finding's own range, so what the analysis found is never shown whatever the masking
    below recognises), a line inside a multi-line secret hidden whole, and then any other
    likely secret masked."""
    spans = []
    for f in secrets:
        if f.line < n < f.end_line or (f.line != f.end_line and n in (f.line, f.end_line)):
            return SECRET_LINE
        if f.line == n:
            spans.append((f.col, f.end_col))
    for a, b in sorted(spans, reverse=True):
        line = line[:a] + SECRET_SHOWN + line[b:]
    return mask_secrets(line)


def display_title(doc: MemoryFile | None, rel: str, findings: Findings) -> str:
    """The title when it is safe to show (no secret on its line), else the path."""
    title = doc.title_text if doc is not None else None
    if title and doc is not None and doc.title is not None:
        if any(f.code == "PM401" and f.line <= doc.title.line <= f.end_line for f in findings.get(rel, ())):
            title = None
    return mask_secrets(title) if title else ""


def problems(findings: Findings, rel: str) -> list[str]:
    out = []
    for f in findings.get(rel, ()):
        rule = RULES.get(f.code)
        name = f" {rule.name}" if rule is not None else ""
        out.append(f"- `{f.code}`{name} (line {f.line + 1}): {f.message}")
    return out


def file_card(state: RootState, rel: str, findings: Findings) -> list[str]:
    """Markdown lines describing the file at `rel`, as an agent would meet it."""
    entry = state.files.get(rel)
    if entry is None:
        return _absent(state, rel)
    doc = entry.doc if entry.markdown else None
    title = display_title(doc, rel, findings)
    out = [f"**{escape(title)}** · {code(rel)}" if title else code(rel), ""]
    if entry.error is not None:
        out += [f"*Cannot be read ({entry.error}).*", ""]
    elif doc is None:
        out += ["*Not a Markdown file.*", ""]
    else:
        hide = _secret_spans(findings, rel)
        bullets = doc.summary.bullets if doc.summary is not None else ()
        if bullets:
            out += [f"- {_shown(doc.lines[b.line], b.line, hide)[b.start:].strip()}" for b in bullets] + [""]
        else:
            lines = first_lines(doc)
            if lines:
                out += ["*No summary; the first lines:*", "",
                        *fenced([_shown(text, n, hide) for n, text in lines]), ""]
            else:
                out += ["*Empty.*", ""]
        if hide:
            out += ["*Holds a likely secret (PM401): masked here.*", ""]
    out.append(size_line(entry) + (" (analysed up to 2 MiB)" if entry.truncated else ""))
    found = problems(findings, rel)
    if found:
        out += ["", "Open problems:", *found]
    return out


def _absent(state: RootState, rel: str) -> list[str]:
    if rel in state.excluded:
        return [code(rel), "", "*Excluded by the settings: never read.*"]
    if rel in state.dirs:
        prefix = rel + "/"
        count = sum(1 for f in state.files if f.startswith(prefix))
        return [f"{code(rel + '/')} — folder, {count:,} file{'s' if count != 1 else ''}"]
    if state.unseen(rel):
        return [code(rel), "", "*Could not be looked at (its folder cannot be listed).*"]
    out = [code(rel), "", "**Does not exist** in the memory root."]
    if zone_of(rel) is Zone.ACTIVE:
        for where, label in ((archive_location(rel), "archived"), (trash_location(rel), "in the trash")):
            if state.is_file(where):
                out.append(f"It is {label}: {code(where)}.")
    return out


def days_left(recover_by: dt.date, today: dt.date) -> str:
    n = (recover_by - today).days
    if n > 1:
        return f"{n} days left"
    if n == 1:
        return "1 day left"
    if n == 0:
        return "last day to recover"
    return f"expired {-n} day{'s' if n != -1 else ''} ago; it can be purged"


_RECORD_ORDER = ("original", "location", "archived", "deleted", "recover-by", "reason")


def record_card(record: ArchiveRecord, today: dt.date) -> list[str]:
    status = record.status or "no status"
    out = [f"**Archive record** {code(mask_secrets(record.title))} — {escape(status)}", ""]
    for key in _RECORD_ORDER:
        value = record.get(key)
        if value is None:
            continue
        value = mask_secrets(value)
        shown = code(value) if key in ("original", "location") and value else escape(value)
        if key == "recover-by":
            date = parse_date(value)
            if date is not None:
                shown += f" — {days_left(date, today)}"
        out.append(f"- {written_name(key, record.dialect)}: {shown}")  # as the record spells it
    if record.status == TRASHED and parse_date(record.get("recover-by")) is None:
        out.append(f"- {written_name('recover-by', record.dialect)}: *missing or not a date*")
    if record.is_legacy:
        out.append("- *legacy record: no saved route line (recover proposes one)*")
    return out


def _route_lines(state: RootState, rel: str) -> list[str]:
    index = state.doc(INDEX)
    if index is None:
        return [f"No `_index.md` in this root: nothing routes to {code(rel)}."]
    routes = [r for r in routes_of(state) if r.path == rel]
    if not routes:
        return [f"**No route** in `_index.md`: agents will not load {code(rel)} on demand."]
    numbers = ", ".join(str(r.line + 1) for r in routes)
    head = f"**Routed** in `_index.md` (line{'s' if len(routes) > 1 else ''} {numbers}):"
    return [head, "", *fenced([mask_secrets(index.lines[r.line].strip()) for r in routes])]


def title_card(state: RootState, rel: str, today: dt.date) -> list[str]:
    zone = zone_of(rel)
    if zone is Zone.ACTIVE:
        return _route_lines(state, rel)
    if zone is Zone.CORE:
        return ["**Core file**: always loaded; it needs no route."]
    if zone in (Zone.ARCHIVE, Zone.TRASH):
        for record in archive_records(state):
            if record_location(record) == rel:
                return record_card(record, today)
        original = original_of(rel)
        return [f"No record in `{ARCHIVE_INDEX}` for this file"
                + (f" (original path {code(original)})." if original else ".")]
    return []


def hover(state: RootState, rel: str, line: int, char: int, findings: Findings,
          today: dt.date | None = None) -> HoverText | None:
    """The hover for (line, char) of `rel`, or None when nothing there has one."""
    today = today or dt.date.today()
    spot = spot_at(state, rel, line, char)
    if spot is None:
        return None
    if spot.kind in (ROUTE, LINK):
        lines = file_card(state, spot.path, findings) if spot.path else []
    elif spot.kind == RECORD:
        assert spot.record is not None  # a record spot carries its record
        lines = record_card(spot.record, today)
        if spot.path:
            lines += ["", "---", "", *file_card(state, spot.path, findings)]
    elif spot.kind == TITLE:
        lines = title_card(state, rel, today)
    else:  # pragma: no cover - every kind is handled above
        lines = []
    if not lines:
        return None
    return HoverText(clean("\n".join(lines).rstrip() + "\n"), spot.line, spot.start, spot.end)
