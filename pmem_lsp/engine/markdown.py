"""A CommonMark block scanner that reports what the rules need, and nothing more.

Memory rules care about headings, fenced code, list items and links, and they must agree
with CommonMark on them: a `## Summary` inside a fence or an HTML comment is not a heading,
`- x` inside a list item is not a top-level bullet, and a list item ends where CommonMark
says it ends. So this module follows the CommonMark block algorithm (the one in
commonmark.js: open containers matched line by line, then block starts, then lazy
paragraph continuation) but builds no inline tree and keeps no text it does not need.
markdown-it-py is the test oracle (tests/engine/test_markdown_oracle.py); where it and
commonmark.js disagree, we follow markdown-it-py and say so in a comment.

Known simplification: link reference definitions are not stripped from paragraphs before
a setext underline, so `[a]: /b` followed by `===` counts as a heading here.

Nesting is capped: past `MAX_NESTING` open containers, `>` and list markers no longer open
a block quote or a list item and are read as paragraph text. Each line walks the open
containers, so without a cap one line of a million `>` (or `- `) followed by many lines
costs quadratic time. markdown-it caps nesting too (at 20 in its commonmark preset, and it
drops the rest of the document there), so no document the two agree on comes near the cap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .native import core_for

_NATIVE = core_for("blocks")  # only where the build was written for this Python code (docs/native.md)

_CODE_INDENT = 4
MAX_NESTING = 32  # open containers (block quotes, lists, list items); see the module docstring

_RE_MAYBE_SPECIAL = re.compile(r"[#`~*+_=<>0-9-]")
# Fast paths (see _Scanner.fast_line): a line that can only continue a paragraph, and a
# bullet item `- text` at the left margin.
_RE_PLAIN_LINE = re.compile(r"[ ]{0,3}[^ \t#`~*+_=<>0-9-]")
_RE_SIMPLE_BULLET = re.compile(r"[-*+] [^ \t]")
_RE_ATX = re.compile(r"#{1,6}(?:[ \t]+|$)")
_RE_FENCE_RUN = re.compile(r"`{3,}|~{3,}")
_RE_CLOSING_FENCE = re.compile(r"(?:`{3,}|~{3,})(?=[ \t]*$)")
_RE_SETEXT = re.compile(r"(?:=+|-+)[ \t]*$")
_RE_THEMATIC_LINE = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:-[ \t]*){3,})$")
_RE_BULLET = re.compile(r"[*+-]")
_RE_ORDERED = re.compile(r"(\d{1,9})([.)])")
_RE_ATX_TRAILING_ONLY = re.compile(r"^[ \t]*#+[ \t]*$")
_RE_ATX_TRAILING = re.compile(r"[ \t]+#+[ \t]*$")


def _fence_open(rest: str) -> re.Match[str] | None:
    """An opening code fence at the start of `rest`. A backtick fence's info string holds no
    backtick; tested with `in`, not a lookahead, which rescans the line for every shorter run
    it backtracks to (quadratic on a line of a million backticks)."""
    m = _RE_FENCE_RUN.match(rest)
    if m is not None and rest[0] == "`" and "`" in rest[m.end():]:
        return None
    return m


def _thematic(rest: str) -> bool:
    """A thematic break (`***`, `- - -`, `___`) fills `rest`. The last visible character must
    then be the first: checked first, so a long line that is no break is rejected at once."""
    return rest.rstrip(" \t")[-1:] == rest[:1] and _RE_THEMATIC_LINE.match(rest) is not None


_BLOCK_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|"
    "details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|"
    "h[123456]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|"
    "ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|"
    "title|tr|track|ul"
)
_ATTRIBUTE = (
    r"(?:\s+[a-zA-Z_:][a-zA-Z0-9_.:-]*"
    r"(?:\s*=\s*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?)"
)
# By HTML block type (1 to 7, as the CommonMark spec numbers them).
_HTML_OPEN = {
    1: re.compile(r"<(?:script|pre|textarea|style)(?:\s|>|$)", re.I),
    2: re.compile(r"<!--"),
    3: re.compile(r"<[?]"),
    4: re.compile(r"<![A-Za-z]"),
    5: re.compile(r"<!\[CDATA\["),
    6: re.compile(rf"</?(?:{_BLOCK_TAGS})(?:\s|/?>|$)", re.I),
    7: re.compile(
        rf"(?:<[A-Za-z][A-Za-z0-9-]*{_ATTRIBUTE}*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)\s*$"
    ),
}
_HTML_CLOSE = {  # types 6 and 7 end at a blank line
    1: re.compile(r"</(?:script|pre|textarea|style)>", re.I),
    2: re.compile(r"-->"),
    3: re.compile(r"\?>"),
    4: re.compile(r">"),
    5: re.compile(r"\]\]>"),
}


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which makes
# construction 3-6x slower, and a file builds dozens of these. Treat them as immutable;
# `unsafe_hash` keeps them hashable by value, as they were.
@dataclass(slots=True, unsafe_hash=True)
class Heading:
    line: int  # first line of the heading (a setext heading's first text line)
    level: int
    text: str  # inline content, trimmed, closing #s removed
    top_level: bool  # directly in the document, not in a quote or list item
    setext: bool = False
    end_line: int = -1  # last line (the underline for setext); set in __post_init__

    def __post_init__(self) -> None:
        if self.end_line < 0:
            self.end_line = self.line


@dataclass(slots=True, unsafe_hash=True)
class Fence:
    start: int  # line of the opening fence
    end: int  # line after the block (exclusive), like markdown-it's map
    info: str
    closed: bool


@dataclass(slots=True, unsafe_hash=True)
class ListItem:
    line: int
    end: int  # line after the item (exclusive)
    top_level: bool
    ordered: bool
    marker: str  # "-", "*", "+", "1." or "1)"
    content_col: int  # character offset of the item's content in its first line


# What a line ended up in; the rules look for text only in paragraphs and headings.
BLANK, PARAGRAPH, HEADING, CODE, HTML, BREAK = "blank", "paragraph", "heading", "code", "html", "break"
_KINDS = (BLANK, PARAGRAPH, HEADING, CODE, HTML, BREAK)  # in the native core's order


@dataclass(slots=True)
class BlockScan:
    headings: list[Heading] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)
    items: list[ListItem] = field(default_factory=list)
    line_kinds: list[str] = field(default_factory=list)
    # Index into `items` of the top-level list item a line belongs to, or -1.
    top_item_of_line: list[int] = field(default_factory=list)


class _Node:
    __slots__ = (
        "kind", "parent", "last_child", "open", "start", "top_level",
        "fence_char", "fence_len", "fence_offset", "info", "html_type",
        "list_type", "bullet", "delimiter", "marker_offset", "padding",
        "item_index", "parts", "has_children", "depth",
    )

    # Set only for the kinds that have them: a fence (fence_*, info), an HTML block (html_type),
    # a list (list_type, bullet, delimiter), a list item (marker_offset, padding) and a
    # paragraph (parts, its lines).
    fence_char: str
    fence_len: int
    fence_offset: int
    info: str
    html_type: int
    list_type: str
    bullet: str
    delimiter: str
    marker_offset: int
    padding: int
    parts: list[str]

    def __init__(self, kind: str, parent: _Node | None, start: int) -> None:
        self.kind = kind
        self.parent = parent  # None for the document only
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.last_child: _Node | None = None
        self.open = True
        self.start = start
        self.has_children = False
        self.top_level = parent is not None and parent.kind == "document"
        self.item_index = -1


_CONTAINS_ANY = {"document", "quote", "item"}
_ACCEPTS_LINES = {"paragraph", "fence", "code", "html"}
_ONE_LINE_OR_PARAGRAPH = {"paragraph", "heading", "break"}


def _can_contain(parent: str, child: str) -> bool:
    if parent == "list":
        return child == "item"
    return parent in _CONTAINS_ANY and child != "item"


class _Scanner:
    """One pass over the lines; mirrors commonmark.js's BlockParser state."""

    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines = lines
        self.first_line = first_line
        self.out = BlockScan()
        self.doc = _Node("document", None, first_line)
        self.tip = self.doc
        self.oldtip = self.doc
        self.last_matched = self.doc
        self.all_closed = True
        self.line_no = first_line
        self.ln = ""
        self.offset = 0
        self.column = 0
        self.next_nonspace = 0
        self.next_nonspace_column = 0
        self.indent = 0
        self.indented = False
        self.blank = False
        self.partial_tab = False
        # The last blank line that left the open blocks as they were, with the tip then and
        # its kind: the same line against the same tip does nothing again (see incorporate).
        self.idle: tuple[_Node, str, str] | None = None
        self.top_item_memo: tuple[_Node, int] | None = None

    # -- cursor -------------------------------------------------------------
    def find_next_nonspace(self) -> None:
        ln = self.ln
        i = self.offset
        cols = self.column
        n = len(ln)
        while i < n:
            c = ln[i]
            if c == " ":
                i += 1
                cols += 1
            elif c == "\t":
                i += 1
                cols += 4 - (cols % 4)
            else:
                break
        self.blank = i >= n
        self.next_nonspace = i
        self.next_nonspace_column = cols
        self.indent = cols - self.column
        self.indented = self.indent >= _CODE_INDENT

    def advance_next_nonspace(self) -> None:
        self.offset = self.next_nonspace
        self.column = self.next_nonspace_column
        self.partial_tab = False

    def advance_offset(self, count: int, columns: bool) -> None:
        ln = self.ln
        n = len(ln)
        while count > 0 and self.offset < n:
            if ln[self.offset] == "\t":
                to_tab = 4 - (self.column % 4)
                if columns:
                    self.partial_tab = to_tab > count
                    step = count if to_tab > count else to_tab
                    self.column += step
                    self.offset += 0 if self.partial_tab else 1
                    count -= step
                else:
                    self.partial_tab = False
                    self.column += to_tab
                    self.offset += 1
                    count -= 1
            else:
                self.partial_tab = False
                self.offset += 1
                self.column += 1
                count -= 1

    def peek_is_space(self, pos: int) -> bool:
        return pos < len(self.ln) and self.ln[pos] in " \t"

    # -- tree ---------------------------------------------------------------
    def add_child(self, kind: str, start_line: int) -> _Node:
        while not _can_contain(self.tip.kind, kind):
            self.finalize(self.tip, self.line_no - 1)
        node = _Node(kind, self.tip, start_line)
        self.tip.last_child = node
        self.tip.has_children = True
        self.tip = node
        return node

    def finalize(self, node: _Node, last_line: int) -> None:
        node.open = False
        end = last_line + 1
        if node.kind == "fence":
            self.out.fences.append(Fence(node.start, end, node.info, closed=False))
        elif node.kind == "item":
            old = self.out.items[node.item_index]
            self.out.items[node.item_index] = ListItem(
                old.line, end, old.top_level, old.ordered, old.marker, old.content_col
            )
        parent = node.parent
        assert parent is not None  # the document is never finalized
        self.tip = parent

    def close_unmatched(self) -> None:
        if not self.all_closed:
            while self.oldtip is not self.last_matched:
                parent = self.oldtip.parent
                assert parent is not None  # last_matched is an ancestor of oldtip
                self.finalize(self.oldtip, self.line_no - 1)
                self.oldtip = parent
            self.all_closed = True

    # -- continuation of open blocks ----------------------------------------
    def continue_block(self, node: _Node) -> int:
        """0: matched, keep going; 1: not matched; 2: line fully consumed."""
        kind = node.kind
        if kind == "paragraph":
            return 1 if self.blank else 0
        if kind == "list" or kind == "document":
            return 0
        if kind == "item":
            if self.blank:
                if not node.has_children:
                    return 1
                self.advance_next_nonspace()
            elif self.indent >= node.marker_offset + node.padding:
                self.advance_offset(node.marker_offset + node.padding, True)
            else:
                return 1
            return 0
        if kind == "quote":
            # commonmark.js (and the spec) require the continuation `>` to be indented at most
            # three spaces; markdown-it's blockquote rule does not check, so `>` followed by
            # `    > # x` continues the quote there (a heading) instead of starting indented
            # code. We follow markdown-it, the oracle. Only continuation is affected: a new
            # quote still cannot start on an indented line (see try_starts).
            if self.next_nonspace < len(self.ln) and self.ln[self.next_nonspace] == ">":
                self.advance_next_nonspace()
                self.advance_offset(1, False)
                if self.peek_is_space(self.offset):
                    self.advance_offset(1, True)
                return 0
            return 1
        if kind == "fence":
            rest = self.ln[self.next_nonspace :]
            if self.indent <= 3 and rest[:1] == node.fence_char:
                m = _RE_CLOSING_FENCE.match(rest)
                if m and len(m.group(0)) >= node.fence_len:
                    node.open = False
                    self.out.fences.append(Fence(node.start, self.line_no + 1, node.info, closed=True))
                    assert node.parent is not None
                    self.tip = node.parent
                    return 2
            i = node.fence_offset
            while i > 0 and self.peek_is_space(self.offset):
                self.advance_offset(1, True)
                i -= 1
            return 0
        if kind == "code":
            if self.indent >= _CODE_INDENT:
                self.advance_offset(_CODE_INDENT, True)
            elif self.blank:
                self.advance_next_nonspace()
            else:
                return 1
            return 0
        if kind == "html":
            return 1 if self.blank and node.html_type in (6, 7) else 0
        return 1  # heading, thematic break: one line only

    # -- block starts --------------------------------------------------------
    def try_starts(self, container: _Node) -> int:
        """0: nothing started; 1: a container started; 2: a leaf started."""
        ln = self.ln
        nns = self.next_nonspace
        c = ln[nns] if nns < len(ln) else ""
        nested_too_deep = container.depth >= MAX_NESTING
        if not self.indented:
            if c == ">" and not nested_too_deep:
                self.advance_next_nonspace()
                self.advance_offset(1, False)
                if self.peek_is_space(self.offset):
                    self.advance_offset(1, True)
                self.close_unmatched()
                self.add_child("quote", self.line_no)
                return 1
            rest = ln[nns:]
            if c == "#":
                m = _RE_ATX.match(rest)
                if m:
                    self.advance_next_nonspace()
                    self.advance_offset(len(m.group(0)), False)
                    self.close_unmatched()
                    node = self.add_child("heading", self.line_no)
                    text = ln[self.offset :]
                    text = _RE_ATX_TRAILING_ONLY.sub("", text)
                    text = _RE_ATX_TRAILING.sub("", text)
                    self.out.headings.append(
                        # Trimmed like the inline content of both commonmark.js (JS trim())
                        # and markdown-it-py (str.strip()): Unicode spaces go too, so
                        # `# 摘要\u3000` has the text `摘要`.
                        Heading(self.line_no, len(m.group(0).strip()), text.strip(), node.top_level)
                    )
                    self.offset = len(ln)
                    return 2
            if c == "`" or c == "~":
                m = _fence_open(rest)
                if m:
                    n = len(m.group(0))
                    self.close_unmatched()
                    node = self.add_child("fence", self.line_no)
                    node.fence_len = n
                    node.fence_char = m.group(0)[0]
                    node.fence_offset = self.indent
                    node.info = rest[n:].strip()
                    self.advance_next_nonspace()
                    self.advance_offset(n, False)
                    return 2
            if c == "<":
                for block_type in range(1, 8):
                    if _HTML_OPEN[block_type].match(rest) and (
                        block_type < 7
                        or (
                            container.kind != "paragraph"
                            and not (not self.all_closed and not self.blank and self.tip.kind == "paragraph")
                        )
                    ):
                        self.close_unmatched()
                        node = self.add_child("html", self.line_no)
                        node.html_type = block_type
                        return 2
            if container.kind == "paragraph" and (c == "=" or c == "-") and _RE_SETEXT.match(rest):
                self.close_unmatched()
                para = container
                content = "\n".join(para.parts)
                # commonmark.js tests the raw content (after link reference definitions,
                # which we do not strip); only the inline text is trimmed, so a line of
                # U+3000 over `---` is an empty heading, not a paragraph line.
                if content:
                    heading_text = content.strip()
                    self.out.headings.append(
                        Heading(
                            para.start, 1 if c == "=" else 2, heading_text, para.top_level,
                            setext=True, end_line=self.line_no,
                        )
                    )
                    para.kind = "heading"
                    self.offset = len(ln)
                    return 2
            if c in "*_-" and _thematic(rest):
                self.close_unmatched()
                self.add_child("break", self.line_no)
                self.offset = len(ln)
                return 2
        if (not self.indented or container.kind == "list") and not nested_too_deep:
            if self.try_list_item(container):
                return 1
        if self.indented and self.tip.kind != "paragraph" and not self.blank:
            self.advance_offset(_CODE_INDENT, True)
            self.close_unmatched()
            self.add_child("code", self.line_no)
            return 2
        return 0

    def try_list_item(self, container: _Node) -> bool:
        if self.indent >= 4:
            return False
        ln = self.ln
        rest = ln[self.next_nonspace :]
        m = _RE_BULLET.match(rest)
        bullet = delimiter = ""
        if m:
            list_type, bullet = "bullet", m.group(0)
        else:
            m = _RE_ORDERED.match(rest)
            if not m or (container.kind == "paragraph" and int(m.group(1)) != 1):
                return False
            list_type, delimiter = "ordered", m.group(2)
        marker_len = len(m.group(0))
        after = self.next_nonspace + marker_len
        if after < len(ln) and ln[after] not in " \t":
            return False
        if container.kind == "paragraph" and not ln[after:].strip(" \t"):
            return False
        marker_offset = self.indent
        self.advance_next_nonspace()
        self.advance_offset(marker_len, True)
        spaces_start_col = self.column
        spaces_start_offset = self.offset
        while True:
            self.advance_offset(1, True)
            if not (self.column - spaces_start_col < 5 and self.peek_is_space(self.offset)):
                break
        blank_item = self.offset >= len(ln)
        spaces_after = self.column - spaces_start_col
        if spaces_after >= 5 or spaces_after < 1 or blank_item:
            padding = marker_len + 1
            self.column = spaces_start_col
            self.offset = spaces_start_offset
            if self.peek_is_space(self.offset):
                self.advance_offset(1, True)
        else:
            padding = marker_len + spaces_after

        self.close_unmatched()
        tip = self.tip
        if not (
            tip.kind == "list"
            and tip.list_type == list_type
            and tip.bullet == bullet
            and tip.delimiter == delimiter
        ):
            lst = self.add_child("list", self.line_no)
            lst.list_type, lst.bullet, lst.delimiter = list_type, bullet, delimiter
        self.new_item(self.tip, list_type, marker_offset, padding, m.group(0), min(self.offset, len(ln)), ln)
        return True

    def new_item(self, lst: _Node, list_type: str, marker_offset: int, padding: int, marker: str,
                 content_col: int, ln: str) -> _Node:
        item = self.add_child("item", self.line_no)
        item.marker_offset = marker_offset
        item.padding = padding
        item.top_level = lst.top_level
        item.item_index = len(self.out.items)
        self.out.items.append(
            ListItem(self.line_no, self.line_no + 1, lst.top_level, list_type == "ordered", marker, content_col)
        )
        return item

    def lazy_line_interrupts(self) -> bool:
        """Does markdown-it end the open paragraph at this would-be lazy line?

        Only asked when the line is indented 4+ columns relative to the last matched
        container, where commonmark.js tries no block start and takes the line as lazy
        paragraph continuation. markdown-it, which parses containers recursively, differs:

        - A paragraph (or block quote) inside a list item the line is left of checks its
          terminators with indentation measured from that item's content column, so the
          line never counts as indented there: in `  +  text` / `    # x` the heading
          ends the paragraph.
        - A line a block quote takes as lazy is re-checked, indentation ignored, by every
          block quote nested in it: `> > text` / `    # x`.

        Either way the paragraph ends and, back in the last matched container, the line
        starts indented code. We follow markdown-it, the oracle. The walk below mirrors
        its state: `s` is the line's sCount, `col` the blkIndent and `list_col` the
        listIndent, relative to the last matched container's content column.
        """
        s = self.indent
        col = 0
        list_col = -1
        node: _Node | None = self.last_matched
        while node is not None:
            kind = node.kind
            if kind == "list":
                list_col = col
            elif kind == "item":
                if node is not self.last_matched:
                    col += node.marker_offset + node.padding
            elif kind == "quote":
                if node is not self.last_matched:
                    if self.md_terminates(s, col, list_col):
                        return True
                    s, col = -1, 0  # markdown-it marks the line lazy (sCount -1) inside
            elif kind == "paragraph":
                return s >= 0 and s - col < _CODE_INDENT and self.md_terminates(s, col, list_col)
            node = node.last_child
        return False

    def md_terminates(self, s: int, col: int, list_col: int) -> bool:
        """markdown-it's paragraph/blockquote terminator rules for the current line."""
        if s - col >= _CODE_INDENT:
            return False  # indented code, which terminates nothing
        rest = self.ln[self.next_nonspace :]
        c = rest[:1]
        if c == ">":
            return True
        if c == "#":
            return _RE_ATX.match(rest) is not None
        if c == "`" or c == "~":
            return _fence_open(rest) is not None
        if c == "<":
            return any(_HTML_OPEN[t].match(rest) for t in range(1, 7))
        if c and c in "*_-" and _thematic(rest):
            return True
        # The "special case" in markdown-it's list rule: a marker 4+ columns past the
        # enclosing list's context is paragraph text, not a new item.
        if list_col >= 0 and s - list_col >= _CODE_INDENT and s < col:
            return False
        m = _RE_BULLET.match(rest) or _RE_ORDERED.match(rest)
        return m is not None and (len(rest) == m.end() or rest[m.end()] in " \t")

    # -- one line -----------------------------------------------------------
    def add_line(self) -> None:
        tip = self.tip
        if tip.kind == "paragraph":
            tip.parts.append(self.ln[self.offset :])

    def fast_line(self, ln: str) -> str | None:
        """The two commonest lines in memory files, decided without the general algorithm.

        Each branch reproduces exactly what `incorporate` would do for that state and line
        (the oracle tests cover both); anything else returns None and takes the general path.
        """
        tip = self.tip
        doc = self.doc
        if not ln.strip(" \t"):
            if tip is doc:
                return BLANK
            if tip.kind in _ONE_LINE_OR_PARAGRAPH:
                # A blank line ends the paragraph (or closes the heading); list items with
                # content and lists continue through it, so nothing else closes.
                node = tip.parent
                while node is not None and node is not doc:
                    if node.kind != "item" and node.kind != "list":
                        return None
                    node = node.parent
                self.finalize(tip, self.line_no - 1)
                return BLANK
            return None
        if tip is doc:
            # Nothing is open: a plain line starts a top-level paragraph; `- text` at the
            # margin starts a top-level list.
            if _RE_PLAIN_LINE.match(ln):
                node = self.add_child("paragraph", self.line_no)
                node.parts = [ln.lstrip(" ")]
                return PARAGRAPH
            if (_RE_SIMPLE_BULLET.match(ln) and not _RE_MAYBE_SPECIAL.match(ln, 2)
                    and not (ln[0] != "+" and _thematic(ln))):
                self.ln = ln
                self.offset = self.column = 2
                lst = self.add_child("list", self.line_no)
                lst.list_type, lst.bullet, lst.delimiter = "bullet", ln[0], ""
                self.new_item(lst, "bullet", 0, 2, ln[0], 2, ln)
                node = self.add_child("paragraph", self.line_no)
                node.parts = [ln[2:]]
                return PARAGRAPH
            return None
        if tip.kind == "paragraph" and tip.parent is doc:
            # Continuation of a top-level paragraph: nothing can start (no special first
            # character, indent under 4) and a paragraph takes the line.
            if _RE_PLAIN_LINE.match(ln):
                tip.parts.append(ln.lstrip(" "))
                return PARAGRAPH
            return None
        item = tip.parent
        if (tip.kind == "paragraph" and item is not None and item.kind == "item" and _RE_SIMPLE_BULLET.match(ln)
                and not _RE_MAYBE_SPECIAL.match(ln, 2)):  # the content starts no block of its own
            assert item.parent is not None  # an item is in a list
            lst = item.parent
            if (lst.parent is doc and lst.bullet == ln[0] and item.marker_offset == 0
                    and not (ln[0] != "+" and _thematic(ln))):
                # A sibling bullet at the margin: the open item cannot continue (indent 0),
                # the list matches, so close the item and open the next one with its paragraph.
                self.ln = ln
                self.offset = 2
                self.column = 2
                self.oldtip = tip
                self.last_matched = lst
                self.all_closed = False
                self.close_unmatched()
                self.new_item(lst, "bullet", 0, 2, ln[0], 2, ln)
                node = self.add_child("paragraph", self.line_no)
                node.parts = [ln[2:]]
                return PARAGRAPH
        return None

    def incorporate(self, ln: str) -> str:
        """Take one line; return what it ended up in.

        A blank line that leaves the tip where it was changed nothing (any change finalizes
        or adds a block, which moves the tip), so the same line against the same tip is
        answered at once: blank lines inside deeply nested list items would otherwise walk
        every open container each.
        """
        idle = self.idle
        if idle is not None and idle[0] is self.tip and idle[1] == ln:
            return idle[2]
        tip = self.tip
        kind = self._incorporate(ln)
        if self.tip is tip and not ln.strip(" \t"):
            self.idle = (tip, ln, kind)
        return kind

    def _incorporate(self, ln: str) -> str:
        fast = self.fast_line(ln)
        if fast is not None:
            return fast
        self.ln = ln
        self.offset = 0
        self.column = 0
        self.blank = False
        self.partial_tab = False
        self.oldtip = self.tip

        container = self.doc
        while True:
            child = container.last_child
            if child is None or not child.open:
                break
            container = child
            self.find_next_nonspace()
            res = self.continue_block(container)
            if res == 2:
                return CODE
            if res == 1:
                assert container.parent is not None  # the loop only descends from the document
                container = container.parent
                break

        self.all_closed = container is self.oldtip
        self.last_matched = container
        matched_leaf = container.kind != "paragraph" and container.kind in _ACCEPTS_LINES

        while not matched_leaf:
            self.find_next_nonspace()
            if not self.indented and (
                self.next_nonspace >= len(ln) or not _RE_MAYBE_SPECIAL.match(ln, self.next_nonspace)
            ):
                self.advance_next_nonspace()
                break
            res = self.try_starts(container)
            if res == 0:
                self.advance_next_nonspace()
                break
            container = self.tip
            if res == 2:
                matched_leaf = True
                break

        if not self.all_closed and not self.blank and self.tip.kind == "paragraph":
            if not (self.indented and self.lazy_line_interrupts()):
                self.add_line()  # lazy continuation
                return PARAGRAPH
            # markdown-it ends the paragraph here; in the last matched container the line
            # is indented by 4 or more, so it starts indented code there.
            self.close_unmatched()
            self.add_child("code", self.line_no)
            return CODE

        self.close_unmatched()
        kind = container.kind
        if kind in _ACCEPTS_LINES:
            self.add_line()
            if kind == "html" and 1 <= container.html_type <= 5:
                if _HTML_CLOSE[container.html_type].search(ln, self.offset):
                    self.finalize(container, self.line_no)
            return {"paragraph": PARAGRAPH, "fence": CODE, "code": CODE, "html": HTML}[kind]
        if kind == "heading":
            return HEADING
        if kind == "break":
            return BREAK
        if self.offset < len(ln) and not self.blank:
            node = self.add_child("paragraph", self.line_no)
            node.parts = []
            self.advance_next_nonspace()
            self.add_line()
            return PARAGRAPH
        return BLANK

    def run(self, stop_when_idle: bool = False) -> BlockScan:
        """Scan the lines; with `stop_when_idle`, stop after the first line that leaves no
        block open (`consumed` says how many lines were taken)."""
        out = self.out
        kinds = out.line_kinds
        tops = out.top_item_of_line
        doc = self.doc
        for ln in self.lines:
            kinds.append(self.incorporate(ln))
            tops.append(self._top_item())
            self.line_no += 1
            if stop_when_idle and self.tip is doc:
                break
        self.consumed = self.line_no - self.first_line
        while self.tip is not self.doc:
            self.finalize(self.tip, self.line_no - 1)
        out.fences.sort(key=lambda f: f.start)
        return out

    def _top_item(self) -> int:
        memo = self.top_item_memo
        if memo is not None and memo[0] is self.tip:
            return memo[1]  # a node's ancestors never change
        node: _Node | None = self.tip
        found = -1
        while node is not None:
            if node.kind == "item" and node.top_level:
                found = node.item_index
                break
            node = node.parent
        self.top_item_memo = (self.tip, found)
        return found


