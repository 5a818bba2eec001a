"""PM100–PM107: the Summary section of a memory file (docs/design.md §2.2), and its fixes: insert a
skeleton, move a misplaced summary up, rename a near-miss heading."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from ..findings import Finding, at_doc_line, whole_file_line
from ..fixes import Fix, TextEdit, text_fix, text_of
from ..lazy_re import lazy
from ..line_index import LineIndex, newline_of, split_keepends
from ..markdown import HTML, Heading
from ..memory_file import MemoryFile
from ..native import core_for
from ..root_state import RootState
from ..rule import H, I, Rule, TextCheck, W
from ..zones import Zone

# The record's verdict for this rule, only where the build was written for its Python code
# (docs/native.md; native_mirrors.py, group "summary").
_CORE_VERDICT = core_for("summary") is not None

if TYPE_CHECKING:  # the settings model (pydantic) is not needed to run a check: hooks start fast
    from ..settings import Settings

RULES = (
    Rule("PM100", "summary-missing", H,
             "This active file has no `## Summary`. That is valid (legacy files are read whole), "
             "but a summary of 3 to 6 bullets lets agents answer from it without reading the "
             "whole file."),
    Rule("PM101", "summary-misplaced", W,
             "The summary must come immediately after the title and optional metadata lines. "
             "Agents read it first only from there; elsewhere it is an ordinary section."),
    Rule("PM102", "summary-bullet-count", W,
             "A summary holds three to six factual bullets about current status, key decisions, "
             "results or constraints."),
    Rule("PM103", "summary-non-bullet", W,
             "A summary holds only top-level `-`, `*` or `+` bullets (with indented continuation "
             "lines). Other content makes it invalid, and agents fall back to reading the whole "
             "file."),
    Rule("PM104", "summary-empty-bullet", W,
             "A summary bullet is empty or a placeholder (`TODO`, `TBD`, `...`, `xxx`, `<…>`). "
             "Agents answer from the summary, so every bullet must state a fact."),
    Rule("PM105", "summary-duplicate", W,
             "A file has one summary. A second `## Summary` or `## 摘要` heading is ambiguous."),
    Rule("PM106", "summary-heading-variant", W,
             "This heading looks like a summary but is not recognised: only `## Summary` and "
             "`## 摘要` are (exactly, level 2). Rename it so agents read it first."),
    Rule("PM107", "summary-not-applicable", I,
             "Summaries apply to active on-demand files only. `_core/` and `_index.md` are always "
             "read whole, so a summary there is never used."),
)


_PLACEHOLDERS = {"todo", "tbd", "tba", "...", "…", "xxx", "n/a", "fixme", "?", "-"}
_RE_PLACEHOLDER_PREFIX = re.compile(r"^(?:todo|tbd|fixme)\b\s*[:：-]", re.I)
_RE_ANGLE_PLACEHOLDER = re.compile(r"^<[^<>]*>$")
# Headings that mean "summary". Not "Overview", "概述" or "要点": those are ordinary
# sections, and renaming one to `## Summary` would make its prose a PM103.
_VARIANTS = {"summary", "tl;dr", "tldr", "tl; dr", "tl dr", "摘要", "总结", "概要", "小结", "executive summary"}
_RE_VARIANT_TRIM = re.compile(r"[\s:：.。!！]+$")


def is_placeholder(text: str) -> bool:
    t = text.strip().strip("*_`").strip()
    return (not t or t.lower() in _PLACEHOLDERS or bool(_RE_ANGLE_PLACEHOLDER.match(t))
            or bool(_RE_PLACEHOLDER_PREFIX.match(t)))


def summary_variant(doc: MemoryFile) -> Heading | None:
    """A heading near the top that looks like a summary but is not `## Summary` / `## 摘要`, over
    a section of bullets."""
    for h in doc.headings:
        if not h.top_level or h is doc.title:
            continue
        if h.line < doc.preamble_end:
            continue
        normalised = _RE_VARIANT_TRIM.sub("", h.text.strip().lower())
        if normalised not in _VARIANTS:
            return None
        # Only a section of bullets is a summary under another name: a `## 概要` or `## TL;DR`
        # of prose is an overview, and renaming it would only make it an invalid summary.
        section = doc.section_of(h)
        return h if section.bullets and not section.other_runs else None
    return None


def _not_a_title(doc: MemoryFile) -> str:
    """Why a file without a title has none, where it has a level-1 heading a reader takes for
    one: an underlined `Title` / `===` is not read as the title (docs/decisions.md, "Markdown"),
    and a `# ` heading is the title only as the first thing in the file. "" otherwise (and with
    a title), so that a message never says "no title" of a file whose title it names."""
    if doc.title is not None:
        return ""
    first = next((h for h in doc.headings if h.top_level and h.level == 1), None)
    if first is None:
        return ""
    if first.setext:
        return f" (the underlined heading on line {first.line + 1} is not read as a title: write it `# {first.text}`)"
    return f" (the `# ` heading on line {first.line + 1} is not the title: a title comes first in the file)"


# A closing summary ends a long document: at least this many non-blank lines come before it.
MIN_CLOSING_LINES = 20


def closing_summary(doc: MemoryFile, heading: Heading) -> bool:
    """A `## Summary` that closes a long document rather than opening it: the last heading of
    the file, after at least one other section and MIN_CLOSING_LINES lines of text (a
    conclusion, a common way to end a long text). Not a misplaced summary (PM101); see
    docs/decisions.md."""
    others = [h for h in doc.headings if h.top_level and h is not doc.title and h.line != heading.line]
    if heading.line <= doc.preamble_end or not others or any(h.line > heading.line for h in others):
        return False
    if doc.section_end(heading) != len(doc.lines):
        return False
    return sum(1 for line in doc.lines[:heading.line] if line.strip()) >= MIN_CLOSING_LINES


def content_runs(doc: MemoryFile, runs: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """`runs` (first, last line) without the HTML comments in them: a comment is a note to
    the author, not content (`<!-- keep to five bullets -->`), so it is not PM103."""
    if not runs:
        return []  # (without making the text's lines)
    lines = doc.lines
    out: list[tuple[int, int]] = []
    for a, b in runs:
        i = a
        while i <= b:
            if doc.line_kind(i) == HTML and lines[i].lstrip().startswith("<!--"):
                while i <= b and "-->" not in lines[i]:
                    i += 1
                i += 1
                continue
            if out and out[-1][1] == i - 1:
                out[-1] = (out[-1][0], i)
            else:
                out.append((i, i))
            i += 1
    return out


def check_summary(path: str, zone: Zone, doc: MemoryFile, settings: Settings | None = None) -> list[Finding]:
    if zone is Zone.ACTIVE and doc.summary_clean and _CORE_VERDICT:
        return []  # the native core's verdict: one well-placed summary of 3 to 6 facts (docs/native.md)
    out: list[Finding] = []
    heads = doc.summary_headings
    if zone in (Zone.CORE, Zone.INDEX):
        where = "`_core/`" if zone is Zone.CORE else "`_index.md`"
        for h in heads:
            out.append(at_doc_line(path, doc, h.line, "PM107",
                                f"a summary in {where} is never used: summaries apply to active on-demand files only"))
        return out
    if zone is not Zone.ACTIVE:
        return out
    if not heads:
        variant = summary_variant(doc)
        if variant is not None:
            out.append(at_doc_line(path, doc, variant.line, "PM106",
                                f"'{variant.text}' is not a recognised summary heading: "
                                f"rename it to `{_summary_heading_for(doc, variant.text)}`"))
        else:
            # A file without a `# ` title first (a prompt in a fence, a `## ` heading) is told
            # to add one: "after the title" would name a line that is not there.
            out.append(at_doc_line(path, doc, whole_file_line(doc), "PM100",
                                "no `## Summary`: add 3 to 6 bullets after the title "
                                "so agents can read them first" if doc.title is not None else
                                f"no `# ` title{_not_a_title(doc)} and no `## Summary`: add a title, "
                                "then 3 to 6 bullets under `## Summary` so agents can read them first"))
        return out
    first = heads[0]
    for h in heads[1:]:
        out.append(at_doc_line(path, doc, h.line, "PM105",
                            f"second summary heading (the first is on line {first.line + 1}); a file has one summary"))
    if first.line != doc.preamble_end and closing_summary(doc, first):
        # A closing summary is the author's conclusion: agents do not read it first, which is
        # what PM100 says of a file without one; its fix moves it up.
        out.append(at_doc_line(path, doc, first.line, "PM100",
                            "this `## Summary` closes the file, so agents do not read it first: to let them "
                            "answer from it, move 3 to 6 bullets of it up after the title",
                            data={"closing": True}))
        return out
    if first.line != doc.preamble_end:
        # One finding: a summary in the wrong place is not read first, whatever it holds (and
        # a mid-file `## 摘要` is often an ordinary section, an abstract, not a summary at all).
        out.append(at_doc_line(path, doc, first.line, "PM101",
                            "the summary must come immediately after the title and metadata; "
                            f"agents read it first only there{_not_a_title(doc)}"))
        return out
    section = doc.summary
    assert section is not None
    count = len(section.bullets)
    if not 3 <= count <= 6:
        out.append(at_doc_line(path, doc, first.line, "PM102",
                            f"the summary has {count} bullet{'s' if count != 1 else ''}; it needs 3 to 6"))
    # The text's lines are made only for what is in the section besides its bullets, or for a
    # placeholder bullet: a summary of the wrong length needs only its heading's line.
    for start, end in content_runs(doc, section.other_runs):
        lines = doc.lines
        last = lines[end].rstrip()
        out.append(Finding(path, start, len(lines[start]) - len(lines[start].lstrip()), end, len(last),
                           "PM103", "only bullets belong in the summary; move this below it"))
    for bullet in section.bullets:
        if is_placeholder(bullet.text):
            label = "empty" if not bullet.text else f"a placeholder ('{bullet.text}')"
            line = doc.lines[bullet.line]
            # An empty bullet has no text to point at: point at its marker instead.
            start = bullet.start if bullet.text else len(line) - len(line.lstrip())
            out.append(Finding(path, bullet.line, start, bullet.line,
                               max(start, len(line.rstrip())), "PM104",
                               f"summary bullet is {label}: state a fact"))
    return out


TEXT_CHECKS = (TextCheck(tuple(r.code for r in RULES), frozenset({Zone.ACTIVE, Zone.CORE, Zone.INDEX}), check_summary),)


# -- fixes ----------------------------------------------------------------------
_RE_CJK = lazy(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # fixes only
SKELETON_BULLETS = ("TODO: current status", "TODO: the key fact or decision", "TODO: next step")
SKELETON_BULLETS_ZH = ("TODO: 当前状态", "TODO: 关键事实或决定", "TODO: 下一步")
# The summary's section runs to the next heading: when what follows the summary is not a
# heading (prose right after the title), this heading closes the summary so the prose does
# not become part of it (PM103).
CLOSING_HEADING, CLOSING_HEADING_ZH = "## Details", "## 详情"


def _active_doc(state: RootState, rel: str) -> tuple[str, MemoryFile] | None:
    entry = state.files.get(rel)
    text = text_of(state, rel)
    if entry is None or entry.zone is not Zone.ACTIVE or text is None or entry.doc is None:
        return None
    return text, entry.doc


def _blank(line: str) -> bool:
    return not line.strip()


# Kana: a text with hiragana or katakana is Japanese, whose kanji `_RE_CJK` also matches.
_RE_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_LANGUAGE_SAMPLE = 40  # lines of a note read to tell its language


def _summary_heading_for(doc: MemoryFile, heading_text: str) -> str:
    """The summary heading to suggest: the format knows `## Summary` and, for Chinese,
    `## 摘要` (issue 44: a Japanese note's `## 概要` or `## TL;DR` was told to become the
    Chinese `## 摘要`). Chinese only where the heading or the note's first lines are written
    in CJK ideographs without kana; every other language gets `## Summary`."""
    sample = "\n".join([heading_text, doc.title.text if doc.title else "", *doc.lines[:_LANGUAGE_SAMPLE]])
    if _RE_KANA.search(sample):
        return "## Summary"
    return "## 摘要" if _chinese(heading_text) or _chinese(sample) else "## Summary"


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


def insert_skeleton(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    found = _active_doc(state, finding.path)
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
    return text_fix("Insert a Summary skeleton", finding.code, finding.path, text, new)


def summary_missing_fixes(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """PM100: a skeleton for a file without a summary; for a closing summary, moving it up."""
    if finding.data and finding.data.get("closing"):
        moves = move_summary_up(state, finding, today)
        return [Fix("Move the closing summary up", f.code, f.edits, False) for f in moves]
    return insert_skeleton(state, finding, today)


def move_summary_up(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    found = _active_doc(state, finding.path)
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
    index = LineIndex(text)
    remove_from, remove_to = index.start(cut_start), index.start(cut_end)
    if cut_end >= n and not lines[-1].endswith(("\n", "\r")):
        # The last line has no line ending: take the one before the cut instead.
        remove_from -= len(lines[cut_start - 1]) - len(lines[cut_start - 1].rstrip("\r\n"))
    insert = TextEdit(finding.path, at, 0, at, 0, block)
    remove = TextEdit(finding.path, *index.position(remove_from), *index.position(remove_to), "")
    return [Fix("Move the summary up", finding.code, (insert, remove), True)]


def rename_heading(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    found = _active_doc(state, finding.path)
    if found is None:
        return []
    _text, doc = found
    heading = summary_variant(doc)
    if heading is None or heading.line != finding.line or doc.summary_headings:
        return []
    new = _summary_heading_for(doc, heading.text)
    last = doc.lines[heading.end_line]
    edit = TextEdit(finding.path, heading.line, 0, heading.end_line, len(last), new)
    return [Fix(f"Rename to `{new}`", finding.code, (edit,), True)]


FIXES = {"PM100": summary_missing_fixes, "PM101": move_summary_up, "PM106": rename_heading}
