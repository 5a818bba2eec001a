"""PM208: volatile facts in a route's description (format v0.9: the index is route-only).

`_index.md` is read on every activation and tells an agent where to look, not what is true
now: a deadline, a pull request's state, "blocked" or "80 % done" there goes stale without
anyone editing the file it routes to, and the agent believes it. The facts belong in the
project's status source. Only the description is read, and only forms that are volatile by
nature (docs/decisions.md, "v0.9–v0.10 rules"): a year, a version, a topic word ("deadline
tracking") or a quantity ("80% hydration") is not.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from ..findings import Finding, at_line
from ..index_routes import index_model
from ..lazy_re import lazy
from ..native import core_for
from ..rule import FileCheck, I, Rule
from ..zones import Zone

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..root_state import FileEntry

RULES = (
    Rule("PM208", "route-volatile", I,
         "This route's description holds a fact that changes on its own: a date, a deadline, a pull "
         "request's or issue's state, a blocker or a percentage. The index is route-only (format "
         "v0.9): agents read it on every activation and believe it, but nobody updates a route when "
         "the work moves on. Keep the description to what the file is about and put the fact in the "
         "project's status source."),
)

# (kind, pattern): each found in a description is named in the message.
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
_DAY = r"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*|today|tomorrow|tonight|next|this|end of"
VOLATILE = (
    ("a date", lazy(r"(?<![\w.])\d{4}-\d{2}-\d{2}(?![\w.])|(?<!\w)\d{1,2}/\d{1,2}/\d{2,4}(?!\w)")),
    # A deadline word naming when, not a topic (`deadline tracking for clients` is what a file is about).
    ("a deadline", lazy(
        rf"(?i)\bdue\s+(?:by|on|date|in|{_DAY}|{_MONTH})\b|\bdue\s+(?=\d)"
        rf"|\bdeadlines?\s*(?::|is\b|was\b|on\b|by\b|moved\b)(?=\s*\S)"
        rf"|\beta\s*:(?=\s*\S)|\beta\s+(?:is\s+)?(?:\d|{_DAY}|{_MONTH})|截止|到期")),
    ("a pull request or issue state", lazy(
        r"(?i)\b(?:pr|mr|pull request|merge request|issue|ticket)\s*#?\d+\s*(?:is\s+)?\(?"
        r"(?:open|opened|merged|closed|in review|under review|approved|pending|draft|wip)\b"
        r"|\b(?:merged|closed|opened)\s+(?:in|as)\s+#\d+|\bawaiting review\b|\bin review\b")),
    ("a blocker", lazy(r"(?i)\bblocked\s+(?:on|by|until|since)\b|\bis\s+blocked\b|\bblockers?\s*:"
                             r"|\bcurrently\s+blocked\b|阻塞|卡住")),
    # A percentage of progress, not of a quantity (`80% hydration`, `100% rye` are recipes).
    ("a percentage", lazy(
        r"(?i)(?<![\w.])\d{1,3}(?:\.\d+)?\s?%\s*(?:done|complete|completed|finished|through|there|of the way|"
        r"migrated|ready|coverage)\b|\b(?:progress|completion|coverage|done)\s*:?\s*\d{1,3}(?:\.\d+)?\s?%"
        r"|\d{1,3}\s?%\s*完成|完成\s*\d{1,3}\s?%|进度\s*\d{1,3}\s?%")),
)


def volatile_kinds(description: str) -> list[tuple[str, str]]:
    """(kind, text found) for each kind of volatile fact in `description`. An ASCII description
    is searched only for the kinds whose every alternative's text it holds (`_may_state`)."""
    out = []
    may = _may_state(description) if description.isascii() else None
    for i, (kind, pattern) in enumerate(VOLATILE):
        if may is not None and not may[i]:
            continue
        m = pattern.search(description)
        if m:
            out.append((kind, m.group(0).strip()))
    return out


_ASCII_DIGIT = lazy(r"[0-9]")
_PR_WORDS = ("pr", "mr", "pull request", "merge request", "issue", "ticket")


def _may_state(text: str) -> tuple[bool, bool, bool, bool, bool]:
    """For an ASCII `text`, per kind of `VOLATILE`: does it hold what every alternative of that
    kind's pattern holds? False: the pattern cannot match it. (For ASCII text an ASCII letter
    matches under `(?i)` only its two cases, `\\d` only 0-9, and the CJK alternatives nothing.)
    A description of a daily note (`Thu 10 Jun: …`) holds a digit, so the core's prefilter
    passes it, and the five searches cost more than PM208's whole check of other indexes."""
    low = text.lower()
    digit = _ASCII_DIGIT.search(text) is not None
    return (digit and ("-" in text or "/" in text),  # a date: 2024-05-01, 5/1/24
            "due" in low or "deadline" in low or "eta" in low,
            "review" in low or "#" in text or (digit and any(w in low for w in _PR_WORDS)),
            "blocke" in low,  # blocked, blocker(s)
            "%" in text)


def _core_prefilter() -> ModuleType | None:
    """The native core's `volatile_candidates`, while it was written for exactly these patterns
    (docs/native.md); asked once, when the first index is checked (the sources compile them)."""
    global _NATIVE_CHECKED, _NATIVE
    if not _NATIVE_CHECKED:
        _NATIVE_CHECKED = True
        core = core_for("pm208")  # only where the build was written for this Python code
        joined = "\n".join(p.pattern for _, p in VOLATILE) if core is not None else None
        _NATIVE = core if core is not None and joined == core.PM208_PATTERNS else None
    return _NATIVE


_NATIVE: ModuleType | None = None
_NATIVE_CHECKED = False


def check_route_facts(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    """PM208, kept with the index's text (a 10k-route index takes a while)."""
    return entry.cached("PM208", lambda: _route_facts(entry))


def _route_facts(entry: FileEntry) -> list[Finding]:
    if entry.rel != "_index.md" or entry.doc is None:
        return []
    model = index_model(entry)
    if model is None:
        return []
    out = []
    lines = entry.doc.lines
    routes = model.routes
    core = _core_prefilter()
    if core is not None:  # only the descriptions that may match (the others match no pattern)
        routes = tuple(routes[i] for i in core.volatile_candidates([r.description or "" for r in routes]))
    for route in routes:
        found = volatile_kinds(route.description or "")
        if found:
            what = ", ".join(f"{kind} (`{text}`)" for kind, text in found)
            out.append(at_line(entry.rel, lines, route.line, "PM208",
                               f"the route to `{route.written}` states {what}: the index is route-only; "
                               "keep it in the project's status source",
                               data={"kinds": [k for k, _ in found]}))
    return out


FILE_CHECKS = (FileCheck(("PM208",), frozenset({Zone.INDEX}), check_route_facts, depends=lambda _a, _e: ()),)