def _native_part(lines: list[str], first_line: int) -> tuple[BlockScan, int | None]:
    """`_fast_part` by the native core (docs/native.md): the same scan, from rows."""
    assert _NATIVE is not None  # scan_blocks calls this only with the core
    headings, fences, items, kinds, tops, stop = _NATIVE.fast_part(lines, first_line, _KINDS)
    return BlockScan([Heading(*h) for h in headings], [Fence(*f) for f in fences],
                     [ListItem(*i) for i in items], kinds, tops), stop


def scan_blocks(lines: list[str], first_line: int = 0) -> BlockScan:
    """Scan `lines` (no line endings). Line numbers in the result start at `first_line`.

    `line_kinds` and `top_item_of_line` are indexed from 0 for `lines[0]`.
    """
    part = _fast_part if _NATIVE is None else _native_part
    out, stop = part(lines, first_line)
    pos = 0
    while stop is not None:
        # The fast path stopped at `pos + stop`, where no block was open: the full scanner
        # takes over from there until it leaves no block open again, then the fast path.
        pos += stop
        full = _Scanner(lines[pos:], first_line + pos)
        _join(out, full.run(stop_when_idle=True))
        pos += full.consumed
        if pos >= len(lines):
            break
        more, stop = part(lines[pos:], first_line + pos)
        _join(out, more)
    return out


