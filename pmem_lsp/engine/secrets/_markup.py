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
MAX_LINES = 200  # folded lines per text: the view stays cheap whatever the text


def _rendered(m: re.Match[str]) -> str | None:
    """What a piece renders as: "" (nothing), one character, or None (left as written: a
    reference to no character, or to one that is no token character)."""
    if m.group("dec") is not None or m.group("hex") is not None:
        code = int(m.group("dec"), 10) if m.group("dec") is not None else int(m.group("hex"), 16)
        ch = chr(code) if code < 0x110000 else ""
    elif m.group("name") is not None:
        ch = html5.get(m.group("name"), "")
    elif m.group("esc") is not None:
        ch = m.group("esc")
    else:
        return ""
    return ch if len(ch) == 1 and ch in _TOKEN_CHARS else None


def _glued(before: str, after: str, shown: str) -> bool:
    """Is a cluster of adjacent pieces (rendering as `shown`) inside a run of token characters,
    `before` and `after` being the characters around it?"""
    left, right = before in _TOKEN_CHARS, after in _TOKEN_CHARS
    return (left and right) or (bool(shown) and (left or right))


def may_hold(text: str) -> bool:
    """Could `text` hold markup `fold` folds (one `in` test per marker)?"""
    return any(c in text for c in _MARKS)


def fold(lines: list[str], text: str) -> list[tuple[int, str, list[int], list[int]]]:
    """(line index, the line as rendered, for each of its characters the offset it starts at
    in the line and the offset it ends at) for each line of `lines` (`text`: joined with "\\n")
    holding markup inside a run of token characters."""
    if not may_hold(text):
        return []
    out: list[tuple[int, str, list[int], list[int]]] = []
    ln = at = 0  # the line of offset `at`
    done = -1  # the last line folded
    cluster: list[tuple[int, int, str]] = []  # adjacent pieces: (start, end, rendered)

    def glued(pieces: list[tuple[int, int, str]]) -> bool:
        before = text[pieces[0][0] - 1] if pieces[0][0] > 0 else "\n"
        after = text[pieces[-1][1]] if pieces[-1][1] < len(text) else "\n"
        return _glued(before, after, "".join(r for _a, _e, r in pieces))

    found: list[int] = []  # text offsets of glued clusters
    for m in _PIECE.finditer(text):
        shown = _rendered(m)
        if shown is None or "\n" in m.group():
            if cluster and glued(cluster):
                found.append(cluster[0][0])
            cluster = []
            continue
        if cluster and cluster[-1][1] != m.start():
            if glued(cluster):
                found.append(cluster[0][0])
            cluster = []
        cluster.append((m.start(), m.end(), shown))
    if cluster and glued(cluster):
        found.append(cluster[0][0])
    for pos in found:
        ln += text.count("\n", at, pos)
        at = pos
        if ln == done:
            continue
        done = ln
        shown, starts, ends = _fold_line(lines[ln])
        if len(shown) >= 20 and _RUN.search(shown):
            out.append((ln, shown, starts, ends))
        if len(out) >= MAX_LINES:
            break
    return out


def _fold_line(line: str) -> tuple[str, list[int], list[int]]:
    """The line with its glued markup rendered, and for each character its start and end."""
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = 0
    matches = [m for m in _PIECE.finditer(line) if _rendered(m) is not None]
    i = 0
    while i < len(matches):
        j = i
        while j + 1 < len(matches) and matches[j + 1].start() == matches[j].end():
            j += 1
        group = matches[i:j + 1]
        shown = [(m.start(), m.end(), _rendered(m) or "") for m in group]
        a, e = group[0].start(), group[-1].end()
        before = line[a - 1] if a > 0 else "\n"
        after = line[e] if e < len(line) else "\n"
        if _glued(before, after, "".join(r for _a, _e, r in shown)):
            pieces.append(line[at:a])
            starts.extend(range(at, a))
            ends.extend(range(at + 1, a + 1))
            for ps, pe, r in shown:
                if r:
                    pieces.append(r)
                    starts.append(ps)
                    ends.append(pe)
            at = e
        i = j + 1
    pieces.append(line[at:])
    starts.extend(range(at, len(line)))
    ends.extend(range(at + 1, len(line) + 1))
    return "".join(pieces), starts, ends
