"""The native core's PM401 verdict (`pmem_native.secrets_clear`, and the record's fourth
verdict; docs/native.md, "The PM401 verdict") against the Python scan it stands for.

The verdict may only say "nothing here" where `find_secrets`, `find_in_name` and PM401's
`check_secrets` find nothing: every test below holds it to that on texts built to sit on each of
the scan's doors (runs of 19 and 20, markup glued on one side and both, breaks of 4/10/20, signs
and prefilter words, disguised characters), on every string of the secrets tests and every note
of the labelled evaluation set, and on the oracle's documents (test_native_differential.py calls
`assert_nothing_to_find` wherever a record says so). The tests also check that the verdict is
given on ordinary notes, or it would save nothing.
"""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_markdown_oracle import documents

from pmem_lsp.engine import memory_file, native, native_mirrors, secrets
from pmem_lsp.engine.line_index import split_lines
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.rules import secrets as secrets_rule
from pmem_lsp.engine.secrets import _disguise, _generic, _markup
from pmem_lsp.engine.settings import Settings
from pmem_lsp.engine.zones import Zone

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import secrets_eval as ev
from generate_root import generate

try:
    import pmem_native  # type: ignore[import-not-found]
except ImportError:
    pmem_native = None

pytestmark = pytest.mark.skipif(pmem_native is None, reason="the native core is not built (make native)")

SETTINGS = Settings()


def assert_nothing_to_find(lines: list[str]) -> None:
    """`lines` got the verdict: the Python scan must find nothing in them, as a file's text (in
    both of its modes) and, one by one, as a file's name."""
    assert secrets.find_secrets(lines) == [], lines
    assert secrets.find_secrets(lines, in_sentences=False, honour_marker=False) == [], lines
    assert secrets.find_secrets(lines, honour_marker=False) == [], lines  # masking's mode
    assert secrets_rule._in_linked_paths(lines, [], ()) == [], lines
    for line in lines:
        assert secrets.find_in_name(line) == [], line
        # A finding's message and a report's path are left as they are on the verdict
        # (engine/findings.py `_mask_message`, engine/report.py `shown_path`).
        assert secrets.mask_secrets(line) == line, line
        assert secrets.mask_text(line) == line, line


def check(lines: list[str]) -> bool:
    """The verdict on `lines` (and on each line as a name), held to the scan, and the doors
    (`check_doors`); returns the verdict."""
    clear = pmem_native.secrets_clear(lines)
    if clear:
        assert_nothing_to_find(lines)
        assert all(pmem_native.secrets_clear([line]) for line in lines), "a line of a clear text is not clear"
    check_doors(lines, clear)
    return clear


def check_doors(lines: list[str], clear: bool) -> None:
    """`secret_doors_lines(lines)`: no door but DOOR_FOLDS exactly where the verdict holds; each part
    of the scan behind a shut door finds nothing; and `find_secrets` given the doors finds
    what it finds without them, in each of its modes."""
    doors, named = pmem_native.secret_doors_lines(lines)
    assert (not doors & ~secrets.DOOR_FOLDS) == clear, (lines, doors)
    if not doors & secrets.DOOR_CASE:
        joined, text, data = secrets._joined(lines)
        if not doors & secrets.DOOR_PLAIN:
            for in_sentences in (True, False):
                assert secrets._find_secrets(joined, in_sentences=in_sentences, honour_marker=False) == [], lines
            assert secrets_rule._in_linked_paths(lines, [], ()) == [], lines
        folded = _disguise.fold(joined, text, data)
        assert (folded is not None) == bool(doors & secrets.DOOR_FOLDS), lines
        if not doors & secrets.DOOR_MARKUP:
            seen = folded[0] if folded is not None else joined
            assert _markup.fold(seen, "\n".join(seen)) == [], lines
        if not doors & secrets.DOOR_JOIN:
            assert _disguise.joins(text) == [], lines
    text = "\n".join(lines)
    if split_lines(text) == lines:  # the record reads the text's lines: its doors are these
        record = pmem_native.file_record(text, memory_file._KINDS)
        if record is not None:
            assert record[-1][2] == (doors, named), lines
    # The lines of the plain door, given without CASE: no line outside them holds a run, a key's
    # header, a URL or a prefilter word and a sign, and the linked paths find what they find on all.
    assert (named is None) == bool(doors & secrets.DOOR_CASE), (lines, doors)
    assert not doors & secrets.DOOR_SHAPED or doors & secrets.DOOR_PLAIN, lines
    if named is not None:
        assert bool(named) == bool(doors & secrets.DOOR_PLAIN), (lines, named)
        assert secrets_rule._in_linked_paths(lines, [], (), only=named) == secrets_rule._in_linked_paths(lines, [], ()), lines
    for mode in ({}, {"in_sentences": False}, {"honour_marker": False}, {"in_sentences": False, "honour_marker": False}):
        full = secrets.find_secrets(lines, **mode)
        assert secrets.find_secrets(lines, doors=doors, **mode) == full, (lines, mode)
        assert secrets.find_secrets(lines, doors=doors, plain_lines=named, **mode) == full, (lines, mode, named)


