"""PM401's detector (`pmem_lsp.engine.secrets`): the labelled evaluation set, each kind's
positives and negatives, the allow marker and regexes, exact value ranges, and that no match
can repeat a secret.

Every token-shaped value here is fake and built at run time from pieces (the generator in
benchmarks/secrets_eval.py), so no token-shaped literal sits in the repository.
"""

from __future__ import annotations

import random
import re
import string
import sys
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import secrets_eval as ev
from bounded import finishes
from pmem_lsp.engine.secrets import ALLOW_MARKER, SecretMatch, find_secrets, mask, mask_secrets, redact_line

R = random.Random(401)
# Random-looking values, split so that secret scanners of this file stay quiet.
V = "Zq8Lr2Vn6Tb1" + "Xc4Mw7Ks9"
P = "Xk9#" + "mPq2vL"
B62 = string.ascii_letters + string.digits


def value_of(lines: list[str], m: SecretMatch) -> str:
    if m.line == m.end_line:
        return lines[m.line][m.start:m.end]
    return "\n".join([lines[m.line][m.start:], *lines[m.line + 1:m.end_line], lines[m.end_line][:m.end]])


def only(lines: list[str]) -> SecretMatch:
    found = find_secrets(lines)
    assert len(found) == 1, [(m.kind, m.line, m.start) for m in found]
    return found[0]


def token(kind: str, seed: int = 0) -> str:
    return ev.TOKENS[kind](random.Random(seed))


# -- the evaluation set -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def eval_notes():
    return ev.generate(seed=401, per_kind=20, neg_per_kind=30)


def test_eval_recall_and_precision(eval_notes):
    s = ev.score(eval_notes, ev.ours)
    assert s.recall >= 0.95, s.misses[:10]
    assert s.precision >= 0.95, [fp[:3] for fp in s.false_positives[:10]]


def test_eval_other_seed(eval_notes):
    s = ev.score(ev.generate(seed=7, per_kind=10, neg_per_kind=15), ev.ours)
    assert s.recall >= 0.95 and s.precision >= 0.95


def test_eval_ranges_are_exact_and_kinds_named(eval_notes):
    for note in eval_notes:
        found = {(m.line, m.start, m.end_line, m.end): m for m in find_secrets(note.lines)}
        for p in note.planted:
            if not p.positive:
                continue
            m = found.get((p.line, p.start, p.end_line, p.end))
            assert m is not None, (note.name, p.kind, p.line)
            assert value_of(note.lines, m) == p.value
            assert m.kind == p.kind or (p.kind, m.kind) in {("AWS secret access key", "access key")}


def test_no_piece_of_a_planted_value_leaks(eval_notes):
    for note in eval_notes:
        found = find_secrets(note.lines)
        shown = repr(found) + "".join(m.kind + m.hint for m in found)
        for p in note.planted:
            if p.positive:
                v = p.value
                for i in range(0, max(1, len(v) - 11)):
                    assert v[i:i + 12] not in shown, (note.name, p.kind)
        for m in found:
            assert len(m.hint.split("…")[0]) <= 4


# -- each kind: positives ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(ev.TOKENS))
@pytest.mark.parametrize("ctx", ["- key: `{v}`", "export X={v}", '"k": "{v}",', "| svc | {v} | ok |", "令牌：{v}，勿外传。", "{v}"])
def test_each_token_kind_is_found_exactly(kind, ctx):
    if kind == "AWS secret access key":  # no shape of its own: only where it is named
        ctx = "aws_secret_access_key = {v}"
    elif kind == "Azure storage account key":
        ctx = "DefaultEndpointsProtocol=https;AccountName=a;AccountKey={v};EndpointSuffix=core.windows.net"
    v = token(kind, zlib.crc32((kind + ctx).encode()))
    line = ctx.replace("{v}", v)
    m = only([line])
    assert m.kind == kind
    assert line[m.start:m.end] == v


