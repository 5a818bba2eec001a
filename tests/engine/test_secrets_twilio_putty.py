"""PM401 on two documented formats it once missed: a Twilio API key (its SID, `SK` and 32 hex
digits, with the secret written beside it) and a PuTTY private key file (`.ppk`, formats 2 and
3, encrypted or not); and the near misses of each, which must stay quiet (docs/decisions.md,
"Secrets: Twilio and PuTTY").

Every secret-looking value is built from pieces, so that no scanner of this file trips on it.
"""

from __future__ import annotations

import base64
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import findings
from pmem_lsp.engine.secrets import _gate, find_secrets, mask_text
from roots import make_root

R = random.Random(2026)
HEX = "0123456789abcdef"
SID = "S" + "K" + "".join(R.choice(HEX) for _ in range(32))
SECRET = "".join(R.choice(string.ascii_letters + string.digits) for _ in range(30)) + "q7"
HASH32 = "".join(R.choice(HEX) for _ in range(32))  # an MD5, say: lower-case hex, no secret's mix
HEADER = "PuTTY-User-" + "Key-File-"


def pm401(text: str) -> list[tuple[str, str, bool]]:
    lines = text.split("\n")
    out = []
    for m in find_secrets(lines, in_sentences=False):
        value = "\n".join(lines[m.line:m.end_line + 1])
        end = m.end + (len(value) - len(lines[m.end_line]))
        out.append((value[m.start:end], m.kind, m.strong))
    return out


# -- Twilio -----------------------------------------------------------------------------------

PAIRS = {
    "curl en": f"curl -X GET https://api.twilio.com/2010-04-01/Accounts.json -u {SID}:{SECRET}",
    "code": f'client = Client("{SID}", "{SECRET}", account_sid)',
    "de": f"Twilio-Zugang für den Versand: {SID} / {SECRET}",
    "zh": f"短信服务：{SID} {SECRET}",
}


@pytest.mark.parametrize("text", PAIRS.values(), ids=PAIRS.keys())
def test_a_twilio_secret_beside_its_sid_is_a_strong_finding(text):
    assert pm401(text) == [(SECRET, "Twilio API key secret", True)]


NAMED = {
    "env": f"TWILIO_API_KEY={SID}",
    "yaml": f"api_key: {SID}",
    "de": f"API-Key: {SID}",
    "zh": f"密钥：{SID}",
    "zh sentence": f"短信用的 API Key 是 {SID}",
    "table": f"| Dienst | API key |\n|---|---|\n| SMS | {SID} |",
}


@pytest.mark.parametrize("text", NAMED.values(), ids=NAMED.keys())
def test_a_sid_that_a_secret_named_key_names_is_weak_and_called_what_it_is(text):
    lines = text.split("\n")
    (m,) = find_secrets(lines, in_sentences=False)
    assert (lines[m.line][m.start:m.end], m.kind, m.strong) == (SID, "Twilio API key SID", False)
    assert "not its secret" in m.reason


QUIET = {
    "bare sid en": f"Messages go out through the API key {SID} (rotated in May).",
    "bare sid de": f"Der API-Schlüssel heißt {SID}, das Secret liegt im Tresor.",
    "bare sid zh": f"短信服务的账号标识：{SID}（每月轮换）。",
    "bare sid in a list": f"- Twilio: `{SID}`",
    "31 hex": f"-u {SID[:-1]}:{SECRET}",
    "33 hex": f"-u {SID}a:{SECRET}",
    "upper-case hex": f"-u {SID.upper()}:{SECRET}",
    "inside a longer word": f"-u A{SID}:{SECRET}",
    "glued after a hyphen": f"-u key-{SID}:{SECRET}",
    "letters after": f"-u {SID}x:{SECRET}",
    "a hash beside, not a secret": f"{SID} {HASH32}",
    "a placeholder sid": "-u S" + "K" + "0" * 32 + ":" + SECRET,
    "a secret too short": f"-u {SID}:{SECRET[:31]}",
    "words beside": f"{SID} ReplaceWithYourOwnSecretValue12",
}


@pytest.mark.parametrize("text", QUIET.values(), ids=QUIET.keys())
def test_near_misses_of_a_twilio_key_stay_quiet(text):
    assert pm401(text) == []


