"""The Analysis's shortcuts give what the plain code gives (issue 18, plan item 7).

- the duplicate sketch of an ASCII text is hashed on bytes: same lines, same hashes as the
  str path (str.splitlines/str.strip know more breaks and spaces than bytes do);
- each link is normalised once (`link_paths`), and PM402 and the link graph read that;
- the enabled codes are asked of the settings once per Analysis.
"""

from __future__ import annotations

from dataclasses import replace
from zlib import crc32

from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.analysis import EnabledCodes, apply_settings
from pmem_lsp.engine.catalogue import RULES
from pmem_lsp.engine.findings import Finding, Severity
from pmem_lsp.engine.paths import normalize_target
from pmem_lsp.engine.root_state import FileEntry
from pmem_lsp.engine.rules import duplicates
from pmem_lsp.engine.rules.broken_links import link_paths
from pmem_lsp.engine.settings import Settings
from pmem_lsp.engine.zones import Zone

# Every ASCII character (the breaks and spaces bytes and str disagree on among them), a few
# non-ASCII line breaks and letters, and plenty of ordinary text and newlines.
CHARS = st.sampled_from([chr(c) for c in range(128)] + ["é", "İ", "\u2028", "\x85", "ß"])
TEXT = st.lists(st.one_of(CHARS, st.sampled_from(["word ", "Some Longer Line Of Text ", "\n", "\r\n", "  "])),
                max_size=120).map("".join)


def plain_sketch_keys(text: str) -> tuple[int, ...]:
    hashes = sorted({crc32(line.encode("utf-8", "surrogatepass"))
                     for line in map(str.strip, text.lower().splitlines()) if len(line) >= duplicates.MIN_LINE})
    return tuple(hashes[:duplicates.SKETCH])


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_the_sketch_is_the_same_on_bytes_and_on_str(text):
    entry = FileEntry("notes/a.md", Zone.ACTIVE, len(text), 0.0, text=text)
    assert duplicates.sketch_of(entry).keys == plain_sketch_keys(text)


TARGET = st.one_of(
    st.sampled_from(["a.md", "../b.md", "./c/d.md", "#anchor", "", "  ", "https://x.org/a.md", "/abs.md",
                     "~/h.md", "C:/w.md", "a.md#x", "a%20b.md", "../../out.md", ".", "x/..", "$HOME/a"]),
    st.text(alphabet="ab./#?%~ ", max_size=8))


@settings(max_examples=200, deadline=None)
@given(st.lists(TARGET, max_size=6), st.sampled_from(["a.md", "notes/a.md", "notes/deep/a.md"]))
def test_link_paths_are_the_normalised_relative_links(targets, rel):
    text = "# A\n\n" + "".join(f"- [l{i}]({t})\n" for i, t in enumerate(targets))
    entry = FileEntry(rel, Zone.ACTIVE, len(text), 0.0, text=text)
    assert entry.doc is not None
    base = rel.rpartition("/")[0]
    expected = []
    for link in entry.doc.links:
        path, problem = normalize_target(link.target, base)
        if problem is None and path is not None:
            expected.append((link, path))
    found = link_paths(entry)
    assert [(entry.doc.link_at(i), path) for i, path in zip(found.at, found.paths, strict=True)] == expected


# Folders as `posixpath.dirname` gives them, and the odd ones `_plain_folder` must refuse.
BASE = st.one_of(
    st.sampled_from(["", "notes", "notes/deep", "项目/vol-043", ".", "..", "../x", "a/.", "a/..", "a//b", "/a",
                     "//a", "///a", "a/", "./a", "a/b/c", "a/b/c/d"]),
    st.text(alphabet="ab./", max_size=6))


@settings(max_examples=1000, deadline=None)
@given(st.one_of(TARGET, st.text(alphabet="ab./#?%~ 2\\:$", max_size=10),
                 st.lists(st.sampled_from(["..", ".", "a", "b%20c", "", "%2E%2E"]), max_size=6).map("/".join)),
       BASE)
