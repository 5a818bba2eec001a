"""PM100–PM107: the Summary section of a memory file (DESIGN §2.2)."""

from __future__ import annotations

import re

from ..findings import Finding, at_line, file_finding
from ..memory_file import MemoryFile
from ..zones import Zone

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


def summary_variant(doc: MemoryFile):
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


def check_summary(path: str, zone: Zone, doc: MemoryFile) -> list[Finding]:
    lines = doc.lines
    out: list[Finding] = []
    heads = doc.summary_headings
    if zone in (Zone.CORE, Zone.INDEX):
        where = "`_core/`" if zone is Zone.CORE else "`_index.md`"
        for h in heads:
            out.append(at_line(path, lines, h.line, "PM107",
                               f"a summary in {where} is never used: summaries apply to active on-demand files only"))
        return out
    if zone is not Zone.ACTIVE:
        return out
    if not heads:
        variant = summary_variant(doc)
        if variant is not None:
            out.append(at_line(path, lines, variant.line, "PM106",
                               f"'{variant.text}' is not a recognised summary heading: rename it to `## Summary` (or `## 摘要`)"))
        else:
            out.append(file_finding(path, doc, "PM100",
                                    "no `## Summary`: add 3 to 6 bullets after the title so agents can read them first"))
        return out
    first = heads[0]
    for h in heads[1:]:
        out.append(at_line(path, lines, h.line, "PM105",
                           f"second summary heading (the first is on line {first.line + 1}); a file has one summary"))
    if first.line != doc.preamble_end:
        # One finding: a summary in the wrong place is not read first, whatever it holds (and
        # a mid-file `## 摘要` is often an ordinary section, an abstract, not a summary at all).
        out.append(at_line(path, lines, first.line, "PM101",
                           "the summary must come immediately after the title and metadata; agents read it first only there"))
        return out
    section = doc.summary
    assert section is not None
    count = len(section.bullets)
    if not 3 <= count <= 6:
        out.append(at_line(path, lines, first.line, "PM102",
                           f"the summary has {count} bullet{'s' if count != 1 else ''}; it needs 3 to 6"))
    for start, end in section.other_runs:
        last = lines[end].rstrip()
        out.append(Finding(path, start, len(lines[start]) - len(lines[start].lstrip()), end, len(last),
                           "PM103", "only bullets belong in the summary; move this below it"))
    for bullet in section.bullets:
        if is_placeholder(bullet.text):
            label = "empty" if not bullet.text else f"a placeholder ('{bullet.text}')"
            line = lines[bullet.line]
            # An empty bullet has no text to point at: point at its marker instead.
            start = bullet.start if bullet.text else len(line) - len(line.lstrip())
            out.append(Finding(path, bullet.line, start, bullet.line,
                               max(start, len(line.rstrip())), "PM104",
                               f"summary bullet is {label}: state a fact"))
    return out
