"""The gate in front of the token rules: where on a text one of their keywords is, found in a
few passes over the whole text rather than one `str.find` pass per keyword (docs/decisions.md,
"Secrets: one gate, two engines" and "Secrets: the pure gate, second round").

A *probe* is a fixed-width pattern around one anchor: a rare character (`_`, `-`, `.`, `=`, a
leading `A` before `KIA`/`Iza`/…), or none (a plain literal: `dapi`). Every keyword of
`TOKEN_RULES` is the literal of one probe, except four whose matches have a better anchor than
their keyword: a Discord bot token (its keyword, two letters, is found 24–28 characters before
a `.` followed by six token characters and a `.`), a JWT (its `eyJ` is found in the run of
token characters before a `.e[yw]`), a Telegram bot token (`:A` followed by 34 token
characters, on the `A`) and a Twilio API key SID (`SK` and 32 hex digits, on the `K`). Each
token rule's keywords and reach cover every place its regex can match (`_tokens.py`), so
trying the regex only at the keyword spots the probes give finds what trying it at every
keyword occurrence on the line did. Two more probes are no token rule's: where a PEM block and
a PuTTY key file may begin.

Two engines find the probes' matches, with identical results (`tests/engine/test_secrets_gate.py`):

- `PureGate`: for each anchor, one `re` search whose pattern starts with that anchor (the
  regex engine skips to it faster than `bytes.find` finds a word), then one look-ahead whose
  alternatives start with a literal or a class where they can (the engine passes over those on
  their first character; a look-behind is a nested match at every anchor); each hit is checked
  against the probes with nothing before the anchor and those whose text before it ends in the
  byte before it, so probes that share an anchor position are all seen. Only the anchor
  character is consumed, so overlapping matches are found too. A plain literal is a regex of
  one literal; on a long text it is found in a pass the key words make anyway (`scan`).
- `_compiled.CompiledGate` (the optional extra `pmem-lsp[fast]`, hyperscan): every probe in one
  compiled database, one pass.

The text is bytes (UTF-8, `surrogatepass`): offsets are byte offsets, turned into line and
character offsets by `spots_by_line`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ._generic import PREFILTER
from ._tokens import TOKEN_RULES


@dataclass(frozen=True, slots=True)
class Probe:
    before: str  # regex of fixed width `width`, before the anchor
    anchor: str  # the literal the search skips to ("": a plain literal, `bytes.find`)
    after: str  # regex after the anchor
    width: int  # bytes before the anchor
    size: int  # bytes of a whole match
    keyword: str  # the keyword a match stands for ("" for the three special probes)

    @property
    def pattern(self) -> str:
        return self.before + re.escape(self.anchor) + self.after


# Anchors in order of preference: the rarest first in prose, code and JSON alike.
_ANCHORS = "=_-."


def _literal(keyword: str) -> Probe:
    for a in _ANCHORS:
        i = keyword.find(a)
        if i != -1:
            return Probe(re.escape(keyword[:i]), a, re.escape(keyword[i + 1:]), i, len(keyword), keyword)
    if keyword.startswith("A"):  # AKIA, ASIA, ABIA, ACCA, A3T, AIza, ATATT: an uppercase A is rare enough
        return Probe("", "A", re.escape(keyword[1:]), 0, len(keyword), keyword)
    return Probe("", "", re.escape(keyword), 0, len(keyword), keyword)  # dapi


_TOKEN_CHARS = r"[A-Za-z0-9_\-]"
# The classes are written out once before their repeat (`[…][…]{5}`, not `[…]{6}`): an
# alternative that starts with a class or a literal is passed over by the regex engine on its
# first character, where one that starts with a repeat is entered.
DISCORD = Probe("", ".", _TOKEN_CHARS * 2 + r"{5}\.", 0, 8, "")
JWT = Probe("", ".", "e[yw]", 0, 3, "")
# `:A` and 34 token characters, anchored on the `A` (its search is made for AKIA and the
# rest anyway: one pass fewer than a search of its own for `:A`).
TELEGRAM = Probe(":", "A", _TOKEN_CHARS * 2 + "{33}", 1, 36, "")
# A Twilio API key SID, `SK` and 32 hex digits: anchored on its `K` (an uppercase K is rare
# in prose and in JSON alike), the keyword `SK` alone being a pass over any text for little.
TWILIO = Probe("S", "K", "[0-9a-f][0-9a-f]{31}", 1, 34, "SK")
# Not token rules': where a PEM block may begin (`_pem.find_pem`: four dashes or five, BEGIN in
# any case) and where a PuTTY key file does (`_pem.find_putty`), found in the same pass.
BEGIN = Probe("", "-", "---[Bb][Ee][Gg][Ii][Nn]", 0, 9, "")
PUTTY = Probe("PuTTY", "-", re.escape("User-Key-File-") + "[23]:", 5, 22, "")
_SPECIAL_KEYWORDS = {"MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT", "eyJ", ":A", "SK"}
_DISCORD_PAIRS = frozenset(k.encode() for k in _SPECIAL_KEYWORDS if len(k) == 2 and k[0] in "MNO")

# The rules the gate serves: Azure's connection-string keys (`AccountKey=`, …) are tried on
# every line that names a key (`find_secrets`), so they need no gate.
GATED_RULES = tuple(i for i, rule in enumerate(TOKEN_RULES) if not rule.keywords[0].endswith("Key="))


def _probes() -> tuple[Probe, ...]:
    keywords: dict[str, None] = {}
    for i in GATED_RULES:
        for kw in TOKEN_RULES[i].keywords:
            if kw not in _SPECIAL_KEYWORDS:
                keywords[kw] = None
    return (*(_literal(kw) for kw in keywords), DISCORD, JWT, TELEGRAM, TWILIO, BEGIN, PUTTY)


PROBES = _probes()
_NO_HITS: tuple[tuple[int, ...], ...] = ((),) * len(PROBES)
BEGIN_PROBE = PROBES.index(BEGIN)
PUTTY_PROBE = PROBES.index(PUTTY)
# The JWT regex: `eyJ` then 10 to 8192 token characters before the first `.`.
_JWT_HEAD_MIN, _JWT_HEAD_MAX = 3 + 10, 3 + 8192


def keyword_spots(data: bytes, hits: Sequence[Sequence[int]]) -> list[tuple[int, str]]:
    """(byte offset, keyword) for every keyword spot the probes' `hits` (start offsets per
    probe of PROBES, ascending) stand for, sorted."""
    out: list[tuple[int, str]] = []
    for probe, starts in zip(PROBES, hits, strict=True):
        if not starts:
            continue
        if probe.keyword:
            kw = probe.keyword
            out.extend((s, kw) for s in starts)
        elif probe is DISCORD:
            for d in starts:  # the id part is 24 to 28 characters before the first dot
                for s in range(max(0, d - 28), d - 23):
                    pair = data[s:s + 2]
                    if pair in _DISCORD_PAIRS:
                        out.append((s, pair.decode()))
        elif probe is JWT:
            done = 0  # keyword starts below this were looked for already (windows never overlap)
            for d in starts:
                lo, hi = max(done, d - _JWT_HEAD_MAX), d - _JWT_HEAD_MIN + 1
                if lo < hi:
                    p = data.find(b"eyJ", lo, hi + 2)
                    while p != -1:
                        out.append((p, "eyJ"))
                        p = data.find(b"eyJ", p + 1, hi + 2)
                    done = hi
        elif probe is TELEGRAM:
            out.extend((s, ":A") for s in starts)
    out.sort()
    return out


def _line_of(data: bytes, ln: int, at: int, pos: int) -> int:
    """The line of offset `pos`, `ln` being that of `at` (at <= pos): the line breaks between
    them are counted only when there is one, since looking for one byte is many times faster
    than counting it (a long line has none)."""
    if data.find(b"\n", at, pos) == -1:
        return ln
    return ln + data.count(b"\n", at, pos)


def lines_with(hay: bytes, needle: bytes, n_lines: int, out: set[int], data: bytes | None = None) -> None:
    """Add to `out` the indices of the lines holding `needle` in `hay`, a same-length image of
    `data` (the UTF-8 text with "\n" between lines; default `hay` itself)."""
    if data is None:
        data = hay
    pos = hay.find(needle)
    ln = last = 0
    while pos != -1:
        ln = _line_of(data, ln, last, pos)
        last = pos
        if ln >= n_lines:
            break
        out.add(ln)
        # The line is in: go on from the next one (a long line holding the needle thousands
        # of times is found once, not once per occurrence).
        nl = data.find(b"\n", pos)
        if nl == -1:
            break
        ln += 1
        last = nl + 1
        pos = hay.find(needle, nl + 1)


def _cjk_lines(text: str, word: str, n_lines: int, out: set[int]) -> None:
    """Add to `out` the lines of `text` holding `word` (one or two CJK characters), found by
    its last character: a search for one character of a text that is not ASCII is a memchr,
    many times faster than a search for its UTF-8 bytes."""
    last, head = word[-1], word[:-1]
    k = len(head)
    pos = text.find(last)
    ln = at = 0
    while pos != -1:
        if head and (pos < k or text[pos - k:pos] != head):
            pos = text.find(last, pos + 1)
            continue
        ln += text.count("\n", at, pos)
        at = pos
        if ln >= n_lines:
            break
        out.add(ln)
        nl = text.find("\n", pos)
        if nl == -1:
            break
        ln += 1
        at = nl + 1
        pos = text.find(last, nl + 1)


# The key-named rules' prefilter words, in PREFILTER's order (the order `find_assignments`
# is given them in): ASCII ones on the lowered text, CJK ones as they are.
GENERIC_ASCII = tuple(w for w in PREFILTER if w.isascii())
GENERIC_CJK = tuple(w for w in PREFILTER if not w.isascii())
# On a long text the ASCII words are looked for in groups that share a letter, one search
# per group anchored on it (a word of its own: the word): four passes for the seven words.
_WORD_GROUPS = ((("token", "key"), "k"), (("pass", "pwd"), "p"), (("secret", "cred"), "c"), (("auth",), ""))


def _group_search(words: tuple[str, ...], anchor: str, literals: tuple[str, ...] = ()) -> re.Pattern[bytes]:
    """The first place where one of `words` (or of `literals`, plain probes found in the same
    pass) is, at `anchor`, its letter they share (or the word itself, for one word and no
    literal: a literal, which the regex engine skips to fastest)."""
    if not anchor:
        (word,) = words
        assert not literals
        return re.compile(re.escape(word).encode())
    alts = []
    for w in (*words, *literals):
        i = w.index(anchor)
        # The rest of the word first, consumed, and then the look-behind for what comes before
        # the anchor: the regex engine passes over an alternative that starts with a literal
        # on its first character, where a look-behind is entered at every anchor.
        rest = re.escape(w[i + 1:])
        alts.append(rest + (f"(?<={re.escape(w)})" if i else "") if rest else f"(?<={re.escape(w)})")
    alts.sort(key=lambda alt: alt.startswith("(?<="))
    return re.compile((re.escape(anchor) + "(?:" + "|".join(alts) + ")").encode())


_GROUPS_FROM = 64 * 1024  # bytes: a shorter text is searched word by word
_GROUP_SEARCHES = tuple((tuple(w.encode() for w in words), _group_search(words, anchor))
                        for words, anchor in _WORD_GROUPS)


# A literal found in a word group's pass: (the literal, its anchor's index in it, its search,
# the starts found, every one of them).
_Literal = tuple[bytes, int, re.Pattern[bytes], list[int]]


def _group_lines(hay: bytes, words: tuple[bytes, ...], search: re.Pattern[bytes], n_lines: int,
                 outs: list[set[int]], literals: Sequence[_Literal] = (), anchor: str = "") -> None:
    """`lines_with` for a group of words at once: one search for the first of any on a line,
    then one bounded `find` in that line for each of the others. `literals` (the search's
    other alternatives, at `anchor`): every start of each, found by the same search up to the
    line's first word and by a search of their own in the rest of that line."""
    pos = ln = at = 0
    heads = tuple(w.index(anchor.encode()) for w in words) if literals else ()
    while True:
        m = search.search(hay, pos)
        if m is None:
            return
        h = m.start()
        if literals:
            for lit, k, _rx, starts in literals:
                if h >= k and hay.startswith(lit, h - k):
                    starts.append(h - k)
            if not any(h >= i and hay.startswith(w, h - i) for w, i in zip(words, heads, strict=True)):
                pos = h + 1  # only a literal here: on to the next anchor
                continue
        ln = _line_of(hay, ln, at, h)
        if ln >= n_lines:
            return
        nl = hay.rfind(b"\n", at, h)
        start = at if nl == -1 else nl + 1
        at = h
        end = hay.find(b"\n", h)
        stop = len(hay) if end == -1 else end
        for w, out in zip(words, outs, strict=True):
            if hay.find(w, max(start, h - len(w)), stop) != -1:
                out.add(ln)
        for _lit, k, rx, starts in literals:  # those whose anchor is past `h`, on this line
            starts.extend(x.start() for x in rx.finditer(hay, max(start, h - k + 1), stop))
        if end == -1:
            return
        ln += 1
        pos = at = end + 1


