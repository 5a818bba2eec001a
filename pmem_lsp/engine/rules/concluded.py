"""PM502: an active file that says its work is finished (docs/design.md §4).

Two places say so: a status in the metadata (or front matter) — `Status: done`, `状态：已完成`
— and a Summary bullet — `- Status: shipped`, `- Completed on 2026-05-01.`, `- 项目已完成。`.
Only the first word of a status value counts (`done (May)` is done, `not done` is not), and
a bullet counts only when it *starts* by saying the work is finished and names nothing left
to do: `Shipped v1; v2 planned` and `已完成第一阶段` are progress, not an ending.
The finding points at that line; the quick fix archives with the line as the reason.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from ..findings import Finding, at_line
from ..memory_file import MemoryFile, parse_metadata_line
from ..native import core_for
from ..rule import I, Rule, TextCheck
from ..secrets import mask_secrets
from ..zones import Zone

# The record's verdict for this rule, only where the build was written for its Python code
# (docs/native.md; native_mirrors.py, group "concluded").
_CORE_VERDICT = core_for("concluded") is not None

if TYPE_CHECKING:  # the settings model (pydantic) is not needed to run a check: hooks start fast
    from ..settings import Settings

RULES = (
    Rule("PM502", "concluded", I,
             "This file says its work is finished: a `Status:` of done, completed, closed, shipped, "
             "finished, archived or concluded (完成, 已完成, 结束), or a Summary bullet that says "
             "so. Concluded material belongs in `_archive/`; the quick fix archives it with that "
             "line as the reason, after confirmation."),
)

STATUS_KEYS = {"status", "state", "状态", "狀態"}
CONCLUDED = {"done", "completed", "complete", "closed", "shipped", "finished", "archived", "concluded",
             "完成", "已完成", "结束", "已结束", "完结", "已完结", "結束", "已結束", "關閉", "关闭", "已关闭"}
_WORD = re.compile(r"(?:[a-z]+|[\u4e00-\u9fff]+)(?!-\w)")
_LEAD = re.compile(r"^[\W_]*", re.UNICODE)  # emphasis, emoji, check marks before the word
_EN_BULLET = re.compile(
    r"^(?:(?:the|this|our|my)\s+)?(?:(?:project|work|task|job|effort|series|course|contract|engagement)\s+)?"
    r"(?:is\s+|was\s+|has\s+been\s+|got\s+)?(?:now\s+)?(?:all\s+)?"
    r"(?P<word>done|completed|complete|finished|shipped|closed|concluded|wrapped\s+up|delivered)"
    r"(?=\s*$|\s*[.!;:,(—–]|\s+-|\s+(?:on|in|at|since|by)\b|\s+\d)", re.I)
_ZH_BULLET = re.compile(
    r"^(?:本?(?:项目|项|工作|任务|合同)\s*)?(?:已经|已)?(?:全部)?(?P<word>完成|结束|完结|结项|关闭)"
    r"(?=\s*$|[。，；！,.;!（(：:]|\s)")
# A bullet that names work still to come is progress, not an ending.
_STILL_OPEN = re.compile(
    r"\b(?:next|pending|todo|planned|remaining|still|except|until|not\s+yet|follow[- ]?up"
    r"|phase|part|partly|partially)\b"
    r"|待|未|下一|还有|仍|阶段|部分", re.I)


# Status values repeat from file to file (`paused`, `active`, `done`): a pure function of one
# string, so a bounded memo of it is safe.
@functools.lru_cache(maxsize=1024)
def concluded_value(value: str) -> bool:
    """A status value whose first word says the work is finished."""
    m = _WORD.match(_LEAD.sub("", value.lower()))
    return m is not None and m.group(0) in CONCLUDED


_DATE_ONLY = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?\.?$")


def _concluded_bullet(text: str) -> bool:
    if ":" in text or "：" in text:
        parsed = parse_metadata_line(text)
        if parsed is not None:
            key = parsed[0].strip("*_ ").lower()
            if key in STATUS_KEYS:
                return concluded_value(parsed[1])
            # A labelled line: `Completed: 2026-05-01` dates the end of the work, but
            # `Finished in 2026: <book titles>` or `Done: login page` lists finished things.
            return key in CONCLUDED and _DATE_ONLY.match(parsed[1]) is not None
    body = _LEAD.sub("", text)
    if not (_EN_BULLET.match(body) or _ZH_BULLET.match(body)):
        return False
    return not _STILL_OPEN.search(body)


def concluded_line(doc: MemoryFile) -> int | None:
    """The line that says the work is finished: a status in the metadata or front matter, else
    a Summary bullet. None when nothing says so."""
    for i in range(1, max(0, doc.front_matter_end - 1)):
        parsed = parse_metadata_line(doc.lines[i])
        if parsed is not None and parsed[0].lower() in STATUS_KEYS and concluded_value(parsed[1]):
            return i
    for meta in doc.metadata:
        if meta.key.strip("*_ ").lower() in STATUS_KEYS and concluded_value(meta.value):
            return meta.line
    if doc.bullets_unconcluded and _CORE_VERDICT:
        return None  # the native core: no Summary bullet can say so (docs/native.md)
    section = doc.summary
    if section is not None:
        for bullet in section.bullets:
            if _concluded_bullet(bullet.text):
                return bullet.line
    return None


def concluded_reason(line: str) -> str:
    """The archive reason quoting the line (list marker dropped, any secret masked)."""
    text = re.sub(r"^\s*(?:[-*+]\s+)?", "", line).strip()
    return f"concluded: {mask_secrets(text)}"


def check_concluded(path: str, zone: Zone, doc: MemoryFile, settings: Settings) -> list[Finding]:
    line = concluded_line(doc)
    if line is None:
        return []
    quoted = re.sub(r"^\s*(?:[-*+]\s+)?", "", doc.lines[line]).strip()  # the Finding masks it
    return [at_line(path, doc.lines, line, "PM502",
                    f"says the work is finished (“{quoted}”): archive it so agents stop loading it on demand",
                    data={"reason": concluded_reason(doc.lines[line])})]


TEXT_CHECKS = (TextCheck(("PM502",), frozenset({Zone.ACTIVE}), check_concluded),)
