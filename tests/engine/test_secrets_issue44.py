"""PM401 on public collections nobody here wrote (issue 44): severity by evidence.

A value named by its key or written in a URL, that is a placeholder, a code expression, a
format string, a specification's example, a service's fixed convention, a product's published
default or words of a language, is no finding; a token in a documented format with a valid
shape and checksum (a NATS nkey seed) is an error. Every fixture here was written for this
test; secret-looking values are built from pieces so that scanners of this file stay quiet.
"""

from __future__ import annotations

import base64
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import findings
from pmem_lsp.engine.secrets import find_secrets
from pmem_lsp.engine.secrets._tokens import crc16_xmodem
from roots import make_root

PW = "Xk9#" + "mPq2vL"


def pm401(text: str) -> list[tuple[str, str, bool]]:
    lines = text.split("\n")
    return [(lines[m.line][m.start:m.end], m.kind, m.strong) for m in find_secrets(lines, in_sentences=False)]


# -- not secrets ------------------------------------------------------------------------------


NOT_SECRETS = {
    "Japanese placeholder in a URL": "git clone https://パーソナルアクセストークン:x-oauth-" + "basic@github.com/me/notes.git",
    "GitHub's fixed URL password": "https://TOKEN:x-oauth-" + "basic@github.com/me/notes.git",
    "Chinese placeholder in a URL": "https://用户名:" + "密码@example.org/",
    "RFC 9110's Basic example": "Authorization: Basic " + "QWxhZGRpbjpv" + "cGVuIHNlc2FtZQ==",
    "Basic of user:password": 'curl -H "Authorization: Basic ' + "dXNlcjpwYXNz" + 'd29yZA==" https://api.test/',
    "Ruby safe navigation": "    pass = proxy_uri&." + "password",
    "Ruby safe navigation, token": "token = current_user&.api_" + "token",
    "Go format string": '    conn := fmt.Sprintf("user:%v,pwd:' + '%v@tcp(%s)", u, p, h)',
    "Go address of a composite": "    rawMaxPass := &Max" + "Pass{}",
    "Go address of a member": "    rawMaxPass := &cfg.Max" + "Pass",
    "a quoted piece of a built string": '    rawMaxPass := "MaxPass_' + '" + id',
    "a default login in prose": "Default password: " + "Zte52134x (from the router's manual)",
    "a default login, more words": "- **Default admin password:** " + "Zte52134x",
    "a default login in Chinese": "默认密码：" + "Zte52134x",
}


def test_shapes_from_issue_44_are_no_finding() -> None:
    for name, text in NOT_SECRETS.items():
        assert pm401(text) == [], name


# -- still secrets: each shape beside the same shape with a real-looking value ------------------


def test_the_same_shapes_with_real_values_stay_found() -> None:
    token = "Zq8Lr2Vn6Tb1" + "Xc4Mw7Ks9aB3"
    assert pm401("https://deploy:" + token + "@git.internal.test/repo.git") == [(token, "URL password", True)]
    basic = base64.b64encode(("deploy:" + PW + "Q7").encode()).decode()
    assert [k for _, k, _ in pm401("Authorization: Basic " + basic)] == ["token"]
    assert pm401("proxy_pass = " + PW + "Q7") == [(PW + "Q7", "password", False)]
    # A deployment's own setting named default is whoever set it: still found.
    assert pm401("DEFAULT_PASSWORD=" + "Zte52134x") == [("Zte52134x", "password", False)]
    assert pm401("default_password: " + "Zte52134x") == [("Zte52134x", "password", False)]


# -- NATS nkey seeds ----------------------------------------------------------------------------

_TYPES = {"U": 20 << 3, "A": 0, "O": 14 << 3, "N": 13 << 3, "C": 2 << 3}


def nkey_seed(kind: str, rng: random.Random, *, break_checksum: bool = False) -> str:
    """A seed built from NATS's documented format: two prefix bytes (the seed mark and the
    type), 32 random bytes, a CRC-16 (XMODEM) little-endian; base32 without padding."""
    t = _TYPES[kind]
    raw = bytes([(18 << 3) | (t >> 5), (t & 31) << 3]) + bytes(rng.randrange(256) for _ in range(32))
    crc = crc16_xmodem(raw) ^ (1 if break_checksum else 0)
    return base64.b32encode(raw + crc.to_bytes(2, "little")).decode().rstrip("=")


def test_crc16_is_xmodem() -> None:
    assert crc16_xmodem(b"123456789") == 0x31C3  # the catalogue's check value


