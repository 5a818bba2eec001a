"""PM404: text in a memory file that tries to instruct the agent reading it (format v0.10: memory
files are data, not instructions; their content never overrides the user or the skill).

Recipes, how-tos and preferences are imperative too ("Always answer in English", "Run make
test first"), and they are what memory is for. So only what addresses the agent's own
instructions is reported: telling it to ignore or replace what it was told ("ignore previous
instructions", "disregard the system prompt"), a new system prompt or chat-role markup,
redefining it ("you are now a …", "you are now ChatAGI, …", "from now on you are …", "you must
now …", "your new instructions are"), and hiding things from the user ("do not tell the user
about this", "never reveal … to the user", "without telling the user", "keep this secret from
the user"; not asking the user hides nothing).
A "you are now" fact about the user's account ("You are now subscribed", "you are now on the
beta plan", "You are now Premium, the top tier") is not a redefinition: only a persona is (a
name with two capitals, `ChatAGI` or `DAN`, ending its clause; or any capitalised name in
apposition to an AI, "Max, an unfiltered AI"; docs/decisions.md, "PM404: personas"). Code
(fences, code spans) and phrases in quotes are discussion, not instruction, and are skipped. The
precision measured on real notes is in docs/decisions.md ("v0.9–v0.10 rules").
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from ..findings import Finding, at_line
from ..lazy_re import lazy
from ..line_index import split_lines
from ..markdown import CODE
from ..memory_file import MemoryFile, mask_code_spans
from ..native import core_for
from ..rule import Rule, TextCheck, W
from ..zones import Zone

if TYPE_CHECKING:  # the settings model (pydantic) is not needed to run a check: hooks start fast
    from ..settings import Settings

RULES = (
    Rule("PM404", "instruction-injection", W,
         "This line speaks to the agent that reads memory, not about the user or the work: it tells it "
         "to ignore or replace its instructions, gives it a new system prompt or role, or asks it to "
         "hide something from the user (not to tell, mention or reveal something to them, to act "
         "without telling them, or to keep something secret from them). Memory files are data, not "
         "instructions (format v0.10): an agent must never follow them over the user or the skill, "
         "and text like this is how a poisoned note takes over an agent. Remove it, or quote it (in "
         "backticks or quotes) if it is "
         "an example."),
)

_PATTERNS = (
    ("tells the agent to ignore its instructions", lazy(
        r"(?i)(?<!\bto )(?<!\bnot )\b(?:ignore|disregard|forget|override|bypass)\s+"
        r"(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
        r"(?:previous|prior|above|earlier|preceding|former|original|existing|system|safety|developer)\s+"
        r"(?:instructions?|prompts?|rules|directions|directives|guidelines|messages?|context)\b")),
    ("gives the agent a new system prompt", lazy(
        r"(?i)\b(?:new|updated|real|actual|hidden|secret)\s+system\s+(?:prompt|instructions?|message)\b"
        r"|<\|im_start\|>\s*system"
        r"|^\s*(?:#+\s*)?(?:system\s+prompt|system\s+override)\s*:")),
    ("redefines the agent", lazy(
        r"(?i)\b(?:you\s+are\s+now\s+(?:(?:a|an|no\s+longer|free|unrestricted|dan|jailbroken)\b"
        r"|(?-i:[A-Z][\w-]*[A-Z][\w-]*)(?=\s*[,.!:;]|\s*$)"
        r"|(?-i:[A-Z][\w-]*),\s+(?:a|an|the|your)\s+(?:[\w-]+\s+){0,3}?"
        r"(?:ai|assistant|model|bot|chatbot|agent|llm|persona|character)\b)"
        r"|from\s+now\s+on\b\s*,?\s*you\s+(?:are|will\s+(?:be|act|pretend|behave|respond\s+as)"
        r"|are\s+going\s+to\s+(?:be|act|pretend))\b"
        r"|you\s+must\s+now\b"
        r"|your\s+new\s+(?:instructions|task|role|goal|objective|rules)\s+(?:is|are)\b"
        r"|(?:ai|assistant|agent|model|llm)s?\s+reading\s+this\s+(?:must|should|will)\b"
        r"|note\s+to\s+(?:the\s+)?(?:ai|assistant|agent|llm)\s*:)")),
    # Hiding from the user is a negated telling verb with something concealed as its object
    # ("don't tell the user about this", "never reveal … to the user", "do not mention this to
    # the user"), acting without telling the user, or keeping something secret from them. Not
    # asking the user ("without asking the user on timeout") and a sentence about what the agent
    # tells ("You do not tell the user what is true") hide nothing (docs/decisions.md, "PM404:
    # hiding is concealing something").
    ("tells the agent not to tell the user something", lazy(
        r"(?i)\b(?:do\s+not|don't|never)\s+(?:"
        r"(?:tell|inform|show|notify)\s+(?:the\s+)?user\s+(?:about|of|that|this|these|those|anything\s+about)\b"
        r"|(?:reveal|disclose|divulge)\s+(?:[\w'-]+\s+){0,4}?to\s+(?:the\s+)?user\b"
        r"|(?:mention|show|say)\s+(?:(?:any|all)\s+of\s+)?(?:this|that|it|these|those|them|anything)(?:\s+[\w-]+){0,2}?"
        r"\s+to\s+(?:the\s+)?user\b)")),
    ("tells the agent to act without telling the user", lazy(
        r"(?i)\bwithout\s+(?:(?:telling|informing)\s+the\s+user\b|letting\s+the\s+user\s+know\b)")),
    ("tells the agent to keep something secret from the user", lazy(
        r"(?i)\bkeep\s+(?:(?:any|all)\s+of\s+)?(?:this|that|it|these|those|them)(?:\s+[\w-]+){0,3}?\s+(?:a\s+)?(?:secret|hidden)\s+"
        r"from\s+(?:the\s+)?user\b")),
    # The Chinese phrases, each under the kind of what it says: ignore the instructions before,
    # you are now (a role), do not tell the user (docs/decisions.md, "PM404: the Chinese kinds").
    ("tells the agent to ignore its instructions", lazy(
        r"忽略(?:之前|以上|前面|先前|所有)(?:的)?(?:所有)?(?:指令|指示|提示|规则)")),
    ("redefines the agent", lazy(r"你现在是(?:一个)?(?!用户)")),
    ("tells the agent not to tell the user something", lazy(r"不要告诉用户")),
)
# Link text is a title (`[Ignore Previous Prompt: Attack Techniques…](…)`), not an instruction.
_LINK_TEXT = re.compile(r"(?<!\\)\[(?:[^\[\]\\]|\\.)*\](?=\()")
# A quote ends at its closing mark, and a scan from an opening mark stops at the next opening
# one, so a line of unclosed `“““…` costs linear time.
_QUOTED = re.compile(r"\"[^\"]*\"|“[^“”]*”|‘[^‘’]*’|「[^「」]*」|(?<!\w)'[^']*'(?!\w)")


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


# A word each pattern cannot match without, one tuple per pattern of `_PATTERNS`: a line holding
# none of a pattern's words (case folded as `(?i)` folds: `ı` matches `i`, `ſ` matches `s`) is
# not searched with it. Most lines hold none, and the patterns' searches were most of a
# check's time (issue 28); tests/engine/test_instructions_gate.py holds the gate to the searches.
_WORDS = (
    ("ignore", "disregard", "forget", "override", "bypass"),
    ("system",),
    ("you", "reading", "note"),
    ("user",),
    ("user",),
    ("user",),
    ("忽略",),
    ("你现在是",),
    ("不要告诉用户",),
)


_ANY_WORD = re.compile("|".join(re.escape(w) for words in _WORDS for w in words))


def _patterns_for(line: str) -> list[tuple[str, re.Pattern[str]]]:
    """The patterns of `_PATTERNS` whose words `line` holds, in their order."""
    folded = line.casefold()
    if "ı" in folded:
        folded = folded.replace("ı", "i")
    if "\u0307" in folded:  # `İ` folds to `i` and a combining dot; the patterns' `(?i)` takes it for `i`
        folded = folded.replace("i\u0307", "i")
    if _ANY_WORD.search(folded) is None:  # most lines: one search for every word
        return []
    return [kind for kind, words in zip(_PATTERNS, _WORDS, strict=True) if any(w in folded for w in words)]


# Disguised letters: a word the patterns would match, written so that a plain match misses it
# while a reader (a person, a model) reads it as written. Compatibility forms that NFKC folds to
# ASCII letters (fullwidth `ｉｇｎｏｒｅ`, mathematical `𝐢𝐠𝐧𝐨𝐫𝐞`, circled, ligatures `ﬁ`, super- and
# subscripts, letterlike symbols, Roman numerals, squared Latin), and characters that render as
# nothing inside a word (Unicode's format characters: zero-width space and joiners, word joiner,
# BOM, soft hyphen, bidirectional marks, tags; and the fillers and invisible marks that are not
# format characters). tests/engine/test_instructions_disguise.py holds the class to Unicode's
# tables. A line holding none (every ASCII line, nearly every CJK or German one) is read as is.
_INVISIBLE = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
              "\u2060-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
              "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
              "\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
_COMPAT = ("\u00aa\u00ba\u0132\u0133\u013f\u0140\u0149\u017f\u01c4-\u01cc\u01f1-\u01f3\u02b0-\u02b8"
           "\u02e0-\u02e4\u1d2c-\u1dbf\u1e9a\u2070-\u209c\u20a8\u2100-\u214f\u2160-\u217f\u2460-\u24ff"
           "\u2c7c\u2c7d\u3250\u32cc-\u32cf\u3371-\u337a\u3380-\u33df\u33ff\ua7f2-\ua7f4\ufb00-\ufb06"
           "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\U000107a5\U0001d400-\U0001d7ff\U0001f110-\U0001f190")
_DISGUISED = lazy(f"[{_INVISIBLE}{_COMPAT}]")
_DROPPED = lazy(f"[{_INVISIBLE}]+")
_FOLDED = lazy(f"[{_COMPAT}]")


def _class_ranges(cls: str) -> list[tuple[int, int]]:
    """The code point ranges of a character class written as above (`a`, `a-z`)."""
    out, i = [], 0
    while i < len(cls):
        if i + 2 < len(cls) and cls[i + 1] == "-":
            out.append((ord(cls[i]), ord(cls[i + 2])))
            i += 3
        else:
            out.append((ord(cls[i]), ord(cls[i])))
            i += 1
    return out


def _utf8_sequences(lo: int, hi: int) -> list[list[tuple[int, int]]]:
    """Byte-range sequences whose matches are exactly the UTF-8 encodings of `lo`…`hi`, both
    encoded in as many bytes (the range is split where a continuation byte wraps)."""
    first, last = chr(lo).encode("utf-8", "surrogatepass"), chr(hi).encode("utf-8", "surrogatepass")
    i = next((k for k in range(len(first)) if first[k] != last[k]), None)
    if i is None:
        return [[(b, b) for b in first]]
    width = 6 * (len(first) - i - 1)  # bits below the first differing byte
    low_full, high_full = lo & ((1 << width) - 1) == 0, ~hi & ((1 << width) - 1) == 0
    if low_full and high_full:
        return [[(b, b) for b in first[:i]] + [(first[i], last[i])] + [(0x80, 0xBF)] * (len(first) - i - 1)]
    out = []
    if not low_full:
        out += _utf8_sequences(lo, lo | ((1 << width) - 1))
        lo = (lo | ((1 << width) - 1)) + 1
    middle_end = hi if high_full else (hi & ~((1 << width) - 1)) - 1
    if lo <= middle_end:
        out += _utf8_sequences(lo, middle_end)
    if not high_full:
        out += _utf8_sequences(hi & ~((1 << width) - 1), hi)
    return out


def _utf8_alternatives(cls: str) -> list[bytes]:
    """Bytes patterns that together match the UTF-8 of exactly the characters of `cls` (all
    non-ASCII), each for one leading byte or a range of them."""
    def byte(b: int) -> bytes:
        return re.escape(bytes([b]))
    pieces = []
    for lo, hi in _class_ranges(cls):
        for cut in (0x7FF, 0xFFFF):  # one length of encoding per piece
            if lo <= cut < hi:
                pieces += _utf8_sequences(lo, cut)
                lo = cut + 1
        pieces += _utf8_sequences(lo, hi)
    return [b"".join(byte(a) if a == b else b"[" + byte(a) + b"-" + byte(b) + b"]" for a, b in seq) for seq in pieces]


def _by_lead(cls: str) -> tuple[tuple[bytes, re.Pattern[bytes]], ...]:
    """`cls` over UTF-8 as one search per leading byte: a search that starts with a literal
    byte skips to it in C, several times faster than a class tried at every character."""
    by: dict[int, list[bytes]] = {}
    for alternative in _utf8_alternatives(cls):
        # Each piece starts with one leading byte (no range here spans two: the test over
        # every code point would say so); `re.escape` leaves bytes over 0x7F as they are.
        by.setdefault(alternative[0], []).append(alternative)
    return tuple((bytes([lead]), re.compile(b"|".join(alts))) for lead, alts in sorted(by.items()))


_SEARCHES: dict[str, tuple[tuple[bytes, re.Pattern[bytes]], ...]] = {}  # built on first use
# The native core's `CharRanges` where installed: it mirrors no Python code (it is given the
# class's ranges), so it serves whatever group is stale; a build made before it has none.
_CHARS = getattr(core_for(), "CharRanges", None)


def _holds(cls: str, text: str) -> bool:
    searches = _SEARCHES.get(cls)
    if searches is None:
        searches = _SEARCHES[cls] = _by_lead(cls)
    data = text.encode("utf-8", "surrogatepass")
    return any(lead in data and rx.search(data) is not None for lead, rx in searches)


_DISGUISED_RANGES: list = []  # the native core's set of `_DISGUISED`'s characters, made on first use


def disguised(text: str) -> bool:
    """Does `text` hold a disguised letter (`_DISGUISED`)? One `isascii` for an ASCII text,
    else one pass of the native core over the characters (a CJK text holds the leading bytes of
    several of the class's pieces: each was a search of the whole text), else one byte search
    per leading byte the text holds."""
    if text.isascii():
        return False
    if _CHARS is not None:
        if not _DISGUISED_RANGES:
            _DISGUISED_RANGES.append(_CHARS(_class_ranges(_INVISIBLE + _COMPAT)))
        found = _DISGUISED_RANGES[0].found_in(text)
        if found is not None:  # None: a lone surrogate
            return bool(found)
    return _holds(_INVISIBLE + _COMPAT, text)


def _nfkc(match: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", match.group())


def unveiled_text(line: str) -> str | None:
    """`line` as a reader reads it, when it holds a disguised letter: each compatibility letter
    NFKC-folded on its own, the invisible characters dropped. None for a line with nothing
    disguised (the common case: one `isascii`, or one search)."""
    if line.isascii() or _DISGUISED.search(line) is None:
        return None
    return _unveil(line)


def _unveil(text: str) -> str:
    if len(text) > 256:  # a whole text: each invisible character looked for in C (a class
        # tried at every character of a Persian text, where zero-width non-joiners are
        # ordinary spelling, took five times as long), then a search of its UTF-8
        global _INVISIBLE_CHARS
        if _INVISIBLE_CHARS is None:
            _INVISIBLE_CHARS = tuple(chr(c) for lo, hi in _class_ranges(_INVISIBLE) for c in range(lo, hi + 1))
        for ch in _INVISIBLE_CHARS:
            if ch in text:
                text = text.replace(ch, "")
        return _FOLDED.sub(_nfkc, text) if _holds(_COMPAT, text) else text
    text = _DROPPED.sub("", text)
    return _FOLDED.sub(_nfkc, text) if _FOLDED.search(text) is not None else text


_INVISIBLE_CHARS: tuple[str, ...] | None = None  # `_INVISIBLE`'s characters, on first use


def unveiled(line: str) -> tuple[str, list[int]] | None:
    """`unveiled_text(line)`, with for each of its characters the offset in `line` it came from
    (and one more entry, `len(line)`): where a match in it is in the line as written."""
    if unveiled_text(line) is None:
        return None
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(line):
        if ch.isascii():
            out.append(ch)
            where.append(i)
        elif _DROPPED.match(ch) is None:
            folded = unicodedata.normalize("NFKC", ch) if _FOLDED.match(ch) else ch
            out.append(folded)
            where.extend([i] * len(folded))
    where.append(len(line))
    return "".join(out), where


def instruction_kinds(line: str, veiled: bool = True) -> list[tuple[str, int, int]]:
    """(what it does, start, end) for each instruction aimed at the agent in `line`, outside
    code spans and quotes. Code spans, quotes and link text are found in the line as written;
    the rest is read unveiled (`unveiled_text`), and the offsets are the line's own. `veiled`
    False: the caller knows the line holds no disguised letter (`disguised` of its text)."""
    shown: str | None = None
    if not veiled or line.isascii() or _DISGUISED.search(line) is None:  # nearly every line
        patterns = _patterns_for(line)
        if not patterns:
            return []
        plain = _QUOTED.sub(_blank, _LINK_TEXT.sub(_blank, mask_code_spans(line)))
    else:
        plain = _QUOTED.sub(_blank, _LINK_TEXT.sub(_blank, mask_code_spans(line)))
        shown = unveiled_text(plain)
        patterns = _patterns_for(shown if shown is not None else plain)
        if not patterns:
            return []
    text = shown if shown is not None else plain
    out = []
    seen = set()
    for what, pattern in patterns:
        m = pattern.search(text)
        if m and what not in seen:
            seen.add(what)
            out.append((what, m.start(), m.end()))
    if shown is not None and out:  # back to the columns of the line as written
        where = (unveiled(plain) or (plain, list(range(len(plain) + 1))))[1]
        out = [(what, where[start], where[end - 1] + 1 if end > start else where[start]) for what, start, end in out]
    return out


# The native core's prefilter, while it was written for exactly these patterns (docs/native.md).
_CORE = core_for("pm404")  # only where the build was written for this Python code
_NATIVE = _CORE if _CORE is not None and "\n".join(p.pattern for _, p in _PATTERNS) == _CORE.PM404_PATTERNS else None


def candidate_lines(lines: list[str], veiled: bool | None = None) -> range | list[int]:
    """The lines that may hold an instruction: all of them, or with the native core the ones
    holding an anchor word of `_PATTERNS` (docs/native.md); the others match none. The core
    reads the lines unveiled (`unveiled_text`) when they hold a disguised letter (`veiled`:
    `disguised` of their text, when the caller knows it), so no disguised anchor is passed over."""
    if _NATIVE is None:
        return range(len(lines))
    if veiled is None:
        veiled = disguised("\n".join(lines))
    if veiled:
        # The whole text at once (invisible characters between the parts of a line break
        # could join two breaks into one: then line by line).
        shown = split_lines(_unveil("\n".join(lines)))
        if len(shown) != len(lines):
            shown = [line if line.isascii() or (one := unveiled_text(line)) is None else one for line in lines]
        lines = shown
    return _NATIVE.instruction_lines(lines)


_NEW_SYSTEM_PROMPT = _PATTERNS[1][0]
_PROMPT_LABEL = re.compile(r"(?i)\s*#+\s*system\s+prompt\s*:")


def _heading_lines(doc: MemoryFile) -> frozenset[int]:
    return frozenset(h.line for h in doc.headings)


def _titles_a_stored_prompt(line: str, found: tuple[str, int, int]) -> bool:
    """A heading `# System Prompt: Code reviewer` titles a prompt the person keeps, as the
    "You are a …" line under it begins one: both are data about their prompts, and neither
    is reported (docs/decisions.md, "PM404: a stored prompt is data"). A `System prompt:`
    line that is not a heading, a *new* system prompt and a system override still are."""
    what, start, end = found
    return what == _NEW_SYSTEM_PROMPT and start == 0 and _PROMPT_LABEL.match(line[:end]) is not None


def check_instructions(rel: str, zone: Zone, doc: MemoryFile, settings: Settings) -> list[Finding]:
    out: list[Finding] = []
    veiled = disguised(doc.text)  # a text of ordinary letters (nearly all): no line is unveiled
    # The core's record names the candidates of the lines as written: those of `candidate_lines`
    # for a text with no disguised letter (then the file's lines are not made for nothing).
    recorded = doc.instruction_candidates if _NATIVE is not None and not veiled else None
    candidates = candidate_lines(doc.lines, veiled) if recorded is None else recorded
    if not candidates:
        return out
    lines = doc.lines
    for i in candidates:
        line = lines[i]
        if not line.strip() or doc.line_kind(i) == CODE:
            continue
        found = instruction_kinds(line, veiled)
        if found and i in _heading_lines(doc):
            found = [f for f in found if not _titles_a_stored_prompt(line, f)]
        if found:
            what = "; ".join(w for w, _, _ in found)
            out.append(at_line(rel, doc.lines, i, "PM404",
                               f"this line {what}: memory is data, not instructions for the agent",
                               data={"kinds": [w for w, _, _ in found]}))
    return out


TEXT_CHECKS = (TextCheck(("PM404",), frozenset({Zone.ACTIVE, Zone.CORE}), check_instructions),)
