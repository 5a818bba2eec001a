"""PM401 precision by construction (issue 26): the shapes that raised false alarms on vaults
nobody tuned for — table cells under a secret-named column, "Pass:" labels, code expressions
assigned to secret-named variables, placeholders, public identifiers, password hashes — in
English, German and Chinese notes; and the split between strong evidence (an error) and weak
evidence (a warning with its reason).

Every secret-looking value is built from pieces, so that no scanner of this file trips on it.
"""

from __future__ import annotations

import random as _random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import findings
from pmem_lsp.engine.secrets import find_secrets
from pmem_lsp.engine.secrets._tokens import TOKEN_RULES, token_matches
from roots import make_root

# Values a person would really leak, split so that scanners of this file stay quiet.
PW = "Xk9#" + "mPq2vL"
PW_CJK = "buxin" + "ren123"
KEY40 = "FBx6inXejHi" + "MX7W6KLvXQwxWqP7cYiQH"
GH = "gh" + "p_" + "Zq8Lr2Vn6Tb1Xc4Mw7Ks9aB3dE5fG7hJ9kL1m"


def pm401(text: str) -> list[tuple[str, str]]:
    lines = text.split("\n")
    return [(lines[m.line][m.start:m.end], m.kind) for m in find_secrets(lines, in_sentences=False)]


# -- shapes that are not secrets ---------------------------------------------------------------

TABLES = {
    "en": "| Design token | Value |\n|---|---|\n| spacing/large | 48px |\n| access | read/write |\n"
          "| colour | primary-blue |",
    "de": "| Token | Wert |\n| --- | --- |\n| Abstand/groß | 48px |\n| Recht | Lese-/Schreibrecht |\n"
          "| Farbe | Primär-Blau |",
    "zh": "| 令牌 | 说明 |\n|---|---|\n| 读写 | read/write |\n| 间距 | spacing/large |",
    "pass column": "| Test | Pass | Fail |\n|---|---|---|\n| login | all-green/retry2 | none |",
}

LABELS = {
    "en": "Pass: all-green-after/retry2",
    "en bold": "**Pass:** Test_Run#42 passed on the second try",
    "de": "- Pass: Reisepass-Nr/2024 gültig bis März",
    "de bold": "**Pass:** Testlauf_2#42 bestanden",
    "zh": "- Pass: 第二轮/run-2 通过",
}

CODE = {
    "laravel": "$token = $user->createToken('api')->plainTextToken;",
    "facade": "password = Str::random(16)",
    "hash facade": "const token = Hash::make($request->password);",
    "php call": "secret = bin2hex(random_bytes(32))",
    "deploy reference": 'now -e DB_USER=@db_user -e DB_PASS=@db_pass -e NODE_ENV="production"',
    "validator message": "check('password', 'Password is required').exists(),",
    "de comment": "passwort = Hash::make($eingabe) // Passwort gehasht speichern",
    "zh comment": "密码 = Hash::make($输入)  # 存哈希",
    "template": "token: <%= ENV.fetch('TOKEN') %>",
}

PLACEHOLDERS = {
    "replace_with": "api_key: replace_with_your_key_123",
    "vendor prefix elided": "ANTHROPIC_API_KEY=" + "sk-ant-" + "api03-...",
    "vendor prefix elided after body": "OPENAI_API_KEY=" + "sk-proj-" + "Zq8Lr2Vn6Tb1Xc4Mw7Ks9aB3dE5fG7...",
    "hydra marks": 'hydra -l admin -P list.txt host http-post-form "/login:user=^USER^&pass=^PASS^:F=incorrect"',
    "blanked tail": 'password: "NZ8KJ9' + 'xxxx"',
    "blanked tail de": "Passwort: NZ8KJ9" + "XXXX (echtes im Tresor)",
    "blanked token": "const API_KEY = '" + "AI" + "za" + "SyC9bJsdEJpmtGcBb_c7ck0NvOvyShMx" + "XXX';",
    "sequence": 'CLIENT_SECRET="qr6stu' + '789vwxyz"',
    "zh": "令牌：replace_with_" + "真实令牌",
}