def test_the_twilio_pair_is_an_error_and_the_named_sid_a_warning_in_a_check(tmp_path):
    root = make_root(tmp_path, {"notes/sms.md": f"# SMS\n\ncurl -u {SID}:{SECRET}\n\nTWILIO_API_KEY={SID}\n"})
    got = sorted((f.line, f.severity.value, f.message) for f in findings(root) if f.code == "PM401")
    assert [(ln, sev) for ln, sev, _ in got] == [(2, "error"), (4, "warning")]
    assert got[0][2].startswith("likely Twilio API key secret") and "not its secret" in got[1][2]
    assert SECRET not in got[0][2] and SID not in got[1][2]


# -- PuTTY ------------------------------------------------------------------------------------

def _b64_lines(rng: random.Random, nbytes: int, width: int = 64) -> list[str]:
    text = base64.b64encode(bytes(rng.randrange(256) for _ in range(nbytes))).decode()
    return [text[i:i + width] for i in range(0, len(text), width)]


def ppk(version: int = 3, algorithm: str = "ssh-ed25519", encryption: str = "none", seed: int = 1,
        private_bytes: int = 48) -> tuple[list[str], list[str]]:
    """A PuTTY key file's lines and its private lines."""
    rng = random.Random(seed)
    public, private = _b64_lines(rng, 51), _b64_lines(rng, private_bytes)
    kdf = []
    if version == 3 and encryption != "none":
        kdf = ["Key-Derivation: Argon2id", "Argon2-Memory: 8192", "Argon2-Passes: 21", "Argon2-Parallelism: 1",
               "Argon2-Salt: " + "".join(rng.choice(HEX) for _ in range(32))]
    lines = [f"{HEADER}{version}: {algorithm}", f"Encryption: {encryption}", f"Comment: {algorithm}-key-20261202",
             f"Public-Lines: {len(public)}", *public, *kdf, f"Private-Lines: {len(private)}", *private,
             "Private-MAC: " + "".join(rng.choice(HEX) for _ in range(64))]
    return lines, private


KEY_FILES = {
    "v3 ed25519": dict(version=3, algorithm="ssh-ed25519"),
    "v2 rsa": dict(version=2, algorithm="ssh-rsa", private_bytes=660),
    "v3 ecdsa": dict(version=3, algorithm="ecdsa-sha2-nistp256", private_bytes=40),
    "v2 encrypted": dict(version=2, algorithm="ssh-rsa", encryption="aes256-cbc", private_bytes=656),
    "v3 encrypted": dict(version=3, algorithm="ssh-ed25519", encryption="aes256-cbc", private_bytes=48),
}


@pytest.mark.parametrize("kw", KEY_FILES.values(), ids=KEY_FILES.keys())
def test_a_putty_key_file_is_found_and_its_value_is_the_private_lines(kw):
    lines, private = ppk(**kw)
    text = "\n".join(["# Server", "", "Saved from PuTTYgen:", "", *lines, "", "Done."])
    assert pm401(text) == [("\n".join(private), "PuTTY private key", True)]
    masked = mask_text(text)
    assert all(p not in masked for p in private) and lines[-1] in masked  # the MAC line is kept


def test_a_putty_key_file_quoted_or_indented_in_a_note_is_found():
    lines, private = ppk(version=2, algorithm="ssh-rsa", private_bytes=300, seed=4)
    for prefix in ("> ", "    ", "\t"):
        got = pm401("\n".join(prefix + line for line in lines))
        assert [kind for _v, kind, _s in got] == ["PuTTY private key"]
        assert got[0][0].split("\n")[-1] == prefix + private[-1]


def test_a_putty_key_file_is_an_error_in_a_check(tmp_path):
    lines, private = ppk()
    root = make_root(tmp_path, {"notes/key.md": "# Key\n\n" + "\n".join(lines) + "\n"})
    got = [(f.line, f.severity.value, f.message) for f in findings(root) if f.code == "PM401"]
    first = lines.index(f"Private-Lines: {len(private)}") + 1
    assert [(ln, sev) for ln, sev, _ in got] == [(2 + first, "error")]
    assert got[0][2].startswith("likely PuTTY private key") and private[0] not in got[0][2]


def _replace_private(lines: list[str], body: list[str]) -> list[str]:
    i = next(i for i, line in enumerate(lines) if line.startswith("Private-Lines:"))
    n = int(lines[i].split(":")[1])
    return [*lines[:i], f"Private-Lines: {len(body)}", *body, *lines[i + 1 + n:]]


