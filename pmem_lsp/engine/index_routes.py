"""`_index.md` routes (docs/design.md §2.3): one line, a target, a separator, a description."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .markdown import CODE, HTML, PARAGRAPH
from .memory_file import RE_INLINE_LINK, MemoryFile, mask_code_spans
from .native import core_for
from .paths import normalize_target, strip_fragment

if TYPE_CHECKING:
    from .root_state import FileEntry

WIKI, LINK, ANGLE, CODE_SPAN, BARE = "wiki", "link", "angle", "code", "bare"
# The forms in the order of the core's numbers for them (native/src/routes.rs).
_CORE_FORMS = (LINK, ANGLE, CODE_SPAN, WIKI)

# `[[path]]`, `[[path|label]]`, and `[[path\|label]]` (the pipe escaped inside a table row).
# Neither part holds `[`: a row of `[[` would otherwise scan to the line's end from each one.
_RE_WIKI = re.compile(r"\[\[([^\[\]|\n]+?)(?:\\?\|([^\[\]\n]*))?\]\]")
_RE_ANGLE = re.compile(r"<([^<>\s!][^<>]*)>")
# A code span of any backtick run (CommonMark): `notes/a b.md`, ``notes/a`b.md``.
_RE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_RE_BARE = re.compile(r"[^\s|<>\[\]`*]+?\.md(?:#[^\s|:：]*)?(?=$|[\s|:：,;—–])", re.I)
# A bare path with spaces in it (`notes/Bases syntax.md — …`): it must name a folder and be
# followed by the end of the line or a separator, so `- See notes.md for x` is no route.
# Matched on a bounded prefix (a target is short), so a long line costs constant time.
_RE_BARE_SPACED = re.compile(
    r"[^\s|<>\[\]`*](?:(?![:：]\s|\s[—–-]\s)[^|<>\[\]`*])*?/(?:(?![:：]\s|\s[—–-]\s)[^|<>\[\]`*])*?\.md(?:#[^\s|:：]*)?"
    r"(?=\s*$|\s+[—–|-](?:\s|$)|[:：](?:\s|$)|：)", re.I)
_BARE_SPACED_SPAN = 512
# The start of a link or a wiki link that did not parse as one: a route meant, not readable.
_RE_BROKEN_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(")
_SEPARATORS = ("—", "–", "-", ":", "：", "|")
_SEPARATOR_CHARS = "".join(_SEPARATORS)
# Anything that makes a list item look like it meant to be a route (PM206).
# The path part starts only where a run of path characters starts (linear on one long word).
_RE_MENTIONS_FILE = re.compile(r"\]\(|(?<![^\s`<>\[\]()|])[^\s`<>\[\]()|]+\.md\b|\[\[", re.I)
# `[Projects](#projects)`: a link to a heading of the index itself (a table of contents).
_RE_ANCHOR_LINK = re.compile(r"(?<!\\)\[(?:[^\[\]\\]|\\.)*\]\(\s*<?#[^()\s<>]*>?\s*\)")
_NATIVE = core_for("routes")  # only where the build was written for this Python code (docs/native.md)
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
    route: str | None = None  # the route line's text that says what the line meant, for its fix
    # The root path the line clearly means (a link whose target holds a space, a sentence that
    # ends in a path): PM202 on that file then names this line rather than say it has no route.
    target: str | None = None


@dataclass(frozen=True, slots=True)
class IndexModel:
    routes: tuple[Route, ...]
    malformed: tuple[MalformedLine, ...]


class Unreadable(str):
    """Why the start of a list item or table row is a target that cannot be read (PM206)."""


_LINK_UNREADABLE = Unreadable(
    "the link's target cannot be read: write a path with spaces as `<notes/a b.md>` or `notes/a%20b.md`")
_WIKI_UNREADABLE = Unreadable("the wiki link cannot be read as a target")


def _code_target(m: re.Match[str]) -> tuple[str, int, int] | None:
    """The path in a code span at the start of a route, with its offsets, or None when the
    span is no path (`` `npm test` ``). A span that holds white space must name a folder or
    end in `.md`: `notes/Bases syntax.md` is a path, `npm run build.sh` is a command."""
    content = m.group(2)
    start = m.start(2)
    # CommonMark drops one space on each side of a span that has both (`` ` a.md ` ``).
    if len(content) > 2 and content[0] == " " and content[-1] == " " and content.strip():
        content, start = content[1:-1], start + 1
    stripped = content.strip()
    start += len(content) - len(content.lstrip())
    if not stripped:
        return None
    if len(stripped.split(None, 1)) > 1:  # (white space inside: `split` breaks where `isspace` holds)
        if "/" not in stripped and not strip_fragment(stripped).lower().endswith(".md"):
            return None
    elif "/" not in stripped and "." not in stripped:
        return None
    return stripped, start, start + len(stripped)


def _match_target(text: str) -> tuple[str, str, int, int, int] | Unreadable | None:
    """(form, written path, path start, path end, end of target) at the start of `text`;
    `Unreadable` when it starts with a link, a wiki link or a code span meant as a target
    that cannot be read; None when it does not start with a target at all."""
    m = _RE_WIKI.match(text)
    if m:
        raw = m.group(1)
        written = raw.strip()
        start = m.start(1) + len(raw) - len(raw.lstrip())
        return WIKI, written, start, start + len(written), m.end()
    if text.startswith("[["):
        return _WIKI_UNREADABLE
    if text.startswith("!"):
        return None
    m = RE_INLINE_LINK.match(text)
    if m:
        g = "angle" if m.group("angle") is not None else "bare"
        if m.group(g).lstrip().startswith("#"):
            return None  # an anchor in the index itself is not a route
        return LINK, m.group(g), m.start(g), m.end(g), m.end()
    if _RE_BROKEN_LINK.match(text):
        return _LINK_UNREADABLE
    m = _RE_ANGLE.match(text)
    if m:
        return ANGLE, m.group(1), m.start(1), m.end(1), m.end()
    m = _RE_CODE.match(text)
    if m:
        found = _code_target(m)
        if found is None:
            return None
        written, start, end = found
        return CODE_SPAN, written, start, end, m.end()
    m = _RE_BARE.match(text) or _RE_BARE_SPACED.match(text[:_BARE_SPACED_SPAN])
    if m:
        return BARE, m.group(0), 0, m.end(), m.end()
    return None


# Words that make the text before a path a sentence (`Notes for the launch are in
# projects/launch.md`), not a folder's name (`Plugins (core)/Daily notes.md`).
_SENTENCE_WORDS = frozenset(
    "is are was were be see read check in at under into inside from lives live kept stored moved found "
    "goes go the for about of".split())
_LEADING_VERBS = frozenset("see read check open".split())
_TRAILING_GLUE = frozenset(
    "is are was were in at under into inside from see read check of the lives live kept stored found".split())


def prose_ending_in_path(written: str) -> tuple[str, str] | None:
    """(the sentence, the path) when a bare target with spaces is a sentence that ends in a
    path: the words before the path's folder read as prose — a verb first (`See …`), or a
    sentence word among three words or more, or five words or more. None for a path whose
    folder or file name holds spaces (`Plugins (core)/Daily notes.md`)."""
    slash = written.find("/")
    space = written.rfind(" ", 0, slash)
    if slash == -1 or space == -1:
        return None
    words = written[:space].split() + [written[space + 1:slash]]
    lowered = [w.lower().strip(",.;") for w in words]
    prose = (lowered[0] in _LEADING_VERBS or len(words) >= 5
             or (len(words) >= 3 and any(w in _SENTENCE_WORDS for w in lowered[:-1])))
    if not prose:
        return None
    sentence = written[:space].split()
    while sentence and sentence[-1].lower().strip(",.;:") in _TRAILING_GLUE:
        sentence.pop()
    return " ".join(sentence), written[space + 1:]


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


# `[title](notes/a b.md)`, in emphasis too: the link's target as written up to its `)`, spaces and all.
_RE_SPACED_TARGET = re.compile(r"[*_]*!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*([^()<>\s][^()<>]*?)\s*\)")


def _unreadable(reason: Unreadable, text: str, line: int, start: int, end: int) -> MalformedLine:
    """PM206's line for a target that cannot be read (`text`, at `start` to `end` of the line).
    A link whose target only holds a space (`[Other](notes/other note.md)`) is told how to write
    it, given the fix (`data.route`: the text with the target in `<…>`) and means its file."""
    spaced = _RE_SPACED_TARGET.match(text) if reason is _LINK_UNREADABLE else None
    if spaced is None:
        return MalformedLine(line, start, end, reason)
    written, at = spaced.group(1), spaced.start(1)
    return MalformedLine(line, start, end,
                         f"the link's target `{written}` holds a space, so it cannot be read: write it as "
                         f"`<{written}>` (or each space as `%20`)",
                         f"{text[:at]}<{written}>{text[at + len(written):]}", normalize_target(written)[0])


def parse_route_text(text: str, line: int, offset: int, table: bool = False) -> Route | Unreadable | None:
    """A route whose target starts `text`; `offset` is where `text` starts in its line.
    `Unreadable` (the reason) when `text` starts with a target that cannot be read."""
    if _NATIVE is not None:
        # The common routes — `[Title](folder/file.md)`, `[Title](<folder/a b.md>)`,
        # `<folder/a b.md>`, `` `folder/a b.md` ``, `[[folder/a b]]`, each with its description —
        # read by the core where it is sure to read them as `read_route_text` does
        # (native/src/routes.rs). A 10k-route index is parsed again at each edit of it in an editor.
        core = _NATIVE.link_route(text)
        if core is not None:
            form, start, end, path, description = core
            written = text[start:end]
            # The path is the target as written, but for a wiki link the core added `.md` to.
            return Route(line, _CORE_FORMS[form], written, offset + start, offset + end,
                         written if path is None else path, None, description, table)
    return read_route_text(text, line, offset, table)


def read_route_text(text: str, line: int, offset: int, table: bool = False) -> Route | Unreadable | None:
    """`parse_route_text` in Python alone: the reference the core's `link_route` follows."""
    unwrapped, shift = _unwrap_emphasis(text)
    target = _match_target(unwrapped)
    if target is None or isinstance(target, Unreadable):
        return target
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


