"""PEM and PGP private key blocks, as pasted (one base64 line per line) or escaped into one
line (`"private_key": "-----BEGIN … KEY-----\\nMIIE…\\n-----END … KEY-----\\n"`, as in a
Google service-account JSON file); and PuTTY's private key files (`find_putty`).

The value is the key material only: from the first base64 body line's start to the end of the
last body line, so that replacing it keeps the BEGIN and END lines (and PGP armour headers).

Armour as the tools write it (five dashes, upper case, the BEGIN line alone on its line, each
body line bare, quoted `> ` or indented) is read on the body's own evidence (enough base64 that
is not a placeholder). Armour a reader still reads as a key but no tool writes (a review wrote
them to get a key past the hook): lower case, four dashes, a word after the header, the lines
as Markdown list items (`- `, `* `, `1. `), a short word line (`EXAMPLE`) among the body lines.
Those are reported on stronger evidence: the body also begins as key material does (`_KEYISH`:
DER's `MI…`/`MH…`, OpenSSH's `b3BlbnNzaC1rZXktdjE`, an OpenPGP secret key packet) or has armour
headers (an encrypted PEM key), and holds at least `_MIN_STRICT` characters
(docs/decisions.md, "Secrets: private key blocks in unusual armour").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ._checks import is_example, token_body_ok

_BEGIN = re.compile(r"-{4,5}BEGIN (?P<label>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-{4,5}", re.IGNORECASE)
# What may come before a line of the block: indentation, quote marks, list markers. A list
# marker (`- `, `* `, `+ `, `1. `) is armour no tool writes (see above).
_PRE = r"(?:[ \t>]|[-*+][ \t]|\d{1,3}[.)][ \t])*"
_LIST_MARKER = re.compile(r"[-*+][ \t]|\d{1,3}[.)][ \t]")
_BODY_LINE = re.compile(rf"(?P<pre>{_PRE})(?P<body>[A-Za-z0-9+/=]+)[ \t]*")
_HEADER_LINE = re.compile(rf"{_PRE}[A-Za-z][\w-]*: ")
_BLANK = re.compile(_PRE)
_END = re.compile(r"-{4,5}END ", re.IGNORECASE)
_TAIL = re.compile(r"-{4,5}END", re.IGNORECASE)
# How key material begins, base64-encoded: a DER SEQUENCE (`0x30` and its length: `MII` for
# RSA and PKCS#8, `MHc` for an EC key, `MC4` for Ed25519), OpenSSH's `openssh-key-v1`, an
# OpenPGP secret key packet (old format `0x94`–`0x97`, new format `0xC5`).
_KEYISH = re.compile(r"M[A-I]|b3BlbnNzaC1rZXktdjE|l[A-Za-z0-9+/]|x[V-Zabc]")
_MIN_STRICT = 60
# Escaped into one line: after BEGIN, `\n` (or `\r\n`) separated base64 chunks.
_ESCAPED = re.compile(r"(?:\\r)?\\n(?P<body>[A-Za-z0-9+/=]+(?:(?:\\r)?\\n[A-Za-z0-9+/=]+)*)")
# Pasted into one line with spaces: "-----BEGIN … KEY----- MIIE… … -----END … KEY-----".
_INLINE = re.compile(r"[ \t]+(?P<body>[A-Za-z0-9+/=]{16,}(?:[ \t]+[A-Za-z0-9+/=]+)*)")

_REST_BLANK = re.compile(r"\s*\Z")  # nothing but whitespace from here: `not text[pos:].strip()`, uncopied
_MIN_BODY = 40  # base64 characters: less is a stub like "MIIE…" or a placeholder
_MAX_LINES = 400


def _kind(label: str, service_account: bool) -> str:
    if label.upper().startswith("PGP"):
        return "PGP private key"
    if service_account:
        return "Google service-account private key"
    return "PEM private key"


def _service_account(line: str) -> bool:
    return '"private_key"' in line or "'private_key'" in line


def _rstripped(text: str, end: int) -> int:
    """`len(text[:end].rstrip())`, without copying the text."""
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return end


def _elided(text: str, pos: int) -> bool:
    """The body is cut short ("MIIEow…AB..." in documentation): not a whole key."""
    return text[pos:pos + 8].lstrip(" \t>").startswith(("...", "…"))


# Base64 of zero bytes: a key's binary layout is full of them (OpenSSH's header, `none`
# cipher and length fields encode as `AAAAAAAB`, `AAAAMwAAAAt`), so they say nothing about
# whether the body is a placeholder (`xxxxxx`, `AAAAAAAA…` alone, which leaves nothing).
_ZERO_RUNS = re.compile(r"A{4,}")


def _material_ok(body: str, strict: bool = False, headers: bool = False) -> bool:
    """Is `body` (base64, joined) key material? `strict`: the armour is one no tool writes, so
    the body must also begin as key material does (or follow armour headers) and be long."""
    probe = _ZERO_RUNS.sub("", body[:600])
    if strict and (len(body) < _MIN_STRICT or not (headers or _KEYISH.match(body))):
        return False
    return len(probe) >= _MIN_BODY and token_body_ok(probe[:400]) and not is_example(body)


def _canonical(begin: re.Match[str]) -> bool:
    """Is the BEGIN line's armour as the tools write it (five dashes, upper case)?"""
    text = begin.group()
    return text.startswith("-----BEGIN ") and text.endswith("-----") and text == text.upper()