@pytest.mark.parametrize("label", ["RSA", "EC", "OPENSSH", "", "ENCRYPTED", "DSA"])
def test_pem_block_range_is_the_key_material(label):
    lines, first, last = ev.pem_block(random.Random(len(label)), label)
    lines = ["# keys", "", "```", *lines, "```", "after"]
    m = only(lines)
    assert m.kind == "PEM private key"
    assert (m.line, m.start, m.end_line, m.end) == (first + 3, 0, last + 3, len(lines[last + 3]))
    redacted = [redact_line(x, [m], index=i) for i, x in enumerate(lines)]
    joined = "\n".join(redacted)
    assert "[REDACTED]" in joined and "BEGIN" in joined and "END" in joined
    assert "\n".join(x for x in redacted) .count("\n") == len(lines) - 1
    assert find_secrets("\n".join(r for i, r in enumerate(redacted) if not (m.line < i <= m.end_line)).split("\n")) == []


def test_pgp_block_skips_armour_headers():
    lines, first, last = ev.pgp_block(random.Random(1))
    m = only(lines)
    assert m.kind == "PGP private key" and (m.line, m.end_line) == (first, last)
    assert lines[m.line].startswith(value_of(lines, m)[:10])


def test_pem_block_quoted_and_indented():
    lines, first, last = ev.pem_block(random.Random(3), "RSA")
    quoted = ["> " + x for x in lines]
    m = only(quoted)
    assert (m.line, m.start) == (first, 2)


def test_service_account_json_private_key():
    line, a, b, chunks = ev.sa_json_line(random.Random(5))
    m = only(["{", line, "}"])
    assert m.kind == "Google service-account private key"
    assert (m.line, m.start, m.end) == (1, a, b)
    assert line[m.start:m.end] == chunks


def test_azure_connection_string_value_only():
    key = token("Azure storage account key")
    line = f"conn: DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={key};EndpointSuffix=core.windows.net"
    m = only([line])
    assert line[m.start:m.end] == key and m.kind == "Azure storage account key"


@pytest.mark.parametrize("url,pw,kind", [
    ("postgres://app:{pw}@db.internal:5432/app", "Zq8Lr2Vn6Tb1", "database URL password"),
    ("mysql://root:{pw}@10.0.0.3/shop", "Zq8Lr2Vn6Tb1", "database URL password"),
    ("mongodb+srv://svc:{pw}@cluster0.ab1cd.mongodb.net/app", "Zq8Lr2Vn6Tb1", "database URL password"),
    ("redis://:{pw}@cache:6379/0", "Zq8Lr2Vn6Tb1", "database URL password"),
    ("https://deploy:{pw}@git.internal.test/x.git", "Zq8Lr2Vn6Tb1", "URL password"),
    ("ftp://lin:{pw}@files.internal.test/", "s3cr3t-Pw9", "URL password"),
])
def test_credentialed_urls_flag_the_password_only(url, pw, kind):
    line = "- " + url.replace("{pw}", pw)
    m = only([line])
    assert line[m.start:m.end] == pw and m.kind == kind


@pytest.mark.parametrize("line,value,kind", [
    ("password: hunter2xyz", "hunter2xyz", "password"),
    ("passwd = '{P}'", "{P}", "password"),
    ("pwd: {P}", "{P}", "password"),
    ("- Password: {P}", "{P}", "password"),
    ("**Password:** `{P}`", "{P}", "password"),
    ("DB_PASSWORD={P}", "{P}", "password"),
    ('{"password": "{P}"}', "{P}", "password"),
    ("| Password | {P} |", "{P}", "password"),
    ("密码：{P}。", "{P}", "password"),
    ("口令: Xk9mPq2vLa", "Xk9mPq2vLa", "password"),
    ("数据库密码是 {P}", "{P}", "password"),
    ("The wifi password is {P}", "{P}", "password"),
    ("mysql -u root --password {P} shop", "{P}", "password"),
    ("Server=db;User Id=sa;Password={P};Database=x", "{P}", "password"),
    ("api_key = \"{V}aB3\"", "{V}aB3", "API key"),
    ("apikey: {V}aB3", "{V}aB3", "API key"),
    ("https://api.x.test/v1?api_key={V}&format=json", "{V}", "API key"),
    ("token: {V}aB3", "{V}aB3", "token"),
    ("令牌：{V}", "{V}", "token"),
    ("Authorization: Bearer {V}aB3", "{V}aB3", "token"),
    ("secret: {V}aB3", "{V}aB3", "secret"),
    ("client_secret: {V}-aB3", "{V}-aB3", "client secret"),
    ("access_key: {V}", "{V}", "access key"),
    ("密钥：8f3a9c1e4b7d8a0c5e6f1b2a", "8f3a9c1e4b7d8a0c5e6f1b2a", "secret key"),
    ("  - api_key: {V}aB3  # staging", "{V}aB3", "API key"),
])
def test_generic_assignments(line, value, kind):
    line = line.replace("{V}", V).replace("{P}", P)
    value = value.replace("{V}", V).replace("{P}", P)
    m = only([line])
    assert (line[m.start:m.end], m.kind) == (value, kind)