# -- the code it follows ----------------------------------------------------------------------


def test_the_verdict_was_written_for_this_python_code() -> None:
    """A door of the secrets scan changed (native_mirrors.json, group "secrets"): check
    native/src/secrets.rs against it, then set WRITTEN_FOR_SECRETS (native/src/lib.rs) to the
    committed digest and rebuild (make native). Until then PM401 runs without the verdict."""
    assert native_mirrors.committed_digests()["secrets"] == pmem_native.WRITTEN_FOR_SECRETS
    assert "secrets" not in native.STALE


@pytest.fixture
def core_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core in use whatever PMEM_NATIVE says (test_native_differential.py does the same)."""
    monkeypatch.setattr(secrets_rule, "_NATIVE", pmem_native)
    monkeypatch.setattr(memory_file, "_NATIVE", pmem_native)


def test_the_shim_gives_the_rule_the_core() -> None:
    assert secrets_rule._NATIVE is native.CORE


@pytest.mark.usefixtures("core_on")
def test_the_rule_and_the_record_use_the_verdict() -> None:
    assert MemoryFile("# A note\n\nPlain words here.\n").secrets_clear
    assert not MemoryFile("# A note\n\npassword: Xk9#mPq2vLw\n").secrets_clear


# -- every door, on texts built next to it -----------------------------------------------------

RUN = "Ab3_-%"  # `_RUN_TABLE`'s characters
TOKEN_CHARS = "Ab3_-+/="  # `_disguise._T` and `_markup._B`


def test_each_door_shuts_the_verdict() -> None:
    """One text a door lets in, and its neighbour a hair away that it does not."""
    pairs = [
        ("x " + "a" * 20, "x " + "a" * 19 + " " + "a"),  # a run of 20
        ("a%" * 10, "a+" * 10),  # `%` runs, `+` does not
        ("ab**cd", "ab ** cd"),  # emphasis glued to a token character
        ("ab**<cd", "a **bold** word"),  # bold after a space closes before one
        ("a***b", "a****b"),  # a piece is 1 to 3 stars
        ("a~~b", "a~~~b"),
        ("a<!-- x -->b", "a<3"),
        ("a<b>c", "Vec<u8> and List<String>"),  # a tag is one of `_INLINE_TAGS`
        ("a</span>b", "a<spanx>b"),
        ("a<STRONG x>b", "x<y"),
        ("ab~cd", "ab ~ cd"),
        ("ab<b>cd", "ab <b> cd"),
        ("a;*b", "a.*b"),
        ("R&#95;x", "R & x"),
        ("R&amp;", "R& amp"),
        ("R&lowbar;x", "R&D, Q&A and AT&T"),  # a reference needs its `;`
        ("a&b1;", "a&b;"),  # a name of 2 to 32
        ("a\\_b", "a \\_b"),
        ("a\\.b", "C:\\Users\\me"),  # an escape needs one of `_-+/=.:` and a letter or digit after it
        ("a\\:b", "a\\_ b"),
        ("-----BEGIN RSA PRIVATE KEY-----", "BEGIN RSA PRIVATE KEY"),
        ("----begin x", "---begin x"),  # four dashes are enough for `_BEGIN`; three are not
        ("-----begin x", "---- begin x"),  # five: the second four are before BEGIN
        ("PuTTY-User-Key-File-3: ssh-ed25519", "PuTTY key file"),
        ("mail me@x.org at https://x.org", "mail me at https://x.org"),
        ("https://u:p@host", "mail me@x.org"),  # a URL's credential: `@` and `://` on one line
        ("the password: here", "the password here"),
        ("API_KEY=1", "API key 1"),
        ("the token is here", "the token was here"),
        ("these keys are here", "these keys were here"),
        ("run --pass x", "run -pass x"),
        ("| Secret | x |", "Secret x"),
        ("Authority: x", "Writer: x"),
        ("pаss: x", "pass x"),  # a Cyrillic `а`
        ("密码：x", "密码 x"),  # a CJK word and a CJK sign; the word alone opens nothing
        ("密钥是 x", "钥是 x"),
        ("令牌为 x", "令牌 x"),
        ("token：x", "token x"),
        ("私钥: x", "私 x"),
        ("秘钥=x", "秘 x"),
        ("ab" * 5 + "\u200b" + "ab" * 5, "note\u200bhere"),  # a run of 20 once the zero-width space is gone
        ("ｔｏｋｅｎ: x", "ｔｏｋｅｎ x"),  # fullwidth letters fold to a prefilter word
        ("Ρass: x", "Ρα x"),  # a Greek capital rho
        ("\u212aey x", "K key x"),  # the Kelvin sign lowers to `k`
    ]
    for shut, open_ in pairs:
        assert not pmem_native.secrets_clear([shut]), shut
        assert pmem_native.secrets_clear([open_]), open_
    assert pmem_native.secrets_clear(["see https://x.org", "mail me@x.org"])  # on two lines: no URL credential
    # A break that could cut a token: 4 and 16, 10 and 10 (joined 20); 3 and 17, 10 and 9 not.
    for tail, head, shut in ((4, 16, True), (16, 4, True), (10, 10, True), (3, 17, False), (10, 9, False),
                             (17, 3, False)):
        lines = ["x " + "a=" * (tail // 2) + "a" * (tail % 2), "\t " + "b/" * (head // 2) + "b" * (head % 2)]
        assert pmem_native.secrets_clear(lines) is not shut, (tail, head)


def test_every_inline_tag_shuts_the_verdict_and_other_words_in_brackets_do_not() -> None:
    tags = _markup._INLINE_TAGS.split("|")
    for tag in tags:
        for written in (f"<{tag}>", f"</{tag}>", f"<{tag.upper()} class=x>", f"<{tag}/>"):
            assert not check([f"ab{written}cd"]), written
        if tag + "x" not in tags:
            assert check([f"ab<{tag}x>cd"]), tag


def test_the_core_folds_every_character_as_the_disguise_does() -> None:
    """`disguise_fold` is `_disguise.fold_line` on every character (the verdict tests the
    folded line's doors with it), and the letters that fold case to ASCII shut the verdict."""
    for c in range(0x80, 0x110000):
        if 0xD800 <= c < 0xE000:
            continue
        line = f"a{chr(c)}b"
        assert pmem_native.disguise_fold(line) == _disguise.fold_line(line)[0], hex(c)
    lowered_to_ascii = [chr(c) for c in range(0x80, 0x110000)
                        if not 0xD800 <= c < 0xE000 and any(x.isascii() for x in chr(c).lower())]
    assert lowered_to_ascii == ["\u0130", "\u212a"]
    for ch in lowered_to_ascii + ["\u0131", "\u017f"]:  # and what `(?i)` matches to ASCII
        assert not pmem_native.secrets_clear([f"word{ch}word"]), hex(ord(ch))


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from([*_disguise.INVISIBLE[:30], *"аеорсухіΑΒΕορｐｔ", "a", "b", "=", " "]), max_size=40))
def test_the_core_folds_lines_as_the_disguise_does(line: str) -> None:
    assert pmem_native.disguise_fold(line) == _disguise.fold_line(line)[0]


