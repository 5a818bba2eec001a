"""PM401: likely secrets in a memory file (docs/design.md §4).

`find_secrets(lines)` returns where each likely secret value is and what kind it is, never the
value itself: a `SecretMatch` holds positions, a kind and a masked hint (at most the first four
characters and the length), so nothing built from it can repeat the secret.

How it stays fast: the text is joined and encoded once, and a gate (`_gate.py`, or its
compiled twin `_compiled.py` when hyperscan is installed) finds in a few passes where each
token rule's keywords are (`ghp_`, `AKIA`, `-----BEGIN` …) and which lines hold a key-named
rule's word (lowercase, on the lowered text); a rule's regex is tried only there, and only on
lines holding a run of 20 token characters. A note with no candidate costs a few searches.
Then, per rule: regex → structure and entropy checks → placeholder and example checks → the
caller's allow regexes. Where two rules claim overlapping text the more
specific one wins (a GitHub token on a `token:` line is a "GitHub token").
"""

from __future__ import annotations

import re
import string
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..names import map_strings
from . import _disguise, _gate, _markup
from ._checks import looks_random
from ._gate import GATED_RULES, keyword_spots, lines_with, spots_by_line
from ._generic import PREFILTER as _GENERIC_KEYWORDS
from ._generic import find_assignments, find_flags, find_in_table, find_url_credentials, may_assign
from ._pem import find_pem, find_putty
from ._tokens import TOKEN_RULES, TWILIO_SID, body_ok, token_matches

__all__ = ["ALLOW_MARKER", "WEAK_REASONS", "SecretMatch", "find_in_name", "find_secrets", "mask", "mask_name",
           "mask_secrets", "mask_text", "redact_line", "REDACTED"]

ALLOW_MARKER = "<!-- pmem: allow-secret -->"
REDACTED = "[REDACTED]"

# The doors the native core's `secret_doors_lines(lines)` names (native/src/secrets.rs; docs/native.md,
# "The PM401 verdict"), one bit each: which parts of `find_secrets` can find anything in a text.
DOOR_PLAIN = 1  # a line's own doors: a run of 20, a private key's header, a URL, a named value
DOOR_FOLDS = 2  # a character `_disguise.fold` folds
DOOR_MARKUP = 4  # a piece `_markup.fold` may render, on a line or on its folded form
DOOR_JOIN = 8  # a break `_disguise.joins` may find
DOOR_CASE = 16  # a letter Python's case folding takes to ASCII: the whole scan runs
# Not a door: with DOOR_PLAIN, some line opens it by a run of 20, a private key's header or a URL
# (without it, by named values alone: the plain scan needs no gate).
DOOR_SHAPED = 64


@dataclass(frozen=True, slots=True)
class SecretMatch:
    line: int  # 0-based line of the value's start
    start: int  # character offset of the value's start in that line
    end_line: int  # 0-based line of the value's end (differs from `line` only for PEM blocks)
    end: int  # character offset just after the value in `end_line`
    kind: str  # human name: "AWS access key id", "GitHub token", "PEM private key", "password", …
    hint: str  # masked hint only: first four characters + length, e.g. "AKIA… (20 characters)"
    # Strong evidence: a provider's documented format, a private key block, a credential in a
    # URL. Weak: only a secret-named key, option or column says so; `reason` says which.
    strong: bool = True
    reason: str = ""