def test_table_column_under_a_password_header():
    lines = ["| Host | User | Password |", "|---|---|---|", f"| db1 | app | {P} |", "| db2 | ro | `Z5m!kP8vQ2` |"]
    found = find_secrets(lines)
    assert [value_of(lines, m) for m in found] == [P, "Z5m!kP8vQ2"]


def test_aws_secret_beside_its_key_id():
    kid, sec = token("AWS access key id", 1), token("AWS secret access key", 2)
    line = f"| deploy-bot | {kid} | {sec} |"
    found = find_secrets([line])
    assert [(line[m.start:m.end], m.kind) for m in found] == [(kid, "AWS access key id"), (sec, "AWS secret access key")]


# -- negatives ----------------------------------------------------------------------------------

NEGATIVE_LINES = [
    "token: refresh tokens expire after 30 days", "password: see 1Password", "密码：保存在 1Password 里",
    "api_key: <your-key>", "api_key: YOUR_API_KEY", "password: ***", "password: ****", "password: changeme",
    "password: password", "token: example", "token: dummy", "password: ${DB_PASSWORD}", "password: $DB_PASSWORD",
    "password: {{ db_password }}", 'api_key = os.environ["OPENAI_API_KEY"]', "apiKey: process.env.OPENAI_API_KEY",
    'token = os.getenv("GITHUB_TOKEN")', "password = %(password)s", "token: ${{ secrets.GITHUB_TOKEN }}",
    "password: P@ssw0rd", "The password is in the keychain.", "max_tokens: 4096", "token_type: Bearer",
    "secret_name: prod-db-credentials", "secret: kubernetes-secret-v2", "password: correct horse battery staple",
    "password_file: /run/secrets/db", "secret: /etc/app/secret.key", "token: ~/.config/gh/hosts.yml",
    "api_key: required for the /v2 endpoints", "Authorization: Bearer <token>", "| password | in 1Password |",
    "pwd: /home/lin/projects", "key: value", "passkey: true", "version: 2.14.0-rc.1", "token_version: v2.3.1",
    "Fixed in commit 3f2a9c1e4b7d8a0c5e6f1b2a3c4d5e6f7a8b9c0d.", "`3f2a9c1`", "'3f2a9c1e4b'", "commit 3f2a9c1e",
    "request id 123e4567-e89b-12d3-a456-426614174000", "- id: 123e4567-e89b-12d3-a456-426614174000",
    "image: api@sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "https://docs.python.org/3/library/secrets.html", "https://lin@git.internal.test/infra.git",
    "git@github.com:org/repo.git", "postgres://app:${DB_PASSWORD}@db:5432/app", "postgres://postgres:postgres@localhost/app",
    "https://user:<token>@github.com/org/repo", "redis://:changeme@cache:6379", "http://localhost:8080/api/v1",
    "scikit-learn (sk-learn) is pinned", "Key: the Summary section comes first", "Meeting at 10:30, ratio 16:9.",
    "password_hash: $2b$12$" + "a" * 3 + "Q7w1eR4tY9uI0oP3aS5dF7gH9jK1lZ3xC5vB7nM9qW1eR3tY5uI7",
    "- Passwords: 3 rotated, 2 pending", "口令：见 1Password 的 “生产数据库” 条目", "令牌：每 30 天轮换一次",
]


@pytest.mark.parametrize("line", NEGATIVE_LINES)
def test_negatives_do_not_trigger(line):
    assert find_secrets([line]) == []


@pytest.mark.parametrize("make", [ev.n_placeholder, ev.n_git_sha, ev.n_uuid, ev.n_named_hash, ev.n_path, ev.n_url,
                                  ev.n_data_uri, ev.n_version, ev.n_semantic, ev.n_example, ev.n_public_material, ev.n_ids])
