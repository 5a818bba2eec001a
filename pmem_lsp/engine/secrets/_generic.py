"""Secrets named by their key rather than their shape: `password: …`, `API_KEY=…`,
`"client_secret": "…"`, `**Token:** …`, `密码：…`, `| Password | … |`, `--password …`, and
credentialed URLs (`scheme://user:password@host`).

A key is secret-ish when one of its last words is a password/secret/token/key word (and its
last word is not one that names something else: `token_url`, `password_file`, `max_tokens`,
`secret_name`). The value must then look random (`looks_random`): a word, a reference, a path,
a hash, a version or a placeholder is not a secret.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Iterable, Iterator
from functools import lru_cache

from ._checks import (
    _LEET,
    _PLACEHOLDER_WORDS,
    is_example,
    is_template,
    looks_random,
    refused_at_once,
    url_password_placeholder,
    url_password_weak,
    wordy,
)

# The prefilter's lowercase literals (the text is lowered once), each with the key words it
# stands for: "密" covers 密码 and 密钥, "令" covers 口令 and 令牌.
_PREFILTER_WORDS = {
    "pass": ("pass",), "pwd": ("pwd",), "secret": ("secret",), "token": ("token",), "key": ("key",),
    "auth": ("auth",), "cred": ("cred",), "密": ("密码", "密钥"), "令": ("口令", "令牌"), "秘钥": ("秘钥",),
    "私钥": ("私钥",),
}
PREFILTER = tuple(_PREFILTER_WORDS)
KEYWORDS = tuple(w for words in _PREFILTER_WORDS.values() for w in words)

_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[\u3400-\u9fff]+")

_NOT_A_SECRET_LAST = frozenset(
    "id ids name names file files path paths dir url uri urls uris env type types hash hashed hashing "
    "length len count expiry expires expiration expire ttl age lifetime policy policies ref refs "
    "header headers field fields endpoint endpoints prompt limit limits size format rotation rotate "
    "manager store storage vault location hint reset mode required enabled disabled label description "
    "version scope scopes method provider source usage cost budget rate max min tokens keys secrets "
    "passwords credentials generator strength rule rules valid validation config setting settings "
    "command cmd helper prefix suffix pattern regex placeholder example sample".split()
)
# Tokens that are not credentials: pagination, idempotency, change and sync tokens.
_NOT_SECRET_TOKENS = frozenset(
    "next page pagination continuation idempotency client change sync request cancel marker "
    "resume cursor start starting end max min update forward backward copy upload retry".split()
)
# Words before the last that make the key name something public or derived: .NET's
# `PublicKeyToken`, a `publishable key`, a `hashed_password`, a `design token`.
_NOT_SECRET_BEFORE = frozenset("public publishable hashed hash design".split())
_KEY_PREFIX_WORDS = frozenset(
    "secret access private auth encryption signing master app service account api client session "
    "storage signature hmac jwt crypt cookie webhook license".split()
)


@lru_cache(maxsize=4096)
def classify_key(key: str) -> str | None:
    """The kind of secret a key names, or None when it names none."""
    key = key.strip()
    if not key:
        return None
    if "\u3400" <= key[-1] <= "\u9fff":
        if "密码" in key or "口令" in key:
            return "password"
        if "私有访问密钥" in key or "秘密访问密钥" in key:  # AWS's Chinese name for it
            return "AWS secret access key"
        if "私钥" in key:
            return "private key"
        if "密钥" in key or "秘钥" in key:
            return "access key" if "访问" in key else "secret key"
        if "令牌" in key:
            return "token"
        return None
    segs = [s.lower() for s in _SEGMENT.findall(key)]
    if not segs:
        return None
    last = segs[-1]
    if last in _NOT_A_SECRET_LAST or any(seg in _NOT_SECRET_BEFORE for seg in segs[:-1]):
        return None
    tail = "".join(segs[-4:])
    if "secretaccesskey" in tail or ("aws" in segs and ("secret" in segs or tail.endswith("secretkey"))):
        return "AWS secret access key"
    if last.endswith(("password", "passwd", "passphrase", "pwd")) or last in ("pass", "pw", "passwort"):
        return "password"
    if tail.endswith("apikey"):
        return "API key"
    if last.endswith("secret"):
        return "client secret" if tail.endswith("clientsecret") else "secret"
    if last.endswith("key") and len(segs) >= 2 and segs[-2] in _KEY_PREFIX_WORDS:
        return f"{segs[-2]} key" if segs[-2] in ("secret", "access", "private") else "secret key"
    if last.endswith(("secretkey", "accesskey", "privatekey", "apikey", "authkey")):
        return "secret key"
    if last.endswith("token") or last in ("authorization", "bearer"):
        if any(seg in _NOT_SECRET_TOKENS for seg in segs[:-1]) or last[:-5] in _NOT_SECRET_TOKENS:
            return None
        return "token"
    if last in ("credential", "creds", "cred"):
        return "credential"
    return None


# Keys that name a secret only sometimes: "Pass:" is a pass/fail verdict, a mountain pass, a
# German "Pass" (passport) as often as a password.
_AMBIGUOUS_KEYS = frozenset(("pass",))


def _ambiguous_key(key: str) -> bool:
    return key.strip(" \t*_`").lower() in _AMBIGUOUS_KEYS


def cell_value_ok(value: str, header: str) -> bool:
    """For a cell under a secret-named column: a table of design tokens (`read/write`, `48px`,
    `spacing/large`) or test verdicts holds words; a password column holds values with letters
    and digits (or long mixed-case letters)."""
    if not looks_random(value):
        return False
    if _ambiguous_key(header) and wordy(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (has_digit and has_alpha and not wordy(value)) or (
        len(value) >= 16 and value.isalnum() and not value.islower() and not value.isupper())


_IDENT_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
_CLOSERS = frozenset(" \t*_\"'`])")


def _is_cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff"


def _key_end(line: str, sep_start: int) -> int:
    """Where the key before a separator ends (closing quotes, emphasis and brackets skipped)."""
    end = sep_start
    while end > 0 and line[end - 1] in _CLOSERS:
        end -= 1
    return end


def _key_before(line: str, sep_start: int) -> str | None:
    """The key written just before a separator: a run of CJK characters, or up to three words
    of identifier characters ("client secret", "AWS_SECRET_ACCESS_KEY", "Bot token")."""
    end = _key_end(line, sep_start)
    if end == 0:
        return None
    if _is_cjk(line[end - 1]):
        start = end
        while start > 0 and end - start < 12 and _is_cjk(line[start - 1]):
            start -= 1
        return line[start:end]
    start = end
    for _ in range(3):
        w_end = start
        while start > 0 and line[start - 1] in _IDENT_CHARS:
            start -= 1
        if start == w_end:
            break
        if start >= 2 and line[start - 1] in " \t" and line[start - 2] in _IDENT_CHARS:
            start -= 1
            continue
        break
    if start > 0 and line[start - 1] in ":/":  # inside an ARN, a URN or a path
        return None
    key = line[start:end].strip().lstrip("_.-0123456789")
    return key or None


# A label at the start of a line: indentation, list and quote markers, a table pipe.
_LINE_LEAD = re.compile(r"[\s>|]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?")
_MARKS = " \t*_`'\""
MAX_LABEL_WORDS = 4  # `AWS secret access key: …` is a label; `Commit it all in one pass: …` is prose


_MAX_LABEL = 120  # characters: a label longer than this is a sentence
_CLAUSE_END = re.compile(r"\s[—–-]\s|[|;(,]|[.!?。；，（]\s*")


def _prose_key(line: str, key_end: int, lead: int) -> bool:
    """Is the key ending at `key_end` a word in a sentence rather than the key of an
    assignment? A quoted key (`"password": …`) or one right after code punctuation
    (`{`, `,`, `;`, `&`, `?`, `(`) is code; otherwise the key must end a short label at the
    start of its line (`lead`: where the line's text starts): `- **DB password:** …`,
    `AWS secret access key: …`, not `Commit everything in one **pass:** --no-verify`.
    Looks at most _MAX_LABEL characters back, so a long line costs linear time."""
    if key_end < len(line) and line[key_end] in "\"'":
        return False
    stop = max(lead, key_end - _MAX_LABEL)
    i = key_end
    while i > stop and (line[i - 1].isalnum() or line[i - 1] in "_-."):
        i -= 1
    while i > stop and line[i - 1] in "\"' \t":
        i -= 1
    if i > 0 and line[i - 1] in "{,;&?(":
        return False
    # The label starts at the line's text, or after a clause ends: `— password: …` in a route's
    # description, `Notes. Password: …`, `; token: …`.
    window = line[max(lead, key_end - _MAX_LABEL):key_end]
    cut = max((m.end() for m in _CLAUSE_END.finditer(window)), default=0)
    if cut == 0 and key_end - lead > _MAX_LABEL:
        return True
    return sum(1 for w in window[cut:].split() if w.strip(_MARKS)) > MAX_LABEL_WORDS


_QUOTES = "\"'`"
_TRAILING = ",;:|.!?"
_CLOSING = {")": "(", "]": "[", "}": "{"}


_SCHEME_WORDS = ("bearer", "basic", "token", "bot")
_STRING_PREFIX = frozenset("fFbBrRuU")
_PRINTABLE_RUN = re.compile(r"[!-~]*")
# Longer than any value `looks_random` accepts (512), with room for trailing punctuation.
_MAX_VALUE = 1024
_MAX_TRAILING = 32  # trailing punctuation stripped from a value; more: no value


class _LineScan:
    """Remembers, for one line, the printable-ASCII run and the next quote of each kind
    found last. Every separator on a line looks for its value; a line of `password=`
    repeated a hundred thousand times would rescan the rest of the line for each one
    (quadratic), while with these, each character is scanned about once."""

    __slots__ = ("line", "run", "quotes")

    def __init__(self, line: str) -> None:
        self.line = line
        self.run = (0, 0)  # line[a:b] is printable ASCII and line[b] is not
        self.quotes: dict[str, tuple[int, int]] = {}  # quote -> (from, next one at or after from, or -1)

    def run_end(self, pos: int) -> int:
        a, b = self.run
        if not a <= pos < b:
            m = _PRINTABLE_RUN.match(self.line, pos)
            assert m is not None  # `*`: it always matches
            b = m.end()
            self.run = (pos, b)
        return b

    def find(self, quote: str, pos: int) -> int:
        known = self.quotes.get(quote)
        if known is not None and known[0] <= pos and (pos <= known[1] or known[1] == -1):
            return known[1]
        found = self.line.find(quote, pos)
        self.quotes[quote] = (pos, found)
        return found


def _value_after(line: str, pos: int, scan: _LineScan | None = None) -> tuple[int, int] | None:
    """The value that starts at or after pos: (start, end), or None when there is none.

    Bounded, so that a long line costs linear time whatever it holds: an unquoted value
    longer than _MAX_VALUE is cut there unstripped (longer than any secret; the caller's `&`
    or `;` cut may still find a short one inside), and a value ending in more than
    _MAX_TRAILING punctuation characters is no value."""
    if scan is None:
        scan = _LineScan(line)
    n = len(line)
    while True:
        while pos < n and line[pos] in " \t":
            pos += 1
        for bold in ("**", "__"):
            if line.startswith(bold, pos):
                pos += 2
                while pos < n and line[pos] in " \t":
                    pos += 1
        if pos >= n:
            return None
        ch = line[pos]
        if ch in _STRING_PREFIX and pos + 1 < n and line[pos + 1] in "\"'":
            pos += 1  # a Python string prefix: f"…", b'…', r"…"
            ch = line[pos]
        if ch in _QUOTES:
            close = scan.find(ch, pos + 1)
            if close == -1:
                end = pos + 1
                while end < n and not line[end].isspace():
                    end += 1
                start = pos + 1
            else:
                start, end = pos + 1, close
                if start >= end or any(c.isspace() for c in line[start:end]):
                    return None
                return start, end
            break
        start = pos
        # Up to whitespace, or to the first non-ASCII character ("，", "。", "）" after the value).
        end = scan.run_end(pos)
        if end - start > _MAX_VALUE:
            return start, start + _MAX_VALUE
        # A scheme word like "Bearer"/"Basic"/"token" before the value.
        if end - start <= 6 and end < n and line[start:end].lower() in _SCHEME_WORDS:
            pos = end
            continue
        break
    # Trailing punctuation, closing quotes, bold and table pipes that are not part of the value;
    # a closing bracket only when the value did not open it.
    raw_end = end
    counts: dict[str, int] = {}  # brackets in line[start:end], counted once, kept as end moves
    while end > start:
        if raw_end - end > _MAX_TRAILING:
            return None
        c = line[end - 1]
        if c in _CLOSING:
            opener = _CLOSING[c]
            if c not in counts:
                counts[c], counts[opener] = line.count(c, start, end), line.count(opener, start, end)
            if counts[opener] >= counts[c]:
                break
            counts[c] -= 1
        elif not (c in _TRAILING or c in _QUOTES or c == "*"):
            break
        elif c == "." and end < n and not line[end].isspace():
            break
        end -= 1
    if end <= start:
        return None
    return start, end


_NEXT_PARAM = re.compile(r"&[A-Za-z_][\w.\-]*=")
# A quoted piece joined to more (`"MaxPass_" + id`): a fragment of a string a program builds.
_CONCATENATED = re.compile(r"[\"']\s*(?:\+|\.\.)\s*[\w\"'(]")
# A product's default login (`Default password: …`, `默认密码：…`, `初期パスワード: …`) is
# published in its manual for everyone to read: a fact about the product, not a secret.
_DEFAULT_LOGIN = re.compile(r"(?i:default|factory)|默认|缺省|初始|出厂|初期|デフォルト|既定")
_DEFAULT_REACH = 16  # characters before the key: `Default admin password:`, `router's default password`


def _default_login(line: str, sep_start: int, key: str) -> bool:
    """Is the key a default login's in prose or a label (`Default password:`, `默认密码：`)?
    Not a config key (`DEFAULT_PASSWORD=…`, `default_password: …`): a deployment's own
    default is whatever its owner set, so only words before an ASCII key count."""
    key_start = _key_end(line, sep_start) - len(key)
    if _is_cjk(key[-1]) and _DEFAULT_LOGIN.search(key):
        return True
    words = key.split()
    if len(words) > 1 and any(_DEFAULT_LOGIN.fullmatch(w) for w in words[:-1]):
        return True  # `Default password`, `default admin password`: the key's own words
    window = line[max(0, key_start - _DEFAULT_REACH):key_start]
    return window[-1:].isspace() and _DEFAULT_LOGIN.search(window) is not None


_BASIC_SCHEME = re.compile(r"\bBasic[ \t]+$", re.IGNORECASE)
_BASIC_REACH = 64  # `Basic` and the blanks after it end within this many characters of the value
_BASE64_CHARS = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def basic_credentials_weak(value: str) -> bool:
    """For the value of `Authorization: Basic …`: it is `user:password` in base64 (RFC 7617),
    so judge the password inside, not the base64 (which always looks random). RFC 9110's own
    example (`Aladdin:open sesame`) and `user:password` are no secret. A value that does not
    decode to `user:password` is judged as it is."""
    if _BASE64_CHARS.fullmatch(value) is None or len(value) % 4:
        return False
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, sep, password = decoded.partition(":")
    if not sep or not decoded.isprintable():
        return False
    return not looks_random(password) or password == user
_SEP_AT = re.compile(r":=|=>|[:：=]|(?:is|are)[ \t]|是|为")


def _separators(line: str, prefilter_hits: Iterable[str] | None = None,
                low: str | None = None) -> Iterator[re.Match[str]]:
    """Separators that directly follow a word holding a secret keyword (`low`: the line
    lowered, when the caller has it)."""
    if low is None:
        low = line.lower()
    n = len(line)
    seen: set[int] = set()
    if prefilter_hits is None:
        keywords: Iterable[str] = KEYWORDS
    else:
        keywords = [w for hit in prefilter_hits for w in _PREFILTER_WORDS[hit]]
    for kw in keywords:
        i = low.find(kw)
        while i != -1:
            j = i + len(kw)
            if kw.isascii():
                while j < n and line[j] in _IDENT_CHARS:
                    j += 1
            k = j
            while k < n and line[k] in _CLOSERS:
                k += 1
            m = _SEP_AT.match(line, k)
            if m is not None and m.start() not in seen and (m.group(0)[0] not in "ia" or k > j):
                seen.add(m.start())
                yield m
            i = low.find(kw, j if j > i else i + 1)


_IDENT_BYTES = frozenset(c.encode()[0] for c in _IDENT_CHARS)
_CLOSER_BYTES = frozenset(c.encode()[0] for c in _CLOSERS)
_SEP_AT_BYTES = re.compile(_SEP_AT.pattern.encode())


def may_assign(data: bytes, lowered: bytes, start: int, end: int, prefilter_hits: Iterable[str]) -> bool:
    """Could `find_assignments` find anything on the line `data[start:end]` (UTF-8; `lowered`:
    the same with ASCII letters lowered)? False when no keyword of `prefilter_hits` there is
    followed, past its word and closing marks, by a separator: what `_separators` looks for,
    looked for in the bytes, so that a long line (a drawing's JSON) with a keyword in an id
    is not lowered and searched as text for nothing."""
    for hit in prefilter_hits:
        for kw in _PREFILTER_WORDS[hit]:
            find, n = _KEYWORD_SEARCH[kw]
            m = find(lowered, start, end)
            while m is not None:
                i = m.start()
                j = i + n
                if kw.isascii():
                    while j < end and data[j] in _IDENT_BYTES:
                        j += 1
                k = j
                while k < end and data[k] in _CLOSER_BYTES:
                    k += 1
                if _SEP_AT_BYTES.match(data, k, end) is not None:
                    return True
                m = find(lowered, max(j, i + 1), end)
    return False


# Each key word's search in bytes: a regex of one literal, which the regex engine skips to
# about twice as fast as `bytes.find` finds it (a long line is searched to its end).
_KEYWORD_SEARCH = {kw: (re.compile(re.escape(kw.encode())).search, len(kw.encode())) for kw in KEYWORDS}


def find_assignments(line: str, prefilter_hits: Iterable[str] | None = None,
                     in_sentences: bool = True, low: str | None = None) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each secret-looking value assigned to a secret-ish key on a line
    (`prefilter_hits`: the PREFILTER literals known to be on it, to look for those only;
    `in_sentences`: a key inside a sentence counts too, else only an assignment's key;
    `low`: `line.lower()`, or the same places of its ASCII and CJK letters, when known)."""
    scan = _LineScan(line)
    m_lead = _LINE_LEAD.match(line)
    assert m_lead is not None  # every part is optional: it always matches
    lead = m_lead.end()
    for m in _separators(line, prefilter_hits, low):
        s, e = m.start(), m.end()
        sep = m.group(0)
        if sep == ":" and (line.startswith("//", e) or line.startswith(":", e) or (s and line[s - 1] == ":")):
            continue
        if sep == "=" and (line.startswith("=", e) or (s and line[s - 1] in "=!<>+-*/%&|^~")):
            continue
        if sep in (":", "：") and s and line[s - 1] in " \t":
            continue  # "key: value" has the colon against the key; "pass :attr:" is prose
        # The value before the key: most values after a key word are refused at a glance
        # (`<your-api-key>`, `${TOKEN}`, `Bearer`), which costs less than reading the key and
        # the sentence around it. Only `=`'s value is cut below, at `&`, `;` or `#`: without
        # them the value judged at the end is this one.
        span = _value_after(line, e, scan)
        if span is None:
            continue
        a, b = span
        if (sep != "=" or not any(c in line[a:b] for c in "&;#")) and refused_at_once(line[a:b]):
            continue
        key = _key_before(line, s)
        if key is None:
            continue
        kind = classify_key(key)
        if kind is None:
            continue
        # `password: …` in a sentence is prose; `=` is code whatever comes before (`export TOKEN=…`).
        if not in_sentences and sep not in ("=", ":=", "=>") and not _is_cjk(key[-1]) \
                and _prose_key(line, _key_end(line, s), lead):
            continue
        before = line[s - len(key) - 1] if s > len(key) else ""
        if sep == "=" and before and before in "?&;":  # a URL query or a connection string
            for stop in ";" if before == ";" else "&#":
                cut = line.find(stop, a, b)
                if cut != -1:
                    b = cut
        elif sep == "=":  # `oauth_token=…&oauth_token_secret=…`: the next parameter ends the value
            nxt = _NEXT_PARAM.search(line, a, b)
            if nxt is not None:
                b = nxt.start()
        value = line[a:b]
        if "..." in line[a:b + 3] or "…" in line[a:b + 1]:
            continue  # elided: `sk-ant-api03-...`, `ghp_…`
        if sep[0] in "ia是为" and any(c in value for c in "'\"()"):
            continue  # `check('password', 'Password is required').exists()`: a message in code
        if _ambiguous_key(key) and sep in (":", "：") and (wordy(value) or line[b:].strip(" \t*_`'\".,;!?|")):
            continue  # `Pass: all tests green`, `Pass: Test_Run#42 bestanden`: a label, not a password
        if sep not in ("=", ":=") and _default_login(line, s, key):
            continue
        if b < len(line) and _CONCATENATED.match(line, b):
            continue
        # Looked for just before the value: a search from the line's start for every key on it
        # was quadratic (`password=` 25,000 times: 25 s).
        if _BASIC_SCHEME.search(line, max(0, a - _BASIC_REACH), a) and basic_credentials_weak(value):
            continue
        if looks_random(value):
            yield a, b, kind


_FLAG = re.compile(r"--(?P<key>[a-z][a-z\-]*)[ \t]+(?P<v>[^\s\"'`]+)")


def find_flags(line: str) -> Iterator[tuple[int, int, str]]:
    """`--password s3cr3t…`, `--token …` on a command line (the `=` form is an assignment).
    Tried at each `--` not glued to a word or another dash (found with `str.find`: a regex
    starting with a lookbehind would be tried at every character of a long line)."""
    p = line.find("--")
    while p != -1:
        before = line[p - 1] if p else ""
        if not (before == "-" or before == "_" or before.isalnum()):
            m = _FLAG.match(line, p)
            if m is not None:
                kind = classify_key(m.group("key"))
                if kind is not None and looks_random(m.group("v")):
                    yield m.start("v"), m.end("v"), kind
        q = p + 2
        while q < len(line) and line[q] == "-":
            q += 1
        p = line.find("--", q)


# Tables -------------------------------------------------------------------------------------

_TABLE_ROW = re.compile(r"[ \t>]*\|")
_TABLE_RULE = re.compile(r"[ \t>]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*")
_CELL_STRIP = " \t*_`\"'"


def _cells(line: str) -> list[tuple[int, int]]:
    """(start, end) of each cell's trimmed content."""
    first = line.index("|")
    bounds = [i for i, c in enumerate(line) if c == "|" and (i == 0 or line[i - 1] != "\\")]
    if not bounds or bounds[0] != first:
        return []
    cells = []
    ends = bounds[1:] + ([len(line)] if line.rstrip()[-1:] != "|" else [])
    for a, b in zip(bounds, ends, strict=False):  # a closing `|` starts no cell
        start, end = a + 1, b
        while start < end and line[start] in _CELL_STRIP:
            start += 1
        while end > start and line[end - 1] in _CELL_STRIP:
            end -= 1
        cells.append((start, end))
    return cells


# A design value: a length with its unit (`48px`, `1.5rem`, `100%`), a duration (`200ms`), a
# colour (`#1a2b3c`, `rgb(…)`). A cell under a "Token" column with one in the next cell is a
# design token's name (`| `spacing-2xl` | 48px |`), not a credential.
_DESIGN_VALUE = re.compile(
    r"-?\d+(?:\.\d+)?(?:px|rem|em|pt|dp|sp|vh|vw|vmin|vmax|ch|ex|ms|s|deg|%)|#[0-9A-Fa-f]{3,8}|"
    r"(?:rgba?|hsla?|oklch|var)\(.*\)")


# A design token's name: lowercase parts joined by separators (`spacing-2xl`, `--color-brand-500`,
# `font.size.lg`), not a random value (`Xk9mPq2vLr7Tz4Wb`, which a `30s` beside it does not excuse).
_DESIGN_NAME = re.compile(r"[-$]*[a-z0-9]+(?:[-_./][a-z0-9]+)+")


def _design_token(line: str, row: list[tuple[int, int]], i: int) -> bool:
    """The cell `i` of a row is a design token's name, its value in the cell after it."""
    if i + 1 >= len(row):
        return False
    a, b = row[i]
    if _DESIGN_NAME.fullmatch(line[a:b]) is None:
        return False
    a, b = row[i + 1]
    return _DESIGN_VALUE.fullmatch(line[a:b]) is not None


def find_in_table(lines: list[str], ln: int) -> Iterator[tuple[int, int, int, str]]:
    """(line, start, end, kind) for `| Password | value |` rows, and for the cells under a
    header whose column is a secret-ish key."""
    line = lines[ln]
    if not _TABLE_ROW.match(line):
        return
    # A row right under another row is in that table's body, never a header (GFM): so each
    # body is scanned by its one header, not again by every header-like row in it.
    headed = ln == 0 or not _TABLE_ROW.match(lines[ln - 1])
    cells = _cells(line)
    kinds = [classify_key(line[a:b]) if b - a <= 40 else None for a, b in cells]
    headers = [line[a:b] for a, b in cells]
    # "| key | value |" on the same row
    for i, kind in enumerate(kinds):
        if kind is not None and i + 1 < len(cells):
            a, b = cells[i + 1]
            if looks_random(line[a:b]):
                yield ln, a, b, kind
    # a header row: the column under it
    if headed and ln + 1 < len(lines) and any(kinds) and _TABLE_RULE.fullmatch(lines[ln + 1]):
        j = ln + 2
        while j < len(lines) and _TABLE_ROW.match(lines[j]):
            row = _cells(lines[j])
            for i, kind in enumerate(kinds):
                if kind is not None and i < len(row):
                    a, b = row[i]
                    if cell_value_ok(lines[j][a:b], headers[i]) and not _design_token(lines[j], row, i):
                        yield j, a, b, kind
            j += 1


# Credentialed URLs ---------------------------------------------------------------------------

_URL_CRED = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]{1,30})://(?P<user>[^\s:/?#@\[\]()<>\"'`|]*)"
    r":(?P<pw>[^\s/?#@\[\]()<>\"'`|]+)@(?P<host>[A-Za-z0-9\[_%][^\s/?#@]*)"
)
_DB_SCHEMES = frozenset(
    "postgres postgresql mysql mariadb mongodb mongodb+srv redis rediss amqp amqps mssql sqlserver "
    "oracle clickhouse cockroachdb cockroach couchdb neo4j neo4j+s bolt cassandra memcached "
    "elasticsearch influxdb snowflake db2 jdbc sqlalchemy postgresql+psycopg2 postgresql+psycopg "
    "postgresql+asyncpg mysql+pymysql mysql+mysqldb".split()
)
_WEAK_URL_PASSWORDS = _PLACEHOLDER_WORDS | frozenset("pass pw pwd user username login guest".split())