def _putty_near_misses() -> dict[str, str]:
    lines, private = ppk()
    return {
        "the header alone": f"{HEADER}3: ssh-ed25519",
        "the format described": f"The file starts with `{HEADER}3: ssh-ed25519`, then `Encryption: none`.",
        "the header in a sentence, a key file below": f"See {HEADER}3: ssh-ed25519\n" + "\n".join(lines[1:]),
        "the public part only": "\n".join(lines[:lines.index("Public-Lines: 2") + 3]),
        "a placeholder body": "\n".join(_replace_private(lines, ["A" * 64])),
        "a described body": "\n".join(_replace_private(lines, ["<base64 of the private key>"])),
        "an elided body": "\n".join(_replace_private(lines, [private[0][:20] + "..."])),
        "a body cut to a stub": "\n".join(_replace_private(lines, [private[0][:12]])),
        "format 1": "\n".join([lines[0].replace("File-3", "File-1"), *lines[1:]]),
        "no count": "\n".join(line.replace("Private-Lines: 1", "Private-Lines: one") for line in lines),
        "prose between": "\n".join([*lines[:3], "and then the rest of the file:", *lines[3:]]),
    }


@pytest.mark.parametrize("name", list(_putty_near_misses()))
def test_near_misses_of_a_putty_key_file_stay_quiet(name):
    assert pm401(_putty_near_misses()[name]) == []


def test_the_allow_marker_on_the_header_line_skips_the_key_file():
    lines, _private = ppk()
    assert pm401("\n".join([lines[0] + " <!-- pmem: allow-secret -->", *lines[1:]])) == []


# -- both gate engines, short notes and long ones ----------------------------------------------

def _all_fixtures() -> list[str]:
    files = ["\n".join(ppk(**kw)[0]) for kw in KEY_FILES.values()]
    return [*PAIRS.values(), *NAMED.values(), *QUIET.values(), *_putty_near_misses().values(), *files]


@pytest.mark.parametrize("engine", ["pure", "compiled"])
def test_the_fixtures_read_the_same_in_a_long_note_and_with_either_gate_engine(engine):
    """In a note past the size where the gate's probes are looked for in the whole text (and
    not line by line), with the pure engine and with hyperscan where it is installed."""
    try:
        before = _gate.use(engine)
    except ImportError:
        pytest.skip("hyperscan (pmem-lsp[fast]) is not installed")
    pad = ["Notes of the week, nothing secret in them. " * 40] * 40  # 70 KB of lines before
    try:
        for text in _all_fixtures():
            lines = text.split("\n")
            short = find_secrets(lines, in_sentences=False)
            long = find_secrets([*pad, *lines], in_sentences=False)
            assert [(m.line + len(pad), m.start, m.end_line + len(pad), m.end, m.kind, m.strong) for m in short] \
                == [(m.line, m.start, m.end_line, m.end, m.kind, m.strong) for m in long], text
    finally:
        _gate._forced = before


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40), st.integers(1, 12)), max_size=20),
       st.integers(0, 3), st.integers(0, 40), st.integers(1, 12))
def test_the_overlap_of_a_sid_with_the_weak_findings_of_its_line_is_what_a_scan_of_them_gives(spans, ln, a, width):
    """The SID's check against its line's weak findings is a bisection (a line of thousands of
    `"api_key": "SK…"` stays linear): it must agree with trying every one."""
    from pmem_lsp.engine.secrets import _meets, _spans_by_line

    found = [(0, s_ln, s_ln, s, s_ln, s + w, "x", "") for s_ln, s, w in spans]
    e = a + width
    expected = any(f[2] == ln and f[3] < e and a < f[5] for f in found)
    assert _meets(_spans_by_line(found).get(ln), a, e) == expected


def test_the_secret_must_be_within_a_hundred_characters_of_its_sid():
    """Beside: on its line, within 100 characters (a SID in a megabyte line of JSON is not
    followed by a class searched at every character of the line)."""
    near = f"{SID} " + "word " * 19 + SECRET  # 95 characters between them
    far = f"{SID} " + "word " * 21 + SECRET
    assert pm401(near) == [(SECRET, "Twilio API key secret", True)]
    assert pm401(far) == []
    assert pm401(SECRET + " " + "word " * 19 + SID) == [(SECRET, "Twilio API key secret", True)]