def _literal_before(p: Probe) -> bytes:
    """A probe's text before its anchor, which is a literal."""
    lit = re.sub(r"\\(.)", r"\1", p.before)
    assert re.escape(lit) == p.before, p
    return lit.encode()


def _starts_literal(pattern: str) -> bool:
    """Does the regex `pattern` start with a literal character (`pat_`, `\\-Key`), on which the
    regex engine passes over an alternative?"""
    return bool(pattern) and (pattern[0].isalnum() or pattern[0] in " :_" or
                              (pattern[0] == "\\" and len(pattern) > 1 and not pattern[1].isalnum()))


def _self_overlapping(word: str) -> bool:
    return any(word[:k] == word[-k:] for k in range(1, len(word)))


class PureGate:
    """The probes found with the standard library's `re`: one search per anchor."""

    name = "pure"

    def __init__(self, probes: Sequence[Probe] = PROBES) -> None:
        self.probes = tuple(probes)
        groups: dict[str, list[int]] = {}
        self.plain: list[tuple[int, re.Pattern[bytes], bool]] = []
        for i, p in enumerate(self.probes):
            if p.anchor:
                groups.setdefault(p.anchor, []).append(i)
            else:  # a literal: the regex engine skips to it faster than `bytes.find` does
                self.plain.append((i, re.compile(re.escape(p.keyword).encode()), _self_overlapping(p.keyword)))
        # On a long text a plain probe in lower case (`dapi`) is found in the pass of the first
        # word group whose letter it holds, on the lowered text, and confirmed in the text.
        by_group: dict[int, list[int]] = {}
        for i, _search, overlapping in self.plain:
            kw = self.probes[i].keyword
            if overlapping or not kw.isascii() or kw.lower() != kw:
                continue
            for g, (_words, anchor) in enumerate(_WORD_GROUPS):
                if anchor and anchor in kw:
                    by_group.setdefault(g, []).append(i)
                    break
        self.plain_search = {i: search for i, search, _overlapping in self.plain}
        self.word_groups: list[tuple[tuple[bytes, ...], re.Pattern[bytes], str, list[int]]] = []
        for g, (words, anchor) in enumerate(_WORD_GROUPS):
            ids = by_group.get(g, [])
            search = _group_search(words, anchor, tuple(self.probes[i].keyword for i in ids)) if ids \
                else _GROUP_SEARCHES[g][1]
            self.word_groups.append((_GROUP_SEARCHES[g][0], search, anchor, ids))
        # Per anchor: its search, then the checks of the probes with nothing before the anchor
        # and, by the byte before it, of those with a literal before it.
        _Check = tuple[int, int, re.Pattern[bytes]]
        self.groups: list[tuple[bytes, re.Pattern[bytes], list[_Check], dict[int, list[_Check]]]] = []
        for anchor, ids in groups.items():
            a = re.escape(anchor)
            ahead: list[str] = []  # nothing before the anchor, or a literal after it
            behind: list[str] = []  # the rest: a look-behind first
            behind_last: set[int] = set()
            always: list[_Check] = []
            by_before: dict[int, list[_Check]] = {}
            for i in ids:
                p = self.probes[i]
                check = (i, p.width, re.compile(p.pattern.encode()))
                if not p.before:
                    ahead.append(p.after)
                    always.append(check)
                    continue
                lit = _literal_before(p)
                by_before.setdefault(lit[-1], []).append(check)
                if _starts_literal(p.after):
                    ahead.append(f"{p.after}(?<={p.pattern})")  # `…_pat_`: `pat_` first
                else:
                    behind.append(f"(?<={p.before}{a}){p.after}")
                    behind_last.add(lit[-1])
            if ahead and not all(ahead):  # a probe that is the anchor alone: every anchor is a hit
                search = re.compile(a.encode())
            else:
                # One look-ahead after the anchor. First what starts with a literal or a class,
                # which the regex engine passes over on its first character; then one class
                # of the characters before the anchor, which most anchors in a text (a dot
                # after a digit, a hyphen in a word) fail, so that no look-behind is tried.
                alts = list(ahead)
                if len(behind) == 1:
                    alts.extend(behind)
                elif behind:
                    last = "".join(sorted(re.escape(chr(b)) for b in behind_last))
                    alts.append(f"(?<=[{last}]{a})(?:" + "|".join(behind) + ")")
                search = re.compile((a + "(?=" + "|".join(alts) + ")").encode())
            self.groups.append((anchor.encode(), search, always, by_before))

    def scan(self, data: bytes, text: str, n_lines: int, tokens: bool = True,
             lowered: bytes | None = None) -> tuple[Sequence[Sequence[int]], dict[int, list[str]]]:
        """The probes' matches in `data` (`hits`; none looked for unless `tokens`) and, for each
        line of `text` (`data` decoded, `n_lines` lines) holding some, the prefilter words of
        the key-named rules on it (`lowered`: `data.lower()`, when the caller has it)."""
        if lowered is None:
            lowered = data.lower()  # ASCII letters only: byte offsets and lines are unchanged
        candidates: dict[int, list[str]] = {}
        lines: set[int] = set()
        found: dict[bytes, set[int]] = {}
        merged: dict[int, list[int]] = {}  # plain probes found in the word groups' passes
        if len(data) >= _GROUPS_FROM:  # else a search per word is cheaper: a note's lines are short
            for words, search, anchor, ids in self.word_groups:
                outs = [found.setdefault(w, set()) for w in words]
                if not (tokens and ids):
                    _group_lines(lowered, words, search, n_lines, outs)
                    continue
                literals = []
                for i in ids:
                    kw = self.probes[i].keyword
                    literals.append((kw.encode(), kw.index(anchor), self.plain_search[i], merged.setdefault(i, [])))
                _group_lines(lowered, words, search, n_lines, outs, literals, anchor)
        for word in GENERIC_ASCII:
            key = word.encode()
            if key not in found:
                found[key] = set()
                lines_with(lowered, key, n_lines, found[key], data)
            for ln in found[key]:
                candidates.setdefault(ln, []).append(word)
        if not data.isascii():
            for word in GENERIC_CJK:
                lines.clear()
                _cjk_lines(text, word, n_lines, lines)
                for ln in lines:
                    candidates.setdefault(ln, []).append(word)
        if not tokens:
            return _NO_HITS, candidates
        hits = self.hits(data, skip=frozenset(merged))
        for i, starts in merged.items():  # found on the lowered text: the ones in its case
            literal = self.probes[i].keyword.encode()
            hits[i] = [x for x in starts if data.startswith(literal, x)]
        return hits, candidates

    def hits(self, data: bytes, skip: frozenset[int] = frozenset()) -> list[list[int]]:
        """For each probe, the start offsets of its matches in `data`, ascending (none for the
        plain probes in `skip`, which the caller finds)."""
        out: list[list[int]] = [[] for _ in self.probes]
        for anchor, search, always, by_before in self.groups:
            if anchor not in data:  # one memchr: most texts lack most anchors
                continue
            for m in search.finditer(data):
                h = m.start()
                for i, _width, full in always:
                    if full.match(data, h):
                        out[i].append(h)
                if h:
                    for i, width, full in by_before.get(data[h - 1], ()):
                        s = h - width
                        if s >= 0 and full.match(data, s):
                            out[i].append(s)
        for i, search, overlapping in self.plain:
            if i in skip:
                continue
            if overlapping:  # a match may begin inside the one before: each start is tried
                at = search.search(data)
                while at is not None:
                    out[i].append(at.start())
                    at = search.search(data, at.start() + 1)
            else:
                out[i].extend(m.start() for m in search.finditer(data))
        return out


