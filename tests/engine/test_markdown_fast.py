"""The fast path of the block scanner (`_fast_scan`) against the full scanner.

Where the fast path takes a document (it returns None for anything outside its subset), it
must give the very same `BlockScan` as `_Scanner`, which markdown-it-py checks in
tests/test_markdown_oracle.py. The documents are the oracle's generated ones, a soup of
lines from the subset's edges, and memory-shaped notes.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_markdown_oracle import TRICKY_LINES, WORDS, assert_agrees, documents, soup_line

from pmem_lsp.engine.markdown import _fast_scan, _Scanner, scan_blocks


def same_as_full(lines: list[str], first_line: int = 0) -> bool:
    """scan_blocks (the fast path, handing over to the full scanner and back where no block
    is open) gives what the full scanner gives; True when the fast path took it all."""
    full = _Scanner(lines, first_line).run()
    doc = "\n".join(f"{i:3}|{ln}" for i, ln in enumerate(lines))
    assert scan_blocks(lines, first_line) == full, f"scan_blocks differs for document:\n{doc}"
    fast = _fast_scan(lines, first_line)
    if fast is None:
        return False
    assert fast == full, f"fast path differs for document:\n{doc}"
    return True


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_fast_path_on_oracle_documents(lines: list[str]) -> None:
    same_as_full(lines)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(soup_line, max_size=12))
def test_fast_path_on_line_soup(lines: list[str]) -> None:
    same_as_full(lines)


# Lines at the edges of the subset: what it takes, and what it must hand to the full scanner.
EDGE_LINES = [
    "", " ", "  ", "\t", " \t", "text", " text", "   text", "    text", "      text", "\ttext",
    "# Title", "## Summary", "#tag", "#", "####### seven", "# x #", "  # indented",
    "- item", "- [ ] task", "- **Key:** value", "-  two spaces", "-\ttab", "-", "- ", "--", "---",
    "- - -", "-->", "--flag", "* star", "*", "**bold** text", "***", "* * *", "+ plus", "+x", "+",
    "_under_", "___", "=", "===", "= =", "1. one", "2) two", "2026 was", "2026. year", "10.",
    "```", "```py", "~~~", "``` a ` b", "`code` span", "````", "  ```", "    ```", "```x```",
    "> quote", "<!-- c -->", "<!--", "-->", "x -->", "<!-->", "<div>", "<a href=\"x\">", "<https://x.y>", "<span>x",
    "1. one", "1) one", "3. three", "1.  two spaces", "1.", "12. twelve", "   1. in", "| a | b |", "[x]: y", "  - nested", "   - three",
    "  more", "  ## heading in item", "  ---", "  ===", "摘要", "\u3000", "\u3000x",
    # block quotes: Obsidian's callouts, blank quote lines, and what the fast path hands over
    ">", "> ", ">  ", ">\t", "> [!tip] Callout", "> [!note]- Folded", ">text", ">  two", ">     code", ">\ttab",
    "> - item", "> 2. two", "> # head", "> ```", "> ---", "> ===", ">> nested", "> <!-- c -->", "> | a |",
    "  > in item", "   > three", "> 摘要：中文",
]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(EDGE_LINES), st.sampled_from(TRICKY_LINES), st.sampled_from(WORDS)),
                max_size=14), st.integers(0, 3))
def test_fast_path_on_edge_lines(lines: list[str], first_line: int) -> None:
    # The oracle only where the full scanner claims to follow it: link reference definitions
    # are its documented simplification (a `[x]: y` line over `===` is a heading there).
    if same_as_full(lines, first_line) and "[x]: y" not in lines:
        assert_agrees(lines)  # and what it takes agrees with markdown-it-py too


def memory_note(rng: random.Random) -> list[str]:
    words = "memory agent project decision result pipeline budget owner status risk".split()
    say = lambda n: " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."  # noqa: E731
    lines = [f"# {say(3)}", "", f"Status: {rng.choice(words)}", "", "## Summary"]
    lines += [f"- {say(8)}" for _ in range(rng.randint(1, 6))]
    for _ in range(rng.randint(2, 12)):
        kind = rng.random()
        if kind < 0.3:
            lines += ["", say(12), say(9)]
        elif kind < 0.5:
            lines += [""] + [f"{rng.choice('-*+')} {say(6)}" for _ in range(rng.randint(1, 4))]
            if rng.random() < 0.3:
                lines += [say(4)]  # lazy continuation
            if rng.random() < 0.3:
                lines += ["  " + say(4)]
        elif kind < 0.6:
            lines += ["", "```" + rng.choice(["", "bash"]), say(3), "## Summary", "- x", "```"]
        elif kind < 0.7:
            lines += ["", say(5), rng.choice(["---", "===", "-"])]
        elif kind < 0.75:
            lines += ["", rng.choice(["---", "***", "- - -"])]
        elif kind < 0.78:
            lines += ["", f"> [!{rng.choice(['tip', 'note', 'warning'])}] {say(2)}"]
            lines += [rng.choice([">", f"> {say(6)}", say(3)]) for _ in range(rng.randint(0, 3))]
        elif kind < 0.8:
            lines += [""] + [f"{k + rng.randint(0, 1)}{rng.choice('.)')} {say(5)}" for k in range(1, rng.randint(2, 5))]
            lines += rng.choice([[], ["<!-- generated -->"], ["<!--", say(2), "-->"], [say(3)]])
        else:
            lines += ["", f"## {say(2)}"]
    return lines


def test_fast_path_on_memory_notes() -> None:
    rng = random.Random(18)
    taken = sum(same_as_full(memory_note(rng), rng.randint(0, 3)) for _ in range(3000))
    assert taken > 2900  # the subset covers memory-shaped notes


def test_scan_blocks_uses_either_path() -> None:
    simple = ["# T", "", "## Summary", "- a", "- b", "", "text"]
    assert _fast_scan(simple, 0) is not None
    assert scan_blocks(simple) == _Scanner(simple, 0).run()
    callout = ["# T", "", "> [!tip] Callouts", "> text with [a link](x.md)", ">", "> more", "lazy", "", "- a"]
    assert _fast_scan(callout, 0) is not None
    assert scan_blocks(callout) == _Scanner(callout, 0).run()
    nested = ["- a", "  - b"]
    assert _fast_scan(nested, 0) is None
    assert scan_blocks(nested) == _Scanner(nested, 0).run()
