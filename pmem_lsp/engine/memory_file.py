"""One memory file: front matter, title, metadata, summary sections and links (docs/design.md §2.1–2.2),
and its dates (§2.5): front matter `created`/`updated`/`verified`, the legacy
`> last_verified:` / `> source_date:` lines."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar, cast, overload

from .line_index import LineIndex, line_of, split_keepends, split_lines
from .markdown import _KINDS, CODE, HEADING, HTML, PARAGRAPH, BlockScan, Fence, Heading, ListItem, scan_blocks
from .native import core_for

_NATIVE = core_for("record", "blocks")  # only where the build was written for this Python code (docs/native.md)

SUMMARY_TITLES = ("Summary", "摘要")


_T = TypeVar("_T")


class once(Generic[_T]):
    """`functools.cached_property` without its lock. Python 3.11's takes one lock, shared by
    every instance, on each first access: about 0.7 µs more, paid for several properties of
    each of 10,000 files in a check (3.12 dropped the lock). Two threads that ask at the same
    moment may both compute the value; every value here is a pure function of the text, so
    they get equal ones."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> once[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...
    def __get__(self, instance: object | None, owner: type | None = None) -> once[_T] | _T:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)  # then found there, not here
        return value

# `Key: value` — a key of 1–40 characters that starts with a letter (CJK included). An ASCII
# colon must be followed by a space or the end of the line, so `https://…` is not metadata.
_KEY = r"[^\W\d_][\w .'/()&+-]{0,39}?"
_RE_METADATA = re.compile(
    rf"""^[ ]{{0,3}}(?:[-*+][ \t]+)?
    (?:\*\*(?P<bkey>{_KEY})\s*(?::|：)\*\*[ \t]*(?P<bval>.*)      # **Key:** value
      |\*\*(?P<b2key>{_KEY})\*\*\s*(?::[ \t]|:$|：)[ \t]*(?P<b2val>.*)  # **Key**: value
      |(?P<key>{_KEY})[ \t]*(?::[ \t]|:$|：)[ \t]*(?P<val>.*))$""",
    re.VERBOSE,
)
# A link starts at a `[` that is not escaped: `(?<!\\)` keeps the search linear on a line
# like `[x\[x\[…` (each escaped `[` would otherwise start a scan to the end of the line).
# Its text may hold one level of balanced brackets (`[Canvas [beta]](…)`, as CommonMark).
RE_INLINE_LINK = re.compile(
    r"""!?(?<!\\)\[(?P<text>(?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*\])*)\]\(\s*(?:<(?P<angle>[^<>\n]*)>|(?P<bare>[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*))(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)"""
)
_RE_QUOTE = re.compile(r"^ {0,3}>")  # a line that opens or continues a block quote
# A link reference definition (CommonMark 4.7): a label (not a footnote's `[^1]:`), a
# destination, an optional title, then nothing else on the line (`[x]: other.md and more
# words` is prose).
_RE_REFDEF = re.compile(
    r"""^ {0,3}\[(?!\^)(?:[^\[\]\\]|\\.)+\]:[ \t]*(?:<(?P<angle>[^<>\n]*)>|(?P<bare>[^\s<][^\s]*))"""
    r"""(?:[ \t]+(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?[ \t]*$""")


# v0.10 dates: top-level front matter keys, and the legacy blockquote lines (docs/decisions.md,
# "Metadata dates"). A value is an ISO date, optionally quoted or followed by a time.
FRONT_MATTER_DATES = ("created", "updated", "verified")
LEGACY_DATES = ("last_verified", "source_date")
_RE_FRONT_DATE = re.compile(r"^(?P<key>created|updated|verified)[ \t]*:(?P<value>.*)$")
_RE_LEGACY_DATE = re.compile(r"^[ ]{0,3}>[ \t]*(?P<key>last_verified|source_date)[ \t]*:(?P<value>.*)$")
_RE_FRONT_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)[ \t]*:(?P<value>.*)$")
_RE_DATE_VALUE = re.compile(
    r"""^(?P<q>["']?)(?P<date>\d{4}-\d{2}-\d{2})"""
    r"""(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?[ ]?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?(?P=q)$""")


