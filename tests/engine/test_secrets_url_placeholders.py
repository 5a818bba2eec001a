"""PM401 on a URL's password that is a placeholder (issue 44, "no false alarm at error severity
on vaults nobody tuned for"): `key_1234`, `pass1234`, `1234`, `key_xxxxxxxx` are no finding;
a word and a few digits (`tiger123`) or a short number is a warning; a password that looks
random is an error as before (docs/decisions.md, "Secrets: placeholders in a URL's password").
Secret-looking values are built from pieces so that scanners of this file stay quiet.
"""

from __future__ import annotations

import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import findings
from pmem_lsp.engine.secrets import find_secrets
from roots import make_root


def url_findings(text: str) -> list[tuple[str, str, bool]]:
    lines = text.split("\n")
    return [(lines[m.line][m.start:m.end], m.kind, m.strong) for m in find_secrets(lines, in_sentences=False)]


# The lines, from a Logseq vault (rewritten), and shapes like them.
PLACEHOLDERS = [
    '- Example: `heroku config:set KEY="dotenv://:key_' + '1234@dotenv.org/vault"`',
    "https://:key_" + "xxxxxxxx@example.com/",
    "https://user:pass" + "1234@example.com/",
    "https://:" + "1234@example.com/",
    "https://:" + "123456@example.com/",
    "https://u:" + "87654321@example.com/",
    "https://u:secret" + "123@example.com/",
    "postgres://app:Key_" + "42@db.internal:5432/app",
    "redis://:token" + "2024@cache:6379/0",
    "https://u:abc_" + "XXXX@example.com/",
    "https://u:" + "********@example.com/",
    "mysql://root:" + "0000@127.0.0.1:3306/test",
    # decided before and unchanged: whole placeholder words, leetspeak and digits around them
    "postgres://user:" + "password@localhost",
    "postgres://user:" + "changeme@localhost",
    "postgres://user:<" + "password>@localhost",
    "https://u:hunter" + "2@example.com/",
]


def test_placeholders_in_a_url_are_no_finding() -> None:
    for line in PLACEHOLDERS:
        assert url_findings(line) == [], line


WEAK = [
    ("https://u:tiger" + "123@example.com/", "tiger" + "123"),
    ("https://deploy:Hello" + "2024@git.internal.test/r.git", "Hello" + "2024"),
    ("postgres://app:" + "4829@db.internal:5432/app", "4829"),
]


def test_a_word_and_a_few_digits_or_a_short_number_is_a_warning() -> None:
    for line, pw in WEAK:
        kind = "database URL password" if line.startswith("postgres") else "URL password"
        assert url_findings(line) == [(pw, kind, False)], line


REAL = [
    "Zq8Lr2Vn" + "6Tb1Xc4M",
    "Tr0ub4dor" + "&3",
    "correct" + "horse",  # letters only, as before: no word-and-digits shape
    "9283" + "74651",  # nine digits
    "hElLo" + "2024",  # a word in mixed case is no word
    "My" + "SecretPass99",  # the decision "placeholders are whole values"
    "tiger" + "12345",  # five digits
]


def test_real_looking_passwords_in_a_url_stay_errors() -> None:
    for pw in REAL:
        assert url_findings("https://deploy:" + pw + "@git.internal.test/infra.git") == \
            [(pw, "URL password", True)], pw
        assert url_findings("DATABASE_URL=postgres://app:" + pw + "@db.internal:5432/app") == \
            [(pw, "database URL password", True)], pw


def test_severity_through_the_rule(tmp_path) -> None:
    text = ("# Deploy\n\n" + "\n".join(PLACEHOLDERS) + "\n" + WEAK[0][0] + "\n"
            + "https://deploy:" + REAL[0] + "@git.internal.test/infra.git\n")
    root = make_root(tmp_path, {"notes/deploy.md": text})
    got = sorted((f.line, f.severity.value, (f.data or {}).get("evidence"))
                 for f in findings(root) if f.code == "PM401")
    assert got == [(2 + len(PLACEHOLDERS), "warning", "weak"), (3 + len(PLACEHOLDERS), "error", "strong")]


# -- generated --------------------------------------------------------------------------------

_SCHEMES = st.sampled_from(["https", "http", "dotenv", "postgres", "mongodb", "redis", "amqp", "ftp", "git+ssh"])
_USERS = st.sampled_from(["", "user", "admin", "deploy", "app", "x"])
_HOSTS = st.sampled_from(["example.com/", "db.internal:5432/app", "dotenv.org/vault", "10.0.0.7", "cache:6379"])
_CONTEXTS = st.sampled_from(["{u}", "- url: `{u}`", 'KEY="{u}"', "DATABASE_URL={u}", "连接串：{u}", "[db]({u})"])
_LETTERS = st.text(string.ascii_lowercase, min_size=1, max_size=12)
_WORDS = st.one_of(_LETTERS, _LETTERS.map(str.title), _LETTERS.map(str.upper),
                   st.sampled_from(["key", "pass", "secret", "token", "demo", "test", "admin", "mypass"]))
_DIGITS = st.text(string.digits, min_size=1, max_size=4)


@st.composite
def placeholder_passwords(draw: st.DrawFn) -> str:
    shape = draw(st.sampled_from(["word+digits", "digits", "sequence", "x-run", "blanked tail"]))
    if shape == "word+digits":  # key_1234, pass1234, secret123
        return draw(_WORDS) + draw(st.sampled_from(["", "_", "-", "."])) + draw(_DIGITS)
    if shape == "digits":  # a short number
        return draw(st.text(string.digits, min_size=1, max_size=8))
    if shape == "sequence":  # 1234…, 9876…, 0000…, 1212…, of any length
        start, step, n = draw(st.integers(0, 9)), draw(st.sampled_from([0, 1, -1])), draw(st.integers(1, 20))
        run = "".join(str((start + step * i) % 10) for i in range(n))
        return run if draw(st.booleans()) else (run[:2] * n)[:max(n, 2)]
    if shape == "x-run":
        return draw(st.sampled_from("xX*")) * draw(st.integers(1, 24))
    return draw(_WORDS) + draw(st.sampled_from(["", "_", "-"])) + draw(st.sampled_from("xX")) * draw(st.integers(3, 16))


@settings(max_examples=300, deadline=None)
@given(placeholder_passwords(), _SCHEMES, _USERS, _HOSTS, _CONTEXTS)
def test_generated_placeholders_in_a_url_are_never_an_error(pw: str, scheme: str, user: str, host: str,
                                                            ctx: str) -> None:
    line = ctx.format(u=scheme + "://" + user + ":" + pw + "@" + host)
    assert [f for f in url_findings(line) if f[2]] == [], line


_B62 = string.ascii_letters + string.digits


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32), st.integers(12, 32), _SCHEMES, _USERS, _HOSTS, _CONTEXTS)
def test_generated_random_passwords_in_a_url_stay_errors(seed: int, n: int, scheme: str, user: str, host: str,
                                                         ctx: str) -> None:
    rng = random.Random(seed)
    pw = "".join(rng.choice(_B62) for _ in range(n - 3)) + rng.choice(string.ascii_uppercase) \
        + rng.choice(string.ascii_lowercase) + rng.choice(string.digits)
    line = ctx.format(u=scheme + "://" + user + ":" + pw + "@" + host)
    kind = "database URL password" if scheme in ("postgres", "mongodb", "redis", "amqp") else "URL password"
    assert url_findings(line) == [(pw, kind, True)], line