def test_a_door_opened_by_the_fold_alone_shuts_the_verdict() -> None:
    """Every character the disguise folds, put where it opens a door only once folded."""
    for c in sorted({chr(c) for c in _disguise._FOLD}):
        repl = _disguise._FOLD[ord(c)]
        if repl == "":  # removed: it breaks a run of 20 and a prefilter word that folding joins
            texts = ["a" * 10 + c + "a" * 10, f"pass{c}word: x", f"to{c}ken = x"]
        else:  # a letter or digit: it completes a run of 20
            texts = ["a" * 19 + c]
        for text in texts:
            assert not check([text]), (hex(ord(c)), text)
    # The CJK prefilter words and signs count as the ASCII ones do: each with the other kind.
    for sign in ("：", "是", "为", ":", "="):
        assert not pmem_native.secrets_clear([f"token{sign}x"]), sign
        for word in [w for w in _generic.PREFILTER if not w.isascii()]:
            assert not pmem_native.secrets_clear([f"{word}{sign}x"]), (word, sign)


def test_ordinary_notes_get_the_verdict() -> None:
    """Prose, lists, links, code, times, Obsidian names, accents, emoji, em dashes and curly
    quotes open no door."""
    note = ["# Café planning — week 12", "", "Status: active", "", "## Summary", "",
            "- We meet on “Tuesday” at 10:00 in [[Room 3]].", "- See [the plan](projects/plan.md).",
            "- `make test` runs everything; * is a bullet too.", "1. ñandú, Ærø, 😀", "> a quote", "",
            "| a | b |", "|---|---|", "The keyboard broke."]
    assert check(note)
    assert check(["# 项目说明", "", "状态：进行中（第二周），负责人是小王。", "- 下一步为测试"])  # signs, no word
    # Emoji with a variation selector or a joiner, Greek and Cyrillic prose: folded, no door.
    assert check(["- ✅ Готово ⚠️ важно, 👨‍👩‍👧 семья", "Ελληνικά κείμενα: καλημέρα", "Привет: как дела"])
    # A prefilter word inside another word still counts, with a sign: the Python scan decides.
    assert not check(["The keyboard is broken."])