# Passwords that are a service's fixed convention, not a secret: GitHub documents
# `https://TOKEN:x-oauth-basic@github.com/…` (the token is the user part, which the token
# rules judge by its shape).
_CONVENTIONAL_URL_PASSWORDS = frozenset(("x-oauth-basic", "x-oauth-token", "x-access-token"))


def url_password_ok(user: str, pw: str) -> bool:
    if len(pw) < 4 or pw == user or is_template(pw) or is_example(pw):
        return False
    if pw.lower() in _CONVENTIONAL_URL_PASSWORDS:
        return False
    # Words of a language written in (`https://パーソナルアクセストークン:…@`): a placeholder a
    # person reads and replaces, not a credential, which is ASCII in every URL that works.
    if not (user.isascii() and pw.isascii()):
        return False
    if pw.startswith(("$", "%", "{", "<")) or set(pw) <= set("*x.X•…-_0"):
        return False
    letters = re.sub(r"[^a-z]", "", pw.lower().translate(_LEET))
    if letters in _WEAK_URL_PASSWORDS and letters != "":
        return False
    # `key_1234`, `pass1234`, `key_xxxxxxxx`, `1234`: the placeholders of `_checks`, whose digits
    # are padding, not leetspeak (the line above reads `pass1234` as `passiea`).
    return not url_password_placeholder(pw)


