"""Markup inside a token that a Markdown renderer shows as nothing, or as one character (a
review wrote them to get a key past the pre-write hook): what a reader of the rendered note
sees is the exact token.

- An HTML comment or an inline tag: `AKIAZ7Q3R9<!-- -->T2M4K8W6PX`, `…R9<b>T2…</b>`.
- Emphasis and strike-through markers: `AKIAZ7Q3R9**T2M4K8W6PX**`, `…R9~~T2…~~`. An underscore
  inside a word is no emphasis (CommonMark reads it as the character, which a token may hold),
  so `_` is left as it is.
- A character reference: `AKIA&#90;7Q3R9…`, `ghp&#95;…`, `&#x5F;`, `&lowbar;` (the HTML named
  references whose character is one ASCII character).
- A backslash escape of punctuation: `ghp\\_…`.

`fold(text)` gives, for each line holding such markup *inside a run of token characters*
(markup glued to a token character on both sides, or a reference or escape glued on one side,
whose character then continues the run), the line as rendered and, for each of its characters,
where it came from. Other lines (`**bold**` after a space, `a_b_c`, a URL's `&x=1`) are not
folded, and a text without any of `<`, `*`, `~`, `&`, `\\` costs five `in` tests. The caller
(`find_secrets`) reads the folded lines for tokens in a provider's documented format only: a
key named by its key, a URL, a private key block are not looked for there, so that rendered
prose does not raise what its source would not.
"""

from __future__ import annotations

import re
from html.entities import html5

# The inline HTML elements that render their content and nothing of their own.
_INLINE_TAGS = "a|abbr|b|bdi|bdo|cite|code|data|del|dfn|em|font|i|ins|kbd|mark|s|samp|small|span|strike|strong|" \
               "sub|sup|time|tt|u|var|wbr"
# Each piece is looked for from its first character, which the regex engine skips to. One
# that renders as nothing must have a token character (or another piece's end) on both sides,
# checked by a look-behind of two characters and a look-ahead of one; an escape must have a
# letter or digit on both sides. So the many `**` of bold text, list bullets, `a*b` in
# formulas and `\-` in a regular expression's class are passed over in C. (`.` and `:`, which
# some tokens hold too, end bold labels: `**Output**:`.)
_B = r"A-Za-z0-9_\-+/="
_PIECE = re.compile(
    rf"\*(?<=[{_B}~>;]\*)\*{{0,2}}(?=[{_B}<~&\\])"
    rf"|~(?<=[{_B}*>;]~)~?(?=[{_B}<*&\\])"
    rf"|<(?<=[{_B}*~>;]<)(?:!--[^\n]*?-->|(?i:/?(?:{_INLINE_TAGS})(?:[ \t][^<>\n]*)?/?>))(?=[{_B}<*~&\\])"
    r"|&(?:#(?P<dec>[0-9]{1,7});|#[xX](?P<hex>[0-9A-Fa-f]{1,6});|(?P<name>[A-Za-z][A-Za-z0-9]{1,31};))"
    r"|\\(?<=[A-Za-z0-9]\\)(?P<esc>[_\-+/=.:])(?=[A-Za-z0-9])"
)
_MARKS = ("<", "*", "~", "&", "\\")
# What a token's run is made of (`_tokens.py`'s token characters and the separators some use).
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.:")

# Every shaped token holds a run of 20 of these (as `find_secrets` assumes): a rendered line
# without one is not read again.
_RUN = re.compile(r"[A-Za-z0-9_\-%]{20}")


def _rendered(group: str | None, value: str) -> str | None:
    """What a piece renders as (`group`: the name of its last group, `value`: that group's
    text): "" (nothing), one character, or None (left as written: a reference to no character,
    or to one that is no token character)."""
    if group is None:
        return ""
    if group == "dec" or group == "hex":
        code = int(value, 10 if group == "dec" else 16)
        ch = chr(code) if code < 0x110000 else ""
    elif group == "name":
        ch = html5.get(value, "")
    else:  # esc
        ch = value
    return ch if len(ch) == 1 and ch in _TOKEN_CHARS else None


def may_hold(text: str) -> bool:
    """Could `text` hold markup `fold` folds (one `in` test per marker)?"""
    return any(c in text for c in _MARKS)


_Cluster = tuple[int, int, list[tuple[int, int, str]]]


def _clusters(text: str, lo: int, hi: int) -> list[_Cluster]:
    """The clusters of adjacent pieces in `text[lo:hi]` (one line) that sit inside a run of
    token characters: (start, end, [(piece start, piece end, what it renders as)])."""
    out: list[_Cluster] = []
    cur: list[tuple[int, int, str]] = []

    def close() -> None:
        a, e = cur[0][0], cur[-1][1]
        left = a > lo and text[a - 1] in _TOKEN_CHARS
        right = e < hi and text[e] in _TOKEN_CHARS
        if (left and right) or ((left or right) and any(r for _a, _e, r in cur)):
            out.append((a, e, cur))

    for m in _PIECE.finditer(text, lo, hi):
        g = m.lastgroup
        shown = _rendered(g, m.group(g) if g is not None else "")
        if shown is None:
            if cur:
                close()
                cur = []
            continue
        a = m.start()
        if cur and cur[-1][1] != a:
            close()
            cur = []
        cur.append((a, m.end(), shown))
    if cur:
        close()
    return out


def fold(lines: list[str], text: str) -> list[tuple[int, str, list[int], list[int]]]:
    """(line index, the line as rendered, for each of its characters the offset in the line it
    starts at and the one it ends at) for each line of `lines` (`text`: joined with "\n")
    holding markup inside a run of token characters, and a run of 20 once rendered. Each line
    holding a piece is read once; a line holding none is passed over by the search."""
    if not may_hold(text):
        return []
    out: list[tuple[int, str, list[int], list[int]]] = []
    ln = at = 0  # the line of offset `at`
    pos = 0
    while True:
        m = _PIECE.search(text, pos)
        if m is None:
            break
        h = m.start()
        ln += text.count("\n", at, h)
        start = text.rfind("\n", 0, h) + 1
        end = text.find("\n", h)
        if end == -1:
            end = len(text)
        at = h
        clusters = _clusters(text, start, end)
        if clusters:
            shown, starts, ends = _render(text, start, end, clusters)
            if len(shown) >= 20 and _RUN.search(shown):
                out.append((ln, shown, starts, ends))
        pos = end + 1
    return out


def _render(text: str, lo: int, hi: int, clusters: list[_Cluster]) -> tuple[str, list[int], list[int]]:
    """The line `text[lo:hi]` with `clusters` rendered, and for each of its characters the
    offsets (in the line) it starts and ends at."""
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = lo
    for a, e, parts in clusters:
        pieces.append(text[at:a])
        starts.extend(range(at - lo, a - lo))
        ends.extend(range(at - lo + 1, a - lo + 1))
        for ps, pe, r in parts:
            if r:
                pieces.append(r)
                starts.append(ps - lo)
                ends.append(pe - lo)
        at = e
    pieces.append(text[at:hi])
    starts.extend(range(at - lo, hi - lo))
    ends.extend(range(at - lo + 1, hi - lo + 1))
    return "".join(pieces), starts, ends
