"""PM100–PM107: the Summary section (docs/design.md §2.2), through the whole engine on a root on disk."""

from __future__ import annotations

import pytest

from engine_helpers import check_text, findings, only, ranges, rows
from roots import active_file, make_root, summary_block

F = "notes/x.md"
BULLETS3 = "- one fact\n- two fact\n- three fact\n"


def summary_rows(tmp_path, text, rel=F):
    return check_text(tmp_path, rel, text, "PM1")


# -- the baseline and valid summaries -------------------------------------------------------


def test_baseline_has_no_summary_findings(tmp_path):
    assert only(findings(make_root(tmp_path)), "PM1") == []


@pytest.mark.parametrize("preamble", [
    "",
    "Status: active\n",
    "Status: active\nUpdated: 2026-11-20\n",
    "- Status: active\n- Owner: Mara\n",
    "**Status:** active\n**Owner**: Mara\n",
    "状态：进行中\n更新：2026-11-20\n",
    "> Imported from the old wiki.\n",
    "<!-- pmem: reviewed -->\n",
    "<!--\nmulti-line\ncomment\n-->\n",
    "Status: active\n\n> quoted\n\n<!-- c -->\n\n- Owner: Mara\n",
], ids=["none", "key-value", "two keys", "list", "bold", "full-width", "blockquote", "comment",
        "multi-line comment", "mixed"])
def test_metadata_before_summary_is_not_pm101(tmp_path, preamble):
    text = f"# Title\n\n{preamble}\n## Summary\n{BULLETS3}\n## Context\nDetails.\n"
    assert summary_rows(tmp_path, text) == []


@pytest.mark.parametrize("text", [
    "# T\n\n## 摘要\n" + BULLETS3,
    "# T\n\n## Summary ##\n" + BULLETS3,
    "---\ntitle: T\n---\n# T\n\n## Summary\n" + BULLETS3,
    "---\ntitle: T\n---\n\n## Summary\n" + BULLETS3,
    "Status: active\n\n## Summary\n" + BULLETS3,  # no title
    "# T\n## Summary\n" + BULLETS3,  # no blank line
    "# T\n\n## Summary\n* one\n+ two\n- three\n",
    "# T\n\n## Summary\n- one\n  continued on the next line\n- two\n  - a nested detail\n- three\n",
    "# T\n\n## Summary\n- one\n\n- two\n\n- three\n",  # loose list
    "# T\n\n## Summary\n" + "".join(f"- fact {i}\n" for i in range(6)),
    "# T\n\n## Summary\n- Todo list app shipped\n- The <b> tag renders\n- xxx-large shirts ordered\n",
    "# T\n\n## Summary\n" + BULLETS3 + "### Details\nProse under a sub-heading ends the section.\n",
    "# T\r\n\r\n## Summary\r\n- one\r\n- two\r\n- three\r\n",
    "\ufeff# T\n\n## Summary\n" + BULLETS3,
], ids=["zh", "closing hashes", "front matter", "front matter no title", "no title", "tight",
        "markers", "continuations", "loose", "six", "not placeholders", "sub-heading", "crlf", "bom"])
def test_valid_summaries(tmp_path, text):
    assert summary_rows(tmp_path, text) == []


# -- PM100 summary-missing ------------------------------------------------------------------


def test_pm100_on_title_as_hint(tmp_path):
    root = make_root(tmp_path, {F: "\n# Legacy note\n\nJust prose, no summary.\n"})
    found = [f for f in findings(root) if f.path == F]
    assert ranges(found) == [(F, "PM100", 1, 0, 1, 13)]
    assert found[0].severity.value == "hint"


def test_pm100_without_title_on_line_1(tmp_path):
    root = make_root(tmp_path, {F: "Just prose.\n\n## Context\n- a\n"})
    assert ranges(only(findings(root), "PM1")) == [(F, "PM100", 0, 0, 0, 11)]