def test_generated_negatives_do_not_trigger(make):
    r = random.Random(make.__name__)
    for _ in range(60):
        note = ev.Note("n.md")
        ctx, value = make(r)
        note.add(ctx, value, "neg", False)
        assert find_secrets(note.lines) == [], note.lines


def test_documented_aws_example_keys():
    kid = "AKIA" + "IOSFODNN7" + "EXAMPLE"
    sec = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY" + "EXAMPLEKEY"
    assert find_secrets([f"aws_access_key_id = {kid}", f"aws_secret_access_key = {sec}", f"| {kid} | {sec} |"]) == []


def test_example_words_make_an_example():
    for word in ("EXAMPLE", "example", "sample", "dummy", "FAKE"):
        v = ev.P["ghp"] + word + "".join(R.choice(B62) for _ in range(36 - len(word)))
        assert find_secrets([f"token: {v}"]) == [], word


# -- placeholders are whole values -----------------------------------------------------------------
# A placeholder word inside a value a person chose does not make it a placeholder: the value as a
# whole must be one (or only such words and separators). Words that disown a value (example,
# sample, dummy, fake, your…) still count anywhere; a word naming what the value is
# (password, secret, token) still counts in a name (no password symbol, no digit on a word).

@pytest.mark.parametrize("line,value,kind", [
    ("password: MySecretPass99", "MySecretPass99", "password"),
    ("password: Hunter2SuperSecret!", "Hunter2SuperSecret", "password"),  # unquoted: "!" reads as punctuation
    ('password: "Hunter2SuperSecret!"', "Hunter2SuperSecret!", "password"),
    ("password: Xk9#testPass2024!", "Xk9#testPass2024", "password"),
    ("secret: Qw7#tokenZ9xL", "Qw7#tokenZ9xL", "secret"),
    ("JWT_SECRET=Blue7SecretHorse42", "Blue7SecretHorse42", "secret"),
    ("- Password: `Secret!River2024`", "Secret!River2024", "password"),
    ('api_key = "Token9*Maple2024"', "Token9*Maple2024", "API key"),
    ("| Password | MySecretPass99 |", "MySecretPass99", "password"),
    ("密码：MySecretPass99。", "MySecretPass99", "password"),
    ("mysql -u root --password Hunter2SuperSecret9 shop", "Hunter2SuperSecret9", "password"),
    ("password: Test2Winter!Key42", "Test2Winter!Key42", "password"),
    ("password: Yours8#Lm2Zp", "Yours8#Lm2Zp", "password"),
])
def test_placeholder_words_inside_a_chosen_password_do_not_hide_it(line, value, kind):
    m = only([line])
    assert (line[m.start:m.end], m.kind) == (value, kind)


def test_chosen_passwords_of_the_eval_set_are_found():
    for seed in range(300):
        v = ev.v_chosen_password(random.Random(seed))
        for line in (f"password: {v}", f'{{"password": "{v}"}}', f"DB_PASSWORD={v}"):
            m = only([line])
            assert line[m.start:m.end] == v, line


def test_query_parameters_end_a_value():
    other = "Mw7Ks9" + "Xk9mPq2vL"
    line = f"'oauth_token={V}&oauth_token_secret={other}&oauth_callback_confirmed=true'"
    found = find_secrets([line])
    assert [(line[m.start:m.end], m.kind) for m in found] == [(V, "token"), (other, "secret")]


@pytest.mark.parametrize("line", [
    # whole-value placeholders and templates (the brief's list and the existing policy)
    "password: <your-secret>", "password: your_secret_here", "password: ${DB_SECRET}", "secret: REDACTED",
    "password: [REDACTED]", "password: changeme", "password: ***", "token: TODO", "password: example",
    "password: your_password_here", "password: <paste token here>", "password: {{ db_secret }}",
    "password: P@ssw0rd1!", 'password: "P@ssw0rd1!"', "password: Secret123!", "password: MySecret",
    "password: abcd1234!", "password: mysecretpassword",
    # only placeholder words and separators
    "password: Your_Secret_Here", "api_key: Your-API-Key", "token: Paste_Token_Here", "password: Insert-Password-Here",
    "password: Db_Password", "password: secret-password-123",
    # a word naming the value, in a name
    "secret: V1SecretVolumeSource", "token = _TokenType", "password: CLOUDSDK_PROXY_PASSWORD_value",
    "password: my-Bitbucket-password", "password: webdavgeneratedpassword1", '"secret": "OAUTH2-CLIENT-SECRET"',
    'token: f"{registry_id}-auth-token"', "token: newtoken123",
    # words that disown the value, anywhere (documentation writes examples so)
    "password: Tr0ub4dor&3Example", "password: examplePa$$w0rd", "secret key: asdf34example",
    "password: MyExamplePassword1!", "password: Zk8!dummyQ2pL", "password: Xk9#SampleKey91", "password: Bz9!Placeholder7q",
    "passwd: Fake9Horse!Blue7", "token: xoxb-your-token-here",
])
def test_placeholders_names_and_examples_stay_quiet(line):
    assert find_secrets([line]) == []