PUBLIC = {
    ".NET": "System.Web, Version=4.0.0.0, Culture=neutral, PublicKeyToken=" + "b77a5c561934e089",
    "publishable": "STRIPE_PUBLISHABLE_KEY=" + "Zq8Lr2Vn6Tb1Xc4Mw7Ks9",
    "figma file key": "Figma file key: " + "8hGxkQ2WmZ7pL0rTnB4c9d",
    "figma fileKey": '"fileKey": "' + "8hGxkQ2WmZ7pL0rTnB4c9d" + '"',
    "de": "Datei-Schlüssel (Figma) file key: " + "8hGxkQ2WmZ7pL0rTnB4c9d",
    "bcrypt hash": '"password": "$2b$10$' + 'kvIfeCUUqTVW/oMk7Mi.vO4X9WcnMRzOGa"',
    "hashed_password": '"hashed_password": "$2a$10$' + 'AC.rwSpsT2b4WVArVYKUFerapy8wBe6YD"',
    "zh": "公钥令牌 PublicKeyToken=" + "31bf3856ad364e35",
}


@pytest.mark.parametrize("text", [*TABLES.values(), *LABELS.values(), *CODE.values(), *PLACEHOLDERS.values(),
                                  *PUBLIC.values()],
                         ids=[*(f"table-{k}" for k in TABLES), *(f"label-{k}" for k in LABELS),
                              *(f"code-{k}" for k in CODE), *(f"placeholder-{k}" for k in PLACEHOLDERS),
                              *(f"public-{k}" for k in PUBLIC)])
def test_shapes_that_are_not_secrets_stay_quiet(text):
    assert pm401(text) == []


# -- the same shapes with a real value stay found -------------------------------------------------

FOUND = {
    "password column en": ("| Site | Password |\n|---|---|\n| bank | " + PW + " |", PW),
    "password column de": ("| Konto | Passwort |\n|---|---|\n| Bank | " + PW + " |", PW),
    "password column zh": ("| 网站 | 密码 |\n|---|---|\n| 飞书 | `" + PW_CJK + "` |", PW_CJK),
    "token column": ("| Service | Token |\n|---|---|\n| api | " + KEY40 + " |", KEY40),
    "pass label with a password": ("Pass: " + PW, PW),
    "assignment": ("JWT_SECRET=" + KEY40, KEY40),
    "de": ("Passwort: " + PW, PW),
    "zh": ("密码：" + PW, PW),
}


@pytest.mark.parametrize("text, value", FOUND.values(), ids=FOUND.keys())
def test_real_values_in_the_same_shapes_are_still_found(text, value):
    assert [v for v, _ in pm401(text)] == [value]


def test_an_elided_token_is_not_a_token_but_the_whole_one_is():
    body = GH[4:]
    assert pm401("token " + "gh" + "p_" + body[:30] + "...") == []
    assert pm401("token " + GH) == [(GH, "GitHub token")]


# -- strong and weak evidence ---------------------------------------------------------------------

def test_documented_formats_are_strong_and_key_named_values_weak():
    lines = ["deploy " + GH, "Passwort: " + PW, "postgres://app:" + PW.replace("#", "x") + "@db.local/app",
             "| Konto | Passwort |", "|---|---|", "| Bank | " + KEY40 + " |", "tool --password " + PW]
    got = {m.line: m for m in find_secrets(lines, in_sentences=False)}
    assert sorted(got) == [0, 1, 2, 5, 6]
    assert got[0].strong and got[2].strong
    for ln in (1, 5, 6):
        assert not got[ln].strong
    assert "key" in got[1].reason and "column" in got[5].reason and "option" in got[6].reason
    assert got[0].reason == ""