@pytest.mark.parametrize("text, titled", [
    ("# Legacy note\n\nJust prose.\n", True),
    ("\n```markdown\nYou are a bot.\n```\n", False),  # a prompt in a fence
    ("## Only a subheading\n", False),
    ("Just prose.\n", False),
])
def test_pm100_names_the_title_only_where_there_is_one(tmp_path, text, titled):
    """"After the title" for a file without one names a line that is not there (a trial on a
    prompts collection): such a file is told to add a title too."""
    [found] = only(findings(make_root(tmp_path, {F: text})), "PM100")
    assert found.message == ("no `## Summary`: add 3 to 6 bullets after the title so agents can read them first"
                             if titled else "no `# ` title and no `## Summary`: add a title, then 3 to 6 "
                             "bullets under `## Summary` so agents can read them first")


def test_pm100_when_the_only_summary_is_in_a_code_fence(tmp_path):
    text = "# T\n\n```markdown\n## Summary\n- a\n- b\n- c\n```\n"
    assert summary_rows(tmp_path, text) == [(F, 0, "PM100")]


def test_pm100_not_for_empty_file_rules_elsewhere(tmp_path):
    # An empty active file still has no summary: one hint on line 1.
    assert summary_rows(tmp_path, "") == [(F, 0, "PM100")]


@pytest.mark.parametrize("rel", ["_core/extra.md", "_archive/notes/old.md", "_archive/_trash/notes/old.md"])
def test_pm100_only_for_active_files(tmp_path, rel):
    root = make_root(tmp_path, {rel: "# No summary here\n\nProse.\n"})
    assert [f for f in findings(root) if f.path == rel and f.code.startswith("PM1")] == []


# -- PM101 summary-misplaced ----------------------------------------------------------------


@pytest.mark.parametrize("before", [
    "An introductory paragraph of prose.\n",
    "## Context\n- a\n",
    "```\ncode\n```\n",
    "https://example.com/source\n",
    "| a | b |\n|---|---|\n",
    "1. Status: active\n",  # an ordered item is not metadata
], ids=["prose", "section", "fence", "url", "table", "ordered"])
def test_pm101_when_something_precedes_the_summary(tmp_path, before):
    text = f"# Title\n\n{before}\n## Summary\n{BULLETS3}"
    line = 3 + before.count("\n")
    root = make_root(tmp_path, {F: text})
    assert ranges(only(findings(root), "PM1")) == [(F, "PM101", line, 0, line, 10)]


def test_pm101_after_metadata_then_prose(tmp_path):
    text = "# T\nStatus: active\nThis sentence is prose.\n\n## Summary\n" + BULLETS3
    assert summary_rows(tmp_path, text) == [(F, 4, "PM101")]


def test_pm101_setext_title_is_not_a_title(tmp_path):
    # docs/design.md §2.1 names the first `# …` (ATX) heading as the title; a setext heading is body.
    text = "Title\n=====\n\n## Summary\n" + BULLETS3
    assert summary_rows(tmp_path, text) == [(F, 3, "PM101")]


def test_pm100_and_pm101_say_why_a_heading_that_looks_like_a_title_is_none(tmp_path):
    """A message never says "no title" of a file that opens with one a reader sees: it says
    why pmem does not read it as the title (an underlined heading; a `# ` heading not first)."""
    setext = "Title\n=====\n\n## Summary\n" + BULLETS3
    [misplaced] = only(findings(make_root(tmp_path / "a", {F: setext})), "PM101")
    assert misplaced.message.endswith("(the underlined heading on line 1 is not read as a title: write it `# Title`)")
    late = "A link first: [x](https://example.com)\n\n# Later\n\nProse.\n"
    [missing] = only(findings(make_root(tmp_path / "b", {F: late})), "PM100")
    assert missing.message.startswith("no `# ` title (the `# ` heading on line 3 is not the title: a title comes "
                                      "first in the file) and no `## Summary`"), missing.message
    plain = "Just prose.\n"
    [bare] = only(findings(make_root(tmp_path / "c", {F: plain})), "PM100")
    assert bare.message.startswith("no `# ` title and no `## Summary`"), bare.message


# -- PM102 summary-bullet-count -------------------------------------------------------------


@pytest.mark.parametrize("n, fires", [(0, True), (1, True), (2, True), (3, False), (4, False),
                                      (5, False), (6, False), (7, True), (9, True)])