# -- allow marker and allow regexes --------------------------------------------------------------

def test_allow_marker_skips_the_line():
    v = token("GitHub token")
    assert find_secrets([f"- token: {v} {ALLOW_MARKER}"]) == []
    assert len(find_secrets([f"- token: {v}", ALLOW_MARKER])) == 1


def test_allow_marker_on_pem_begin_line():
    lines, _, _ = ev.pem_block(random.Random(9), "RSA")
    lines[0] += " " + ALLOW_MARKER
    assert find_secrets(lines) == []


def test_allow_regexes():
    gh, npm = token("GitHub token"), token("npm token")
    lines = [f"a: {gh}", f"b: {npm}"]
    assert [m.kind for m in find_secrets(lines, [re.compile(r"^gh")])] == ["npm token"]
    assert find_secrets(lines, [re.compile("^gh"), re.compile("^np")]) == []
    # allowing the specific match does not let a less specific rule report the same value
    assert find_secrets([f"token: {gh}"], [re.compile("^gh")]) == []


# -- masking and redaction ------------------------------------------------------------------------

def test_mask():
    assert mask("AKIA" + "Q" * 16) == "AKIA… (20 characters)"
    assert mask("hunter2xyz") == "hu… (10 characters)"
    assert mask("abc") == "… (3 characters)"
    assert mask("") == "… (0 characters)"


@given(st.text(min_size=0, max_size=200))
def test_mask_never_shows_more_than_four_characters(value):
    shown = mask(value).rsplit("… (", 1)[0]
    assert len(shown) <= 4 and len(shown) <= len(value) // 4
    assert value.startswith(shown)
    assert mask(value).endswith(f"({len(value)} characters)")


def test_redact_line_single_and_several():
    a, b = token("GitHub token", 1), token("npm token", 2)
    line = f"x {a} y {b} z"
    assert redact_line(line, find_secrets([line])) == "x [REDACTED] y [REDACTED] z"
    assert find_secrets([redact_line(line, find_secrets([line]))]) == []


def test_secret_match_is_frozen_and_slotted():
    m = SecretMatch(0, 0, 0, 1, "password", "… (1 characters)")
    with pytest.raises(AttributeError):
        m.kind = "x"  # type: ignore[misc]
    assert not hasattr(m, "__dict__")


# -- robustness and speed -------------------------------------------------------------------------

@pytest.mark.parametrize("lines", [
    [], [""], ["\x00" * 100], ["a" * 200_000], ["eyJ" * 30_000], ["sk-" * 30_000], ["password: " + "x" * 100_000],
    ["İ" * 1000 + " password: " + P], ["\udc80\udcff token: " + V + "aB3"], ["|" * 5000, "|---|"] * 3,
    ["-----BEGIN RSA " + "PRIVATE KEY-----"] + ["A" * 64] * 5000, ["://" + "@" * 10_000 + ":" * 10_000],
    ["a line\nwith a newline password: " + P, "token: x"], ["password:\r", "\r\n"], ["密码：" * 5000],
])
def test_odd_input_finishes_and_does_not_crash(lines):
    """No blow-up on hostile shapes (a 200 KB line, 30,000 repeated prefixes, 5,000 key lines):
    the scan finishes within a generous bound and finds what is there. How fast it is lives in
    `make bench`, not here."""
    found = finishes(lambda: find_secrets(lines), f"find_secrets on {len(lines)} odd line(s)")
    assert all(0 <= m.line < len(lines) for m in found)


def test_unicode_lowering_that_changes_length_keeps_positions():
    line = "İİİ password: " + P
    m = only([line])
    assert line[m.start:m.end] == P


# -- properties --------------------------------------------------------------------------------------