def spots_by_line(data: bytes, lines: Sequence[str],
                  spots: Iterable[tuple[int, str]]) -> dict[int, dict[str, list[int]]]:
    """The keyword spots (byte offsets into `data`, the lines joined with "\\n", ascending) as
    line -> keyword -> character offsets in that line, ascending."""
    out: dict[int, dict[str, list[int]]] = {}
    ln = 0
    line_start = 0  # byte offset of line `ln`
    line_end = data.find(b"\n")  # -1: `ln` is the last line
    ascii_line = bool(lines) and lines[0].isascii()
    last_b = last_c = 0  # the last spot converted on this line: byte and character offsets in it
    for b, kw in spots:
        if line_end != -1 and b > line_end:
            ln += data.count(b"\n", line_start, b)
            line_start = data.rfind(b"\n", 0, b) + 1
            line_end = data.find(b"\n", b)
            ascii_line = lines[ln].isascii()
            last_b = last_c = 0
        if ascii_line:
            c = b - line_start
        else:
            c = last_c + len(data[line_start + last_b:b].decode("utf-8", "surrogatepass"))
            last_b, last_c = b - line_start, c
        at = out.setdefault(ln, {}).setdefault(kw, [])
        if not at or at[-1] != c:  # a spot two probes stand for (a Discord id before two dots)
            at.append(c)
    return out


