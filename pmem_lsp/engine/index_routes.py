"""`_index.md` routes (DESIGN §2.3): one line, a target, a separator, a description."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .markdown import CODE, HTML, PARAGRAPH
from .memory_file import RE_INLINE_LINK, MemoryFile, mask_code_spans
from .paths import normalize_target

WIKI, LINK, ANGLE, CODE_SPAN, BARE = "wiki", "link", "angle", "code", "bare"

# `[[path]]`, `[[path|label]]`, and `[[path\|label]]` (the pipe escaped inside a table row).
# Neither part holds `[`: a row of `[[` would otherwise scan to the line's end from each one.
_RE_WIKI = re.compile(r"\[\[([^\[\]|\n]+?)(?:\\?\|([^\[\]\n]*))?\]\]")
_RE_ANGLE = re.compile(r"<([^<>\s!][^<>]*)>")
_RE_CODE = re.compile(r"`([^`\s]+)`")
_RE_BARE = re.compile(r"[^\s|<>\[\]`*]+?\.md(?:#[^\s|:：]*)?(?=$|[\s|:：,;—–])", re.I)
_SEPARATORS = ("—", "–", "-", ":", "：", "|")
_SEPARATOR_CHARS = "".join(_SEPARATORS)
# Anything that makes a list item look like it meant to be a route (PM206).
# The path part starts only where a run of path characters starts (linear on one long word).
_RE_MENTIONS_FILE = re.compile(r"\]\(|(?<![^\s`<>\[\]()|])[^\s`<>\[\]()|]+\.md\b|\[\[", re.I)
# `[Projects](#projects)`: a link to a heading of the index itself (a table of contents).
_RE_ANCHOR_LINK = re.compile(r"(?<!\\)\[(?:[^\[\]\\]|\\.)*\]\(\s*<?#[^()\s<>]*>?\s*\)")
_RE_TABLE_DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


@dataclass(frozen=True, slots=True)
class Route:
    line: int
    form: str
    written: str  # the path as written (inside the brackets, backticks, …)
    start: int  # character offsets of the written path in the line
    end: int
    path: str | None  # root-relative path, None when `problem` says why not
    problem: str | None
    description: str
    table: bool = False


@dataclass(frozen=True, slots=True)
class MalformedLine:
    line: int
    start: int
    end: int
    reason: str


@dataclass(frozen=True, slots=True)
class IndexModel:
    routes: tuple[Route, ...]
    malformed: tuple[MalformedLine, ...]


def _match_target(text: str) -> tuple[str, str, int, int, int] | None:
    """(form, written path, path start, path end, end of target) at the start of `text`."""
    m = _RE_WIKI.match(text)
    if m:
        raw = m.group(1)
        written = raw.strip()
        start = m.start(1) + len(raw) - len(raw.lstrip())
        return WIKI, written, start, start + len(written), m.end()
    if text.startswith("!"):
        return None
    m = RE_INLINE_LINK.match(text)
    if m:
        g = "angle" if m.group("angle") is not None else "bare"
        if m.group(g).lstrip().startswith("#"):
            return None  # an anchor in the index itself is not a route
        return LINK, m.group(g), m.start(g), m.end(g), m.end()
    m = _RE_ANGLE.match(text)
    if m:
        return ANGLE, m.group(1), m.start(1), m.end(1), m.end()
    m = _RE_CODE.match(text)
    if m and ("/" in m.group(1) or "." in m.group(1)):
        return CODE_SPAN, m.group(1), m.start(1), m.end(1), m.end()
    m = _RE_BARE.match(text)
    if m:
        return BARE, m.group(0), 0, m.end(), m.end()
    return None


def _unwrap_emphasis(text: str) -> tuple[str, int]:
    """`**[A](a.md)** — x` is read as `[A](a.md) — x`; returns the text and the shift."""
    for mark in ("**", "__"):
        if text.startswith(mark):
            close = text.find(mark, len(mark))
            after = text[close + len(mark):]
            # Only emphasis around a whole target: `__init__.md` is a file name, not emphasis.
            if close > len(mark) and (not after or after[0].isspace() or after[0] in _SEPARATOR_CHARS):
                return text[len(mark):close] + after, len(mark)
    return text, 0


def _description(rest: str) -> str:
    rest = rest.strip()
    for sep in _SEPARATORS:
        if rest.startswith(sep):
            return rest[len(sep):].strip()
    return rest


def parse_route_text(text: str, line: int, offset: int, table: bool = False) -> Route | None:
    """A route whose target starts `text`; `offset` is where `text` starts in its line."""
    unwrapped, shift = _unwrap_emphasis(text)
    target = _match_target(unwrapped)
    if target is None:
        return None
    form, written, start, end, target_end = target
    rest = unwrapped[target_end:]
    if form == WIKI:
        # `.md` is optional and goes before any `#fragment`: `[[notes/x#part]]` is notes/x.md.
        base, hash_, fragment = written.partition("#")
        if base and not base.lower().endswith(".md"):
            base += ".md"
        written_path = base + hash_ + fragment
    else:
        written_path = written
    path, problem = normalize_target(written_path)
    if path == "":
        path, problem = None, "empty"
    return Route(line, form, written, offset + shift + start, offset + shift + end, path, problem,
                 _description(rest), table)


def _table_route(line_text: str, line: int) -> Route | None:
    stripped = line_text.lstrip()
    if not stripped.startswith("|") or _RE_TABLE_DELIMITER.match(stripped):
        return None
    # A `|` inside a code span or a wiki-link (`[[path|label]]`) does not end a cell.
    masked = _RE_WIKI.sub(lambda m: " " * len(m.group()), mask_code_spans(line_text))
    bars = [i for i, c in enumerate(masked) if c == "|" and (i == 0 or masked[i - 1] != "\\")]
    if len(bars) < 2:
        return None
    cells = [(bars[k] + 1, bars[k + 1]) for k in range(len(bars) - 1)]
    first_start, first_end = cells[0]
    cell = line_text[first_start:first_end]
    lead = len(cell) - len(cell.lstrip())
    route = parse_route_text(cell.strip(), line, first_start + lead, table=True)
    if route is None:
        return None
    description = ""
    for s, e in cells[1:]:
        if line_text[s:e].strip():
            description = line_text[s:e].strip()
            break
    return Route(route.line, route.form, route.written, route.start, route.end, route.path,
                 route.problem, description, True)


def parse_index(doc: MemoryFile) -> IndexModel:
    routes: list[Route] = []
    malformed: list[MalformedLine] = []
    item_lines = {item.line: item for item in doc.items}
    for i, line_text in enumerate(doc.lines):
        kind = doc.line_kind(i)
        if kind == CODE or kind == HTML or not line_text.strip():
            continue
        item = item_lines.get(i)
        if item is not None:
            content = line_text[item.content_col:]
            lead = len(content) - len(content.lstrip())
            route = parse_route_text(content.strip(), i, item.content_col + lead)
            if route is not None:
                routes.append(route)
                if not route.description:
                    malformed.append(MalformedLine(i, route.start, route.end, "route has no description"))
            elif _RE_MENTIONS_FILE.search(_RE_ANCHOR_LINK.sub("", mask_code_spans(content))):
                end = len(line_text.rstrip())
                malformed.append(MalformedLine(
                    i, item.content_col, end,
                    "list item mentions a file but does not start with a target"))
        elif kind == PARAGRAPH and line_text.lstrip().startswith("|"):
            route = _table_route(line_text, i)
            if route is not None:
                routes.append(route)
                if not route.description:
                    malformed.append(MalformedLine(i, route.start, route.end, "route has no description"))
    return IndexModel(tuple(routes), tuple(malformed))


INDEX_MODEL_KEY = "index-model"


def index_model(entry) -> IndexModel | None:
    """`parse_index` of an index file's snapshot entry, kept until its text changes (shared by
    the rules and navigation, so one edit of `_index.md` costs one parse)."""
    doc = entry.doc
    if doc is None:
        return None
    model = entry.cache.get(INDEX_MODEL_KEY)
    if model is None:
        model = entry.cache[INDEX_MODEL_KEY] = parse_index(doc)
    return model