def test_the_normalising_memo_is_normalize_target(target, base):
    from pmem_lsp.engine.rules.broken_links import _normalize
    assert _normalize(target, base) == normalize_target(target, base)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "/", "é", "项", "\udc80", "\udcff", "\ud800", "\udc7f", "\U0001f600"]),
               max_size=8))
def test_the_utf8_test_is_the_surrogate_escape_search(text):
    from pmem_lsp.engine.rules.broken_links import _utf8
    assert _utf8(text) == (not any("\udc80" <= c <= "\udcff" for c in text))


def test_enabled_codes_ask_the_settings_once_and_answer_the_same():
    for conf in ({}, {"select": ["PM1", "PM402"]}, {"ignore": ["PM2", "PM503"]}, {"select": ["PM"], "ignore": ["PM40"]}):
        s = Settings(**conf)
        on = EnabledCodes(s)
        assert all(on[code] == s.enabled(code) for code in RULES)
        assert set(on) == set(RULES)


def test_select_skips_the_parse_no_selected_rule_needs(tmp_path):
    """`pmem check --select PM2,PM3` (issue 26): no note is parsed for rules that are not
    selected; only the indexes and what a finding needs (PM202 points at a title)."""
    from engine_helpers import scan
    from pmem_lsp.engine.analysis import analyze
    from roots import active_file, make_root

    notes = {f"notes/n{i}.md": active_file(f"Note {i}") for i in range(30)}
    root = make_root(tmp_path, {**notes, "notes/loose.md": active_file("Loose")})
    index = (root / "_index.md").read_text(encoding="utf-8")
    (root / "_index.md").write_text(index.replace("- [Loose](notes/loose.md) — about loose\n", ""), encoding="utf-8")
    state = scan(root, {"select": ["PM2", "PM3"]})
    found = analyze(state)
    assert {f.code for f in found} == {"PM202"}
    parsed = sorted(rel for rel, entry in state.files.items() if entry._doc is not None)
    assert [p for p in parsed if p != "_archive/_index.md"] == ["_index.md", "notes/loose.md"]
    everything = scan(root)
    analyze(everything)
    assert sum(entry._doc is not None for entry in everything.files.values()) > 30


def _plain_apply_settings(found, s):
    """`apply_settings` as it was written before its shortcuts (issue 44): the reference."""
    from pmem_lsp.engine.catalogue import severity_of
    out = []
    for f in found:
        if not s.enabled(f.code):
            continue
        severity = s.severity_for(f.code) or severity_of(f)
        out.append(f if f.severity is severity else replace(f, severity=severity))
    out.sort(key=lambda f: f.sort_key())
    return out


_CODES = sorted(RULES)[:12] + ["PM503", "PM402", "PM201"]


@settings(max_examples=200, deadline=None)
@given(found=st.lists(st.tuples(st.sampled_from(["a.md", "b.md", "notes/c.md"]), st.integers(0, 3), st.integers(0, 3),
                                st.sampled_from(_CODES), st.sampled_from(["m", "n", "`x.md` gone"]),
                                st.none() | st.sampled_from(list(Severity))), max_size=12),
       conf=st.sampled_from([{}, {"select": ["PM1", "PM402"]}, {"ignore": ["PM2", "PM503"]},
                             {"severity": {"PM201": "hint", sorted(RULES)[0]: "error", "PM402": "information"}}]))
def test_apply_settings_is_the_plain_filter_severity_and_sort(found, conf):
    s = Settings(**conf)
    finds = [Finding(path, line, col, line, col + 1, code, message, severity)
             for path, line, col, code, message, severity in found]
    got = apply_settings(finds, s, EnabledCodes(s))
    want = _plain_apply_settings(finds, s)
    assert got == want and [f.severity for f in got] == [f.severity for f in want]
    assert apply_settings(tuple(finds), s) == want