class Gate(Protocol):
    """What an engine offers (see `PureGate.scan`); the compiled one (`_compiled.py`) is one."""

    name: str

    def scan(self, data: bytes, text: str, n_lines: int, tokens: bool = True,
             lowered: bytes | None = None) -> tuple[Sequence[Sequence[int]], dict[int, list[str]]]: ...


def choose(name: str) -> PureGate | Gate:
    """The engine called `name`: "pure" (the standard library) or "compiled" (hyperscan; raises
    ImportError without it)."""
    if name == "pure":
        return pure_engine()
    if name == "compiled":
        compiled = _compiled_engine()
        if compiled is None:
            raise ImportError("the compiled secrets gate needs hyperscan: pip install 'pmem-lsp[fast]'")
        return compiled
    raise ValueError(f"no secrets gate called {name!r}: pure or compiled")


# The compiled gate pays for its start (importing hyperscan and compiling the database: about
# 25 ms, against 10 ms for the pure one) on a large text, or once a process has checked many:
# a hook that checks one note never loads it, a check of a root does. A large text is one the
# pure gate takes longer on than that start: an index routing 2,000 notes (190 KB) costs it
# 3 ms against the compiled gate's 1.4 ms plus 26 ms of start (issue 44: at 128 KB, every
# agent-rule root of 2,000 files paid the start for its index alone); a megabyte line of
# JSON, 145 ms against 47.
BIG_TEXT = 512 * 1024  # bytes
MANY_BYTES = 2 * 1024 * 1024  # bytes checked by this process so far
_forced: PureGate | Gate | None = None
_pure: PureGate | None = None
_compiled: Gate | None | bool = None  # False: not installed
_checked = 0
_env_read = False
_staying = False  # a process that stays (the language server): see `staying`


