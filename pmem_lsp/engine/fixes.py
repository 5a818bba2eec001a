"""Quick fixes: text-only edits that resolve a finding (DESIGN §4 "fix" column).

Plain data in engine coordinates (root-relative paths, 0-based lines, character offsets into
the text the snapshot holds — the editor's buffer when the file is open). The server turns
them into LSP code actions; nothing here moves a file (that is lifecycle's job).
"""

from __future__ import annotations

import datetime as dt
import difflib
import posixpath
import re
from bisect import bisect_right
from dataclasses import dataclass

from .archive_index import ARCHIVED, RECOVERY_DAYS, TRASHED
from .findings import Finding
from .index_edit import (append_record, find_records, format_record, insert_route, line_text, link_destination,
                         newline_of, propose_route, reads_back, remove_lines, remove_record, routes_to,
                         split_keepends)
from .index_routes import LINK, WIKI, Route, parse_index
from .memory_file import MemoryFile
from .secrets import ALLOW_MARKER
from .rules.routes import renamed_candidate
from .rules.summary import summary_variant
from .snapshot import RootSnapshot
from .zones import ARCHIVE_INDEX, INDEX, Zone, is_markdown, original_of, zone_of


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
def _offsets(lines: list[str]) -> list[int]:
    """Offset of each line of `split_keepends(text)`, then the length of the text."""
    out = [0]
    for line in lines:
        out.append(out[-1] + len(line))
    return out


def _line_starts(text: str) -> list[int]:
    """Offsets where lines start (after a line ending), split as the Markdown parser splits."""
    lines = split_keepends(text)
    offsets = _offsets(lines)
    return offsets if lines and lines[-1].endswith(("\n", "\r")) else offsets[:-1] or [0]


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    line = bisect_right(starts, offset) - 1
    return line, offset - starts[line]


def _splice(path: str, old: str, new: str) -> TextEdit | None:
    """One edit turning `old` into `new`: the smallest change, started at a line start.

    Unless the change is a plain append, the common prefix is cut back to the start of its
    line, so an inserted route line is an insertion of whole lines rather than a rotated
    piece of text starting inside another line.
    """
    if old == new:
        return None
    starts = _line_starts(old)
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    if prefix < len(old):
        prefix = starts[bisect_right(starts, prefix) - 1]
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    # Never split a CRLF pair between the replaced text and the kept suffix.
    while suffix and old[len(old) - suffix] == "\n" and old[len(old) - suffix - 1] == "\r":
        suffix -= 1
    line, col = _position(starts, prefix)
    end_line, end_col = _position(starts, len(old) - suffix)
    return TextEdit(path, line, col, end_line, end_col, new[prefix:len(new) - suffix])


def _text_of(snap: RootSnapshot, rel: str) -> str | None:
    """The text a fix may edit: readable and whole (a truncated file's end is not its end)."""
    entry = snap.files.get(rel)
    if entry is None or entry.text is None or entry.truncated:
        return None
    return entry.text


def _text_fix(title: str, code: str, path: str, old: str, new: str, preferred: bool = False) -> list[Fix]:
    edit = _splice(path, old, new)
    return [Fix(title, code, (edit,), preferred)] if edit is not None else []


# -- routes (PM201, PM203, PM205, PM202) ----------------------------------------
def _route_at(snap: RootSnapshot, finding: Finding) -> tuple[str, Route] | None:
    if finding.path != INDEX:
        return None
    text = _text_of(snap, INDEX)
    doc = snap.doc(INDEX)
    if text is None or doc is None:
        return None
    for route in parse_index(doc).routes:
        if route.line == finding.line and route.start == finding.col and route.path is not None:
            return text, route
    return None


def _remove_route(snap: RootSnapshot, finding: Finding, title: str, preferred: bool) -> list[Fix]:
    found = _route_at(snap, finding)
    if found is None:
        return []
    text, route = found
    return _text_fix(title.format(path=route.path), finding.code, INDEX, text,
                     remove_lines(text, {route.line}), preferred)


