"""Shapes an agent could write to get a secret past PM401 (and so past the pre-write hook):
private key blocks in unusual armour (`engine/secrets/_pem.py`), invisible characters the
disguise folding did not remove (`_disguise.py`), and Markdown or HTML markup that renders as
the exact token (`_markup.py`). Each beside near misses that must stay quiet."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import secrets_eval as ev
from pmem_lsp.engine.secrets import SecretMatch, _gate, _markup, find_secrets, mask_text

try:
    ENGINES = ("pure", "compiled") if _gate.choose("compiled") else ("pure",)
except ImportError:
    ENGINES = ("pure",)


def _same_findings(lines: list[str]) -> None:
    """Both gate engines (where hyperscan is installed) find the same, with each option."""
    for kw in ({}, {"in_sentences": False}, {"honour_marker": False}):
        results = []
        for name in ENGINES:
            before = _gate.use(name)
            try:
                results.append(repr(find_secrets(lines, **kw)))
            finally:
                _gate._forced = before
        assert len(set(results)) == 1, (kw, results)

AWS = "AKIA" + "Z7Q3R9T2M4K8W6PX"
GHP = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"

# --- invisible characters -------------------------------------------------------------------

NEW_INVISIBLES = [chr(c) for c in (*range(0xFE00, 0xFE10), *range(0x202A, 0x202F), *range(0x2066, 0x206A),
                                   0xE0001, 0xE0020, 0xE0041, 0xE007F)]


@pytest.mark.parametrize("invisible", NEW_INVISIBLES, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("token, kind", [(AWS, "AWS access key id"), (GHP, "GitHub token")])
def test_a_token_with_an_invisible_character_inside_is_found_at_its_real_columns(invisible, token, kind):
    cut = 10
    line = "key id " + token[:cut] + invisible + token[cut:] + " in the note"
    (m,) = find_secrets([line])
    assert m.kind == kind
    assert (m.line, m.start, m.end_line, m.end) == (0, 7, 0, 7 + len(token) + 1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(NEW_INVISIBLES), min_size=1, max_size=4), st.integers(1, len(AWS) - 1))
def test_runs_of_them_anywhere_inside_still_give_the_token(invisibles, cut):
    line = AWS[:cut] + "".join(invisibles) + AWS[cut:]
    (m,) = find_secrets(["x " + line])
    assert m.kind == "AWS access key id" and (m.start, m.end) == (2, 2 + len(line))


def test_emoji_with_variation_selectors_and_bidi_text_stay_quiet():
    lines = ["Done \u2764\ufe0f and \u2705\ufe0e shipped", "\u202bשלום\u202c world \u2067مرحبا\u2069",
             "flag \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
             "AKIA\ufe0fEXAMPLE", "ghp_\u202eshort"]
    assert find_secrets(lines) == []


# --- private key blocks in unusual armour ---------------------------------------------------

def _key(seed: int, label: str = "RSA") -> tuple[list[str], list[str]]:
    """(the BEGIN line's label words, the body lines) of a generated key block."""
    lines, first, last = ev.pem_block(random.Random(seed), label)
    return lines, lines[first:last + 1]


def _block_of(lines: list[str]) -> SecretMatch:
    found = [m for m in find_secrets(lines) if m.kind == "PEM private key"]
    assert len(found) == 1, (lines[:3], found)
    return found[0]


BEGIN, END = "-----BEGIN RSA PRIVATE" + " KEY-----", "-----END RSA PRIVATE" + " KEY-----"


def _armoured(body: list[str], begin: str = BEGIN, end: str = END, pre: str = "") -> list[str]:
    return [pre + begin, *(pre + x for x in body), pre + end]


VARIANTS = {
    "a word after the header": lambda body: [BEGIN + " x", *body, END],
    "a sentence after the header": lambda body: [BEGIN + " (the staging one)", *body, END],
    "EXAMPLE among the body lines": lambda body: [BEGIN, *body[:3], "EXAMPLE", *body[3:], END],
    "EXAMPLE as the first body line": lambda body: [BEGIN, "EXAMPLE", *body, END],
    "EXAMPLE as the last body line": lambda body: [BEGIN, *body, "EXAMPLE", END],
    "list items": lambda body: _armoured(body, pre="- "),
    "starred list items": lambda body: _armoured(body, pre="* "),
    "numbered list items": lambda body: [f"{i}. {x}" for i, x in enumerate([BEGIN, *body, END], 1)],
    "quoted": lambda body: _armoured(body, pre="> "),
    "quoted list items": lambda body: _armoured(body, pre="> - "),
    "lower case": lambda body: _armoured(body, BEGIN.lower(), END.lower()),
    "mixed case": lambda body: _armoured(body, "-----Begin RSA Private" + " Key-----", "-----End RSA Private Key-----"),
    "four dashes": lambda body: _armoured(body, BEGIN[1:-1], END[1:-1]),
    "four dashes, lower case, listed": lambda body: _armoured(body, BEGIN[1:-1].lower(), END[1:-1].lower(), "- "),
}


@pytest.mark.parametrize("label", ["RSA", "EC", "OPENSSH", ""])
@pytest.mark.parametrize("variant", VARIANTS, ids=list(VARIANTS))
def test_a_key_block_in_armour_no_tool_writes_is_still_found(variant, label):
    _lines, body = _key(len(variant) + len(label), label)
    word = (label + " " if label else "")
    lines = [x.replace("RSA ", word).replace("Rsa ", word).replace("rsa ", word.lower()) for x in VARIANTS[variant](body)]
    lines = ["Keys for staging:", "", *lines, "", "Rotate them monthly."]
    m = _block_of(lines)
    first = 1 + next(i for i, x in enumerate(lines) if "begin" in x.lower())
    last = -1 + next(i for i, x in enumerate(lines) if "-end" in x.lower())
    assert (m.line, m.end_line) == (first, last)
    text_of = {lines[first]: lines[first].split()[-1], lines[last]: lines[last].split()[-1]}
    assert m.start == len(lines[first]) - len(text_of[lines[first]]) and m.end == len(lines[last])
    assert m.strong
    # Masked and redacted: no line of the body is left.
    shown = mask_text("\n".join(lines))
    assert not any(x in shown for x in body if len(x) > 8)


def test_the_escaped_and_inline_forms_read_the_unusual_armour_too():
    _lines, body = _key(7)
    flat = "".join(body)
    escaped = '"private_key": "' + BEGIN.lower() + "\\n" + "\\n".join(body) + "\\n" + END.lower() + '\\n"'
    inline = BEGIN[1:-1] + " " + " ".join(body) + " " + END[1:-1]
    for line in (escaped, inline):
        (m,) = find_secrets([line])
        assert "".join(line[m.start:m.end].replace("\\n", " ").split()) == flat


STUB = "MIIEowIBAAKCAQEA7bq" + "3xK9mQ2vLp8zRt4wJ2"  # a key's opening, too short to be one
QUIET_PEM = {
    "the header in a sentence": ["Such a file starts with " + BEGIN + " and ends with " + END + "."],
    "lower-case header in a sentence": ["it begins " + BEGIN.lower() + ", then the body"],
    "a word after the header, prose below": [BEGIN + " x", "and then comes the base64 body.", END],
    "four-dash header, prose below": [BEGIN[1:-1], "", "(paste the key here)", END[1:-1]],
    "listed header alone": ["- " + BEGIN, "- the body", "- " + END],
    "a stub body after a word": [BEGIN + " x", STUB, END],
    "a stub body, lower case": [BEGIN.lower(), STUB, END.lower()],
    "a stub body, listed": _armoured([STUB], pre="- "),
    "an elided body, four dashes": [BEGIN[1:-1], STUB + "...", END[1:-1]],
    "a placeholder body, lower case": [BEGIN.lower(), *["x" * 64] * 4, END.lower()],
    "EXAMPLE inside the one long body line": [BEGIN, "MIIEowIBAAKCAQEA7bq3xK9mQ2vLEXAMPLEKEYp8zRt4wJ2Hn5Lc8Vd3Qa6Ws1Ze",
                                              END],
    "a listed column of hashes under a header": ["- " + BEGIN[1:-1].lower(),
                                                 *("- " + "".join(random.Random(i).choices("0123456789abcdef", k=64))
                                                   for i in range(6)), "- " + END[1:-1].lower()],
}


@pytest.mark.parametrize("name", QUIET_PEM, ids=list(QUIET_PEM))
def test_a_key_header_without_key_material_stays_quiet(name):
    assert find_secrets(QUIET_PEM[name]) == []


def test_both_engines_agree_on_the_unusual_armour():
    for variant in VARIANTS:
        _lines, body = _key(len(variant))
        lines = VARIANTS[variant](body)
        _same_findings(lines)
        _same_findings([" ".join(lines)])
    for lines in QUIET_PEM.values():
        _same_findings(lines)


# --- markup that renders as the exact token -------------------------------------------------

SK = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
# (the written token, where the token starts in it, the kind): each renders as the token.
MARKUP = {
    "an HTML comment": ("AKIAZ7Q3R9<!-- -->T2M4K8W6PX", "AWS access key id"),
    "a comment with words": ("AKIAZ7Q3R9<!-- not a key -->T2M4K8W6PX", "AWS access key id"),
    "bold inside": ("AKIAZ7Q3R9**T2M4K8W6PX**", "AWS access key id"),
    "italic inside": ("AKIAZ7Q3R9*T2M4K8W6PX*", "AWS access key id"),
    "bold around a part": ("**AKIAZ7**Q3R9T2M4K8W6PX", "AWS access key id"),
    "strike-through inside": ("AKIAZ7Q3R9~~T2M4K8W6PX~~", "AWS access key id"),
    "an inline tag": ("AKIAZ7Q3R9<b>T2M4K8W6PX</b>", "AWS access key id"),
    "a span with a style": ('AKIAZ7Q3R9<span style="color:red">T2M4K8W6PX</span>', "AWS access key id"),
    "markers and a comment together": ("AKIAZ7Q3R9*<!-- -->*T2M4K8W6PX", "AWS access key id"),
    "a decimal reference": ("AKIA&#90;7Q3R9T2M4K8W6PX", "AWS access key id"),
    "a reference first": ("&#65;KIAZ7Q3R9T2M4K8W6PX", "AWS access key id"),
    "a decimal underscore": ("ghp&#95;" + GHP[4:], "GitHub token"),
    "a hex underscore": ("ghp&#x5F;" + GHP[4:], "GitHub token"),
    "a named underscore": ("ghp&lowbar;" + GHP[4:], "GitHub token"),
    "an escaped underscore": ("ghp\\_" + GHP[4:], "GitHub token"),
    "escaped underscores in a Stripe key": (SK.replace("_", "\\_"), "Stripe secret key"),
}


@pytest.mark.parametrize("name", MARKUP, ids=list(MARKUP))
@pytest.mark.parametrize("around", [("", ""), ("- staging key: `", "` (rotate)"), ("| prod | ", " |")])
def test_markup_inside_a_token_is_read_as_it_renders(name, around):
    written, kind = MARKUP[name]
    line = around[0] + written + around[1]
    found = [m for m in find_secrets(["# Keys", line], honour_marker=False) if m.strong]
    assert [m.kind for m in found] == [kind]
    (m,) = found
    # From the token's first character (or the reference that renders as it) to its last.
    assert m.line == m.end_line == 1 and m.start == len(around[0]) + len(written) - len(written.lstrip("*"))
    assert written[m.end - len(around[0]):].strip("*~") in ("", "</b>", "</span>")
    assert written[12:18] not in mask_text("# Keys\n" + line)


QUIET_MARKUP = [
    "Use **bold** for a_b_c identifiers and *emphasis* in prose ~~not this~~.",
    "The **AKIA** prefix marks an AWS key id; **ghp_** a GitHub token.",
    "AKIAIOSFODNN7**EXAMPLE**",  # AWS's documented example key id, rendered
    "AKIAZ7Q3R9 **T2M4K8W6PX**",  # a space: two words, not one token
    "ghp\\_short and ghp&#95;tooShort",
    "a_very_long_identifier_name_with**stars**in_it_and_more_words",
    "https://example.com/?a=1&amp;b=2&#38;c=3 and C:\\Users\\name\\_private",
    "password: hunter<!-- -->2xyzQ!",  # a key-named value is not looked for in the rendered view
    "Math: 2*3*4 = 24, a~b, x&#42;y, \\*literal\\*",
    "| AKIA<!-- --> | prefix |",
]


@pytest.mark.parametrize("line", QUIET_MARKUP)
def test_markup_that_renders_as_no_token_stays_quiet(line):
    assert [m for m in find_secrets([line], in_sentences=False) if m.strong] == \
        [m for m in find_secrets([line.replace("<!-- -->", "")], in_sentences=False) if m.strong]
    assert not any(m.kind in ("AWS access key id", "GitHub token") for m in find_secrets([line]))


def test_the_allow_marker_is_honoured_by_a_check_and_never_by_the_hook():
    line = "AKIAZ7Q3R9**T2M4K8W6PX** <!-- pmem: allow-secret -->"
    assert find_secrets([line]) == []
    assert [m.kind for m in find_secrets([line], honour_marker=False)] == ["AWS access key id"]


def test_both_engines_agree_on_markup():
    for written, _kind in MARKUP.values():
        _same_findings(["x " + written, "y"])
    for line in QUIET_MARKUP:
        _same_findings([line])


_PIECES = ["<!-- -->", "<!--x-->", "**", "*", "~~", "<b>", "</b>", "<span>", "</span>", "<em>", "&#0;", "&amp;", "&#x2a;"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, len(AWS) - 1), st.sampled_from(_PIECES)), min_size=1, max_size=4,
                unique_by=lambda cut: cut[0]))