# Yields (begin_line, line, start, end_line, end, kind, value).
def find_pem(lines: list[str], begin_lines: list[int]) -> Iterator[tuple[int, int, int, int, int, str, str]]:
    n = len(lines)
    for b in begin_lines:
        text = lines[b]
        tail_from, tail = -1, -1  # the last `-----END` search on this line: from where, found where
        service_account = _service_account(text)  # once per line, not per BEGIN on it
        for m in _BEGIN.finditer(text):
            kind = _kind(m.group("label"), service_account)
            rest = m.end()
            strict = not _canonical(m)
            esc = _ESCAPED.match(text, rest)
            if esc:
                body = esc.group("body")
                flat = re.sub(r"(?:\\r)?\\n", "", body)
                if _material_ok(flat, strict) and not _elided(text, esc.end("body")):
                    yield b, b, esc.start("body"), b, esc.end("body"), kind, body
                continue
            inline = _INLINE.match(text, rest)
            if inline or not _REST_BLANK.match(text, rest):
                # Searched again only past the last find: one line of many BEGINs stays linear.
                if not (tail_from != -1 and tail_from <= rest and (rest <= tail or tail == -1)):
                    found_tail = _TAIL.search(text, rest)
                    tail_from, tail = rest, (found_tail.start() if found_tail else -1)
            if inline:
                body = inline.group("body")
                end = inline.end("body")
                if tail != -1:
                    end = min(end, _rstripped(text, tail))
                if _material_ok(body[: end - inline.start("body")].replace(" ", ""), strict) \
                        and not _elided(text, end):
                    yield b, b, inline.start("body"), b, end, kind, text[inline.start("body"):end]
                    continue
                if tail != -1:
                    continue  # the whole block on this line, and not a key
            if not _REST_BLANK.match(text, rest):
                if tail != -1:
                    continue  # "… -----BEGIN … KEY----- … -----END …" in a sentence
                strict = True  # a word after the header: the body on the lines below, if any
            found = _block(lines, b, n)
            if found is not None:
                first, start, last, end, parts, odd, headers = found
                if last == first:
                    value = lines[first][start:end]
                else:
                    value = "\n".join([lines[first][start:], *lines[first + 1:last], lines[last][:end]])
                after = lines[last + 1] if last + 1 < n else ""
                if _material_ok("".join(parts), strict or odd, headers) and not _elided(lines[last], end) \
                        and not _elided(after, 0):
                    yield b, first, start, last, end, kind, value
            break  # one block per BEGIN line


