"""Secrets in disguise (issue 25): a keyword or a token written so that a plain match misses
it, while a reader (a person, a model) still reads it as written.

- Invisible characters (zero-width space, joiners, soft hyphen, word joiner, BOM, the
  bidirectional controls, variation selectors, tag characters) inside a word:
  `pass\u200bword: …`, `AKIA\ufe0f…`.
- Look-alike letters from Cyrillic and Greek (`pаssword` with a Cyrillic `а`), and fullwidth
  letters (`ｐａｓｓｗｏｒｄ`).
- A token broken over two lines: `ghp_…` on one, the rest on the next.

`fold(lines)` gives the lines with invisibles removed and look-alikes replaced by the ASCII
letter they imitate, and for each folded line the original offset of each of its characters,
so that a match found in the folded text is reported where it is in the real one. `None` when
no line holds such a character (the common case costs one `isascii` or one regex search).

`joins(text)` gives the places where a line ends inside a long run of token characters and the
next line goes on with another: the candidates for a broken token. The detectors stay as they
are (`_generic.py`, `_tokens.py`); `find_secrets` runs them on these views as well.
"""

from __future__ import annotations

import re
from bisect import bisect_right

# Characters that render as nothing (or as a hyphen only at a line break): the format and
# joining controls, the bidirectional controls (embeddings, overrides and isolates: U+202A–
# U+202E, U+2066–U+2069, which reorder what follows on screen but are no character of it), the
# variation selectors (U+FE00–U+FE0F, after an emoji too: removing them changes no word), and
# the tag characters (U+E0000–U+E007F, invisible in every font).
INVISIBLE = "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061" \
            "\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f\ufeff" \
            + "".join(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A), *range(0xFE00, 0xFE10),
                                *range(0xE0000, 0xE0080)]))

# Cyrillic and Greek letters that look like an ASCII letter in common fonts.
_LOOK_ALIKES = {
    # Cyrillic, lower case
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "к": "k", "м": "m", "н": "h", "т": "t", "в": "b",
    "ѡ": "w", "ү": "y", "ɡ": "g",
    # Cyrillic, upper case
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ү": "Y", "Һ": "H",
    # Greek, lower case
    "α": "a", "ο": "o", "ρ": "p", "ι": "i", "κ": "k", "ν": "v", "υ": "u", "ε": "e", "τ": "t", "χ": "x",
    "ω": "w", "ς": "s",
    # Greek, upper case
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
}
# Fullwidth letters and digits are ASCII shifted by 0xFEE0. Fullwidth punctuation (`：`, `（`)
# is ordinary CJK writing, which the detectors read as it is.
_FULLWIDTH = [*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B)]
_FOLD = {ord(k): v for k, v in _LOOK_ALIKES.items()}
_FOLD.update({c: chr(c - 0xFEE0) for c in _FULLWIDTH})
_FOLD.update({ord(c): "" for c in INVISIBLE})

# The ranges written as ranges: a class of single characters above U+FFFF is tried one by one.
_RANGES = "\u202a-\u202e\u2066-\u2069\ufe00-\ufe0f\U000e0000-\U000e007f"
_DISGUISED = re.compile("[" + re.escape("".join(c for c in INVISIBLE if not re.match(f"[{_RANGES}]", c))
                                        + "".join(_LOOK_ALIKES))
                        + _RANGES + "\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")


def _by_lead() -> tuple[tuple[bytes, re.Pattern[bytes]], ...]:
    """The same characters as UTF-8 bytes, one search per leading byte: a search that starts
    with one byte skips to it in C, where the class above is tried at every character (a 1 MB
    line of JSON: 9 ms, against well under 1 ms for these)."""
    chars = set(INVISIBLE) | set(_LOOK_ALIKES) | {chr(c) for c in _FULLWIDTH}
    tails: dict[int, list[bytes]] = {}
    for ch in chars:
        raw = ch.encode()
        tails.setdefault(raw[0], []).append(raw[1:])
    return tuple((bytes([lead]), re.compile(re.escape(bytes([lead])) + b"(?:" + b"|".join(
        re.escape(t) for t in sorted(ts, key=len, reverse=True)) + b")")) for lead, ts in sorted(tails.items()))


_BY_LEAD = _by_lead()


def disguised(data: bytes) -> bool:
    """Does `data` (UTF-8) hold a character `fold` folds? Each leading byte is looked for
    first (a memchr each: fourteen of them cost a third of one pass that marks them all)."""
    if data.isascii():
        return False
    return any(lead in data and rx.search(data) is not None for lead, rx in _BY_LEAD)