def test_removed_markup_anywhere_inside_a_token_gives_it_at_its_real_columns(cuts):
    written = AWS
    for at, piece in sorted(cuts, reverse=True):
        written = written[:at] + piece + written[at:]
    written = written.replace("&#0;", "").replace("&amp;", "").replace("&#x2a;", "")  # render as no token character
    line = "key " + written + " end"
    (m,) = [m for m in find_secrets([line], honour_marker=False) if m.kind == "AWS access key id"]
    assert (m.start, m.end) == (4, 4 + len(written))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"ab_Z9 -.*~&#;<>!\\x/", "<!--", "-->", "&#95;", "&lowbar;", "<b>", "\n"]),
                max_size=60))
def test_the_rendered_view_maps_each_character_back_to_where_it_is_written(pieces):
    text = "".join(pieces)
    lines = text.split("\n")
    for ln, shown, starts, ends in _markup.fold(lines, text):
        line = lines[ln]
        assert len(shown) == len(starts) == len(ends)
        assert all(a < e <= b for a, e, b in zip(starts, ends, [*starts[1:], len(line)], strict=True))
        for ch, a, e in zip(shown, starts, ends, strict=True):
            assert line[a:e] == ch or (e - a > 1 and line[a] in "&\\")


@pytest.mark.parametrize("written", ["AKIA\u200bZ7Q3R9**T2M4K8W6PX**", "AKIAZ7\ufe0fQ3R9<!-- -->T2M4K8W6PX",
                                     "АKIAZ7Q3R9~~T2M4K8W6PX~~", "ghp\u202e\\_" + GHP[4:]])
def test_markup_and_a_disguise_together_still_give_the_token_at_its_columns(written):
    line = "id: " + written + " ok"
    found = [m for m in find_secrets(["", line], honour_marker=False) if m.strong]
    assert len(found) == 1 and found[0].line == 1 and found[0].start == 4
    assert written[found[0].end - 4:] in ("", "**", "~~")


def test_many_decoy_lines_of_markup_do_not_hide_a_token_after_them():
    decoys = ["abcdefghij**klmnopqrstuvwxyz0123**"] * 500 + ["x&#95;" + "q" * 30] * 500
    lines = [*decoys, "AKIAZ7Q3R9**T2M4K8W6PX**", *decoys]
    found = find_secrets(lines, honour_marker=False)
    assert [(m.line, m.kind) for m in found] == [(1000, "AWS access key id")]


def test_every_token_of_a_long_list_of_them_is_found():
    lines = [f"- key {i}: AKIAZ7Q3R9**T2M4K8W6PX**" for i in range(2000)]
    found = find_secrets(lines, honour_marker=False)
    assert [m.line for m in found] == list(range(2000))
    assert all((m.start, m.end) == (lines[m.line].index("AKIA"), lines[m.line].index("AKIA") + 22) for m in found)
