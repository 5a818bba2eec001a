"""The gate in front of PM401's detectors (`engine/secrets/_gate.py`, `_compiled.py`;
docs/decisions.md, "Secrets: one gate, two engines"). The pure engine is held to a brute-force
reference always; the compiled one (hyperscan, the extra `pmem-lsp[fast]`) to the pure one
where it is installed: probe by probe, line by line, and finding by finding on generated text,
the precision fixtures and the evaluation corpus (benchmarks/secrets_eval.py)."""

from __future__ import annotations

import re
import sys
from dataclasses import astuple
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import test_secrets_precision as precision

import secrets_eval as ev
from pmem_lsp.engine.secrets import _disguise, _gate, find_secrets
from pmem_lsp.engine.secrets._gate import GATED_RULES, PREFILTER, PROBES, PureGate, keyword_spots, spots_by_line
from pmem_lsp.engine.secrets._generic import find_assignments, find_flags, may_assign
from pmem_lsp.engine.secrets._tokens import TOKEN_RULES, token_matches

try:
    COMPILED = _gate.choose("compiled")
except ImportError:
    COMPILED = None
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="hyperscan (pmem-lsp[fast]) is not installed")
PURE = PureGate()

# Pieces texts are built from: every probe's keyword, the pieces of the three special probes,
# the key words in every case and script, separators, disguises, and the characters whose
# lower case is not one ASCII letter. Token prefixes are concatenated (no token in the file).
_KEYWORDS = sorted({kw for i in GATED_RULES for kw in TOKEN_RULES[i].keywords})
_PIECES = [*_KEYWORDS, "MT" + "k4", "Nj", "OD", "ey" + "J", ".ey", ".ew", ":A", "12345678:", "https://", "discord",
           "-----BEG" + "IN ", "----beg" + "in ", "----Beg" + "In ", "://", "pass", "Password", "PWD", "secret", "Token", "KEY", "auth", "Cred", "密码", "密钥",
           "口令", "令牌", "秘钥", "私钥", "密", "令", "钥", ": ", "=", "：", " is ", " are ", "是", "为", "--", "|", '"', "'",
           "S" + "K", "PuTTY-User-" + "Key-File-3: ", "Private-Lines: 1\n",
           "**", "\n", " ", ".", "_", "-", "/", "%", "\u200b", "а", "ｐ", "—", "İ", "\u212a", "ü", "项目"]
_RUN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_B62, _HEX = ev.B62, "0123456789abcdef"


def _rs(r, alphabet, lo, hi=None):
    return "".join(r.choice(alphabet) for _ in range(r.randint(lo, hi or lo)))


# Every token shape of TOKEN_RULES, random (the evaluation's generators, and the shapes it
# lacks built here the same way), so that the rules' regexes really match in generated text.
_SHAPES = [*ev.TOKENS.values(),
           lambda r: "GOCSPX" + "-" + _rs(r, _RUN, 28), lambda r: "ya" + "29." + _rs(r, _RUN, 30, 60),
           lambda r: "?si" + "g=" + _rs(r, _B62 + "%+/", 30, 60), lambda r: "xa" + "pp-1-A1B2-123-" + _rs(r, _HEX, 20, 40),
           lambda r: "wh" + "sec_" + _rs(r, _B62, 24, 40), lambda r: "sk" + "-or-v1-" + _rs(r, _HEX, 64),
           lambda r: "hf" + "_" + _rs(r, _B62, 30, 40), lambda r: "gs" + "k_" + _rs(r, _B62, 40, 50),
           lambda r: "xa" + "i-" + _rs(r, _B62, 60, 70), lambda r: "pp" + "lx-" + _rs(r, _B62, 40, 50),
           lambda r: "r8" + "_" + _rs(r, _B62, 30, 40), lambda r: "SG" + "." + _rs(r, _RUN, 22) + "." + _rs(r, _RUN, 43),
           lambda r: "shp" + "at_" + _rs(r, _HEX, 32), lambda r: "do" + "p_v1_" + _rs(r, _HEX, 64),
           lambda r: "lin" + "_api_" + _rs(r, _B62, 40), lambda r: "nt" + "n_" + _rs(r, _B62, 40, 50),
           lambda r: "PM" + "AK-" + _rs(r, _HEX, 24) + "-" + _rs(r, _HEX, 34), lambda r: "hv" + "s." + _rs(r, _RUN, 24, 40),
           lambda r: "AT" + "ATT" + _rs(r, _RUN + "=", 60, 80), lambda r: "da" + "pi" + _rs(r, _HEX, 32),
           lambda r: "fi" + "gd_" + _rs(r, _RUN, 40, 50), lambda r: "sb" + "p_" + _rs(r, _HEX, 40),
           lambda r: "xoxe." + "xo" + "xb-" + _rs(r, _B62, 10, 30),
           lambda r: "https://canary.discordapp.com/api/web" + "hooks/12345678/" + _rs(r, _RUN, 40, 60),
           lambda r: "https://hooks." + "slack.com/workflows/" + _rs(r, _RUN + "/", 20, 40),
           lambda r: "-u S" + "K" + _rs(r, _HEX, 31, 33) + ":" + _rs(r, _B62, 32),  # Twilio: a SID, a secret
           lambda r: ["PuTTY-User-" + "Key-File-" + r.choice("23") + ": ssh-ed25519", "Encryption: none",
                      "Public-Lines: 1", _rs(r, _B62, 68), "Private-Lines: 1", _rs(r, _B62 + "+/", 44, 64)]]