def fold_line(line: str) -> tuple[str, list[int]]:
    """The line folded, and for each of its characters the offset it came from in `line`
    (plus one entry for the end): the definition, a character at a time (`fold_fast` is what
    `fold` uses, and gives the same)."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(line):
        repl = _FOLD.get(ord(ch))
        if repl is None:
            out.append(ch)
            where.append(i)
        elif repl:
            out.append(repl)
            where.append(i)
    where.append(len(line))
    return "".join(out), where


class Offsets:
    """`fold_line`'s offsets without the list: for each character of a folded line, the offset
    it came from (`offsets[i]`; `offsets[len(folded)]` is the line's length). Only removed
    characters move the rest, so the folded offsets where one more has been removed are kept
    (`cuts`, ascending) and an offset is one bisection."""

    __slots__ = ("cuts", "size")

    def __init__(self, cuts: list[int], size: int) -> None:
        self.cuts, self.size = cuts, size

    def __getitem__(self, i: int) -> int:
        return i + bisect_right(self.cuts, i)

    def __len__(self) -> int:
        return self.size - len(self.cuts) + 1


# A run of them (`X(?:X)*`, which the regex engine scans for as fast as for one; `X+` is half
# as fast).
_DISGUISED_RUN = re.compile(f"{_DISGUISED.pattern}(?:{_DISGUISED.pattern})*")


def fold_fast(line: str, start: int = 0) -> tuple[str, Offsets]:
    """`fold_line`, from the runs of characters it folds (found by one search, from `start`:
    none is before it) with the text between them copied whole: a megabyte line holding one
    Cyrillic word took 150 ms a character at a time."""
    pieces: list[str] = []
    cuts: list[int] = []
    at = f = 0  # where the line was copied to; the folded text's length so far
    for m in _DISGUISED_RUN.finditer(line, start):
        i = m.start()
        pieces.append(line[at:i])
        f += i - at
        for ch in m.group():
            repl = _FOLD[ord(ch)]
            if repl:
                pieces.append(repl)
                f += 1
            else:
                cuts.append(f)  # removed: the characters from here on come from one further on
        at = m.end()
    pieces.append(line[at:])
    return "".join(pieces), Offsets(cuts, len(line))


def fold(lines: list[str], text: str, data: bytes | None = None) -> tuple[list[str], list[Offsets | None]] | None:
    """The folded lines and their offset maps (None for a line left as it was); None when
    `text` (the lines joined; `data`: the same as UTF-8) holds nothing to fold."""
    if text.isascii() or not disguised(data if data is not None else text.encode("utf-8", "surrogatepass")):
        return None
    folded: list[str] = []
    maps: list[Offsets | None] = []
    for line in lines:
        first = None if line.isascii() else _DISGUISED.search(line)
        if first is None:
            folded.append(line)
            maps.append(None)
        else:
            f, where = fold_fast(line, first.start())
            folded.append(f)
            maps.append(where)
    return folded, maps


# A line that ends in a run of token characters and a next line that begins (after indentation)
# with another: joined, the two runs are at least this long, like the shortest token (20).
# Then one of them is at least half that: the regex anchors on the line break and asks for 4
# characters on one side and 10 on the other, so prose ("word\nword") is passed over in C.
MIN_JOINED = 20
_T = r"[A-Za-z0-9_\-+/=]"
_BREAK = re.compile(rf"\n(?:(?<={_T}{{10}}\n)[ \t]*(?={_T}{{4}})|(?<={_T}{{4}}\n)[ \t]*(?={_T}{{10}}))")
_TAIL = re.compile(rf"{_T}*$")
_HEAD = re.compile(rf"{_T}*")


MAX_JOINS = 200  # per text: the views stay cheap whatever the text


def joins(text: str) -> list[tuple[int, int]]:
    """(line index, indentation of the next line) for each line break that may cut a token in
    two. Breaks in a block of three or more such lines (a PEM body, a column of hashes) are
    not: such a block is no token cut in two, and the PEM detector reads PEM blocks whole."""
    found = []
    ln = last = 0
    for m in _BREAK.finditer(text):
        at = m.start()
        line_start = text.rfind("\n", 0, at) + 1
        tail = _TAIL.search(text, line_start, at)
        head = _HEAD.match(text, m.end())
        if tail is not None and head is not None and len(tail.group()) + len(head.group()) >= MIN_JOINED:
            ln += text.count("\n", last, at)
            last = at
            found.append((ln, m.end() - at - 1))
        if len(found) > 4 * MAX_JOINS:
            break
    lines = {ln for ln, _indent in found}
    out = [(ln, indent) for ln, indent in found if ln - 1 not in lines and ln + 1 not in lines]
    return out[:MAX_JOINS]