def _table_route(line_text: str, line: int) -> Route | MalformedLine | None:
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
    if isinstance(route, Unreadable):
        return _unreadable(route, cell.strip(), line, first_start + lead, first_start + lead + len(cell.strip()))
    description = ""
    for s, e in cells[1:]:
        if line_text[s:e].strip():
            description = line_text[s:e].strip()
            break
    return Route(route.line, route.form, route.written, route.start, route.end, route.path,
                 route.problem, description, True)


# The reason of a route that only lacks its description (PM209, not PM206).
NO_DESCRIPTION = "route has no description"


def parse_index(doc: MemoryFile) -> IndexModel:
    routes: list[Route] = []
    malformed: list[MalformedLine] = []
    item_lines = {item.line: item for item in doc.items}
    for i, line_text in enumerate(doc.lines):
        kind = doc.line_kind(i)
        if kind in (CODE, HTML) or not line_text.strip():
            continue
        item = item_lines.get(i)
        if item is not None:
            content = line_text[item.content_col:]
            lead = len(content) - len(content.lstrip())
            route = parse_route_text(content.strip(), i, item.content_col + lead)
            prose = prose_ending_in_path(route.written) if isinstance(route, Route) and route.form == BARE else None
            if prose is not None:
                sentence, path = prose
                target = f"`{path}`" if " " in path else path
                suggestion = f"{target} — {sentence}" if sentence else target
                malformed.append(MalformedLine(
                    i, item.content_col, len(line_text.rstrip()),
                    f"list item is a sentence that mentions `{path}` but does not start with it: "
                    f"write the route as `{suggestion}`", suggestion, normalize_target(path)[0]))
            elif isinstance(route, Unreadable):
                malformed.append(_unreadable(route, content.strip(), i, item.content_col + lead,
                                             len(line_text.rstrip())))
            elif route is not None:
                routes.append(route)
                if not route.description:
                    malformed.append(MalformedLine(i, route.start, route.end, NO_DESCRIPTION))
            elif _RE_MENTIONS_FILE.search(_RE_ANCHOR_LINK.sub("", mask_code_spans(content))):
                end = len(line_text.rstrip())
                malformed.append(MalformedLine(
                    i, item.content_col, end,
                    "list item mentions a file but does not start with a target"))
        elif kind == PARAGRAPH and line_text.lstrip().startswith("|"):
            row = _table_route(line_text, i)
            if isinstance(row, MalformedLine):
                malformed.append(row)
            elif row is not None:
                routes.append(row)
                if not row.description:
                    malformed.append(MalformedLine(i, row.start, row.end, NO_DESCRIPTION))
    return IndexModel(tuple(routes), tuple(malformed))


INDEX_MODEL_KEY = "index-model"


def index_model(entry: FileEntry) -> IndexModel | None:
    """`parse_index` of an index file's entry in the root state, kept until its text changes (shared by
    the rules and navigation, so one edit of `_index.md` costs one parse)."""
    doc = entry.doc
    if doc is None:
        return None
    return entry.cached(INDEX_MODEL_KEY, parse_index, doc)