def test_pm102_bullet_count(tmp_path, n, fires):
    text = "# T\n\n" + summary_block(n) + "\n## Context\n- not counted\n- nor this\n"
    root = make_root(tmp_path, {F: text})
    found = only(findings(root), "PM1")
    assert ranges(found) == ([(F, "PM102", 2, 0, 2, 10)] if fires else [])
    if fires:
        assert found[0].message == f"the summary has {n} bullet{'s' if n != 1 else ''}; it needs 3 to 6"
        assert found[0].severity.value == "warning"


def test_pm102_nested_bullets_do_not_count(tmp_path):
    text = "# T\n\n## Summary\n- one\n  - nested a\n  - nested b\n- two\n"
    assert summary_rows(tmp_path, text) == [(F, 2, "PM102")]


def test_pm102_ordered_items_are_not_bullets(tmp_path):
    text = "# T\n\n## Summary\n1. one\n2. two\n3. three\n"
    root = make_root(tmp_path, {F: text})
    assert ranges(only(findings(root), "PM1")) == [(F, "PM102", 2, 0, 2, 10), (F, "PM103", 3, 0, 5, 8)]


# -- PM103 summary-non-bullet ---------------------------------------------------------------


def test_pm103_paragraph_range(tmp_path):
    text = "# T\n\n## Summary\n" + BULLETS3 + "\nA closing remark\nthat runs on.\n\n## Next\n"
    root = make_root(tmp_path, {F: text})
    assert ranges(only(findings(root), "PM1")) == [(F, "PM103", 7, 0, 8, 13)]


def test_pm103_each_run_separately(tmp_path):
    text = "# T\n\n## Summary\nIntro line.\n" + BULLETS3 + "\n```\ncode\n```\n| a |\n"
    root = make_root(tmp_path, {F: text})
    assert ranges(only(findings(root), "PM1")) == [
        (F, "PM103", 3, 0, 3, 11), (F, "PM103", 8, 0, 11, 5)]


def test_pm103_indented_paragraph_range_starts_at_text(tmp_path):
    # One space is less than the bullets' content column (2): a paragraph of its own, not a
    # continuation of the last bullet (which three spaces would be).
    text = "# T\n\n## Summary\n" + BULLETS3 + "\n indented prose\n"
    root = make_root(tmp_path, {F: text})
    assert ranges(only(findings(root), "PM1")) == [(F, "PM103", 7, 1, 7, 15)]
    text = "# T\n\n## Summary\n" + BULLETS3 + "\n   continuation of the third bullet\n"
    assert summary_rows(tmp_path / "b", text) == []


def test_pm103_not_for_continuation_lines_or_comments_inside_bullets(tmp_path):
    text = "# T\n\n## Summary\n- one\n  more of one\n\n  a second paragraph of one\n- two\n- three\n"
    assert summary_rows(tmp_path, text) == []


# -- PM104 summary-empty-bullet -------------------------------------------------------------


@pytest.mark.parametrize("bullet, label", [
    ("TODO", "a placeholder ('TODO')"),
    ("todo", "a placeholder ('todo')"),
    ("TBD", "a placeholder ('TBD')"),
    ("...", "a placeholder ('...')"),
    ("…", "a placeholder ('…')"),
    ("xxx", "a placeholder ('xxx')"),
    ("XXX", "a placeholder ('XXX')"),
    ("<fill in the result>", "a placeholder ('<fill in the result>')"),
    ("**TODO**", "a placeholder ('**TODO**')"),
    ("TODO: write the decision", "a placeholder ('TODO: write the decision')"),
])
def test_pm104_placeholders(tmp_path, bullet, label):
    text = f"# T\n\n## Summary\n- one\n- {bullet}\n- three\n"
    root = make_root(tmp_path, {F: text})
    found = only(findings(root), "PM1")
    assert ranges(found) == [(F, "PM104", 4, 2, 4, 2 + len(bullet))]
    assert found[0].message == f"summary bullet is {label}: state a fact"