def _join(out: BlockScan, more: BlockScan) -> None:
    """Append the scan of the lines that follow `out`'s, begun where no block was open."""
    out.headings += more.headings
    out.fences += more.fences
    shift = len(out.items)
    out.items += more.items
    out.line_kinds += more.line_kinds
    out.top_item_of_line += [t + shift if t >= 0 else -1 for t in more.top_item_of_line] if shift \
        else more.top_item_of_line


# -- fast path for simple documents -----------------------------------------------------------
#
# Most memory files are made of a few constructs only: ATX headings and paragraphs at the
# margin, thematic breaks, setext underlines, fences opened at the margin, and top-level
# `- text` lists whose items hold one paragraph (continued by indented or lazy lines). For
# such a document the open blocks are always one of six states, so one pass with a handful
# of string tests per line gives exactly what `_Scanner` gives. At the first line outside the
# subset (an indented block start, a quote, an HTML block other than a comment, a nested
# list, a tab at the start of a line, ...) the pass stops at the last line where no block was
# open; `scan_blocks` hands those lines to the full scanner until it leaves no block open
# again, then resumes the fast path. tests/engine/test_markdown_fast.py holds the result to the full
# scanner's `BlockScan` (and markdown-it-py).

_NONE, _PARA, _ITEM, _ITEM_GAP, _FENCE, _COMMENT, _QUOTE, _QUOTE_GAP = range(8)
_SPECIAL_START = frozenset("#`~*+_=<>-0123456789")