WORDS = (
    "the a we our team billing service moved cluster latency token tokens password passwords key keys secret "
    "API api_key is are was see vault 1Password rotate expire after days commit SHA version v2 config file path "
    "URL https://docs.internal.test/page README.md note: summary: Key: Token: Password: = : - * ** | 密码 令牌 "
    "密钥 口令 保存在 里 每 天 轮换 一次 2025-03-14 10:30 p95 180ms sk-learn eyJ AKIA ghp xoxb `make` (see) "
    "[link](../x.md) > # ## 是 为 ： 。 ， refresh_token client_secret: api-key= Bearer passwd pwd auth: "
    "retries timeouts duplicate charges sk- ghp_ xoxb- npm_ glpat- -----BEGIN @ user@host postgres:// :AA"
).split()


@settings(max_examples=500, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=20).map(" ".join), min_size=1, max_size=30))
def test_random_prose_never_triggers(lines):
    assert find_secrets(lines) == []


FORMATS = sorted(ev.TOKENS)


@settings(max_examples=400, derandomize=True)
@given(st.sampled_from(FORMATS), st.integers(0, 2**32), st.sampled_from(["{v}", "- `{v}`", "x={v}", "“{v}”", "令牌{v}。"]))
def test_random_tokens_of_each_format_always_trigger(kind, seed, ctx):
    if kind == "AWS secret access key":  # no shape of its own: only where it is named
        ctx = "AWS_SECRET_ACCESS_KEY=" + "{v}"
    elif kind == "Azure storage account key":
        ctx = "AccountName=a;AccountKey={v};EndpointSuffix=core.windows.net"
    v = ev.TOKENS[kind](random.Random(seed))
    line = ctx.replace("{v}", v)
    m = only([line])
    assert (line[m.start:m.end], m.kind) == (v, kind)


@pytest.mark.parametrize("line", ["See [the keys](key-{t}.md).", "deploy_{t}", "notes/{t}.md"])
def test_github_tokens_glued_to_a_name_by_a_dash_or_underscore_are_found(line: str):
    """A token pasted into a file name or an identifier (`key-ghp_…`) is still a token: the
    prefix is distinctive enough."""
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    found = find_secrets([line.format(t=token)])
    assert [(m.kind, line.format(t=token)[m.start:m.end]) for m in found] == [("GitHub token", token)]


# -- prose and placeholders are not secrets (issue 13) ----------------------------------------


@pytest.mark.parametrize("line", [
    "Commit everything in one **pass:** `--no-verify` skips the hooks.",
    "In one **pass:** `--no-verify`",
    'headers = {"Authorization": f"Bearer {API_KEY}"}',
    '`Authorization: f"Bearer {API_KEY}"`',
    "Authorization: Bearer ${GITHUB_TOKEN}",
    "token: $GITHUB_TOKEN",
    "password: <your-password-here>",
    "When you sign in for the first time the password: Xk9#mPq2vLw7 is printed once.",
])
def test_prose_and_placeholders_are_not_pm401(line):
    # What PM401 reports needs an assignment shape; masking, below, is more eager.
    assert find_secrets([line], in_sentences=False) == []


@pytest.mark.parametrize("line, value", [
    ("- **DB password:** `Xk9#mPq2vLw7`", "Xk9#mPq2vLw7"),
    ("AWS secret access key: zLVQ6RGVINPreXHmot3KLPiH7kj4AZvGC+/hBofQ", "zLVQ6RGVINPreXHmot3KLPiH7kj4AZvGC+/hBofQ"),
    ("- [Wifi](notes/wifi.md) — password: Xk9#mPq2vLw7", "Xk9#mPq2vLw7"),
    ("Rotated yesterday. Token: 8a4QR0Azo5mmyUmBp3nvizgPmFXxrnbIDF53", "8a4QR0Azo5mmyUmBp3nvizgPmFXxrnbIDF53"),
    ('{"host": "db", "port": 5432, "user": "app", "password": "Xk9#mPq2vLw7"}', "Xk9#mPq2vLw7"),
    ("export CI_RUNNER_GITHUB_TOKEN=8a4QR0Azo5mmyUmBp3nvizgPmFXxrnbIDF53", "8a4QR0Azo5mmyUmBp3nvizgPmFXxrnbIDF53"),
])
def test_assignment_shapes_are_pm401(line, value):
    (m,) = find_secrets([line], in_sentences=False)
    assert line[m.start:m.end] == value