@st.composite
def _token(draw):
    """A token in some rule's shape, sometimes cut short or glued to what comes before."""
    r = draw(st.randoms(use_true_random=False))
    value = draw(st.sampled_from(_SHAPES))(r)
    if isinstance(value, list):  # a PEM block: its lines
        value = "\n".join(value)
    cut = draw(st.integers(0, 3))
    if cut == 1:
        value = value[:draw(st.integers(0, len(value)))]
    elif cut == 2:
        value = draw(st.sampled_from(["x", "_", "%", ".", "-", ":", "0"])) + value
    return value


texts = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(_RUN, min_size=1, max_size=48),
                           st.text(max_size=4), _token()), max_size=40).map("".join)


def _data(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def reference_hits(data: bytes) -> list[list[int]]:
    """Every start of every probe: a look-ahead tried at every offset."""
    return [[m.start() for m in re.finditer(b"(?=" + p.pattern.encode() + b")", data)] for p in PROBES]


def reference_candidates(text: str) -> dict[int, list[str]]:
    """Each line's prefilter words, looked for line by line (ASCII ones in the line's bytes
    with ASCII letters lowered, as the gate reads them)."""
    out = {}
    for ln, line in enumerate(text.split("\n")):
        low = _data(line).lower()
        words = [w for w in PREFILTER if (w.encode() in low if w.isascii() else w in line)]
        if words:
            out[ln] = words
    return out


def reference_where(line: str) -> dict[str, list[int]]:
    """Every occurrence of every gated rule's keywords on the line (what the rules were tried
    at before the gate)."""
    out = {}
    for i in GATED_RULES:
        for kw in TOKEN_RULES[i].keywords:
            at = [m.start() for m in re.finditer("(?=" + re.escape(kw) + ")", line)]
            if at:
                out[kw] = at
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_the_pure_gate_finds_every_match_of_every_probe_and_every_key_word(text):
    data = _data(text)
    hits, candidates = PURE.scan(data, text, text.count("\n") + 1)
    assert hits == reference_hits(data)
    assert candidates == reference_candidates(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_the_keyword_spots_give_every_rule_the_matches_every_keyword_occurrence_gives(text):
    lines = text.split("\n")
    data = _data(text)
    by_line = spots_by_line(data, lines, keyword_spots(data, reference_hits(data)))
    for ln, line in enumerate(lines):
        where, everywhere = by_line.get(ln, {}), reference_where(line)
        for i in GATED_RULES:
            rule = TOKEN_RULES[i]
            assert [m.span() for m in token_matches(rule, line, where)] == \
                [m.span() for m in token_matches(rule, line, everywhere)], rule.kind


# Texts past the size from which the pure gate looks for the key words in groups that share a
# letter (`_gate._GROUPS_FROM`): a generated text with padding before it, after it, around it or
# inside it; on one line or many; ASCII or not; the padding full of the anchors and letters the
# searches skip to (JSON numbers and ids, words with k, p and c, hyphens and dots) or of none.
_PADS = ['{"x":-1.25,"id":"a1b2Xk"},', "plain words, take a pass at a key. ", "项目 Notizen über Kästen. ",
         "a\n", "k p c a-_.=A: ", "zzzz"]


@st.composite
def long_texts(draw):
    text = draw(texts)
    unit = draw(st.sampled_from(_PADS))
    pad = unit * (_gate._GROUPS_FROM // len(unit.encode()) + 1)
    where = draw(st.sampled_from(["before", "after", "both", "inside"]))
    if where == "before":
        return pad + text
    if where == "after":
        return text + pad
    if where == "both":
        return pad + text + pad
    cut = draw(st.integers(0, len(text)))
    return text[:cut] + pad + text[cut:]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(long_texts())
def test_the_pure_gate_finds_every_probe_and_key_word_in_a_long_text_too(text):
    data = _data(text)
    assert len(data) >= _gate._GROUPS_FROM
    hits, candidates = PURE.scan(data, text, text.count("\n") + 1)
    assert hits == reference_hits(data)
    assert candidates == reference_candidates(text)


@needs_compiled
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(long_texts())
def test_the_compiled_gate_gives_what_the_pure_one_gives_on_a_long_text(text):
    data = _data(text)
    n = text.count("\n") + 1
    assert COMPILED.scan(data, text, n) == PURE.scan(data, text, n)


@pytest.mark.parametrize("words", [w for words, _anchor in _gate._WORD_GROUPS for w in
                                   (words, *((a, b) for a in words for b in words if a != b))], ids=repr)
def test_each_key_word_of_a_group_is_found_on_a_long_line_wherever_it_is_among_the_others(words):
    """The first of a group's words on a line is found by its shared letter, which is inside
    the word (`to[k]en`), and the others by a search of that line: a word first or last, at
    either end of the line, on the first line or a later one, alone or beside the others."""
    pad = "z" * _gate._GROUPS_FROM
    middle = " ".join(w.upper() if i % 2 else w for i, w in enumerate(words))
    for text in (middle + pad, pad + middle, pad + middle + pad, "x\n" + middle + pad + "\n" + middle,
                 pad + "\n" + middle + "\n" + pad):
        data = _data(text)
        assert PURE.scan(data, text, text.count("\n") + 1, tokens=False)[1] == reference_candidates(text)


def test_a_plain_probe_found_in_a_word_groups_pass_is_found_everywhere_on_a_long_text():
    """`dapi` (no anchor of its own) is found, on a long text, in the pass of the word group
    whose letter it holds (`p`: pass, pwd), on the lowered text: before the line's first word,
    after it, beside it, in another case (not a match), on every line."""
    merged = [i for _words, _search, _anchor, ids in PURE.word_groups for i in ids]
    assert merged  # there is one to test
    pad = "z" * _gate._GROUPS_FROM
    for i in merged:
        kw = PROBES[i].keyword
        for middle in (f"{kw} pass", f"pass {kw}", f"{kw} pwd {kw} pass {kw}", f"{kw}{kw}", f"{kw.upper()} pass {kw}",
                       f"d{kw}", f"pass\n{kw}\n{kw} pwd\n"):
            for text in (pad + middle, middle + pad, pad + middle + "\n" + middle + pad):
                data = _data(text)
                hits, candidates = PURE.scan(data, text, text.count("\n") + 1)
                assert hits == reference_hits(data), (kw, middle)
                assert candidates == reference_candidates(text)


# The pure engine's searches are built from the probes (one per anchor; look-aheads, then the
# probes with a literal before the anchor, checked by the byte before it): any set of probes,
# with anchors shared or not, keywords that overlap themselves (`aa`) or one another, and the
# special probes, against every start tried.
_PROBE_TEXT = "ab_-.=A:e y0\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text("ab_-.=Ax", min_size=1, max_size=5), max_size=8, unique=True),
       st.sets(st.sampled_from([_gate.DISCORD, _gate.JWT, _gate.TELEGRAM, _gate.BEGIN])),
       st.text(_PROBE_TEXT, max_size=120) | st.lists(st.sampled_from(["aa", "a.a", "-_", "A", ":A", "a" * 34, ".",
                                                                       ".ey", "-----BEGIN", "\n", "é"]),
                                                     max_size=30).map("".join))
def test_the_pure_engine_finds_every_match_of_any_set_of_probes(keywords, special, text):
    probes = [_gate._literal(k) for k in keywords] + sorted(special, key=repr)
    data = _data(text)
    expected = [[m.start() for m in re.finditer(b"(?=" + p.pattern.encode() + b")", data)] for p in probes]
    assert PureGate(probes).hits(data) == expected


@settings(max_examples=200, deadline=None)
@given(texts, texts)
def test_a_line_holding_a_line_break_is_read_with_a_space_there(head, tail):
    """One line given, holding a "\n" (no caller splits text that way): read as if the break
    were a space, as for several lines (the one-line case is tested for a break, not counted)."""
    head, tail = head.replace("\n", " "), tail.replace("\n", " ")
    assert find_secrets([head + "\n" + tail]) == find_secrets([head + " " + tail])
    assert find_secrets([head + "\n" + tail, "x"]) == find_secrets([head + " " + tail, "x"])


# Each rule's regex at the ends of its reach, where a gate that looks a character too near or
# too far misses a match: (kind, line).
_B = "Bb1" * 30
BOUNDARIES = [
    ("Discord bot token", "MT" + "a" * 22 + "." + "b" * 6 + "." + "c" * 27),  # id part 24, the shortest
    ("Discord bot token", "x OD" + "a" * 26 + "." + "b" * 6 + "." + "c" * 40),  # id part 28, the longest
    ("JWT", "ey" + "J" + "a" * 10 + ".ey" + "b" * 10 + "." + "c" * 16),  # the shortest header
    ("JWT", "(ey" + "J" + "a" * 8192 + ".ew" + "b" * 10 + "." + "c" * 16 + ")"),  # the longest
    ("Telegram bot token", "123456:" + "A" + _B[:34]),
    ("Telegram bot token", "bot 123456789012:" + "A" + _B[:34]),
    ("Slack token", "xoxe." + "xo" + "xp-" + _B[:10]),
    ("Slack webhook URL", "http://hooks." + "slack.com/services/" + _B[:20]),
    ("Slack webhook URL", "https://hooks." + "slack.com/triggers/" + _B[:20]),
    ("Discord webhook URL", "http://discord.com/api/web" + "hooks/12345/" + _B[:40]),
    ("Discord webhook URL", "https://canary.discordapp.com/api/web" + "hooks/1234567890123456789012345/" + _B[:40]),
    ("Azure SAS token", "https://x.blob.core.windows.net/c?sv=1&si" + "g=" + _B[:30] + "%3D"),
    ("AWS access key id", "id AK" + "IA" + "ABCDEFGHIJKLMNOP and AC" + "CA" + "ABCDEFGHIJKLMNOP"),
    ("Stripe secret key", "key=sk" + "_live_" + _B[:20]),
    ("DigitalOcean token", "do" + "r_v1_" + "ab12" * 16),
]


@pytest.mark.parametrize("kind, line", BOUNDARIES, ids=[f"{k} {i}" for i, (k, _line) in enumerate(BOUNDARIES)])
def test_the_keyword_spots_reach_as_far_as_each_rule_can_match(kind, line):
    data = _data(line)
    for hits in (PURE.hits(data), reference_hits(data)):
        where = spots_by_line(data, [line], keyword_spots(data, hits)).get(0, {})
        rules = [TOKEN_RULES[i] for i in GATED_RULES if TOKEN_RULES[i].kind == kind]
        spans = [m.span() for rule in rules for m in token_matches(rule, line, where)]
        assert spans and spans == [m.span() for rule in rules for m in rule.regex.finditer(line)], kind


@needs_compiled
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_the_compiled_gate_gives_what_the_pure_one_gives(text):
    data = _data(text)
    n = text.count("\n") + 1
    assert COMPILED.scan(data, text, n) == PURE.scan(data, text, n)


@pytest.fixture
def engines():
    """find_secrets under each engine available: {name: function}."""
    def run(name):
        def check(lines, **kw):
            before = _gate.use(name)
            try:
                return [astuple(m) for m in find_secrets(lines, **kw)]
            finally:
                _gate._forced = before
        return check

    return {name: run(name) for name in (("pure", "compiled") if COMPILED is not None else ("pure",))}


def _same_findings(engines, lines):
    for kw in ({}, {"in_sentences": False}, {"honour_marker": False}):
        results = {name: check(lines, **kw) for name, check in engines.items()}
        assert len({repr(r) for r in results.values()}) == 1, (kw, results)


@needs_compiled
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(texts)
def test_both_engines_find_the_same_secrets_in_generated_text(engines, text):
    _same_findings(engines, text.split("\n"))


def _fixture_texts():
    for table in (precision.TABLES, precision.LABELS, precision.CODE, precision.PLACEHOLDERS, precision.PUBLIC):
        yield from table.values()
    yield from (text for text, _value in precision.FOUND.values())


@needs_compiled
def test_both_engines_find_the_same_secrets_in_the_fixtures_and_the_evaluation_corpus(engines):
    notes = ev.generate(401, per_kind=30, neg_per_kind=40)
    corpus = [text.split("\n") for text in _fixture_texts()] + [note.lines for note in notes]
    corpus.append([" ".join(line for note in notes[:60] for line in note.lines)])  # one long line
    found = 0
    for lines in corpus:
        _same_findings(engines, lines)
        found += len(engines["pure"](lines))
    assert found > 1000  # the corpus holds what the detectors find, not only negatives


def test_the_pure_engine_finds_the_evaluation_corpus_at_its_level(engines):
    """Every planted positive found and every finding a planted positive: recall and precision
    1.000, the figures of benchmarks/secrets_eval.py (docs/decisions.md), on a smaller draw."""
    def overlap(a, b):
        return (a[0], a[1]) < (b[2], b[3]) and (b[0], b[1]) < (a[2], a[3])

    for note in ev.generate(401, per_kind=8, neg_per_kind=8):
        found = [(m[0], m[1], m[2], m[3]) for m in engines["pure"](note.lines)]
        planted = [(p.line, p.start, p.end_line, p.end) for p in note.planted if p.positive]
        assert all(any(overlap(f, p) for f in found) for p in planted), note.name
        assert all(any(overlap(f, p) for p in planted) for f in found), note.name


def test_the_engine_is_chosen_by_the_size_of_the_work_what_is_installed_and_the_environment(monkeypatch):
    monkeypatch.setattr(_gate, "_forced", None)
    monkeypatch.setattr(_gate, "_env_read", True)
    monkeypatch.setattr(_gate, "_checked", 0)
    assert _gate.engine(1000).name == "pure"  # one note: the compiled gate's start costs more than it saves
    big = "pure" if COMPILED is None else "compiled"
    assert _gate.engine(_gate.BIG_TEXT).name == big
    assert _gate.engine(1000).name == "pure"
    monkeypatch.setattr(_gate, "_checked", _gate.MANY_BYTES)
    assert _gate.engine(1000).name == big  # a whole root: it pays
    monkeypatch.setattr(_gate, "_env_read", False)
    monkeypatch.setenv("PMEM_SECRETS_GATE", "pure")
    assert _gate.engine(_gate.BIG_TEXT).name == "pure"
    assert _gate.choose("pure").name == "pure"
    if COMPILED is None:
        with pytest.raises(ImportError):
            _gate.choose("compiled")


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from([*_disguise.INVISIBLE, *"аеорсухіΑΒΕορ", "ｐ", "０", "：", "—", "“", "ü", "项", "a", " "])
               | st.characters(), max_size=30))