@pytest.mark.parametrize("line", ["-", "- ", "-   "])
def test_pm104_empty_bullet_points_at_marker(tmp_path, line):
    text = f"# T\n\n## Summary\n- one\n{line}\n- three\n"
    root = make_root(tmp_path, {F: text})
    found = only(findings(root), "PM1")
    assert ranges(found) == [(F, "PM104", 4, 0, 4, 1)]
    assert found[0].message == "summary bullet is empty: state a fact"


def test_pm104_indented_marker(tmp_path):
    text = "# T\n\n## Summary\n - one\n - TBD\n - three\n"
    assert ranges(only(findings(make_root(tmp_path, {F: text})), "PM1")) == [(F, "PM104", 4, 3, 4, 6)]


def test_pm104_every_placeholder_and_the_count_together(tmp_path):
    text = "# T\n\n## Summary\n- TODO\n- TBD\n"
    assert summary_rows(tmp_path, text) == [(F, 2, "PM102"), (F, 3, "PM104"), (F, 4, "PM104")]


# -- PM105 summary-duplicate ----------------------------------------------------------------


def test_pm105_each_later_summary_heading(tmp_path):
    text = ("# T\n\n## Summary\n" + BULLETS3 + "\n## 摘要\n" + BULLETS3 + "\n## Summary\n" + BULLETS3)
    root = make_root(tmp_path, {F: text})
    found = only(findings(root), "PM1")
    assert ranges(found) == [(F, "PM105", 7, 0, 7, 5), (F, "PM105", 12, 0, 12, 10)]
    assert found[0].message == "second summary heading (the first is on line 3); a file has one summary"


def test_pm105_not_for_a_summary_inside_a_code_fence(tmp_path):
    text = ("# T\n\n## Summary\n" + BULLETS3 + "\n## Weekly template\n```markdown\n## Summary\n"
            "- state\n```\n\n~~~\n## 摘要\n~~~\n")
    assert summary_rows(tmp_path, text) == []


def test_pm105_not_for_summary_in_a_quote_or_list(tmp_path):
    text = "# T\n\n## Summary\n" + BULLETS3 + "\n## Notes\n> ## Summary\n\n- ## Summary\n"
    assert summary_rows(tmp_path, text) == []


def test_pm105_misplaced_first_summary_is_pm101_and_second_pm105(tmp_path):
    text = "# T\n\nProse.\n\n## Summary\n" + BULLETS3 + "## Summary\n" + BULLETS3
    assert summary_rows(tmp_path, text) == [(F, 4, "PM101"), (F, 8, "PM105")]


# -- PM106 summary-heading-variant ----------------------------------------------------------


@pytest.mark.parametrize("heading", [
    "### Summary", "# Summary", "## summary", "## SUMMARY", "## Summary:", "## Summary：", "## TL;DR",
    "## TLDR", "## 总结", "## 概要", "## 小结", "## Executive summary", "#### 摘要",
])
def test_pm106_variants(tmp_path, heading):
    text = f"# Title\n\nStatus: active\n\n{heading}\n{BULLETS3}"
    root = make_root(tmp_path, {F: text})
    found = only(findings(root), "PM1")
    assert ranges(found) == [(F, "PM106", 4, 0, 4, len(heading))]
    assert found[0].severity.value == "warning"


@pytest.mark.parametrize("title, heading, suggested", [
    ("# 開発メモ", "## TL;DR", "## Summary"),  # Japanese, the heading in Latin letters
    ("# 開発メモ", "## 概要", "## Summary"),  # Japanese kanji that Chinese shares
    ("# 开发笔记", "## 总结", "## 摘要"),  # Chinese: the format's own Chinese heading
    ("# 开发笔记", "## TL;DR", "## 摘要"),
    ("# Dev notes", "## TL;DR", "## Summary"),
])
def test_pm106_suggests_the_heading_of_the_notes_language_only_where_the_format_has_one(
        tmp_path, title, heading, suggested):
    """Issue 44: Japanese notes were told to use the Chinese `## 摘要`."""
    import datetime as dt

    from engine_helpers import scan
    from pmem_lsp.engine.catalogue import quick_fixes

    body = "- これはテストです。\n- 二つ目。\n- 三つ目。\n" if "メモ" in title else BULLETS3
    text = f"{title}\n\nStatus: active\n\n{heading}\n{body}"
    root = make_root(tmp_path, {F: text})
    found = only(findings(root), "PM106")
    assert len(found) == 1 and found[0].message.endswith(f"rename it to `{suggested}`")
    other = "## 摘要" if suggested == "## Summary" else "## Summary"
    assert other not in found[0].message
    fixes = quick_fixes(scan(root), found[0], dt.date(2026, 12, 1))
    assert [e.new_text for fx in fixes for e in fx.edits] == [suggested]