def _written_path(route: Route, line: str, new_path: str) -> str:
    """`new_path` written the way `route` wrote its target: `./`, `#fragment`, a wiki-link's
    missing `.md`, escapes where the form needs them."""
    written = route.written
    cut = min((i for i in (written.find("#"), written.find("?")) if i >= 0), default=len(written))
    base, fragment = written[:cut], written[cut:]
    out = new_path
    if route.form == WIKI and not base.lower().endswith(".md") and out.lower().endswith(".md"):
        out = out[:-3]
    angled = route.form == LINK and route.start > 0 and line[route.start - 1] == "<"
    if angled:
        out = out.replace("%", "%25").replace("#", "%23").replace("?", "%3F")
    elif route.form == LINK:
        out = link_destination(out)
    if base.startswith("./") and not out.startswith("<"):
        out = "./" + out
    return out + fragment


MAX_REPOINTS = 3
_CLOSE_ENOUGH = 0.6


def _stem(rel: str) -> str:
    return posixpath.basename(rel).rsplit(".", 1)[0].casefold()


def _closeness(missing: str, rel: str, title: str | None) -> float:
    """How likely `rel` is the file a route to `missing` meant: a name that starts with the
    other (`coffee` → `coffee-brewing`), else the closest of its name and its title."""
    want, have = _stem(missing), _stem(rel)
    if want and have.startswith(want) or have and want.startswith(have):
        return 0.95
    score = difflib.SequenceMatcher(None, want, have).ratio()
    if title:
        score = max(score, difflib.SequenceMatcher(None, want, title.casefold()).ratio())
    return score


def repoint_candidates(snap: RootSnapshot, missing: str, routed: set[str]) -> list[str]:
    """Active files a dangling route to `missing` likely meant, best first: the one file of the
    same name elsewhere, then unrouted files whose name or title is close."""
    same = renamed_candidate(snap, missing)
    if same is not None:
        return [same]
    scored = []
    for rel in snap.files.by_zone[Zone.ACTIVE]:
        if rel in routed or not is_markdown(rel):
            continue
        doc = snap.doc(rel)
        score = _closeness(missing, rel, doc.title_text if doc is not None else None)
        if score >= _CLOSE_ENOUGH:
            scored.append((-score, rel))
    return [rel for _score, rel in sorted(scored)[:MAX_REPOINTS]]


def _repoint(snap: RootSnapshot, finding: Finding) -> list[Fix]:
    found = _route_at(snap, finding)
    if found is None:
        return []
    text, route = found
    doc = snap.doc(INDEX)
    routed = {r.path for r in parse_index(doc).routes if r.path} if doc is not None else set()
    candidates = repoint_candidates(snap, route.path or "", routed)
    fixes = []
    line = doc.lines[route.line]  # type: ignore[union-attr]
    for n, candidate in enumerate(candidates):
        if candidate in routed:
            continue  # the new name is routed already: removing this line is the fix
        edit = TextEdit(INDEX, route.line, route.start, route.line, route.end,
                        _written_path(route, line, candidate))
        new_line = line[:route.start] + edit.new_text + line[route.end:]
        if not reads_back(new_line, candidate):
            continue
        fixes.append(Fix(f"Point to `{candidate}`", finding.code, (edit,), n == 0 and len(candidates) == 1))
    return fixes


def _add_route(snap: RootSnapshot, finding: Finding) -> list[Fix]:
    fix = route_fix(snap, finding.path)
    return [fix] if fix is not None else []


def route_fix(snap: RootSnapshot, rel: str) -> Fix | None:
    """The edit that routes the active Markdown file `rel` in `_index.md` (the PM202 fix and
    `pmem.addRoute`); None when it is routed already, not an active file, or there is no
    readable index."""
    entry = snap.files.get(rel)
    text = _text_of(snap, INDEX)
    if entry is None or entry.zone is not Zone.ACTIVE or not entry.markdown or text is None or routes_to(text, rel):
        return None
    doc = entry.doc
    title = doc.title_text if doc is not None else None
    bullets = doc.summary.bullets if doc is not None and doc.summary is not None else ()
    description = bullets[0].text if bullets and bullets[0].text else None
    route = propose_route(text, rel, title, description)
    fixes = _text_fix("Add route to _index.md", "PM202", INDEX, text, insert_route(text, rel, route), True)
    return fixes[0] if fixes else None


# -- records (PM301) ------------------------------------------------------------
RECORD_REASON = "recorded by pmem"


