"""A finding's line is read from the text itself where the text's lines are not made yet
(`MemoryFile.line_text`, `findings.at_doc_line`, issue 44): held equal to the lines `split_lines`
makes, and the summary rule's findings to those of a document whose lines are made before it is
checked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.findings import at_doc_line, at_line
from pmem_lsp.engine.line_index import split_lines
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.native import core_for
from pmem_lsp.engine.rules.summary import check_summary
from pmem_lsp.engine.zones import Zone

PIECES = st.sampled_from([
    "# Title", "Title", "===", "## Summary", "## 摘要", "## TL;DR", "## Context", "- fact", "- TODO", "-",
    "* other", "1. one", "prose", "  indented  ", "<!-- c -->", "---", "Status: active", "```", "\t", " ",
    "\n", "\n", "\n", "\r\n", "\r", "\n\n",
])
TEXT = st.lists(PIECES, max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(-2, 40))
def test_a_finding_on_a_line_is_findings_at_line(text, line):
    doc = MemoryFile(text)
    assert at_doc_line("x.md", doc, line, "PM100", "m") == at_line("x.md", split_lines(text), line, "PM100", "m")


@settings(max_examples=400, deadline=None)
@given(TEXT, st.sampled_from([Zone.ACTIVE, Zone.CORE, Zone.INDEX]))
def test_findings_do_not_depend_on_whether_the_lines_were_made(text, zone):
    made = MemoryFile(text)
    assert made.lines is not None  # made before the check: every line is read from them
    assert check_summary("x.md", zone, MemoryFile(text)) == check_summary("x.md", zone, made)


@pytest.mark.skipif(core_for("record", "blocks") is None, reason="without the core's record the lines are made first")
def test_a_finding_on_the_title_leaves_the_lines_unmade():
    doc = MemoryFile("# Rules\n\nBe brief.\n\n## Style\n\nShort lines.\n")
    [finding] = check_summary("x.md", Zone.ACTIVE, doc)
    assert (finding.code, finding.line, finding.col, finding.end_col) == ("PM100", 0, 0, 7)
    assert "lines" not in vars(doc)