def test_pm106_not_for_a_variant_far_from_the_top(tmp_path):
    # Only the first section after the preamble is a candidate; later ones are ordinary.
    text = "# T\n\n## Context\nProse.\n\n## TL;DR\n" + BULLETS3
    assert summary_rows(tmp_path, text) == [(F, 0, "PM100")]


def test_pm106_not_when_a_real_summary_exists(tmp_path):
    text = "# T\n\n## Summary\n" + BULLETS3 + "\n## Overview\nProse.\n"
    assert summary_rows(tmp_path, text) == []


def test_pm106_not_for_the_title(tmp_path):
    assert summary_rows(tmp_path, "# Summary\n\nProse.\n") == [(F, 0, "PM100")]


# -- PM107 summary-not-applicable -----------------------------------------------------------


@pytest.mark.parametrize("rel", ["_core/profile.md", "_core/preferences.md", "_core/extra/work.md"])
def test_pm107_in_core(tmp_path, rel):
    root = make_root(tmp_path, {rel: "# Core\n\n## Summary\n" + BULLETS3 + "\n## 摘要\n- x\n"})
    found = [f for f in findings(root) if f.path == rel]
    assert ranges(found) == [(rel, "PM107", 2, 0, 2, 10), (rel, "PM107", 7, 0, 7, 5)]
    assert {f.severity.value for f in found} == {"information"}


def test_pm107_in_index(tmp_path):
    index = "# Index\n\n## Summary\n- routes below\n\n## Notes\n- [B](notes/beta.md) — b\n- [A](projects/alpha.md) — a\n"
    root = make_root(tmp_path, {"_index.md": index})
    assert rows(findings(root), severity=True) == [("_index.md", 2, "PM107", "information")]


@pytest.mark.parametrize("rel", ["_archive/projects/old.md", "_archive/_trash/projects/old.md", "_archive/_index.md"])
def test_pm107_not_in_archive(tmp_path, rel):
    text = active_file("Old", summary="## Summary\n- TODO\n")  # invalid, but archived: not checked
    root = make_root(tmp_path, {rel: text})
    assert [f for f in findings(root) if f.path == rel and f.code.startswith("PM1")] == []


def test_review_overview_section_is_not_a_summary_variant(tmp_path):
    from engine_helpers import findings as run
    from engine_helpers import rows
    from roots import make_root

    root = make_root(tmp_path, {"notes/o.md": "# O\n\n## Overview\n\nSome text.\n"})
    assert [r[2] for r in rows(run(root)) if r[0] == "notes/o.md"] == ["PM100"]


def test_review_backticked_tbd_is_a_placeholder():
    from pmem_lsp.engine.rules.summary import is_placeholder

    assert is_placeholder("`TBD`") and not is_placeholder("`pmem` checks the index")


# -- a misplaced summary is one finding (issue 13) ------------------------------------------


def test_a_mid_file_summary_heading_is_one_pm101_whatever_it_holds(tmp_path):
    # `## 摘要` in the middle of a Chinese note means "abstract": a paragraph, not bullets.
    # Before, it gave PM101 + PM102 + a PM103 per paragraph; one finding says it all.
    text = ("# 论文笔记\n\n作者：张三\n\n正文第一段，讲背景。\n\n## 摘要\n本文研究了记忆文件的格式。\n\n"
            "我们提出了一种新的方法。\n\n第三段结论。\n\n## 方法\n- 细节\n")
    assert summary_rows(tmp_path, text) == [(F, 6, "PM101")]