def _inline_start(s: str) -> bool:
    """`s` (not blank, no leading space or tab, at most 3 columns in) starts no block: a
    paragraph line, or the continuation of one. False also for what is merely unsure."""
    c = s[0]
    if c not in _SPECIAL_START:
        return True
    if c == "#":
        return _RE_ATX.match(s) is None
    if c == "`" or c == "~":
        return _fence_open(s) is None
    if c == "*" or c == "+" or c == "-":
        if s[1:2] in ("", " ", "\t"):
            return False  # a list marker
        if c == "+":
            return True
        return not _thematic(s) and (c == "*" or _RE_SETEXT.match(s) is None)
    if c == "_":
        return not _thematic(s)
    if c == "<":
        return not any(_HTML_OPEN[t].match(s) for t in range(1, 8))
    if c == "=" or c == ">":
        return False
    m = _RE_ORDERED.match(s)  # a digit
    return m is None or (len(s) > m.end() and s[m.end()] not in " \t")


def _quote_line(ln: str, state: int) -> tuple[str | None, int]:
    """A line of a top-level block quote that holds plain paragraphs (an Obsidian callout,
    `> [!tip] Title` and its lines), or the line after one: its kind and the state after it.
    None where the full scanner must read the line: anything in the quote but a paragraph line
    or a blank one, and after it anything but a blank line or plain text."""
    if ln[:1] != ">":  # after the quote's last line
        if not ln.strip(" "):
            return BLANK, _NONE  # (spaces only: a tab is the full scanner's)
        c = ln[:1]
        if c not in _SPECIAL_START and c != " " and c != "\t":
            # Plain text continues the quote's open paragraph; after a blank quote line it
            # closes the quote and starts a paragraph.
            return PARAGRAPH, _QUOTE if state == _QUOTE else _PARA
        return None, state
    rest = ln[2:] if ln[1:2] == " " else ln[1:]
    if not rest.strip(" "):
        return BLANK, _QUOTE_GAP
    c = rest[0]
    if c == " " or c == "\t" or (c in _SPECIAL_START and not _inline_start(rest)):
        return None, state
    return PARAGRAPH, _QUOTE