def test_masking_still_hides_a_key_named_value_in_a_sentence():
    line = "When you sign in for the first time the password: Xk9#mPq2vLw7 is printed once."
    assert "Xk9#mPq2vLw7" not in mask_secrets(line)


def test_a_long_line_of_prose_separators_stays_linear():
    line = "word " * 40000 + "in one pass: " * 20000
    # Quadratic work on this line would take far longer than the generous bound.
    assert finishes(lambda: find_secrets([line], in_sentences=False), "find_secrets on a 400 KB prose line") == []


def _openssh_key(rng: random.Random, kind: str) -> list[str]:
    """An unencrypted key in OpenSSH's own format, as `ssh-keygen` writes it by default: its
    fixed header (`openssh-key-v1`, cipher and KDF `none`, one key) and length fields are base64
    of many zero bytes, around random key material."""
    import base64
    import struct

    def string(b: bytes) -> bytes:
        return struct.pack(">I", len(b)) + b

    name = kind.encode()
    if kind == "ssh-ed25519":
        public = string(name) + string(rng.randbytes(32))
        private = string(name) + string(public[-32:]) + string(rng.randbytes(64))
    else:  # ssh-rsa: e = 65537, a 2048-bit n and d, primes and their inverse
        public = string(name) + string(b"\x01\x00\x01") + string(b"\x00" + rng.randbytes(256))
        private = (string(name) + string(b"\x00" + rng.randbytes(256)) + string(b"\x01\x00\x01")
                   + string(rng.randbytes(256)) + string(rng.randbytes(128)) + string(rng.randbytes(129))
                   + string(rng.randbytes(129)))
    check = rng.randbytes(4)
    block = check + check + private + string(b"me@host")
    block += bytes(range(1, 1 + (-len(block)) % 8))
    blob = (b"openssh-key-v1\x00" + string(b"none") + string(b"none") + string(b"")
            + struct.pack(">I", 1) + string(public) + string(block))
    text = base64.b64encode(blob).decode()
    return ["-----BEGIN OPENSSH PRIVATE KEY-----", *(text[i:i + 70] for i in range(0, len(text), 70)),
            "-----END OPENSSH PRIVATE KEY-----"]


@pytest.mark.parametrize("kind", ["ssh-ed25519", "ssh-rsa"])
@pytest.mark.parametrize("seed", range(5))
def test_an_openssh_format_key_is_found_whatever_its_zero_bytes(kind, seed):
    """ssh-keygen's default output: its header encodes as runs of `A`, which once read as a
    placeholder's repeated character and let every such key through (a review, issue 26)."""
    key = _openssh_key(random.Random(seed), kind)
    assert "AAAAAA" in key[1]  # the header's zero bytes, as in every real key of this format
    m = only(["# Server key", "", *key])
    assert m.kind == "PEM private key" and (m.line, m.end_line) == (3, len(key))


def test_a_pem_body_of_zero_bytes_or_one_character_is_a_placeholder():
    for body in ("A" * 64, "x" * 64, "AAAA" + "x" * 60):
        assert find_secrets(["-----BEGIN OPENSSH PRIVATE KEY-----", body, "-----END OPENSSH PRIVATE KEY-----"]) == []


# -- a placeholder is judged on the whole value (issue 43) --------------------------------------
_REAL_BODY = "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vab"  # 34 random-looking characters


@pytest.mark.parametrize("sequence", ["a1b2c3", "abc123", "12345678", "qwertyui", "abcdefgh"])
def test_a_real_token_holding_a_counting_sequence_is_still_found(sequence: str):
    """A keyboard or counting sequence inside a long random body is chance: the token is
    found. (A value that is mostly such sequences, `abc123` alone, stays a placeholder.)"""
    token = "ghp_" + _REAL_BODY[:12] + sequence + _REAL_BODY[12:36 - len(sequence)]
    assert len(token) == 40
    line = f"CI pushes with {token} every night."
    assert [f.kind for f in find_secrets([line])] == ["GitHub token"] and token not in mask_secrets(line)


@pytest.mark.parametrize("value", ["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_a1b2c3a1b2c3a1b2c3a1b2c3a1b2c3a1b2c3",
                                   "password: abc123", "password: 12345678"])