# Pieces next to each door, for generated texts.
PIECES = [*RUN, "a" * 9, "Zq8Lr2Vn6Tb1Xc4M", "AKIA", "ghp_", "eyJ", "SK", "xoxb-", "sk-", "glpat-",
          "**", "*", "~~", "~", "<b>", "</b>", "<!-- -->", "<", ">", ";", "&#95;", "&#x5F;", "&lowbar;", "&amp;", "&", "&ab", "<span>", "</i>", "<u8>", "<br>",
          "\\_", "\\", "\\.", "\\:", "pass", "PASS", "word", "Secret", "token", "key", "Key=", "AccountKey=", "auth", "cred", "pwd",
          ":", "=", " is ", " are ", "--", "-", "|", " ", "\t", "@", "://", "https://u:", "@h", "-----BEGIN ",
          "PRIVATE KEY-----", "----begin", "PuTTY-User-Key-File-2: ", ".md", "/", "[", "](", ")", "`", ".", ",",
          "\u200b", "а", "ｐ", "：", "是", "为", "密码", "密钥", "令牌", "口令", "秘钥", "私钥", "说明", "，", "（", "é", "—", "“"]
text_line = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(text_line, min_size=1, max_size=5))
def test_the_verdict_on_texts_built_from_the_doors_pieces(lines: list[str]) -> None:
    check(lines)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(ev.TOKENS)), st.integers(0, 10_000), st.integers(1, 60),
       st.sampled_from(["", "**", "~~", "<b>", "<!-- -->", "&#95;", "\\_", "\n", "\n  ", "\u200b", " "]))
def test_the_verdict_on_tokens_cut_and_dressed(kind: str, seed: int, cut: int, piece: str) -> None:
    """A real token's shape, with markup, a break or a disguise put inside it."""
    value = ev.TOKENS[kind](random.Random(seed))
    cut = min(cut, len(value))
    for lead in ("", "the key is ", "x "):
        lines = split_lines(lead + value[:cut] + piece + value[cut:])
        if secrets.find_secrets(lines) or any(secrets.find_in_name(line) for line in lines):
            assert not pmem_native.secrets_clear(lines), lines
        check(lines)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_the_verdict_on_oracle_documents(lines: list[str]) -> None:
    check(lines)


# -- the examples the secrets tests hold, and the labelled set ---------------------------------