def test_pm401_is_an_error_on_strong_evidence_and_a_warning_with_its_reason_on_weak(tmp_path):
    root = make_root(tmp_path, {
        "notes/a.md": "# A\n\ndeploy " + GH + "\n\nPasswort: " + PW + "\n",
    })
    got = sorted((f.line, f.severity.value, f.message, dict(f.data or {})) for f in findings(root)
                 if f.code == "PM401")
    assert [(ln, sev) for ln, sev, _, _ in got] == [(2, "error"), (4, "warning")]
    strong, weak = got[0], got[1]
    assert strong[2].startswith("likely GitHub token") and strong[3]["evidence"] == "strong"
    assert weak[2].startswith("possible password") and "named only by its key" in weak[2]
    assert weak[3]["evidence"] == "weak"
    assert PW not in weak[2] and GH not in strong[2]


def test_a_credentialed_url_with_an_impossible_port_is_an_invented_example():
    assert pm401("mongodb://coolguy:" + "abceasyas123" + "@ohyeah.example:0u812/awesome") == []
    pw = "abceasy" + "as123"
    assert pm401("mongodb://coolguy:" + pw + "@db.example:27017/awesome") == [(pw, "database URL password")]


# -- linear on long lines (issue 26): the same matches, found only where they can start ----------

_PIECES = ["AK" + "IA", "gh" + "p_", "sk" + "-ant-api03-", "sk" + "_live_", "do" + "p_v1_", "xo" + "xb-", "xoxe.",
           "https://hooks." + "slack.com/services/", "https://canary.discordapp.com/api/" + "webhooks/1234567/",
           "123456789:", "A", "?sig=", "Account" + "Key=", "ey" + "J", ".", "-", "_", " ", '"', ":", "/", "="]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789",
                                                            min_size=1, max_size=40)), max_size=40))
def test_token_matches_finds_what_finditer_finds(parts):
    line = "".join(parts)
    for rule in TOKEN_RULES:
        assert [m.span() for m in token_matches(rule, line)] == [m.span() for m in rule.regex.finditer(line)], rule.kind


def test_a_token_in_a_megabyte_line_of_json_is_found_and_ranges_are_exact():
    r = _random.Random(26)
    ids = ["".join(r.choice("abcdefXYZ0123456789_-") for _ in range(21)) for _ in range(20000)]
    cells = [f'{{"id":"{ident}","x":{i},"text":"Server rack {i}"}}' for i, ident in enumerate(ids)]
    cells.insert(12345, f'{{"note":"deploy {GH}"}}')
    line = '{"type":"excalidraw","elements":[' + ",".join(cells) + "]}"
    assert len(line) > 1_000_000
    found = find_secrets([line], in_sentences=False)
    assert [(line[m.start:m.end], m.kind) for m in found] == [(GH, "GitHub token")]


class _CountingRegex:
    """A rule's regex that counts the tries `token_matches` makes."""

    def __init__(self, regex):
        self.regex, self.tries = regex, 0

    def match(self, line, pos):
        self.tries += 1
        return self.regex.match(line, pos)


def test_token_matches_does_work_in_proportion_to_the_keywords_not_the_line_squared():
    import dataclasses

    rules = [dataclasses.replace(rule, regex=_CountingRegex(rule.regex)) for rule in TOKEN_RULES]
    r = _random.Random(7)
    base64 = "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(50_000))
    tries = []
    for copies in (1, 2, 4):
        line = base64 * copies
        for rule in rules:
            rule.regex.tries = 0
            token_matches(rule, line)
        tries.append(sum(rule.regex.tries for rule in rules))
        # Never more than (reach + 1) tries per keyword occurrence.
        bound = sum((rule.reach + 1) * sum(line.count(kw) for kw in rule.keywords) for rule in rules)
        assert tries[-1] <= bound
    assert tries[0] > 0
    assert tries[1] <= 2.1 * tries[0] and tries[2] <= 4.2 * tries[0]
