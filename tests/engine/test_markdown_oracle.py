"""pmem_lsp.engine.markdown against markdown-it-py, the CommonMark oracle.

A grammar of realistic Markdown building blocks (headings, setext underlines, fences,
indented code, lists, block quotes, HTML blocks, thematic breaks, CJK text) generates
documents; the block scanner must report the same headings, fences and top-level list
items as markdown-it-py's "commonmark" preset.

Not generated, on purpose (documented limitations of the scanner, or out of scope):
tabs, link reference definitions, YAML front matter.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pmem_lsp.engine.markdown import scan_blocks

_MD = MarkdownIt("commonmark")


# -- oracle ---------------------------------------------------------------------------------


def _norm(text: str) -> str:
    # A multi-line (setext) heading keeps inner indentation and trailing spaces in
    # markdown-it's inline content; compare the lines stripped of spaces and tabs only,
    # so that other Unicode whitespace at the ends (U+3000 after CJK text) must agree.
    return "\n".join(part.strip(" \t") for part in text.split("\n"))


def oracle(lines: list[str]) -> dict:
    tokens = _MD.parse("\n".join(lines) + "\n")
    headings, fences, items, top_headings = [], [], [], []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            assert tok.map is not None
            entry = (tok.map[0], int(tok.tag[1]), _norm(tokens[i + 1].content))
            headings.append(entry)
            if tok.level == 0:
                top_headings.append(entry)
        elif tok.type == "fence":
            assert tok.map is not None
            fences.append((tok.map[0], tok.map[1]))
        elif tok.type == "list_item_open" and tok.level == 1:
            assert tok.map is not None
            items.append(tok.map[0])
    return {
        "headings": headings,
        "top_headings": top_headings,
        "fences": sorted(fences),
        "items": items,
    }


def ours(lines: list[str]) -> dict:
    scan = scan_blocks(lines)
    headings = [(h.line, h.level, _norm(h.text)) for h in scan.headings]
    return {
        "headings": headings,
        "top_headings": [
            (h.line, h.level, _norm(h.text)) for h in scan.headings if h.top_level
        ],
        "fences": sorted((f.start, f.end) for f in scan.fences),
        "items": [it.line for it in scan.items if it.top_level],
    }


def assert_agrees(lines: list[str]) -> None:
    expected = oracle(lines)
    got = ours(lines)
    doc = "\n".join(f"{i:3}|{ln}" for i, ln in enumerate(lines))
    for key in expected:
        assert got[key] == expected[key], f"{key} differ for document:\n{doc}"


# -- grammar --------------------------------------------------------------------------------

WORDS = [
    "foo", "bar", "baz qux", "Summary", "hello world", "a `code` span", "*emph* text",
    "x # y", "foo #", "ends with ###", "\\# escaped", "1986. a year", "not ``` a fence",
    "tilde ~~~ here", "<span>inline</span>", "a -- b", "摘要", "中文文本", "日本語のテキスト",
    "한국어", "总结：完成", "foo    bar", "trailing  ", "摘要\u3000", "\u3000全角空格",
    "nbsp\xa0",
]
text = st.sampled_from(WORDS)
indent3 = st.sampled_from(["", "", "", " ", "  ", "   "])

# Lines that start (or nearly start) something, dropped in anywhere.
TRICKY_LINES = [
    "#foo", "#", "# ", "## Summary", "## 摘要", "# 标题 #", "####### seven", "#\\# x",
    "-", "- ", "*", "+ x", "1.", "1. ", "2) x", "10. x", "0. zero", "1234567890. big",
    ">", "> ", ">quote", "```", "~~~", "````", "``` x ```", "    code", "     deep",
    "***", "* * *", "___", "- - -", "===", "---", "  ---  ", "= =", "-- --",
    "<div>", "</div>", "<!--", "-->", "<!-- c -->", "<custom-tag>", "<a href=\"x\">",
    "<pre>", "</pre>", "<?php", "?>", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<span>x",
    "  ", "\\", "foo", "摘要", "\u3000", "#\u3000摘要",
]


@st.composite
def atx_heading(draw, depth: int) -> list[str]:
    hashes = "#" * draw(st.integers(1, 6))
    kind = draw(st.sampled_from(["text", "text", "text", "empty", "closed", "nospace"]))
    if kind == "empty":
        body = draw(st.sampled_from(["", " ", "  ", " #", " ###", " ## "]))
    elif kind == "nospace":
        body = draw(st.sampled_from(["foo", "#", "摘要"]))
    else:
        body = " " + draw(text)
        if kind == "closed":
            body += draw(st.sampled_from([" #", " ##", " ######", "#", " #  ", " \\#"]))
    return [draw(indent3) + hashes + body]


@st.composite
def paragraph(draw, depth: int) -> list[str]:
    n = draw(st.integers(1, 3))
    out = []
    for i in range(n):
        lead = draw(indent3) if i == 0 else draw(st.sampled_from(["", "", " ", "    ", "      "]))
        out.append(lead + draw(text))
    return out


@st.composite
def setext(draw, depth: int) -> list[str]:
    body = draw(paragraph(depth))
    char = draw(st.sampled_from("=-"))
    underline = char * draw(st.integers(1, 4)) + draw(st.sampled_from(["", "", "  "]))
    return body + [draw(indent3) + underline]


FENCE_BODY = [
    "code", "## Summary", "# not a heading", "- not an item", "> not a quote", "<!--",
    "    indented", "", "摘要", "``", "~~", "```", "~~~", "````", "`````", "``` x", "  ```",
    "    ```", "===",
]


@st.composite
def fence(draw, depth: int) -> list[str]:
    char = draw(st.sampled_from("`~"))
    n = draw(st.integers(3, 5))
    lead = draw(indent3)
    info = draw(st.sampled_from(["", "", "python", " py", "md title", "a`b", "x ~~~"]))
    out = [lead + char * n + info]
    for _ in range(draw(st.integers(0, 3))):
        body = draw(st.sampled_from(FENCE_BODY))
        out.append(draw(st.sampled_from(["", "", lead, " "])) + body if body else "")
    closing = draw(st.sampled_from(["same", "same", "same", "longer", "shorter", "other", "none"]))
    close_lead = draw(indent3)
    trail = draw(st.sampled_from(["", "", "  ", " x"]))
    if closing == "same":
        out.append(close_lead + char * n + trail)
    elif closing == "longer":
        out.append(close_lead + char * (n + 1) + trail)
    elif closing == "shorter":
        out.append(close_lead + char * (n - 1) + trail)
    elif closing == "other":
        out.append(close_lead + ("~" if char == "`" else "`") * n)
    return out


@st.composite
def indented_code(draw, depth: int) -> list[str]:
    n = draw(st.integers(1, 3))
    return ["    " + draw(st.sampled_from(["code", "## Summary", "- x", "", "  more"])) for _ in range(n)]


@st.composite
def thematic(draw, depth: int) -> list[str]:
    return [draw(indent3) + draw(st.sampled_from(["***", "---", "___", "* * *", "- - -", "_ _ _ _", "----------"]))]


@st.composite
def html_comment(draw, depth: int) -> list[str]:
    lead = draw(indent3)
    if draw(st.booleans()):
        return [lead + "<!-- " + draw(text) + " -->"]
    out = [lead + "<!--" + draw(st.sampled_from(["", " note"]))]
    for _ in range(draw(st.integers(0, 3))):
        out.append(draw(st.sampled_from(["## Summary", "- item", "", "```", "text", "  # x"])))
    if draw(st.integers(0, 4)):
        out.append(draw(st.sampled_from(["-->", "end -->", "  -->"])))
    return out


@st.composite
def div_block(draw, depth: int) -> list[str]:
    lead = draw(indent3)
    out = [lead + draw(st.sampled_from(["<div>", "<div class=\"x\">", "<details>", "<custom-tag>"]))]
    for _ in range(draw(st.integers(0, 3))):
        out.append(draw(st.sampled_from(["## Summary", "- item", "text", "```", "</div>"])))
    if draw(st.booleans()):
        out.append(draw(st.sampled_from(["</div>", "</details>", "</custom-tag>"])))
    return out


@st.composite
def tricky(draw, depth: int) -> list[str]:
    return [draw(st.sampled_from(TRICKY_LINES))]


@st.composite
def list_block(draw, depth: int) -> list[str]:
    markers = draw(
        st.sampled_from([["-"], ["*"], ["+"], ["1.", "2.", "3."], ["1)", "2)"], ["2.", "10."], ["-", "*"], ["1.", "-"]])
    )
    out: list[str] = []
    for i in range(draw(st.integers(1, 3))):
        marker = markers[i % len(markers)]
        lead = draw(st.sampled_from(["", "", "", " ", "  ", "   "]))
        spaces = draw(st.sampled_from([1, 1, 1, 2, 3, 4, 5]))
        body = draw(blocks(depth + 1))
        width = len(lead) + len(marker) + spaces
        mode = draw(st.sampled_from(["exact", "exact", "exact", "random"]))
        if draw(st.integers(0, 5)) == 0:
            body = [""] + body  # the item starts with a blank line: `-` then content
        first = body[0]
        out.append(lead + marker + (" " * spaces + first if first else draw(st.sampled_from(["", " "]))))
        for ln in body[1:]:
            if not ln.strip():
                out.append(ln)
                continue
            if mode == "exact":
                pad = width
            else:
                pad = draw(st.sampled_from([0, 2, 3, 4, width, width + 1]))
            out.append(" " * pad + ln)
        if draw(st.integers(0, 2)) == 0:
            out.append("")
    return out


@st.composite
def quote_block(draw, depth: int) -> list[str]:
    body = draw(blocks(depth + 1))
    lead = draw(st.sampled_from(["", "", " ", "   "]))
    out = []
    for i, ln in enumerate(body):
        if i > 0 and ln.strip() and draw(st.integers(0, 5)) == 0:
            out.append(ln)  # lazy continuation (or a line that ends the quote)
        else:
            out.append(lead + draw(st.sampled_from(["> ", "> ", ">"])) + ln)
    return out


LEAVES = [atx_heading, atx_heading, paragraph, paragraph, setext, fence, fence, indented_code,
          thematic, html_comment, div_block, tricky, tricky]
CONTAINERS = [list_block, list_block, quote_block]


@st.composite
def blocks(draw, depth: int = 0) -> list[str]:
    kinds = LEAVES + CONTAINERS if depth < 3 else LEAVES
    out: list[str] = []
    for _ in range(draw(st.integers(1, 6 if depth == 0 else 3))):
        out.extend(draw(draw(st.sampled_from(kinds))(depth)))
        sep = draw(st.integers(0, 5))
        if sep <= 1:
            out.append("")
        elif sep == 2:
            out.extend(["", ""])
    return out


documents = blocks()


# -- properties -----------------------------------------------------------------------------


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_agrees_with_markdown_it(lines: list[str]) -> None:
    assert_agrees(lines)


# Unstructured: each line is some indentation, up to two container prefixes and a
# tricky line or text. Finds interactions the block grammar is too orderly to produce.
soup_line = st.builds(
    lambda indent, prefixes, body: indent + "".join(prefixes) + body,
    st.sampled_from(["", "", "", " ", "  ", "   ", "    ", "     ", "      "]),
    st.lists(st.sampled_from(["> ", ">", "- ", "* ", "1. ", "2) ", "  ", "-    "]), max_size=2),
    st.one_of(st.sampled_from(TRICKY_LINES), text),
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(soup_line, max_size=12))
def test_agrees_on_line_soup(lines: list[str]) -> None:
    assert_agrees(lines)


# -- regressions ----------------------------------------------------------------------------

REGRESSIONS: dict[str, list[str]] = {
    "summary_in_fence_is_code": ["```", "## Summary", "```", "## Summary"],
    "summary_in_comment": ["<!--", "## Summary", "-->", "## 摘要"],
    "unclosed_fence_in_item": ["- a", "  ```", "  ## x", "", "b"],
    "nested_item_not_top_level": ["- a", "  - b", "    - c", "- d"],
    "lazy_setext_in_quote": ["> foo", "bar", "==="],
    "empty_atx": ["#", "## ##", "### ### ###"],
    # markdown-it continues a block quote at a `>` indented 4+ columns.
    "indented_quote_continuation": [">", "    > # foo"],
    "indented_quote_continuation_fence": ["> ```", "    >", "x"],
    # A line left of an item's content column ends the item's paragraph in markdown-it
    # when it starts a block, however far it is indented (here 4: it becomes code).
    "outdented_heading_ends_item_paragraph": ["1.   foo", "    # bar"],
    "outdented_fence_ends_item_paragraph": ["  +  总", "    ```", "     ="],
    "outdented_quote_ends_item_paragraph": ["   - n", "    >", "b", "="],
    "outdented_marker_ends_item_paragraph": ["-    +", "       ~", "    +", "     #"],
    "outdented_marker_special_case_is_lazy": ["- 1.   x", "      - y"],
    # A line lazy for a block quote is re-checked by the quotes nested in it.
    "nested_quote_rechecks_lazy_line": ["> > foo", "    # x"],
    "quote_in_item_rechecks_lazy_line": [">   2.    >q", "    #", "f", "="],
    # Unicode whitespace at the ends of heading text is trimmed; a paragraph of U+3000
    # is still a paragraph, so `-` under it makes an empty heading.
    "atx_trailing_ideographic_space": ["# 摘要\u3000", "## \u3000"],
    "setext_of_ideographic_space": ["\u3000", "-"],
}


@pytest.mark.parametrize("lines", REGRESSIONS.values(), ids=REGRESSIONS.keys())
def test_regressions(lines: list[str]) -> None:
    assert_agrees(lines)


def test_outdented_block_start_becomes_code() -> None:
    scan = scan_blocks(["1.   foo", "    # bar", "> > foo", "    # x"])
    assert scan.headings == []
    assert scan.line_kinds == ["paragraph", "code", "paragraph", "code"]
    assert [(it.line, it.end) for it in scan.items] == [(0, 1)]


def test_heading_text_and_first_line() -> None:
    scan = scan_blocks(["# 摘要\u3000#", "## Summary ##", "", "a", " b ", "==="], first_line=10)
    assert [(h.line, h.level, h.text, h.setext) for h in scan.headings] == [
        (10, 1, "摘要\u3000#", False),
        (11, 2, "Summary", False),
        (13, 1, "a\nb", True),
    ]


def test_regression_sibling_bullet_whose_content_is_a_heading():
    # Found by the line-soup property: the sibling-bullet fast path must not take `- #`.
    assert_agrees(["-    #foo", "- #"])