def _strings(node: ast.AST) -> str | None:
    """A string expression's value where it is built of literals (`"a" + "b"`, `"a" * 3`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = _strings(node.left), _strings(node.right)
        if isinstance(node.op, ast.Add) and left is not None and right is not None:
            return left + right
        if isinstance(node.op, ast.Mult) and left is not None and isinstance(node.right, ast.Constant) \
                and isinstance(node.right.value, int) and node.right.value < 10_000:
            return left * node.right.value
    return None


def secrets_test_strings() -> list[str]:
    here = Path(__file__).parent
    out: list[str] = []
    for path in sorted(here.glob("test_secrets*.py")) + sorted(here.glob("test_hook*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = _strings(node)
            if value:
                out.append(value)
    return out


def test_the_verdict_on_every_string_of_the_secrets_tests() -> None:
    strings = secrets_test_strings()
    assert len(strings) > 1000
    found = 0
    for value in strings:
        lines = split_lines(value)
        found += bool(secrets.find_secrets(lines))
        check(lines)
    assert found > 30  # the strings hold secrets: the test tests something (most are built at run time)


@pytest.fixture(scope="module")
def labelled_notes() -> list:
    return ev.generate(seed=401, per_kind=20, neg_per_kind=30)


def test_the_verdict_on_the_labelled_set(labelled_notes: list) -> None:
    """Each planted secret (positive or negative) with the lines around it, and each note."""
    for note in labelled_notes:
        lines = note.lines
        check(lines)
        for p in note.planted:
            for before, after in ((0, 0), (1, 1), (3, 3)):
                check(lines[max(0, p.line - before):p.end_line + 1 + after])


# -- PM401 itself, with and without the verdict ---------------------------------------------------


@pytest.mark.usefixtures("core_on")
def test_check_secrets_finds_the_same_with_the_verdict(tmp_path: Path, labelled_notes: list,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = generate(tmp_path / "memory", 200)
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))}
    texts |= {f"notes/labelled-{i}.md": "\n".join(note.lines) + "\n" for i, note in enumerate(labelled_notes)}
    texts["notes/password=Zq8Lr2Vn6Tb1Xc.md"] = "# A name that holds one\n"
    given_it = 0
    for path, text in texts.items():
        doc = MemoryFile(text)
        given_it += doc.secrets_clear and not path.startswith("notes/labelled-")
        with_core = secrets_rule.check_secrets(path, Zone.ACTIVE, doc, SETTINGS)
        monkeypatch.setattr(secrets_rule, "_NATIVE", None)
        doc.secrets_clear = False
        assert secrets_rule.check_secrets(path, Zone.ACTIVE, doc, SETTINGS) == with_core, path
        monkeypatch.setattr(secrets_rule, "_NATIVE", pmem_native)
    assert given_it > 0.9 * (len(texts) - len(labelled_notes) - 1), "the generated notes should get the verdict"


@pytest.mark.usefixtures("core_on")
def test_a_file_without_a_record_gets_the_verdict_of_its_lines(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A file the core hands to the full block scanner (an HTML block, a nested list) has no
    verdict in a record: `check_secrets` asks `secrets_clear` of its lines, and finds what the
    scan finds."""
    from generate_realnotes_scaled import generate as generate_scaled

    root = generate_scaled(tmp_path / "obsidian", "obsidian", 80)
    # (the core takes Obsidian's callouts now: an HTML block at the end hands each note over)
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") + "\n<div>html</div>\n"
             for p in sorted(root.rglob("*.md"))}
    key = "aws_secret_access_key = dg9PyM1yGz5DZfVSm9+9o1BUvIdL4kgI5/1INGQY"
    texts["notes/callout.md"] = f"# A callout\n\n> [!note]\n> {key}\n\n<div>html</div>\n\n```ini\n{key}\n```\n"
    cleared = found = 0
    for path, text in texts.items():
        if pmem_native.file_record(text, memory_file._KINDS) is not None:
            continue
        doc = MemoryFile(text)
        assert not doc.secrets_clear
        with_core = secrets_rule.check_secrets(path, Zone.ACTIVE, doc, SETTINGS)
        cleared += pmem_native.secrets_clear(doc.lines)
        found += bool(with_core)
        monkeypatch.setattr(secrets_rule, "_NATIVE", None)
        assert secrets_rule.check_secrets(path, Zone.ACTIVE, doc, SETTINGS) == with_core, path
        monkeypatch.setattr(secrets_rule, "_NATIVE", pmem_native)
    assert cleared >= 5 and found >= 1, (cleared, found)