def _add_record(snap: RootSnapshot, finding: Finding, today: dt.date) -> list[Fix]:
    location = finding.path
    zone = zone_of(location)
    original = original_of(location)
    archive_text = _text_of(snap, ARCHIVE_INDEX)
    if zone not in (Zone.ARCHIVE, Zone.TRASH) or not original or archive_text is None:
        return []  # no archive index to write into: that is PM001's upgrade
    fields = [("status", ARCHIVED if zone is Zone.ARCHIVE else TRASHED), ("original", original),
              ("location", location)]
    index_text = _text_of(snap, INDEX)
    routes = routes_to(index_text, original) if index_text is not None else []
    if routes:
        fields.append(("index-line", line_text(index_text or "", routes[0].line)))
    fields += [("archived", today.isoformat()), ("reason", RECORD_REASON)]
    title = "Add record to _archive/_index.md"
    if zone is Zone.TRASH:
        recover_by = today + dt.timedelta(days=RECOVERY_DAYS)
        fields += [("deleted", today.isoformat()), ("recover-by", recover_by.isoformat())]
        title += f" (trashed today: recoverable until {recover_by.isoformat()})"
    record = format_record(original, fields, newline_of(archive_text))
    return _text_fix(title, finding.code, ARCHIVE_INDEX, archive_text,
                     append_record(archive_text, record), True)


# -- the Summary (PM100, PM101, PM106) ------------------------------------------
_RE_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SKELETON_BULLETS = ("TODO: current status", "TODO: the key fact or decision", "TODO: next step")
SKELETON_BULLETS_ZH = ("TODO: 当前状态", "TODO: 关键事实或决定", "TODO: 下一步")
# The summary's section runs to the next heading: when what follows the summary is not a
# heading (prose right after the title), this heading closes the summary so the prose does
# not become part of it (PM103).
CLOSING_HEADING, CLOSING_HEADING_ZH = "## Details", "## 详情"


def _active_doc(snap: RootSnapshot, rel: str) -> tuple[str, MemoryFile] | None:
    entry = snap.files.get(rel)
    text = _text_of(snap, rel)
    if entry is None or entry.zone is not Zone.ACTIVE or text is None or entry.doc is None:
        return None
    return text, entry.doc


def _blank(line: str) -> bool:
    return not line.strip()


def _chinese(text: str | None) -> bool:
    return bool(_RE_CJK.search(text or ""))


def _after_summary(doc: MemoryFile, at: int, nl: str) -> str:
    """What goes between a summary placed before line `at` and that line: a blank line, and
    a closing heading when line `at` is not a heading. Nothing at the end of the file."""
    if at >= len(doc.lines):
        return ""
    if any(h.line == at and h.top_level for h in doc.headings):
        return nl
    heading = CLOSING_HEADING_ZH if _chinese(doc.title_text) else CLOSING_HEADING
    return nl + heading + nl + nl


def _insert_skeleton(snap: RootSnapshot, finding: Finding) -> list[Fix]:
    found = _active_doc(snap, finding.path)
    if found is None:
        return []
    text, doc = found
    if doc.summary_headings:
        return []
    chinese = _chinese(doc.title_text)
    heading, bullets = ("## 摘要", SKELETON_BULLETS_ZH) if chinese else ("## Summary", SKELETON_BULLETS)
    nl = newline_of(text)
    lines = split_keepends(text)
    at = doc.preamble_end
    before, after = lines[:at], lines[at:]
    if before and not before[-1].endswith(("\n", "\r")):
        before[-1] += nl
    block = heading + nl + "".join(f"- {b}{nl}" for b in bullets)
    if before and not _blank(before[-1]):
        block = nl + block
    block += _after_summary(doc, at, nl)
    new = "".join(before) + block + "".join(after)
    return _text_fix("Insert a Summary skeleton", finding.code, finding.path, text, new)


def _move_summary_up(snap: RootSnapshot, finding: Finding) -> list[Fix]:
    found = _active_doc(snap, finding.path)
    if found is None:
        return []
    text, doc = found
    heads = doc.summary_headings
    at = doc.preamble_end
    if not heads or heads[0].line != finding.line or heads[0].line <= at:
        return []
    section = doc.section_of(heads[0])
    lines = split_keepends(text)
    n = len(lines)
    start, end = heads[0].line, section.end
    content_end = end
    while content_end > start + 1 and _blank(lines[content_end - 1]):
        content_end -= 1
    nl = newline_of(text)
    block = "".join(lines[start:content_end])
    if not block.endswith(("\n", "\r")):
        block += nl
    # Take the section out with the blank lines that followed it; at the end of the file,
    # with the blank lines that preceded it instead, so no trailing blank line is left.
    cut_start, cut_end = start, end
    if end >= n:
        while cut_start - 1 > at and _blank(lines[cut_start - 1]):
            cut_start -= 1
    if at > 0 and not _blank(lines[at - 1]):
        block = nl + block
    block += _after_summary(doc, at, nl)  # `at` is before the summary: never the end of the file
    offsets, starts = _offsets(lines), _line_starts(text)
    remove_from, remove_to = offsets[cut_start], offsets[cut_end]
    if cut_end >= n and not lines[-1].endswith(("\n", "\r")):
        # The last line has no line ending: take the one before the cut instead.
        remove_from -= len(lines[cut_start - 1]) - len(lines[cut_start - 1].rstrip("\r\n"))
    insert = TextEdit(finding.path, at, 0, at, 0, block)
    remove = TextEdit(finding.path, *_position(starts, remove_from), *_position(starts, remove_to), "")
    return [Fix("Move the summary up", finding.code, (insert, remove), True)]