def test_an_nkey_seed_below_a_jwt_is_found_as_an_error(tmp_path) -> None:
    rng = random.Random(44)
    seed = nkey_seed("U", rng)
    header = base64.urlsafe_b64encode(b'{"typ":"JWT","alg":"ed25519-nkey"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(b'{"jti":"Q2XH","iat":1700000000,"sub":"UABC"}').decode().rstrip("=")
    sig = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz0123456789_-") for _ in range(86))
    text = ("# NATS user\n\n```\n-----BEGIN NATS USER JWT-----\n" + header + "." + body + "." + sig
            + "\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n" + seed
            + "\n------END USER NKEY SEED------\n```\n")
    root = make_root(tmp_path, {"notes/nats.md": text})
    got = sorted((f.line, f.severity.value, (f.data or {}).get("kind")) for f in findings(root) if f.code == "PM401")
    assert (4, "error", "JWT") in got
    assert (8, "error", "NATS nkey seed") in got


def test_every_seed_type_is_found_and_a_bad_checksum_or_public_key_is_not() -> None:
    rng = random.Random(7)
    for kind in _TYPES:
        for _ in range(8):
            seed = nkey_seed(kind, rng)
            assert seed.startswith("S" + kind) and len(seed) == 58
            assert pm401("seed: " + seed) == [(seed, "NATS nkey seed", True)], kind
    assert pm401("seed: " + nkey_seed("U", rng, break_checksum=True)) == []
    public = "U" + nkey_seed("U", rng)[1:]  # a public key's shape: not a seed
    assert pm401("user: " + public) == []


# -- generalised: new variants of the shapes, none an error --------------------------------------

_VERBS = st.sampled_from(["%v", "%s", "%d", "%q", "%x", "%08x", "%-10s", "%+v", "%#v", "%T", "{}", "{0}"])
_IDENT_WORDS = st.sampled_from(["raw", "max", "min", "new", "old", "user", "db", "proxy", "cfg", "admin", "tmp"])
_SECRET_WORDS = st.sampled_from(["pass", "Pass", "pwd", "Pwd", "password", "Password", "passwd", "token", "secret"])


@settings(max_examples=150, deadline=None)
@given(_VERBS, _VERBS, _SECRET_WORDS, st.sampled_from(["Printf", "Sprintf", "Errorf", "log.Printf", "format"]))
def test_format_strings_with_secret_words_are_no_error(v1: str, v2: str, word: str, call: str) -> None:
    for text in (f'{call}("user:{v1},{word}:{v2}", u, p)', f'{call}("{word}={v1}&user={v2}")',
                 f'x := {call}("{word}: {v1}@tcp({v2})")'):
        assert not [m for m in pm401(text) if m[2]], text


@settings(max_examples=150, deadline=None)
@given(_IDENT_WORDS, _SECRET_WORDS, _IDENT_WORDS, st.sampled_from([":=", "=", " = "]))
def test_identifiers_and_expressions_with_pass_inside_are_no_error(a: str, word: str, b: str, sep: str) -> None:
    name = a + word[0].upper() + word[1:]
    for value in (f"&{b.title()}{word.title()}{{}}", f"{b}&.{word.lower()}", f"&{b}.{word.title()}",
                  f"{b}.{word.title()}", f"{b}_{word.lower()}"):
        text = f"    {name}{sep}{value}"
        assert pm401(text) == [], text


def test_a_line_repeated_across_files_is_found_the_same_from_the_memo() -> None:
    # `_assignments` keeps a short line's answer: the second file, its line elsewhere and in
    # another context, is answered from the memo and must get what a fresh scan gets.
    from pmem_lsp.engine.secrets import _assignments

    line = "DB_PASSWORD=" + PW + "wQ7rT3"
    first = pm401("# Notes\n\n" + line + "\n")
    _assignments.cache_clear()
    fresh = pm401(line + "\nmore text")
    hits_before = _assignments.cache_info().hits
    again = pm401("intro\n" + line)
    assert _assignments.cache_info().hits > hits_before
    assert first == fresh == again == [(PW + "wQ7rT3", "password", False)]


def test_a_long_line_is_not_kept_in_the_memo() -> None:
    from pmem_lsp.engine.secrets import _MEMO_LINE, _assignments

    _assignments.cache_clear()
    long_line = "x " * _MEMO_LINE + "DB_PASSWORD=" + PW + "wQ7rT3"
    assert pm401(long_line)
    assert _assignments.cache_info().currsize == 0
    short = "DB_PASSWORD=" + PW + "wQ7rT3"
    assert pm401(short) == [(v, k, s) for v, k, s in pm401(long_line)]
    assert _assignments.cache_info().currsize == 1