def test_a_value_made_of_sequences_is_a_placeholder(value: str):
    assert find_secrets([value]) == []


def _counts_up_by_definition(low: str) -> bool:
    """`_counts_up` as its docstring says it: every neighbouring pair of its ASCII letters, and
    of its digits, read apart; four fifths one apart, in six or more of them."""
    ups = pairs = 0
    for kind in (str.isalpha, str.isdigit):
        chars = [c for c in low if kind(c) and c.isascii()]
        pairs += max(len(chars) - 1, 0)
        ups += sum(1 for a, b in zip(chars, chars[1:], strict=False) if ord(b) - ord(a) == 1)
    return pairs >= 5 and ups * 5 >= pairs * 4 and sum(c.isalnum() for c in low) * 5 >= len(low) * 4


_COUNTING = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.é", max_size=40)


@st.composite
def _nearly_counting(draw: st.DrawFn) -> str:
    """A counting run of letters and digits with a few characters changed: near the four-fifths line."""
    a = draw(st.integers(0, 20))
    chars = list(string.ascii_lowercase[a:a + draw(st.integers(3, 26))] + "0123456789"[:draw(st.integers(0, 10))])
    for _ in range(draw(st.integers(0, 3))):
        chars[draw(st.integers(0, len(chars) - 1))] = draw(st.sampled_from("aqz09-é"))
    return "".join(chars)


@settings(max_examples=500, deadline=None)
@given(st.one_of(_COUNTING, _nearly_counting()))
def test_counts_up_stops_early_and_answers_as_its_definition(value: str):
    """`_counts_up` stops at the first pair too many out of step; the answer is the full count's."""
    from pmem_lsp.engine.secrets._checks import _counts_up
    low = value.lower()
    assert _counts_up(low) == _counts_up_by_definition(low)


@pytest.mark.parametrize("value", ["Decision", "Bearer", "Status", "$OBSIDIAN_API_KEY", "API_TOKEN_2",
                                   "env.secret_token", "https://x.example/a", "`abcdefgh`"])
def test_looks_random_refuses_words_names_and_references_before_the_placeholder_checks(value: str):
    """The refusals `looks_random` makes before `is_placeholder` (a word of letters under 16, an
    environment name, an identifier, a URL, a code span) give False whatever it would say."""
    from pmem_lsp.engine.secrets._checks import looks_random
    assert not looks_random(value)


_KEYS = st.sampled_from(["password", "api_key", "API_KEY", "token", "secret", "DB password", "client secret",
                         "密码", "令牌", "Pass", "default password", "AWS secret access key"])
_SEPS = st.sampled_from(["=", ": ", ":", " = ", ":=", " => ", "：", " is ", "是", "=\"", ": '"])
_VALUES = st.one_of(
    st.sampled_from(["<your-api-key>", "${TOKEN}", "$API_KEY", "Bearer", "hunter2", "os.environ[\"X\"]",
                     "changeme", "http://x.y/z", "Zqumpm08hsE8JNpjJOQG", "dg9PyM1yGz5DZfVSm9+9o1BUvIdL4kgI"]),
    st.text(alphabet=string.ascii_letters + string.digits + "+/=-_.$<>{}", min_size=1, max_size=40))
_TAILS = st.sampled_from(["", "&next=1", ";x=2", "#frag", "&", ";", "...", "\"", ")", " — note", "，后面",
                         "&u=http://x", "#`x`", ";${X}"])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["", "- ", "export ", "url?", "a&", "x;", "the ", "Default ", "| ", "{\"", "Basic "]),
       _KEYS, _SEPS, _VALUES, _TAILS, st.booleans())
def test_find_assignments_refusing_a_value_at_once_finds_what_the_full_reading_finds(
        pre, key, sep, value, tail, in_sentences):
    """`find_assignments` refuses a value at a glance (`refused_at_once`) before it reads the key,
    where no cut can shorten it (`=`'s at `&`, `;`, `#`): the same findings as without that step."""
    from unittest import mock

    from pmem_lsp.engine.secrets import _generic
    line = pre + key + sep + value + tail
    at_once = list(_generic.find_assignments(line, None, in_sentences))
    with mock.patch.object(_generic, "refused_at_once", lambda _value: False):
        assert list(_generic.find_assignments(line, None, in_sentences)) == at_once