def _rename_heading(snap: RootSnapshot, finding: Finding) -> list[Fix]:
    found = _active_doc(snap, finding.path)
    if found is None:
        return []
    _text, doc = found
    heading = summary_variant(doc)
    if heading is None or heading.line != finding.line or doc.summary_headings:
        return []
    new = "## 摘要" if _chinese(heading.text) else "## Summary"
    last = doc.lines[heading.end_line]
    edit = TextEdit(finding.path, heading.line, 0, heading.end_line, len(last), new)
    return [Fix(f"Rename to `{new}`", finding.code, (edit,), True)]


def _remove_dangling_record(snap: RootSnapshot, finding: Finding) -> list[Fix]:
    """PM302: the record's file is gone from its location. When it is back at its original
    path (a recover that stopped before removing the record), the record is done with."""
    text = _text_of(snap, ARCHIVE_INDEX)
    if text is None:
        return []
    record = next((r for r in find_records(text) if r.heading_line == finding.line), None)
    if record is None:
        return []
    original = record.get("original") or record.title
    back = snap.is_file(original)
    title = (f"Remove the record (`{original}` is back at its original path)" if back
             else "Remove the dangling record")
    return _text_fix(title, "PM302", ARCHIVE_INDEX, text, remove_record(text, record), preferred=back)


# -- secrets (PM401) ------------------------------------------------------------------
REDACTED = "[REDACTED]"


def _secret_fixes(snap: RootSnapshot, finding: Finding) -> list[Fix]:
    """Redact the value, or allow it on its line. Titles never contain the value."""
    text = _text_of(snap, finding.path)
    if text is None:
        return []
    lines = split_keepends(text)
    if finding.end_line >= len(lines):
        return []
    redact = TextEdit(finding.path, finding.line, finding.col, finding.end_line, finding.end_col, REDACTED)
    # The allow marker goes on the line where the secret starts, or on a PEM block's BEGIN line.
    at = finding.line
    if at > 0 and "-----BEGIN" in lines[at - 1] and "-----BEGIN" not in lines[at]:
        at -= 1
    content = lines[at].rstrip("\r\n")
    allow = TextEdit(finding.path, at, len(content), at, len(content), f" {ALLOW_MARKER}")
    return [Fix("Redact the secret", "PM401", (redact,), preferred=True),
            Fix("Allow on this line (not a secret)", "PM401", (allow,))]


# -- entry point ----------------------------------------------------------------
def quick_fixes(snap: RootSnapshot, finding: Finding, today: dt.date) -> list[Fix]:
    """The text-only fixes for `finding`, computed against the text `snap` holds (the editor's
    buffer for an open file). Empty when the finding has none or no longer matches the text."""
    code = finding.code
    if code == "PM201":
        return _repoint(snap, finding) + _remove_route(snap, finding, "Remove route to `{path}`", False)
    if code == "PM205":
        return _remove_route(snap, finding, "Remove route to `{path}`", True)
    if code == "PM203":
        return _remove_route(snap, finding, "Remove duplicate route", True)
    if code == "PM202":
        return _add_route(snap, finding)
    if code == "PM301":
        return _add_record(snap, finding, today)
    if code == "PM100":
        return _insert_skeleton(snap, finding)
    if code == "PM101":
        return _move_summary_up(snap, finding)
    if code == "PM106":
        return _rename_heading(snap, finding)
    if code == "PM302":
        return _remove_dangling_record(snap, finding)
    if code == "PM401":
        return _secret_fixes(snap, finding)
    return []
