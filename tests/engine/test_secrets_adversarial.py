"""Shapes an agent could write to get a secret past PM401 (and so past the pre-write hook):
private key blocks in unusual armour (`engine/secrets/_pem.py`), invisible characters the
disguise folding did not remove (`_disguise.py`), and Markdown or HTML markup that renders as
the exact token (`_markup.py`). Each beside near misses that must stay quiet."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.secrets import find_secrets

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