def _fast_scan(lines: list[str], first_line: int) -> BlockScan | None:
    """The fast path's scan of the whole document, or None where it would stop."""
    scan, stop = _fast_part(lines, first_line)
    return scan if stop is None else None


def _fast_part(lines: list[str], first_line: int) -> tuple[BlockScan, int | None]:
    """The scan of `lines` by the fast path, and None; or, at the first line outside its
    subset, the scan of the lines before the last point where no block was open, and the
    index of that line (where the full scanner must take over)."""
    headings: list[Heading] = []
    fences: list[Fence] = []
    items: list[ListItem] = []
    kinds: list[str] = []
    add = kinds.append
    special = _SPECIAL_START
    state = _NONE
    para_start = 0  # index in `lines` of the open top-level paragraph's first line
    bullet = ""  # marker of the open top-level list
    item_line = 0  # line of the open item
    item_ordered = False
    item_col = 2  # its content column
    fence_char = fence_info = ""
    fence_len = fence_start = 0
    n = first_line - 1
    safe = first_line  # the last line before which no block was open
    for ln in lines:
        n += 1
        if state == _NONE:
            safe = n
        elif state == _FENCE:
            add(CODE)
            s = ln.lstrip(" ")
            if s[:1] == fence_char and len(ln) - len(s) <= 3:
                m = _RE_CLOSING_FENCE.match(s)
                if m and len(m.group(0)) >= fence_len:
                    fences.append(Fence(fence_start, n + 1, fence_info, True))
                    state = _NONE
            continue
        elif state == _COMMENT:
            add(HTML)
            if "-->" in ln:
                state = _NONE
            continue
        c = ln[:1]
        if c == ">" or state in (_QUOTE, _QUOTE_GAP):
            if state in (_ITEM, _ITEM_GAP):  # a quote at the margin closes the item
                items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
                state = _NONE
            kind, state = _quote_line(ln, state)
            if kind is None:
                return _cut(headings, fences, items, kinds, safe, first_line)
            add(kind)
            if state == _PARA:
                para_start = n - first_line
            continue
        if c and c not in special and c != " " and c != "\t":
            # A paragraph line: starts or continues (lazily, in an item) a paragraph.
            add(PARAGRAPH)
            if state in (_NONE, _ITEM_GAP):
                if state == _ITEM_GAP:
                    items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
                state = _PARA
                para_start = n - first_line
            continue
        if (c == "-" or c == "*" or c == "+") and ln[1:2] == " ":
            c2 = ln[2:3]
            if c2 and c2 != " " and c2 != "\t" and (
                    c2 not in special or (_inline_start(ln[2:]) and not (c != "+" and _thematic(ln)))):
                # `- text`: a new top-level item (closing the open one).
                if state in (_ITEM, _ITEM_GAP):
                    items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
                bullet = c
                item_line = n
                item_ordered = False
                item_col = 2
                state = _ITEM
                add(PARAGRAPH)
                continue
        if c == " ":
            s = ln.lstrip(" ")
            if not s:
                c = ""
            elif s[0] == "\t" or not _inline_start(s):
                return _cut(headings, fences, items, kinds, safe, first_line)
            else:
                # An indented paragraph line: it starts or continues a paragraph.
                add(PARAGRAPH)
                if state in (_PARA, _ITEM):
                    continue
                if len(ln) - len(s) > (3 if state == _NONE else 1):
                    # Indented code, or more content of the item: the full scanner.
                    return _cut(headings, fences, items, kinds, safe, first_line)
                if state == _ITEM_GAP:
                    items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
                state = _PARA
                para_start = n - first_line
                continue
        if c == "" or c == "\t":
            if ln.strip(" \t"):
                return _cut(headings, fences, items, kinds, safe, first_line)  # a tab starts the line
            add(BLANK)
            if state == _ITEM:
                state = _ITEM_GAP
            elif state == _PARA:
                state = _NONE
            continue
        if _inline_start(ln):
            add(PARAGRAPH)
            if state in (_NONE, _ITEM_GAP):
                if state == _ITEM_GAP:
                    items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
                state = _PARA
                para_start = n - first_line
            continue
        # The line starts a block (or is unsure): at the margin, it closes an open item.
        if c in "0123456789":
            m = _RE_ORDERED.match(ln)
            if m is None:
                return _cut(headings, fences, items, kinds, safe, first_line)  # not reached: `_inline_start` took it
            e = m.end()
            if ln[e:e + 1] != " " or ln[e + 1:e + 2] in ("", " ", "\t") or not _inline_start(ln[e + 1:]):
                return _cut(headings, fences, items, kinds, safe, first_line)
            if state == _PARA and int(m.group(1)) != 1:
                add(PARAGRAPH)  # only `1.` interrupts a paragraph: this one continues it
                continue
            if state in (_ITEM, _ITEM_GAP):
                items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
            bullet = m.group(0)
            item_line = n
            item_ordered = True
            item_col = e + 1
            state = _ITEM
            add(PARAGRAPH)
            continue
        if c == "<":
            # An HTML comment at the margin (block type 2) runs to the line holding `-->`.
            # Other HTML blocks: the full scanner (`_inline_start` took what starts none).
            if not ln.startswith("<!--"):
                return _cut(headings, fences, items, kinds, safe, first_line)
            if state in (_ITEM, _ITEM_GAP):
                items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
            state = _NONE
            add(HTML)
            if "-->" not in ln:
                state = _COMMENT
            continue
        if c == "-" or c == "*" or c == "+" or c == "_":
            if c == "-" and state == _PARA and _RE_SETEXT.match(ln):
                pass  # a setext underline, below
            elif c != "+" and _thematic(ln):
                if state in (_ITEM, _ITEM_GAP):
                    items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
                state = _NONE
                add(BREAK)
                continue
            else:
                return _cut(headings, fences, items, kinds, safe, first_line)
        if c == "-" or c == "=":
            if state != _PARA or _RE_SETEXT.match(ln) is None:
                return _cut(headings, fences, items, kinds, safe, first_line)
            first = para_start + first_line
            content = "\n".join(part.lstrip(" ") for part in lines[para_start:n - first_line])
            headings.append(Heading(first, 1 if c == "=" else 2, content.strip(), True, setext=True, end_line=n))
            state = _NONE
            add(HEADING)
            continue
        if c == "#":
            m = _RE_ATX.match(ln)
            if m is None:
                return _cut(headings, fences, items, kinds, safe, first_line)  # not reached: `_inline_start` took it
            if state in (_ITEM, _ITEM_GAP):
                items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
            text = ln[len(m.group(0)):]
            if "#" in text:
                text = _RE_ATX_TRAILING_ONLY.sub("", text)
                text = _RE_ATX_TRAILING.sub("", text)
            headings.append(Heading(n, len(m.group(0).strip()), text.strip(), True))
            state = _NONE
            add(HEADING)
            continue
        if c == "`" or c == "~":
            m = _fence_open(ln)
            if m is None:
                return _cut(headings, fences, items, kinds, safe, first_line)  # not reached: `_inline_start` took it
            if state in (_ITEM, _ITEM_GAP):
                items.append(ListItem(item_line, n, True, item_ordered, bullet, item_col))
            fence_len = len(m.group(0))
            fence_char = c
            fence_info = ln[fence_len:].strip()
            fence_start = n
            state = _FENCE
            add(CODE)
            continue
        return _cut(headings, fences, items, kinds, safe, first_line)
    end = first_line + len(lines)
    if state in (_ITEM, _ITEM_GAP):
        items.append(ListItem(item_line, end, True, item_ordered, bullet, item_col))
    elif state == _FENCE:
        fences.append(Fence(fence_start, end, fence_info, False))
    # Top-level items do not nest, and every line from an item's first to its end belongs
    # to it: the line-to-item map is filled a run at a time.
    tops = [-1] * len(kinds)
    for index, item in enumerate(items):
        a = item.line - first_line
        b = item.end - first_line
        tops[a:b] = [index] * (b - a)
    return BlockScan(headings, fences, items, kinds, tops), None


def _cut(headings: list[Heading], fences: list[Fence], items: list[ListItem], kinds: list[str], safe: int,
         first_line: int) -> tuple[BlockScan, int]:
    """What the fast path found before line `safe` (absolute), where no block was open."""
    items = [it for it in items if it.line < safe]
    kinds = kinds[:safe - first_line]
    tops = [-1] * len(kinds)
    for index, item in enumerate(items):
        tops[item.line - first_line:item.end - first_line] = [index] * (item.end - item.line)
    return (BlockScan([h for h in headings if h.end_line < safe], [f for f in fences if f.start < safe], items,
                      kinds, tops), safe - first_line)