def pure_engine() -> PureGate:
    global _pure
    if _pure is None:
        _pure = PureGate()
    return _pure


def _compiled_engine() -> Gate | None:
    global _compiled
    if _compiled is None:
        try:
            from ._compiled import CompiledGate
        except ImportError:
            _compiled = False
        else:
            _compiled = CompiledGate()
    return None if isinstance(_compiled, bool) else _compiled  # False: not installed


def engine(size: int = 0) -> PureGate | Gate:
    """The engine for a text of `size` bytes: `PMEM_SECRETS_GATE` (pure, compiled) when set,
    else the compiled one for a large text or once this process has checked many bytes, when
    it is installed, else the pure one. Both find the same."""
    global _forced, _checked, _env_read
    if not _env_read:
        _env_read = True
        name = os.environ.get("PMEM_SECRETS_GATE", "").strip().lower()
        if name and _forced is None:
            _forced = _from_env(name)
    if _forced is not None:
        return _forced
    _checked += size
    if not _staying and (size >= BIG_TEXT or _checked >= MANY_BYTES):
        compiled = _compiled_engine()
        if compiled is not None:
            return compiled
    return pure_engine()


def _from_env(name: str) -> PureGate | Gate | None:
    """`PMEM_SECRETS_GATE`'s engine. Asking for one that cannot be had never stops a check (a
    hook that crashed would let the write through): the pure engine, which finds the same, with
    a warning on stderr."""
    import sys

    if name == "pure":
        return choose("pure")
    if name == "compiled":
        try:
            return choose("compiled")
        except ImportError:
            sys.stderr.write("pmem: warning: PMEM_SECRETS_GATE=compiled, but hyperscan is not installed "
                             "(pip install 'pmem-lsp[fast]'); using the pure gate, which finds the same\n")
            return choose("pure")
    sys.stderr.write(f"pmem: warning: PMEM_SECRETS_GATE={name!r} is neither `pure` nor `compiled`; "
                     "choosing by the size of the text\n")
    return None


def staying() -> None:
    """This process stays (the language server): the pure engine, unless `PMEM_SECRETS_GATE`
    asks for the compiled one. hyperscan's library and database would stay resident for as
    long as the process lives (~8 MB), to save a few milliseconds on the rare large text; on a
    root of small notes the pure engine scans as fast (docs/decisions.md)."""
    global _staying
    _staying = True


def use(name: str | None) -> PureGate | Gate | None:
    """Use the engine `name` (pure, compiled) for every text, or go back to choosing by size
    (None): tests and benchmarks run both. Returns the engine forced before, if any."""
    global _forced, _env_read
    before, _env_read = _forced, True
    _forced = choose(name) if name is not None else None
    return before