def mask(value: str) -> str:
    """A hint that cannot give the value away: at most its first four characters (fewer for a
    short value: never more than a quarter of it) and its length."""
    n = len(value)
    shown = value[: min(4, n // 4)]
    if not shown.isprintable():
        shown = ""
    return f"{shown}… ({n} characters)"


def mask_secrets(line: str) -> str:
    """The line with every likely secret replaced by its masked hint (docs/design.md §6): for text
    shown to the user (previews, hover, status) that quotes memory."""
    for m in sorted(find_secrets([line], honour_marker=False), key=lambda m: m.start, reverse=True):
        if m.end_line == 0:
            line = line[:m.start] + mask(line[m.start:m.end]) + line[m.end:]
    return line


def _key_named(segment: str) -> bool:
    """Could `segment` hold a key-named value (a secret-ish key word and an assignment sign)?"""
    if not ("=" in segment or ":" in segment or "：" in segment):
        return False
    lowered = segment.lower()
    return any(k in lowered for k in _GENERIC_KEYWORDS)


def find_in_name(path: str, allow: Sequence[re.Pattern[str]] = (), *, whole: bool = True) -> list[SecretMatch]:
    """The likely secrets in a file's path (one line; offsets into `path`), looked for the way
    a line of text is (`whole=False`: the caller has) and in each of its segments that may
    hold a key-named value on its own, with and without its extension: in a path, such a value
    (`notes/password=Zx9!kq2Lm8Pw.md`) follows a `/`, which in a line of text marks a path
    and not a key, and the extension runs into the value."""
    if not path:
        return []
    found = find_secrets([path], allow, honour_marker=False) if whole else []
    at = 0
    for seg in path.split("/"):
        if not _key_named(seg):
            at += len(seg) + 1
            continue
        base, dot, ext = seg.rpartition(".")
        stem = base if dot and base and ext.isalnum() and len(ext) <= 8 else seg
        for candidate in dict.fromkeys((stem, seg)):
            if not candidate:
                continue
            for m in find_secrets([candidate], allow, in_sentences=False, honour_marker=False):
                shifted = SecretMatch(0, at + m.start, 0, at + m.end, m.kind, m.hint, m.strong, m.reason)
                if not any(_same_place(shifted, o) for o in found):
                    found.append(shifted)
        at += len(seg) + 1
    found.sort(key=lambda m: m.start)
    return found


def mask_name(path: str) -> str:
    """`path` with every likely secret `find_in_name` sees replaced by its masked hint."""
    for m in sorted(find_in_name(path), key=lambda m: m.start, reverse=True):
        path = path[:m.start] + mask(path[m.start:m.end]) + path[m.end:]
    return path


# A word of a shown text that may be a path holding a key-named value (`a/password=…`).
_PLACE = re.compile(r"(?::\d+)*:?$")
_PATH_WORD = re.compile(r"[^\s()\[\]<>`'\"|]*/[^\s()\[\]<>`'\"|]*")


def _name_matches(lines: list[str], matches: list[SecretMatch]) -> list[SecretMatch]:
    """`matches` and the secrets in the path-like words of `lines` that they miss."""
    out = list(matches)
    for ln, line in enumerate(lines):
        if "/" not in line or not ("=" in line or ":" in line or "：" in line):
            continue
        lowered = line.lower()
        if not any(k in lowered for k in _GENERIC_KEYWORDS):
            continue
        for w in _PATH_WORD.finditer(line):
            word = _PLACE.sub("", w.group())  # `notes/x.md:3:1:` in a report: the path
            if not _key_named(word):
                continue
            for m in find_in_name(word, whole=False):  # the line itself is scanned already
                shifted = SecretMatch(ln, w.start() + m.start, ln, w.start() + m.end, m.kind, m.hint)
                if not any(_same_place(shifted, o) for o in out):
                    out.append(shifted)
    return out


def mask_text(text: str) -> str:
    """`text` of several lines (a report, a preview, a diff) with every likely secret replaced
    by its masked hint — the ones that span lines too (a PEM private key block, which a line on
    its own does not show), and those in the paths it names (`find_in_name`)."""
    lines = text.split("\n")
    matches = find_secrets(lines, honour_marker=False)  # the marker is for checks, never for what is shown
    matches = _name_matches(lines, matches)
    for m in sorted(matches, key=lambda m: (m.line, m.start), reverse=True):
        if m.end_line == m.line:
            line = lines[m.line]
            lines[m.line] = line[:m.start] + mask(line[m.start:m.end]) + line[m.end:]
        else:
            value = "\n".join([lines[m.line][m.start:], *lines[m.line + 1:m.end_line], lines[m.end_line][:m.end]])
            lines[m.line:m.end_line + 1] = [lines[m.line][:m.start] + mask(value) + lines[m.end_line][m.end:]]
    return "\n".join(lines)


def mask_data(value):
    """A JSON-like value with likely secrets masked in every string, keys included (the
    reports as JSON)."""
    return map_strings(value, mask_text)


def redact_line(line: str, matches_on_that_line: Iterable[SecretMatch], *, index: int | None = None) -> str:
    """`line` with each match's value replaced by `[REDACTED]`. For a match that spans lines (a
    PEM block) pass the line's `index`: its part of the block is removed, and `[REDACTED]` is
    written on the block's first line only. Without `index` every match is taken to start on
    this line."""
    spans = []
    for m in matches_on_that_line:
        if index is None or index == m.line:
            a = m.start
            b = m.end if m.end_line == m.line else len(line)
            spans.append((a, b, REDACTED))
        elif m.line < index <= m.end_line:
            spans.append((0, m.end if index == m.end_line else len(line), ""))
    for a, b, text in sorted(spans, reverse=True):
        line = line[:a] + text + line[b:]
    return line


# A match before overlaps are resolved: (priority, anchor line, line, start, end_line, end, kind, value).
_Found = tuple[int, int, int, int, int, int, str, str]
# Priorities: lower wins an overlap.
# `_P_PAIR`: a secret beside its key's id (AWS, Twilio); `_P_ID`: a key's id (not its secret)
# that a secret-named key, option or column names.
# `_P_URL_WEAK`: a URL's password that reads as a word and a few digits or a short number.
_P_PEM, _P_TOKEN, _P_URL, _P_URL_WEAK = 0, 1, 100, 101
_P_PAIR, _P_ID, _P_GENERIC, _P_FLAG, _P_CELL = 102, 103, 104, 105, 106
_P_NAMED = (_P_GENERIC, _P_FLAG, _P_CELL)
# Why a finding of weak evidence was made (docs/decisions.md, "Secrets: strong and weak evidence").
WEAK_REASONS = {
    _P_URL_WEAK: "in a URL, but a word and a few digits or a short number, as placeholders are written",
    _P_ID: "a Twilio API key SID: the key's name, not its secret, named as a secret by its key",
    _P_GENERIC: "named only by its key, in no known format",
    _P_FLAG: "named only by a command-line option, in no known format",
    _P_CELL: "named only by its table column, in no known format",
}

# What every `--password …` that `find_flags` reads starts with (its regex, in bytes): a `--`
# not glued to a word or a dash, as there. Glued ones are not tried, so that the runs tried
# never overlap: "--a--a--a…" was searched in quadratic time (48 KB of it: 4 s).
_FLAG_NEAR = re.compile(rb"--(?<![A-Za-z0-9_\-]--)[a-z][a-z\-]*[ \t]")
_AWS_SECRET_NEAR_ID = re.compile(r"(?<![A-Za-z0-9/+])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
# A Twilio API key's secret: 32 letters and digits, written beside its SID (`-u SK…:…`): at
# most this many characters between them.
_TWILIO_SECRET_NEAR_SID = re.compile(r"(?<![A-Za-z0-9])(?P<v>[A-Za-z0-9]{32})(?![A-Za-z0-9])")
_BESIDE = 100

# The token prefilter: every shaped token holds a run of at least 20 of these characters
# (AWS key ids are exactly 20; the rest are longer). One bytes.translate and a find of 20
# marks give the candidate lines; each rule then needs one of its literals on the line.
_RUN = 20
_RUN_TABLE = bytes(
    0x61 if chr(b) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-%" else 0x20
    for b in range(256)
)
_RUN_NEEDLE = b"a" * _RUN
_LONG_LINE = 4096  # characters: a line this long gets the checks that make it cheaper
_RUNS_FIRST = 64 * 1024  # bytes: below, the runs are looked for before the token probes
_FEW_LINES = 16  # lines with runs: up to this many, the pure gate looks at them alone


def _keyword_rules() -> dict[str, tuple[int, ...]]:
    by_keyword: dict[str, list[int]] = {}
    for i in GATED_RULES:
        for kw in TOKEN_RULES[i].keywords:
            by_keyword.setdefault(kw, []).append(i)
    return {kw: tuple(ids) for kw, ids in by_keyword.items()}


_KEYWORD_RULES = _keyword_rules()
# The kinds of the token rules and of the secrets their ids make certain: what markup is
# folded for (`_markup.py`).
_SHAPED_KINDS = frozenset({*(rule.kind for rule in TOKEN_RULES), "AWS secret access key", "Twilio API key secret"})
# Azure connection-string keys have no run guarantee ("+" and "/" break it): tried on key lines.
_AZURE_RULES = tuple(i for i, rule in enumerate(TOKEN_RULES) if rule.keywords[0].endswith("Key="))


def find_secrets(lines: list[str], allow: Sequence[re.Pattern[str]] = (), *,
                 in_sentences: bool = True, honour_marker: bool = True,
                 doors: int | None = None, plain_lines: Sequence[int] | None = None) -> list[SecretMatch]:
    """All likely secrets in a file given as lines (no line endings), in disguise too
    (`_disguise.py`: invisible characters, look-alike letters, a token broken over two lines).
    `honour_marker=False`: ALLOW_MARKER is not honoured (masking, and judging an agent's
    write: the marker is a person's decision). `doors`: the native core's doors of these
    lines (`secret_doors_lines`); the parts of the scan behind a shut door, which would find nothing, are not
    run (the same findings, tests/engine/test_native_secrets.py). `plain_lines`: with `doors`, the
    core's `secret_doors_lines`: the lines that open the plain door, the only ones its scan reads
    (see `_find_secrets`). See `_find_secrets` for the rest."""
    if not lines:
        return []
    open_ = -1 if doors is None or doors & DOOR_CASE else doors  # -1: every door
    if plain_lines is not None and open_ != -1 and not open_ & (DOOR_FOLDS | DOOR_MARKUP | DOOR_JOIN):
        # The plain scan alone, on the lines named (the core reads no line holding a break): the
        # whole text is never joined.
        return _find_secrets(lines, allow, in_sentences=in_sentences, honour_marker=honour_marker,
                             plain_lines=plain_lines, shaped=bool(open_ & DOOR_SHAPED)) if open_ & DOOR_PLAIN else []
    lines, text, data = _joined(lines)
    found = (_find_secrets(lines, allow, in_sentences=in_sentences, honour_marker=honour_marker, joined=(text, data),
                           plain_lines=plain_lines if open_ != -1 else None, shaped=bool(open_ & DOOR_SHAPED))
             if open_ & DOOR_PLAIN else [])
    extra: list[SecretMatch] = []
    folded = _disguise.fold(lines, text, data) if open_ & DOOR_FOLDS else None
    if folded is not None:
        flines, maps = folded
        for m in _find_secrets(flines, allow, in_sentences=in_sentences, honour_marker=honour_marker):
            a_map, e_map = maps[m.line], maps[m.end_line]
            start = a_map[m.start] if a_map is not None else m.start
            end = e_map[m.end - 1] + 1 if e_map is not None and m.end > 0 else m.end
            # The evidence is the folded match's: a weak one stays a warning, with its reason.
            extra.append(SecretMatch(m.line, start, m.end_line, end, m.kind, m.hint, m.strong, m.reason))
    # Markup inside a token that renders as nothing (`_markup.py`): tokens in a documented
    # format only, read in the line as a reader's renderer shows it (in disguise too: in the
    # folded lines, and mapped back through both).
    # All such lines are read in one pass, however many they are (a cap would let decoys hide one).
    seen_lines, seen_text = (folded[0], "\n".join(folded[0])) if folded is not None else (lines, text)
    rendered = [r for r in _markup.fold(seen_lines, seen_text) if not (honour_marker and ALLOW_MARKER in lines[r[0]])] \
        if open_ & DOOR_MARKUP else []
    if rendered:
        for m in _find_secrets([r[1] for r in rendered], allow, in_sentences=in_sentences, honour_marker=honour_marker):
            if m.strong and m.kind in _SHAPED_KINDS and m.line == m.end_line:
                ln, _shown, starts, ends = rendered[m.line]
                a, e = starts[m.start], ends[m.end - 1]
                where = folded[1][ln] if folded is not None else None
                if where is not None:
                    a, e = where[a], where[e - 1] + 1
                extra.append(SecretMatch(ln, a, ln, e, m.kind, m.hint))
    # A token cut over two lines: only a token of a documented format. A key-named value ends
    # with its line (`password=hello` then `name=test` is no 14-character password: the trial's
    # Spring properties were reported so, at error severity).
    for ln, indent in _disguise.joins(text) if "\n" in text and open_ & DOOR_JOIN else ():
        head, tail = lines[ln], lines[ln + 1][indent:]
        if honour_marker and (ALLOW_MARKER in head or ALLOW_MARKER in tail):
            continue
        for m in _find_secrets([head + tail], allow, in_sentences=in_sentences, honour_marker=honour_marker):
            if m.start < len(head) < m.end and m.strong and m.kind in _SHAPED_KINDS:
                extra.append(SecretMatch(ln, m.start, ln + 1, m.end - len(head) + indent, m.kind, m.hint))
    if not extra:
        return found
    out = list(found)
    # By line: a text of many views' matches (thousands of lines of markup) stays linear.
    on_line: dict[int, list[SecretMatch]] = {}
    for o in out:
        for i in range(o.line, o.end_line + 1):
            on_line.setdefault(i, []).append(o)
    for m in extra:
        if not any(_same_place(m, o) for i in range(m.line, m.end_line + 1) for o in on_line.get(i, ())):
            out.append(m)
            for i in range(m.line, m.end_line + 1):
                on_line.setdefault(i, []).append(m)
    out.sort(key=lambda m: (m.line, m.start))
    return out


def _same_place(a: SecretMatch, b: SecretMatch) -> bool:
    return (a.line, a.start) < (b.end_line, b.end) and (b.line, b.start) < (a.end_line, a.end)


def _joined(lines: list[str]) -> tuple[list[str], str, bytes]:
    """The lines, and the lines joined with "\\n", as text and as UTF-8 bytes (lone surrogates
    kept). A line holding a line break (an odd caller's) has it read as a space, in the lines
    returned too, so that the text has one line per line given and each line is the text's."""
    text = "\n".join(lines)
    # One line: looking for a break is many times faster than counting them.
    if ("\n" in text) if len(lines) == 1 else (text.count("\n") != len(lines) - 1):
        lines = [line.replace("\n", " ") for line in lines]
        text = "\n".join(lines)
    return lines, text, text.encode("utf-8", "surrogatepass")


def _find_secrets(lines: list[str], allow: Sequence[re.Pattern[str]] = (), *,
                  in_sentences: bool = True, honour_marker: bool = True,
                  joined: tuple[str, bytes] | None = None,
                  plain_lines: Sequence[int] | None = None, shaped: bool = True) -> list[SecretMatch]:
    """All likely secrets in a file given as lines (no line endings). A line containing
    ALLOW_MARKER is skipped (for a PEM block: the BEGIN line). A value matching any `allow`
    regex (re.search on the value) is skipped. Sorted by position.

    `in_sentences`: a value named by its key counts in a sentence too (`… the password: x`).
    Masking wants that (hiding a word too many costs nothing); PM401 passes False, so that a
    key-named value needs an assignment shape there (`Password: …`, `"token": …`, `KEY=…`).

    `plain_lines`: the lines the native core found holding a run of 20, a private key's header,
    a URL, or a prefilter word and a sign (`secret_doors_lines`; none holds a line break): a
    token, key block or URL credential starts only on one of them, and a key-named value, flag,
    table cell or Azure key is found only from one of them (a candidate line without a sign adds
    nothing below). The searches of the text read a text of those lines alone, blank lines in
    place of the others so that each line keeps its number (an agent-rule file's one identifier
    of 20 characters no longer costs a gate pass over its whole text); the lines themselves are
    read whole (a key block's body, a table's header). Without `shaped` the core found no run,
    header or URL: their prefilter words are read here and the gate's pass is skipped (an
    agent-rule file's `API_KEY=<your-api-key>`: the gate was half of PM401's cost there)."""
    if not lines:
        return []
    n = len(lines)
    if plain_lines is not None and len(plain_lines) < n:
        searched = [""] * n
        for ln in plain_lines:
            searched[ln] = lines[ln]
        text = "\n".join(searched)
        data = text.encode("utf-8", "surrogatepass")
    elif joined is not None:
        text, data = joined
    else:
        lines, text, data = _joined(lines)
    named_only = plain_lines is not None and not shaped  # no run, key header or URL on any line
    found: list[_Found] = []
    # Every shaped token holds a run of 20 token characters: a line without one has none. A
    # short text is checked for runs first (most notes have none, and then the token probes
    # are not looked for); a long one only where a probe matched.
    run_lines: set[int] | None = None
    if named_only:
        run_lines = set()
    elif len(data) < _RUNS_FIRST:
        run_lines = set()
        lines_with(data.translate(_RUN_TABLE), _RUN_NEEDLE, n, run_lines, data)
    gate: _gate.PureGate | _gate.Gate | None = None
    token_hits: Sequence[Sequence[int]]
    if plain_lines is not None and run_lines is not None:
        # A short text of the plain door's lines: their prefilter words are read line by line
        # (`_named_candidates`), and the probes looked for only where a run is, by the pure gate
        # (both find the same; the compiled one pays for its start only on a large text). Named
        # values' lines alone (no `shaped`) need no gate at all.
        by_line_only, tokens, lowered = False, bool(run_lines), None
        token_hits = _gate.pure_engine().hits(data) if run_lines else _gate._NO_HITS
        candidates = _named_candidates(lines, plain_lines)
    else:
        gate = _gate.engine(len(data))
        # A few lines with runs in a note: the pure gate looks at those lines only.
        by_line_only = run_lines is not None and isinstance(gate, _gate.PureGate) and 0 < len(run_lines) <= _FEW_LINES
        tokens = not by_line_only and (run_lines is None or bool(run_lines))
        lowered = data.lower() if isinstance(gate, _gate.PureGate) else None
        token_hits, candidates = gate.scan(data, text, n, tokens=tokens, lowered=lowered)

    # Private key blocks: PEM and PGP (`-----BEGIN`), PuTTY's key files. (The named lines hold
    # neither header: the core's `SHAPED` is set by each, PuTTY's by its run of 20.)
    key_probes = ((_gate.BEGIN_PROBE, b"----begin", find_pem), (_gate.PUTTY_PROBE, b"PuTTY-User-Key-File-", find_putty))
    for probe, literal, find in key_probes if not named_only else ():
        hits = token_hits[probe]
        hay = data
        if not hits and not tokens and probe == _gate.BEGIN_PROBE:  # BEGIN in any case
            hay = lowered if lowered is not None else data.lower()
        if hits or (not tokens and literal in hay):  # the probes were not looked for
            begins: set[int] = set()
            if hits:
                ln = at = 0
                for b in hits:
                    ln = _gate._line_of(data, ln, at, b)
                    at = b
                    begins.add(ln)
            else:
                lines_with(hay, literal, n, begins, data)
            for b, ln, a, eln, e, kind, value in find(lines, sorted(begins)):
                found.append((_P_PEM, b, ln, a, eln, e, kind, value))

    aws_lines: list[int] = []
    sids: list[tuple[int, int, int, str]] = []  # Twilio API key SIDs: (line, start, end, value)
    if by_line_only:
        # A probe's match never spans lines, and a spot found across a line break (a JWT's
        # window, a Discord id's) gives no match on its line: these are the spots that count.
        assert run_lines is not None and isinstance(gate, _gate.PureGate)
        by_line = {}
        for ln in run_lines:
            raw = lines[ln].encode("utf-8", "surrogatepass")
            spots = keyword_spots(raw, gate.hits(raw))
            if spots:
                by_line[ln] = spots_by_line(raw, [lines[ln]], spots)[0]
    else:
        spots = keyword_spots(data, token_hits) if tokens else []
        by_line = spots_by_line(data, lines, spots) if spots else {}
    if by_line:
        if run_lines is None:
            run_lines = set()
            lines_with(data.translate(_RUN_TABLE), _RUN_NEEDLE, n, run_lines, data)
        for ln, where in sorted(by_line.items()):
            if ln not in run_lines:
                continue
            line = lines[ln]
            for i in sorted({i for kw in where for i in _KEYWORD_RULES[kw]}):
                rule = TOKEN_RULES[i]
                for m in token_matches(rule, line, where):
                    if not body_ok(rule, m):
                        continue
                    if rule.kind == TWILIO_SID:  # a name, not a secret: see below
                        sids.append((ln, m.start("v"), m.end("v"), m.group("v")))
                        continue
                    found.append((_P_TOKEN + i, ln, ln, m.start("v"), ln, m.end("v"), rule.kind, m.group("v")))
                    if rule.kind == "AWS access key id":
                        aws_lines.append(ln)

    # An AWS secret access key written beside its key id (same line, no key name).
    for ln in set(aws_lines):
        line = lines[ln]
        for a, e in _aws_secret_spans(line, data if n == 1 else None):
            v = line[a:e]
            if v.lower() != v and v.upper() != v and any(c.isdigit() for c in v) and looks_random(v):
                found.append((_P_PAIR, ln, ln, a, ln, e, "AWS secret access key", v))
    # A Twilio API key's secret written beside its SID (`curl -u SK…:…`, `Client("SK…", "…")`):
    # the SID's documented format makes the pair certain, as an AWS key id does its secret.
    # Beside: within `_BESIDE` characters of it, so that a SID in a megabyte line is not
    # followed by a search of the whole line (a class at every character: 30 ms).
    seen: set[tuple[int, int]] = set()
    for ln, a, e, _v in sids:
        line = lines[ln]
        lo, hi = max(0, a - _BESIDE - 32), min(len(line), e + _BESIDE + 32)  # at most `_BESIDE` between them
        for m in _TWILIO_SECRET_NEAR_SID.finditer(line, lo, min(len(line), hi + 1)):  # the char after `hi`: a real end
            v = m.group("v")
            if m.end() > hi or (ln, m.start()) in seen:
                continue
            seen.add((ln, m.start()))
            if v.lower() != v and v.upper() != v and any(c.isdigit() for c in v) and looks_random(v):
                found.append((_P_PAIR, ln, ln, m.start("v"), ln, m.end("v"), "Twilio API key secret", v))

    # A credential in a URL has an `@` (one memchr; no named line holds a URL: `SHAPED`).
    if not named_only and b"@" in data and b"://" in data:
        url_lines: set[int] = set()
        lines_with(data, b"://", n, url_lines)
        for ln in sorted(url_lines):
            line = lines[ln]
            if "@" in line:
                for a, e, kind, strong in find_url_credentials(line):
                    found.append((_P_URL if strong else _P_URL_WEAK, ln, ln, a, ln, e, kind, line[a:e]))

    # `candidates`: line -> the prefilter keywords on it (the lowered text's), found by the gate.
    flags = pipes = azure = False
    if candidates:  # what the text holds at all, looked for once rather than on each line
        flags = _FLAG_NEAR.search(data) is not None  # skips to each `--` faster than `in` finds one
        pipes, azure = b"|" in data, b"=" in data and b"Key=" in data
    for ln in sorted(candidates):
        line = lines[ln]
        if (":" in line or "=" in line or "：" in line or " is " in line or " are " in line
                or "是" in line or "为" in line):
            if len(line) < _LONG_LINE or _may_assign(line, candidates[ln], n, data, lowered):
                found_here = (_assignments(line, tuple(candidates[ln]), in_sentences) if len(line) <= _MEMO_LINE
                              else find_assignments(line, candidates[ln], in_sentences, low=_lowered(line, n, data)))
                for a, e, kind in found_here:
                    found.append((_P_GENERIC, ln, ln, a, ln, e, kind, line[a:e]))
        if flags and "--" in line:
            for a, e, kind in find_flags(line):
                found.append((_P_FLAG, ln, ln, a, ln, e, kind, line[a:e]))
        if pipes and "|" in line:
            for tl, a, e, kind in find_in_table(lines, ln):
                found.append((_P_CELL, tl, tl, a, tl, e, kind, lines[tl][a:e]))
        if azure and "Key=" in line:  # Azure connection strings (AccountKey=, SharedAccessKey=)
            for i in _AZURE_RULES:
                rule = TOKEN_RULES[i]
                for m in token_matches(rule, line):
                    if body_ok(rule, m):
                        found.append((_P_TOKEN + i, ln, ln, m.start("v"), ln, m.end("v"), rule.kind, m.group("v")))

    # A SID that a secret-named key, option or column names (`TWILIO_API_KEY=SK…`) is reported
    # for what it is, an identifier, at the weak finding's place and severity.
    if sids:
        named = _spans_by_line(f for f in found if f[0] in _P_NAMED)
        for ln, a, e, v in sids:
            if _meets(named.get(ln), a, e):
                found.append((_P_ID, ln, ln, a, ln, e, TWILIO_SID, v))

    if not found:
        return []
    # The lines a finding starts on or is anchored to (a key block's BEGIN), each read once: a
    # table's cell may be on a line of no door, which `data` left blank.
    allowed = ({ln for ln in {f[1] for f in found} | {f[2] for f in found} if ALLOW_MARKER in lines[ln]}
               if honour_marker else set())
    return _resolve(found, allowed, allow)



# The run's characters marked `a`, UTF-8's continuation bytes \x01 (a character's offset is its
# byte's less the continuation bytes before it), the rest a space.
_AWS_TABLE = bytes(0x61 if chr(b) in string.ascii_letters + string.digits + "/+" else
                   (0x01 if 0x80 <= b < 0xC0 else 0x20) for b in range(256))
_AWS_RUN = b"a" * 40


def _named_candidates(lines: list[str], named: Sequence[int]) -> dict[int, list[str]]:
    """The gate's candidates (line -> the prefilter words on it, in PREFILTER's order), read on
    `named` lines only (the core's lines of the plain door). `str.lower` finds the words
    `bytes.lower` and the caseless gate find: the words are ASCII or caseless CJK, and the
    characters whose lower case is ASCII (İ, K) void the core's lines (its `CASE`)."""
    out: dict[int, list[str]] = {}
    for ln in named:
        line = lines[ln]
        words = _line_words(line) if len(line) <= _MEMO_LINE else _words_in(line)
        if words:
            out[ln] = list(words)
    return out


def _words_in(line: str) -> tuple[str, ...]:
    low = line.lower()
    return tuple(w for w in _GENERIC_KEYWORDS if w in low)


# A root repeats its boilerplate lines from file to file (`API_KEY=<your-api-key>`): a short
# line's words are kept, as its assignments are (`_assignments`).
_line_words = lru_cache(maxsize=4096)(_words_in)


def _aws_secret_spans(line: str, raw: bytes | None = None) -> list[tuple[int, int]]:
    """The spans `_AWS_SECRET_NEAR_ID.finditer(line)` gives: runs of exactly 40 of its
    characters, not followed by `=`. A long line is read in its bytes (`raw`: its UTF-8, when
    the caller has it), its characters marked by one translate and the runs found by `find`
    (the regex, a class tried at every character, took 30 ms on a megabyte line)."""
    if len(line) < _LONG_LINE:
        return [m.span("v") for m in _AWS_SECRET_NEAR_ID.finditer(line)]
    if raw is None:
        raw = line.encode("utf-8", "surrogatepass")
    marks = raw.translate(_AWS_TABLE)
    ascii_line = line.isascii()
    out = []
    last_b = skipped = 0  # continuation bytes before `last_b`
    p = marks.find(_AWS_RUN)
    while p != -1:  # the first of a run: an earlier start would have been found first
        end = marks.find(b" ", p)  # the run's end: its first byte not marked (never a continuation)
        if end == -1:
            end = len(marks)
        if end - p == 40 and raw[end:end + 1] != b"=":
            if not ascii_line:
                skipped += marks.count(b"\x01", last_b, p)
                last_b = p
            out.append((p - skipped, p - skipped + 40))
        p = marks.find(_AWS_RUN, end)
    return out


def _spans_by_line(found: Iterable[_Found]) -> dict[int, tuple[list[int], list[int]]]:
    """The one-line spans of `found` by line: their starts, sorted, and for each the largest
    end of the spans up to it (so that `_meets` is one bisection, however many a line holds)."""
    by_line: dict[int, list[tuple[int, int]]] = {}
    for f in found:
        if f[2] == f[4]:
            by_line.setdefault(f[2], []).append((f[3], f[5]))
    out = {}
    for ln, spans in by_line.items():
        spans.sort()
        ends, top = [], -1
        for _a, e in spans:
            top = max(top, e)
            ends.append(top)
        out[ln] = ([a for a, _e in spans], ends)
    return out


def _meets(spans: tuple[list[int], list[int]] | None, a: int, e: int) -> bool:
    """Does [a, e) overlap one of `spans` (`_spans_by_line`'s, for one line)?"""
    if spans is None:
        return False
    starts, ends = spans
    k = bisect_left(starts, e)  # the spans starting before `e`
    return k > 0 and ends[k - 1] > a


def _may_assign(line: str, words: list[str], n: int, data: bytes, lowered: bytes | None) -> bool:
    """`may_assign` for a long line (`data`: the text's bytes, the line's own when it is the
    only one; `lowered`: `data.lower()` when known)."""
    if n == 1:
        return may_assign(data, lowered if lowered is not None else data.lower(), 0, len(data), words)
    raw = line.encode("utf-8", "surrogatepass")
    return may_assign(raw, raw.lower(), 0, len(raw), words)


# A root repeats its boilerplate lines from file to file (agent rules: `API_KEY=<your-api-key>`
# and `${API_TOKEN}` lines in every file), and `find_assignments` is a function of its arguments
# alone: a short line's answer is kept (its `low` is None, `_lowered` gives none below
# `_LONG_LINE`). At most 4,096 lines of `_MEMO_LINE` characters: a few megabytes at worst.
_MEMO_LINE = 512


@lru_cache(maxsize=4096)
def _assignments(line: str, hits: tuple[str, ...], in_sentences: bool) -> tuple[tuple[int, int, str], ...]:
    return tuple(find_assignments(line, hits, in_sentences))


def _lowered(line: str, n: int, data: bytes) -> str | None:
    """`line.lower()` for a long line that is not ASCII, made faster from its UTF-8 bytes
    (lowering ASCII letters there and decoding is several times faster than `str.lower`): the
    keywords looked for are ASCII or CJK, so their places are the same, unless the line holds
    one of the two characters whose lower case is ASCII or two characters long (`İ`, the
    Kelvin sign). None: let the caller lower the line."""
    if len(line) < _LONG_LINE or line.isascii() or "\u0130" in line or "\u212a" in line:
        return None
    raw = data if n == 1 else line.encode("utf-8", "surrogatepass")
    return raw.lower().decode("utf-8", "surrogatepass")


def _overlaps(spans: tuple[list, list] | None, lo: tuple[int, int], hi: tuple[int, int]) -> bool:
    """Does [lo, hi) overlap a claimed span? Claimed spans never overlap one another, so sorted
    by start they are sorted by end too: only the last one starting before `hi` can overlap."""
    if spans is None:
        return False
    starts, ends = spans
    k = bisect_left(starts, hi)
    return k > 0 and ends[k - 1] > lo


def _resolve(found: list[_Found], allowed_lines: set[int], allow: Sequence[re.Pattern[str]]) -> list[SecretMatch]:
    # By line: the claimed spans' starts and ends, sorted (bisected, so that a line holding
    # thousands of matches is not quadratic).
    taken: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
    out: list[SecretMatch] = []
    for prio, anchor, ln, a, eln, e, kind, value in sorted(found, key=lambda f: (f[0], f[2], f[3])):
        lo, hi = (ln, a), (eln, e)
        if any(_overlaps(taken.get(i), lo, hi) for i in range(ln, eln + 1)):
            continue
        # Claimed even when allowed, so that a less specific rule cannot report it again.
        for i in range(ln, eln + 1):
            starts, ends = taken.setdefault(i, ([], []))
            k = bisect_left(starts, lo)
            starts.insert(k, lo)
            ends.insert(k, hi)
        if anchor in allowed_lines or ln in allowed_lines:
            continue
        if allow and any(p.search(value) for p in allow):
            continue
        reason = WEAK_REASONS.get(prio, "")
        out.append(SecretMatch(ln, a, eln, e, kind, mask(value), not reason, reason))
    out.sort(key=lambda m: (m.line, m.start))
    return out