def test_the_disguise_check_in_bytes_agrees_with_the_character_class(text):
    assert _disguise.disguised(_data(text)) == (_disguise._DISGUISED.search(text) is not None)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", " ", "x", "-", "_", "`"]), st.sampled_from(["--", "---", "-"]),
                          st.sampled_from(["password", "pass-phrase", "token", "API", "x"]),
                          st.sampled_from([" ", "\t", "=", "  ", ""]), st.sampled_from(["Xk9mPq2vLz8Rt4w", "x", "`a`"])),
                max_size=4).map(lambda parts: " ".join("".join(p) for p in parts)))
def test_a_flag_is_read_only_where_the_text_shows_one(line):
    from pmem_lsp.engine.secrets import _FLAG_NEAR
    if list(find_flags(line)):
        assert _FLAG_NEAR.search(_data(line)) is not None


@settings(max_examples=400, deadline=None)
@given(texts)
def test_a_line_may_assign_whenever_find_assignments_finds_a_value(text):
    line = text.replace("\n", " ")
    words = [w for w in PREFILTER if (w.encode() in _data(line).lower() if w.isascii() else w in line)]
    if not words:
        return
    raw = _data(line)
    found = list(find_assignments(line, words, in_sentences=False)) + list(find_assignments(line, words))
    if found:
        assert may_assign(raw, raw.lower(), 0, len(raw), words)
    # The lowered bytes, decoded, put the key words where `str.lower` does (the long-line path).
    if "\u0130" not in line and "\u212a" not in line:
        low = raw.lower().decode("utf-8", "surrogatepass")
        assert list(find_assignments(line, words, low=low)) == list(find_assignments(line, words))


def test_an_engine_asked_for_that_cannot_be_had_warns_and_checks_with_the_pure_one(monkeypatch, capsys):
    """`PMEM_SECRETS_GATE=compiled` without hyperscan ended a check in a traceback — and a hook
    that crashes lets the write through (a review)."""
    from pmem_lsp.engine.secrets import _gate as gate_module

    monkeypatch.setattr(gate_module, "_compiled_engine", lambda: None)
    assert gate_module._from_env("compiled") is gate_module.choose("pure")
    assert "hyperscan is not installed" in capsys.readouterr().err
    assert gate_module._from_env("bogus") is None
    assert "neither `pure` nor `compiled`" in capsys.readouterr().err


def test_a_process_that_stays_takes_the_pure_gate_unless_told(monkeypatch):
    """The language server (`staying`) never loads hyperscan by itself: its memory would stay as
    long as the server does. `PMEM_SECRETS_GATE=compiled` still gets it."""
    from pmem_lsp.engine.secrets import _gate as gate_module

    monkeypatch.setattr(gate_module, "_forced", None)
    monkeypatch.setattr(gate_module, "_env_read", True)
    monkeypatch.setattr(gate_module, "_checked", gate_module.MANY_BYTES)
    monkeypatch.setattr(gate_module, "_staying", False)
    compiled = gate_module._compiled_engine()
    pure = gate_module.choose("pure")
    assert gate_module.engine(gate_module.BIG_TEXT) is (compiled if compiled is not None else pure)
    gate_module.staying()
    assert gate_module.engine(100) is pure and gate_module.engine(gate_module.BIG_TEXT) is pure
    if compiled is not None:
        monkeypatch.setattr(gate_module, "_env_read", False)
        monkeypatch.setenv("PMEM_SECRETS_GATE", "compiled")
        assert gate_module.engine(100) is compiled


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text("Ab1/+", min_size=1, max_size=45), st.sampled_from(["=", " ", "-", "项", "ü", "_"]),
                          st.just("Zq8Lr2Vn6Tb1Xc4Mw7Ks9aB3dE5fG7hJ9kL1mN0p")), max_size=30).map("".join))
def test_the_aws_secret_beside_its_id_is_found_in_a_long_line_where_the_regex_finds_it(text):
    """A long line's 40-character runs are found in its bytes (one translate, then `find`),
    as the regex finds them in the line: runs of exactly 40, not followed by `=`, anywhere
    (ASCII or not, at either end)."""
    from pmem_lsp.engine.secrets import _AWS_SECRET_NEAR_ID, _LONG_LINE, _aws_secret_spans

    for line in (text, text + " " * _LONG_LINE, "项" * _LONG_LINE + text, text + "x" * _LONG_LINE):
        expected = [m.span("v") for m in _AWS_SECRET_NEAR_ID.finditer(line)]
        assert _aws_secret_spans(line) == expected
        assert _aws_secret_spans(line, _data(line)) == expected


_SCHEME = st.text("abzAZ09+.-", max_size=40)
_URL = st.tuples(_SCHEME, st.sampled_from(["://", ":/", "//"]), st.text("ab1:-", max_size=6),
                 st.sampled_from([":", ""]), st.text("aZ9!:-", max_size=8), st.sampled_from(["@", ""]),
                 st.sampled_from(["db.local", "h:5432", "[::1]", "", "x@y"]), st.sampled_from(["", "/app", " ", "项"]))


@settings(max_examples=500, deadline=None)
@given(st.lists(_URL.map("".join) | st.sampled_from([" ", "项", "://", "@", ":", "x" * 30, "-"]), max_size=8).map("".join))
def test_the_credentialed_urls_are_found_from_each_scheme_separator_as_the_regex_finds_them(line):
    """`url_matches` starts from each `://` and looks back for the scheme, where the regex is
    tried at every character: the same matches, in order, on lines of schemes glued to words,
    schemes too long or starting with a digit, several URLs, one ending where the next begins."""
    from pmem_lsp.engine.secrets._generic import _URL_CRED, url_matches

    assert [m.span() for m in url_matches(line)] == [m.span() for m in _URL_CRED.finditer(line)]