@dataclass(frozen=True, slots=True)
class DateField:
    """One date a file states about itself: `key` is `created`, `updated`, `verified`,
    `last_verified` or `source_date`; `date` is None when the value is not a date."""

    key: str
    line: int
    value: str
    date: dt.date | None


_RE_BLOCK_HEADER = re.compile(r"^[|>][+-]?[1-9]?[+-]?$")
_DOUBLE_ESCAPES = {"n": " ", "t": " ", "r": " ", "0": "", "\\": "\\", '"': '"', "/": "/", " ": " ", "_": "\u00a0"}
_RE_DOUBLE_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")


def _unescape_double(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _DOUBLE_ESCAPES.get(code, code)
    return _RE_DOUBLE_ESCAPE.sub(one, text)


def yaml_scalar_text(first: str, more: list[str]) -> str | None:
    """A top-level YAML scalar as one line of text: `first` is what follows `key:` on its line,
    `more` the front matter lines after it. Plain, 'single' and "double" quoted (escapes read,
    line breaks folded), and `>`/`|` block scalars, each folded into one line with single
    spaces; None for an empty value, a flow collection (`[a, b]`, `{…}`), an alias or a
    nested mapping. Not a YAML parser: the few shapes a note's title or description takes."""
    value = first.strip()
    # The lines that continue this key's value: indented ones (and blank lines between them).
    cont: list[str] = []
    for line in more:
        if line.strip() and not line[:1].isspace():
            break
        cont.append(line)
    while cont and not cont[-1].strip():
        cont.pop()
    if value.startswith("#"):
        value = ""
    if value[:1] in ("[", "{", "*", "!", "&"):
        return None
    if _RE_BLOCK_HEADER.match(value.split(" #", 1)[0].strip()):
        words = " ".join(" ".join(line.split()) for line in cont).split()
        return " ".join(words) or None
    if value[:1] in ("'", '"'):
        quote = value[0]
        body = value[1:] + "".join(" " + line.strip() for line in cont)
        if quote == "'":
            end = re.search(r"'(?!')", body.replace("''", "\x00\x00"))
            text = (body[: end.start()] if end else body).replace("''", "'")
        else:
            end = re.search(r'(?<!\\)(?:\\\\)*"', body)
            text = _unescape_double(body[: end.end() - 1] if end else body)
        return " ".join(text.split()) or None
    if not value and cont and (re.match(r"^\s+[^\s#][^:]*:(\s|$)", cont[0]) or cont[0].strip()[:2] in ("-", "- ")):
        return None  # a nested mapping or a sequence, not text
    words = [value] + [line.strip() for line in cont]
    text = " ".join(w.split(" #", 1)[0] if not w.startswith("#") else "" for w in words)
    return " ".join(text.split()) or None


def parse_date_value(value: str) -> dt.date | None:
    """An ISO date (`2026-01-03`, quoted or not, a time after it allowed); None otherwise."""
    value = value.strip()
    if " #" in value:
        value = value.split(" #", 1)[0].strip()  # a YAML comment
    m = _RE_DATE_VALUE.match(value)
    if m is None:
        return None
    try:
        return dt.date.fromisoformat(m.group("date"))
    except ValueError:
        return None


@dataclass(slots=True, unsafe_hash=True)  # not frozen: see markdown.Heading
class MetadataLine:
    line: int
    key: str
    value: str


@dataclass(slots=True, unsafe_hash=True)  # not frozen: see markdown.Heading
class Link:
    line: int
    start: int  # character offsets of the target inside the line
    end: int
    target: str  # as written, without angle brackets
    text: str
    definition: bool = False  # a link reference definition (`[label]: target`)


@dataclass(slots=True, unsafe_hash=True)  # not frozen: see markdown.Heading
class Bullet:
    line: int
    start: int  # character offset where the bullet's text starts
    text: str


@dataclass(frozen=True, slots=True)
class SummarySection:
    heading: Heading
    end: int  # line after the section (exclusive)
    bullets: tuple[Bullet, ...]
    # Runs of lines (first, last inclusive) that are neither blank nor part of a bullet.
    other_runs: tuple[tuple[int, int], ...]


def parse_metadata_line(line: str) -> tuple[str, str] | None:
    m = _RE_METADATA.match(line)
    if not m:
        return None
    for key, val in (("bkey", "bval"), ("b2key", "b2val"), ("key", "val")):
        if m.group(key) is not None:
            return m.group(key).strip(), (m.group(val) or "").strip()
    return None  # pragma: no cover - the regex has three alternatives


def mask_code_spans(line: str) -> str:
    """Replace code spans with spaces (same length) so nothing inside them is a link."""
    if "`" not in line:
        return line
    out = list(line)
    i, n = 0, len(line)
    while i < n:
        if line[i] != "`":
            i += 1
            continue
        j = i
        while j < n and line[j] == "`":
            j += 1
        run = j - i
        k = j
        closed = -1
        while k < n:
            if line[k] == "`":
                m = k
                while m < n and line[m] == "`":
                    m += 1
                if m - k == run:
                    closed = m
                    break
                k = m
            else:
                k += 1
        if closed < 0:
            i = j
            continue
        for p in range(i, closed):
            out[p] = " "
        i = closed
    return "".join(out)


def _inline_math_end(text: str, i: int) -> int:
    """Where inline math opened by the `$` at `i` ends (after its closing `$`), or -1: not math.
    Pandoc's rule (tex_math_dollars): the opening `$` has a non-space character right after it;
    inside, `\\` takes the next character as it is (`\\$` is no closer); a run of whitespace
    followed by `$` ends the attempt (a closer has a non-space character right before it); the
    closer must not be followed by a digit (`$5 and $10` is prices, not math)."""
    n = len(text)
    j = i + 1
    if j >= n or text[j].isspace():
        return -1
    first = True
    while j < n:
        c = text[j]
        if c == "$" and not first:
            return -1 if j + 1 < n and text[j + 1].isdigit() else j + 1
        first = False
        if c == "\\":
            j += 2
        elif c.isspace():
            while j < n and text[j].isspace():
                j += 1
            if j < n and text[j] == "$":
                return -1
        else:
            j += 1
    return -1


def mask_math(lines: list[str]) -> list[str]:
    """The lines of one paragraph (code spans already masked) with their TeX math replaced by
    spaces (same length), so that `$a^{[L](i)}$` is no link (issue 44). Display math is `$$ … $$`
    (on one line or across the paragraph's lines), inline math follows `_inline_math_end`, `\\$`
    is a literal dollar, and a link (`[text](target)`) is read as a whole before any `$` in it:
    a dollar in a link's text or target opens no math, as in Pandoc, where the link is parsed
    first. Only called where the paragraph holds a `$`."""
    text = "\n".join(lines)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out = list(text)
    n = len(text)
    row = 0
    i = 0
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            while row + 1 < len(starts) and starts[row + 1] <= i:
                row += 1
            m = RE_INLINE_LINK.match(lines[row], i - starts[row])
            if m is not None:
                i = starts[row] + m.end()
                continue
        elif c == "$":
            end = -1
            if text.startswith("$$", i):
                close = text.find("$$", i + 3)
                end = -1 if close < 0 else close + 2
            if end < 0:
                end = _inline_math_end(text, i)
            if end >= 0:
                for p in range(i, end):
                    if out[p] != "\n":
                        out[p] = " "
                i = end
                continue
        i += 1
    return "".join(out).split("\n")


def reference_definition(line: str, line_no: int) -> Link | None:
    """The link reference definition on `line`, if it is one (a definition cannot interrupt a
    paragraph: the caller knows whether this line may start one)."""
    if "]:" not in line:
        return None
    d = _RE_REFDEF.match(line)
    if d is None:
        return None
    group = "angle" if d.group("angle") is not None else "bare"
    start, end = d.span(group)
    return Link(line_no, start, end, line[start:end], "", definition=True)


def find_links(line: str, line_no: int, definition_allowed: bool = True, math: str | None = None) -> list[Link]:
    """Inline links and images, and a link reference definition, outside code spans; and
    outside math, where `math` is the line with its code spans and math masked (`mask_math`:
    the paragraph holds a `$`). A definition is a block, where no math is read."""
    if "[" not in line:
        return []
    masked = mask_code_spans(line)
    links = []
    for m in RE_INLINE_LINK.finditer(masked if math is None else math):
        group = "angle" if m.group("angle") is not None else "bare"
        start, end = m.span(group)
        links.append(Link(line_no, start, end, line[start:end], m.group("text")))
    if definition_allowed:
        definition = reference_definition(masked, line_no)
        if definition is not None:
            links.append(Link(line_no, definition.start, definition.end, line[definition.start:definition.end], "",
                              definition=True))
    return links


_ITEMS: Any = vars(BlockScan)["items"]  # the slots of `BlockScan.items` and `.top_item_of_line`
_TOPS: Any = vars(BlockScan)["top_item_of_line"]


class RowScan(BlockScan):
    """A `BlockScan` from the native core's record whose list items and top items by line stay
    in the core (its `Rows`) until first asked for: most checks of most files never ask, since
    the Summary section and the preamble come with the record."""

    __slots__ = ()


def _row_items(scan: BlockScan) -> list[ListItem]:
    found = _ITEMS.__get__(scan, BlockScan)
    if type(found) is not list:
        found = [ListItem(*row) for row in found.items()]
        _ITEMS.__set__(scan, found)
    return cast("list[ListItem]", found)


def _row_tops(scan: BlockScan) -> list[int]:
    found = _TOPS.__get__(scan, BlockScan)
    if type(found) is not list:
        found = found.tops()
        _TOPS.__set__(scan, found)
    return cast("list[int]", found)


# Set here rather than in the class body, where a property over the base class's field is not
# something the type checker follows (the field's type is what the property gives).
setattr(RowScan, "items", property(_row_items, _ITEMS.__set__))  # noqa: B010
setattr(RowScan, "top_item_of_line", property(_row_tops, _TOPS.__set__))  # noqa: B010


class MemoryFile:
    """The parsed view of one Markdown file. Built once per text; everything else is lazy."""

    def __init__(self, text: str) -> None:
        self.text = text
        # The native core's record of the file (docs/native.md): the same front matter, blocks,
        # preamble and links in one call, or None where the Python code below is to decide.
        # It splits the text itself: `lines` is made here only without a record, else when a
        # rule first asks (most rules of most files read the record's rows instead).
        record = None if _NATIVE is None else _NATIVE.file_record(text, _KINDS)
        self._link_rows: list[tuple] | None = None
        self._summary_rows: tuple | None = None
        self._date_rows: list[tuple] | None = None
        # The core's verdicts, each read by one rule (docs/native.md): `check_summary` finds
        # nothing here in an active file (rules/summary.py); no Summary bullet can say the work
        # is finished (rules/concluded.py); the text may hold an absolute path
        # (rules/source_paths.py); PM401 finds no secret in the text (rules/secrets.py). False,
        # False, None, False: no verdict, the rule decides.
        self.summary_clean = False
        self.bullets_unconcluded = False
        self.absolute_hint: bool | None = None
        self.secrets_clear = False
        self.recorded = record is not None  # the verdicts above are the core's (else no verdict was asked)
        # The near-duplicate sketch's hashes, where the core computed them (rules/duplicates.py),
        # and the lines PM404 must look at (rules/instructions.py, `candidate_lines`).
        self.sketch_hashes: list[int] | None = None
        self.instruction_candidates: list[int] | None = None
        # PM401's doors and the plain door's lines, as `secret_doors_lines(lines)` gives them (rules/secrets.py).
        self.secret_doors: tuple[int, list[int] | None] | None = None
        self.title: Heading | None = None
        self.metadata: list[MetadataLine] = []
        if record is None:
            self.lines = split_lines(text)
            self.front_matter_end = _front_matter_end(self.lines)
            self.blocks: BlockScan = scan_blocks(self.lines[self.front_matter_end :], self.front_matter_end)
            self._preamble()
            return
        (self.front_matter_end, headings, fences, items, kinds, tops, preamble, self._link_rows, self._summary_rows,
         self._date_rows, verdicts, (self.sketch_hashes, self.instruction_candidates, self.secret_doors)) = record
        self.summary_clean, self.bullets_unconcluded, self.absolute_hint, self.secrets_clear = verdicts
        self.blocks = RowScan([Heading(*h) for h in headings], [Fence(*f) for f in fences], items, kinds, tops)
        if preamble is None:  # a metadata line the core does not read (not ASCII)
            self._preamble()
            return
        title, metadata, self.preamble_end = preamble
        self.title = None if title is None else self.blocks.headings[title]
        self.metadata = [MetadataLine(*m) for m in metadata]

    @cached_property  # (assigned in __init__ without a record)
    def lines(self) -> list[str]:
        """The text's lines without their endings (`split_lines`), made on first use where the
        core's record was built from the text (`__init__` sets them otherwise)."""
        return split_lines(self.text)

    def line_text(self, line: int) -> str:
        """`self.lines[line]`, "" past the end, without splitting the text where its lines are
        not made yet (`line_of`): a finding on one line near the top needs that line alone."""
        return line_of(self.text, line, self.__dict__.get("lines"))

    # Line kinds are indexed by absolute line number; front matter lines count as metadata.
    def line_kind(self, line: int) -> str:
        if line < self.front_matter_end:
            return "front-matter"
        return self.blocks.line_kinds[line - self.front_matter_end]

    def top_item_at(self, line: int) -> ListItem | None:
        if line < self.front_matter_end:
            return None
        index = self.blocks.top_item_of_line[line - self.front_matter_end]
        return self.blocks.items[index] if index >= 0 else None

    @property
    def headings(self) -> list[Heading]:
        return self.blocks.headings

    @property
    def items(self) -> list[ListItem]:
        return self.blocks.items

    def _preamble(self) -> None:
        lines = self.lines
        n = len(lines)
        heads = {h.line: h for h in self.blocks.headings if h.top_level}
        # Blank lines and HTML comments may come before the title (`<!-- generated -->`).
        i = self._skip_blank_and_comments(self.front_matter_end)
        self.title = None
        first = heads.get(i)
        if first is not None and first.level == 1 and not first.setext:
            self.title = first
            i += 1
        metadata: list[MetadataLine] = []
        while i < n:
            line = lines[i]
            stripped = line.strip()
            kind = self.line_kind(i)
            if not stripped or (kind == HTML and stripped.startswith("<!--")):
                i = self._skip_blank_and_comments(i)
                continue
            if i in heads or kind == CODE:
                break
            if stripped.startswith(">"):
                i += 1
                continue
            parsed = parse_metadata_line(line)
            if parsed is None or (not parsed[1] and self._leads_in(i)):
                break
            metadata.append(MetadataLine(i, *parsed))
            i += 1
        self.metadata = metadata
        self.preamble_end = i  # first line that is not front matter, title, metadata or blank

    def _leads_in(self, i: int) -> bool:
        """`Useful lines:` with no value, right before a list, a quote or a table: a lead-in
        sentence of the body, not a metadata line (the body starts there)."""
        nxt = i + 1
        if nxt >= len(self.lines):
            return False
        return self.top_item_at(nxt) is not None or self.lines[nxt].lstrip().startswith((">", "|"))

    def _skip_blank_and_comments(self, i: int) -> int:
        """The first line from `i` that is neither blank nor inside an HTML comment."""
        lines = self.lines
        n = len(lines)
        while i < n:
            stripped = lines[i].strip()
            if not stripped:
                i += 1
            elif stripped.startswith("<!--") and self.line_kind(i) == HTML:
                while i < n and "-->" not in lines[i]:
                    i += 1
                i += 1
            else:
                break
        return min(i, n)

    @once
    def front_matter(self) -> dict[str, tuple[int, str]]:
        """Top-level `key: value` lines of the front matter: key → (line, value stripped);
        the first line of a key wins."""
        out: dict[str, tuple[int, str]] = {}
        for i in range(1, max(self.front_matter_end - 1, 1)):
            m = _RE_FRONT_KEY.match(self.lines[i])
            if m and m.group("key") not in out:
                out[m.group("key")] = (i, m.group("value").strip())
        return out

    def front_matter_text(self, key: str) -> str | None:
        """The front matter value of top-level `key` as one line of text (`yaml_scalar_text`):
        quotes removed, folded and multi-line values joined; None when absent or not text."""
        found = self.front_matter.get(key)
        if found is None:
            return None
        line = self.lines[found[0]]
        first = line[line.index(":") + 1:]
        return yaml_scalar_text(first, self.lines[found[0] + 1: max(self.front_matter_end - 1, 0)])

    @once
    def date_fields(self) -> list[DateField]:
        """Every date the file states: front matter `created`/`updated`/`verified`, then the
        legacy `> last_verified:` / `> source_date:` lines outside code."""
        if self._date_rows is not None:  # found by the native core (docs/native.md)
            return [DateField(key, i, value.strip(), parse_date_value(value)) for key, i, value in self._date_rows]
        out: list[DateField] = []
        for i in range(1, max(self.front_matter_end - 1, 1)):
            m = _RE_FRONT_DATE.match(self.lines[i])
            if m:
                out.append(DateField(m.group("key"), i, m.group("value").strip(),
                                     parse_date_value(m.group("value"))))
        for i in range(self.front_matter_end, len(self.lines)):
            line = self.lines[i]
            if ">" not in line[:4] or self.line_kind(i) == CODE:
                continue
            m = _RE_LEGACY_DATE.match(line)
            if m:
                out.append(DateField(m.group("key"), i, m.group("value").strip(),
                                     parse_date_value(m.group("value"))))
        return out

    @once
    def stated_date(self) -> DateField | None:
        """The date that dates the file (docs/decisions.md, "Metadata dates"): the first front
        matter `updated` or `verified` that is a date, else the first legacy line that is one —
        as the format's reference CLI reads them."""
        fields = [f for f in self.date_fields if f.date is not None and f.key in ("updated", "verified")]
        if not fields:
            fields = [f for f in self.date_fields if f.date is not None and f.key in LEGACY_DATES]
        return fields[0] if fields else None

    @property
    def role(self) -> str | None:
        """The front matter `role` (v0.10: `current-status` marks a project's status source)."""
        found = self.front_matter.get("role")
        return found[1].strip("'\"").strip() if found is not None else None

    @once
    def line_index(self) -> LineIndex:
        return LineIndex(self.text, self.lines)

    @once
    def title_text(self) -> str | None:
        if self.title is not None:
            return self.title.text
        for h in self.blocks.headings:
            if h.level == 1:
                return h.text
        return None

    @once
    def summary_headings(self) -> list[Heading]:
        return [
            h for h in self.blocks.headings
            if h.top_level and not h.setext and h.level == 2 and h.text in SUMMARY_TITLES
        ]

    @once
    def summary(self) -> SummarySection | None:
        """The first summary section, with its bullets and anything else inside it."""
        if not self.summary_headings:
            return None
        if self._summary_rows is not None:  # found by the native core (docs/native.md)
            end, bullets, runs = self._summary_rows
            return SummarySection(self.summary_headings[0], end, tuple(Bullet(*b) for b in bullets), tuple(runs))
        return self.section_of(self.summary_headings[0])

    def section_end(self, heading: Heading) -> int:
        for h in self.blocks.headings:
            if h.top_level and h.line > heading.end_line:
                return h.line
        return len(self.lines)

    def section_of(self, heading: Heading) -> SummarySection:
        end = self.section_end(heading)
        bullets: list[Bullet] = []
        runs: list[tuple[int, int]] = []
        for j in range(heading.end_line + 1, end):
            line = self.lines[j]
            if not line.strip():
                continue
            item = self.top_item_at(j)
            if item is not None and not item.ordered:
                if item.line == j:
                    text = line[item.content_col :]
                    bullets.append(Bullet(j, item.content_col + (len(text) - len(text.lstrip())), text.strip()))
                continue
            if runs and runs[-1][1] == j - 1:
                runs[-1] = (runs[-1][0], j)
            else:
                runs.append((j, j))
        return SummarySection(heading, end, tuple(bullets), tuple(runs))

    @property
    def holds_no_link(self) -> bool:
        """Is there surely no link in the text (most notes of a vault)? Answered without making
        the links: from them where they are made, else from the core's rows, else from the text
        (a line holds a link only with `](` or `]:`, and `split_lines` never joins two
        characters). Rules ask it before the links of a text without a record are made (issue
        44: obsidian's 399 such texts)."""
        if "links" in self.__dict__:
            return not self.links
        if self._link_rows is not None:
            return not self._link_rows
        return "](" not in self.text and "]:" not in self.text

    @property
    def link_targets(self) -> list[str]:
        """`link.target` of each of `links`, without making the links (the core's rows hold them)."""
        rows = self._link_rows
        if rows is not None and "links" not in self.__dict__:
            return [row[3] for row in rows]
        return [link.target for link in self.links]

    def link_at(self, index: int) -> Link:
        """`links[index]`, made alone from the core's row while the list is not asked for
        (PM402 needs the `Link` of a broken link only)."""
        rows = self._link_rows
        if rows is not None and "links" not in self.__dict__:
            return Link(*rows[index])
        return self.links[index]

    @once
    def links(self) -> list[Link]:
        if self._link_rows is not None:  # found by the native core (docs/native.md)
            return [Link(*row) for row in self._link_rows]
        out: list[Link] = []
        start = self.front_matter_end
        lines = self.lines
        kinds = self.blocks.line_kinds
        # Only lines holding `](` or `]:` can hold a link or a definition: found with one
        # comprehension (most lines of a note hold neither), then looked at in order.
        candidates = [n for n in range(start, len(lines)) if "](" in lines[n] or "]:" in lines[n]]
        # Math (`$a^{[L](i)}$`) holds no link: where the text has a `$`, the paragraphs of the
        # candidates are masked (`_math_masks`); the native core hands such a text's links over.
        math = self._math_masks(candidates) if "$" in self.text and candidates else {}
        # A definition starts a paragraph or follows another definition; inside a paragraph,
        # `[x]: y` is text (CommonMark: definitions cannot interrupt a paragraph).
        last_definition = -2  # the last line that held a definition
        for n in candidates:
            kind = kinds[n - start]
            line = lines[n]
            if kind is not PARAGRAPH or not line.strip():
                if kind is HEADING and "](" in line:
                    out.extend(find_links(line, n, definition_allowed=False, math=math.get(n)))
                continue
            before = n - 1 - start
            definition_allowed = (before < 0 or kinds[before] is not PARAGRAPH or not lines[n - 1].strip()
                                  or last_definition == n - 1)
            found = find_links(line, n, definition_allowed, math.get(n))
            out.extend(found)
            if any(link.definition for link in found):
                last_definition = n
        return out


    def _math_masks(self, candidates: list[int]) -> dict[int, str]:
        """The candidate lines of `links` whose paragraph (or heading) holds a `$`, with code
        spans and math masked (`mask_math`). A paragraph is a run of non-blank paragraph lines
        that a list item or a block quote does not start anew (`- $5 each` and `- 3$ off` are
        two items, not one span of math); a heading is one line."""
        lines, start, kinds = self.lines, self.front_matter_end, self.blocks.line_kinds
        item_lines = {item.line for item in self.blocks.items}

        def inside(n: int) -> bool:
            return start <= n < len(lines) and kinds[n - start] is PARAGRAPH and bool(lines[n].strip())

        def starts_paragraph(n: int) -> bool:
            return (not inside(n - 1) or n in item_lines
                    or (_RE_QUOTE.match(lines[n]) is not None and _RE_QUOTE.match(lines[n - 1]) is None))

        out: dict[int, str] = {}
        done = -1  # the last line of the last paragraph looked at
        for n in candidates:
            if n <= done:
                continue  # looked at with its paragraph
            if kinds[n - start] is HEADING:
                if "$" in lines[n]:
                    out[n] = mask_math([mask_code_spans(lines[n])])[0]
                continue
            if not inside(n):
                continue
            first = n
            while not starts_paragraph(first):
                first -= 1
            last = n
            while inside(last + 1) and not starts_paragraph(last + 1):
                last += 1
            done = last
            if any("$" in lines[k] for k in range(first, last + 1)):
                masked = mask_math([mask_code_spans(lines[k]) for k in range(first, last + 1)])
                out.update(enumerate(masked, first))
        return out


def set_updated(text: str, day: dt.date) -> str:
    """`text` with its front matter's `updated` set to `day` (the line added before the closing
    `---` when there is none); unchanged when the text has no front matter."""
    doc = MemoryFile(text)
    end = doc.front_matter_end
    if end == 0:
        return text
    lines = split_keepends(text)
    found = doc.front_matter.get("updated")
    if found is not None:
        line = lines[found[0]]
        eol = line[len(line.rstrip("\r\n")):]
        lines[found[0]] = f"updated: {day.isoformat()}{eol}"
    else:
        closing = lines[end - 1]
        eol = closing[len(closing.rstrip("\r\n")):] or "\n"
        lines.insert(end - 1, f"updated: {day.isoformat()}{eol}")
    return "".join(lines)


def _front_matter_end(lines: list[str]) -> int:
    """YAML front matter: `---` on the first line, closed by `---` or `...`."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0