def test_a_misplaced_summary_with_a_second_one_is_pm101_and_pm105_only(tmp_path):
    text = "# T\n\nProse.\n\n## Summary\n- one\n## Summary\nParagraph.\n"
    assert summary_rows(tmp_path, text) == [(F, 4, "PM101"), (F, 6, "PM105")]


@pytest.mark.parametrize("heading", ["## 概要", "## TL;DR", "### Summary"])
def test_pm106_not_for_a_variant_over_prose(tmp_path, heading):
    # `## 概要` over a paragraph is an overview (issue 13): renaming it would make it a PM103.
    text = f"# Title\n\n{heading}\nこのプロジェクトは在庫管理のためのものです。\n\n## 詳細\n- x\n"
    assert summary_rows(tmp_path, text) == [(F, 0, "PM100")]


# -- a closing summary and comments (issue 26) ----------------------------------------------

LONG_BODY = {
    "en": ("# Rack build", "## Parts", "A line about the parts we used, number {i}.", "## Summary",
           "- It works.\n- It is quiet.\n- It cost less than planned.\n"),
    "de": ("# Serverschrank", "## Teile", "Eine Zeile über die Teile, Nummer {i}.", "## Summary",
           "- Er läuft.\n- Er ist leise.\n- Er war billiger als geplant.\n"),
    "zh": ("# 机柜搭建", "## 零件", "关于零件的一行说明，第 {i} 条。", "## 摘要",
           "- 能用。\n- 很安静。\n- 比预算便宜。\n"),
}


def long_note(lang: str, lines: int = 24, after: str = "") -> str:
    title, section, line, summary, bullets = LONG_BODY[lang]
    body = "\n".join(line.format(i=i) for i in range(lines))
    return f"{title}\n\n{section}\n{body}\n\n{summary}\n{bullets}{after}"


@pytest.mark.parametrize("lang", list(LONG_BODY))
def test_a_closing_summary_at_the_end_of_a_long_document_is_not_misplaced(tmp_path, lang):
    text = long_note(lang)
    root = make_root(tmp_path, {F: text})
    found = only(findings(root), "PM1")
    line = text.split("\n").index(LONG_BODY[lang][3])
    assert rows(found) == [(F, line, "PM100")]
    assert found[0].severity.value == "hint" and "closes the file" in found[0].message
    assert found[0].data == {"closing": True}


def test_the_closing_summary_hint_offers_to_move_it_up(tmp_path):
    from engine_helpers import scan
    from pmem_lsp.engine.rules.summary import FIXES
    text = long_note("en")
    root = make_root(tmp_path, {F: text})
    (f,) = only(findings(root), "PM1")
    import datetime as dt
    (fix,) = FIXES["PM100"](scan(root), f, dt.date(2026, 12, 1))
    assert fix.title == "Move the closing summary up"
    assert any("## Summary" in e.new_text for e in fix.edits)


@pytest.mark.parametrize("text", [
    # Short: a summary after one short section is still misplaced.
    "# T\n\n## Context\n- a\n\n## Summary\n- one\n- two\n- three\n",
    # Not the last section: a summary in the middle of a long document.
    long_note("en", after="\n## More\nText.\n"),
])
def test_a_summary_that_does_not_close_a_long_document_is_still_pm101(tmp_path, text):
    assert [r[2] for r in summary_rows(tmp_path, text)] == ["PM101"]


@pytest.mark.parametrize("comment", [
    "<!-- keep this to five bullets -->\n",
    "<!--\nNotiz: höchstens fünf Punkte\n-->\n",
    "<!-- 最多五条 -->\n",
])
def test_html_comments_inside_a_summary_are_not_content(tmp_path, comment):
    text = "# T\n\n## Summary\n" + comment + BULLETS3 + "\n" + comment + "\n## Next\nText.\n"
    assert summary_rows(tmp_path, text) == []
    # Prose beside a comment still is.
    text = "# T\n\n## Summary\n" + comment + "A sentence.\n" + BULLETS3 + "\n## Next\n"
    assert [r[2] for r in summary_rows(tmp_path / "b", text)] == ["PM103"]
