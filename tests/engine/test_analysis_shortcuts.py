"""The Analysis's shortcuts give what the plain code gives (issue 18, plan item 7).

- the duplicate sketch of an ASCII text is hashed on bytes: same lines, same hashes as the
  str path (str.splitlines/str.strip know more breaks and spaces than bytes do);
- each link is normalised once (`link_paths`), and PM402 and the link graph read that;
- the enabled codes are asked of the settings once per Analysis.
"""

from __future__ import annotations

from zlib import crc32

from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.analysis import EnabledCodes
from pmem_lsp.engine.catalogue import RULES
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