def _block(lines: list[str], b: int, n: int) -> tuple[int, int, int, int, list[str], bool, bool] | None:
    """Body of the block that begins on line b: (first line, start, last line, end, the body
    lines that are key material, whether the block has armour no tool writes, whether it has
    armour headers). A short line among long ones (`EXAMPLE` on its own) is no key material:
    it is left out of the material, and makes the armour odd."""
    i = b + 1
    limit = min(n, b + _MAX_LINES)
    headers = False
    # Armour headers (Proc-Type:, DEK-Info:, Version:, Comment:) and blank lines before the body.
    while i < limit:
        if _HEADER_LINE.match(lines[i]):
            headers = True
        elif not _BLANK.fullmatch(lines[i]):
            break
        i += 1
    if i >= limit:
        return None
    m = _BODY_LINE.fullmatch(lines[i])
    if m is None:
        return None
    first, start = i, m.start("body")
    last, end = i, m.end("body")
    parts = [m.group("body")]
    listed = _LIST_MARKER.search(m.group("pre")) is not None
    i += 1
    while i < limit:
        line = lines[i]
        if _END.search(line):
            break
        m = _BODY_LINE.fullmatch(line)
        if m is None:
            break
        last, end = i, m.end("body")
        parts.append(m.group("body"))
        listed = listed or _LIST_MARKER.search(m.group("pre")) is not None
        i += 1
    longest = max(map(len, parts))
    material = [p for p in parts if 2 * len(p) >= longest]
    # Short lines other than the last (which a key's body may end with), and a short last
    # line that is a word of a placeholder: interjections.
    odd = listed or any(2 * len(p) < longest for p in parts[:-1]) or \
        (len(parts) > 1 and 2 * len(parts[-1]) < longest and is_example(parts[-1]))
    return first, start, last, end, material, odd, headers


# PuTTY's private key files (`.ppk`, formats 2 and 3): a first line naming the algorithm, then
# `Name: value` lines (`Encryption:`, `Comment:`, format 3's `Key-Derivation:` and `Argon2-…:`),
# the public part (`Public-Lines: N` and N base64 lines), the private part (`Private-Lines: N`
# and N base64 lines) and `Private-MAC:`. The value is the private lines, encrypted or not
# (`Encryption: aes256-cbc`): an encrypted key is still a private key, as an encrypted PEM
# block is (docs/decisions.md, "Secrets: Twilio and PuTTY").
_PUTTY = re.compile(r"[ \t>]*PuTTY-User-Key-File-[23]: *[a-z][a-z0-9@.\-]*(?:[ \t]+<!--.*-->)?[ \t\r]*")
_PUTTY_FIELD = re.compile(r"[ \t>]*(?P<name>[A-Z][A-Za-z0-9\-]*): *(?P<value>[^\r]*?)[ \t\r]*")
_LINE_COUNT = re.compile(r"\d{1,4}")


def find_putty(lines: list[str], header_lines: list[int]) -> Iterator[tuple[int, int, int, int, int, str, str]]:
    """PuTTY private keys in the files whose first line is on one of `header_lines`: (header
    line, line, start, end_line, end, kind, value), as `find_pem` gives."""
    n = len(lines)
    for b in header_lines:
        if not _PUTTY.fullmatch(lines[b]):
            continue  # the header quoted in a sentence, or a damaged one
        i, limit = b + 1, min(n, b + _MAX_LINES)
        while i < limit:
            field = _PUTTY_FIELD.fullmatch(lines[i])
            if field is None:
                break  # not a key file's line: no private part follows
            name, count = field.group("name"), field.group("value")
            if name not in ("Public-Lines", "Private-Lines"):
                i += 1
                continue
            if not _LINE_COUNT.fullmatch(count):
                break
            if name == "Public-Lines":
                i += 1 + int(count)
                continue
            found = _counted_body(lines, i + 1, min(n, i + 1 + int(count)))
            if found is not None:
                first, start, last, end = found
                value = "\n".join([lines[first][start:], *lines[first + 1:last], lines[last][:end]]) \
                    if last > first else lines[first][start:end]
                flat = "".join(x.strip(" \t>") for x in value.split("\n"))
                if _material_ok(flat) and not _elided(lines[last], end):
                    yield b, first, start, last, end, "PuTTY private key", value
            break


def _counted_body(lines: list[str], i: int, stop: int) -> tuple[int, int, int, int] | None:
    """The base64 lines from `i` up to `stop` (fewer where one is not base64: a file cut short):
    (first line, start, last line, end)."""
    found = None
    while i < stop:
        m = _BODY_LINE.fullmatch(lines[i])
        if m is None:
            break
        if found is None:
            found = (i, m.start("body"), i, m.end("body"))
        else:
            found = (found[0], found[1], i, m.end("body"))
        i += 1
    return found