# A port: digits, then the URL's end or punctuation after it (a closing backtick, quote or
# bracket, which the host's pattern takes in: `redis://:…@cache:6379` in a code span).
_PORT = re.compile(r"\d+(?![A-Za-z0-9_])")
_SCHEME_CHARS = frozenset(string.ascii_letters + string.digits + "+.-")


def url_matches(line: str) -> Iterator[re.Match[str]]:
    """What `_URL_CRED.finditer(line)` gives, found from each `://` (the regex alone starts
    with a class, tried at every character: 15 ms on a megabyte line). A match's scheme ends
    at its `://` and starts as far back as it can (its first character a letter, 31 at most),
    past the end of the match before; what follows `://` does not depend on where it starts,
    so that start is the only one to try."""
    done = 0  # where the last match ended: the next starts there or later
    q = line.find("://")
    while q != -1:
        p = q
        while p > done and q - p < 31 and line[p - 1] in _SCHEME_CHARS:
            p -= 1
        while p < q - 1 and not line[p].isalpha():  # ASCII: a scheme character
            p += 1  # the first character must be a letter
        m = _URL_CRED.match(line, p) if q - p >= 2 else None
        if m is not None:
            yield m
            done = m.end()
            q = line.find("://", done)
        else:
            q = line.find("://", q + 1)


def find_url_credentials(line: str) -> Iterator[tuple[int, int, str, bool]]:
    """Each credential in a URL of the line: its span, its kind and whether the evidence is
    strong. A password that reads as a word and a few digits or a short number
    (`url_password_weak`: `tiger123`, `4829`) is weak: documentation writes such placeholders,
    and so do people, and the text does not tell which."""
    for m in url_matches(line):
        if not url_password_ok(m.group("user"), m.group("pw")):
            continue
        host, _, port = m.group("host").partition(":")
        if port and _PORT.match(port) is None:
            continue  # `db.example:0u812`: no URL has such a port; an invented one
        scheme = m.group("scheme").lower()
        kind = "database URL password" if scheme in _DB_SCHEMES or scheme.startswith("jdbc") else "URL password"
        yield m.start("pw"), m.end("pw"), kind, not url_password_weak(m.group("pw"))
