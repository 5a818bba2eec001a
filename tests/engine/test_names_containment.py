"""engine/names.py (any name, any output), zones.Containment (one answer to "inside the root?"),
engine/folders.py (no recursion) and the bounded save diff (issue 23)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.folders import make_folders, walk
from pmem_lsp.engine.lifecycle.save import _ends_diff, diff_lines
from pmem_lsp.engine.names import clean, clean_data, lines, one_line, shown, unshown, uri_quote, uri_unquote
from pmem_lsp.engine.zones import Containment
from roots import remove_tree

HYP = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# A file name segment as the file system holds it: any bytes but `/` and NUL.
NAME_BYTES = st.binary(min_size=1, max_size=24).filter(lambda b: b"/" not in b and b"\x00" not in b)
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


@HYP
@given(a=NAME_BYTES, b=NAME_BYTES)
def test_any_byte_name_round_trips_through_shown_without_collision(a: bytes, b: bytes):
    na, nb = os.fsdecode(a), os.fsdecode(b)
    sa = shown(na)
    assert unshown(sa) == na
    assert os.fsencode(unshown(sa)) == a  # the exact bytes come back
    if a != b:
        assert sa != shown(nb)
    assert not UNSAFE.search(sa)  # printable, encodable, one line
    sa.encode("utf-8")


@HYP
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=30))
def test_a_plain_name_is_shown_as_itself(text: str):
    if "\\" not in text and "\u2028" not in text and "\u2029" not in text:
        assert shown(text) == text


def test_the_escapes_are_distinct_for_bytes_controls_and_backslashes():
    assert shown(os.fsdecode(b"a\xff.md")) == "a\\xff.md"
    assert shown("a\\xff.md") == "a\\\\xff.md"  # a literal backslash is never read as an escape
    assert shown("a\u0080") == "a\\u0080" != shown(os.fsdecode(b"a\x80"))  # a C1 control, a byte
    assert shown("new\nline") == "new\\x0aline"
    assert one_line("a\nb\u2028c\x1b") == "a\\x0ab\\u2028c\\x1b"
    assert lines("a\nb\x1bc") == "a\nb\\x1bc"
    assert clean(os.fsdecode(b"x\xfe")) == "x\\xfe" and clean("a\\b\n") == "a\\b\n"
    data = clean_data({os.fsdecode(b"k\xff"): [os.fsdecode(b"v\xfe"), 3, None]})
    assert data == {"k\\xff": ["v\\xfe", 3, None]}


@HYP
@given(name=NAME_BYTES)
def test_a_uri_carries_the_exact_bytes(name: bytes):
    rel = "notes/" + os.fsdecode(name)
    quoted = uri_quote(rel)
    assert quoted.isascii() and uri_unquote(quoted) == rel


# -- Containment -----------------------------------------------------------------------------
@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("x")
    real = tmp_path / "real-root"
    (real / "notes/sub").mkdir(parents=True)
    (real / "notes/a.md").write_text("a")
    (real / "notes/sub/b.md").write_text("b")
    (real / "notes/in-link.md").symlink_to(real / "notes/a.md")
    (real / "notes/out-link.md").symlink_to(outside / "secret.md")
    (real / "notes/out-dir").symlink_to(outside)
    (real / "notes/in-dir").symlink_to(real / "notes/sub")
    (real / "loop.md").symlink_to("loop.md")
    root = tmp_path / "via-link"  # the root itself reached through a link
    root.symlink_to(real)
    return root, outside


CASES = {
    "notes/a.md": (True, False), "notes/sub/b.md": (True, False), "notes/missing.md": (True, False),
    "notes/in-link.md": (True, True), "notes/out-link.md": (False, True), "notes/out-dir/secret.md": (False, True),
    "notes/in-dir/b.md": (True, True), "loop.md": (True, True), "notes/../notes/a.md": (True, True),
    "../real-root/notes/a.md": (True, True), "notes/../../outside/secret.md": (False, True),
}


@pytest.mark.parametrize("rel", sorted(CASES))
def test_containment_agrees_with_realpath(tree: tuple[Path, Path], rel: str):
    root, _ = tree
    where = Containment(root)
    inside, linked = CASES[rel]
    assert where.inside(rel) is inside
    assert where.through_link(rel) is linked
    real_root = os.path.realpath(root)
    real = os.path.realpath(root / rel)
    assert (real == real_root or real.startswith(real_root + os.sep)) is inside
    # Asked again (cached folders) and from a fresh object: the same answers.
    assert where.inside(rel) is inside and Containment(root).inside(rel) is inside


def test_containment_names_outside_paths_relative_to_the_root(tree: tuple[Path, Path], tmp_path: Path):
    root, outside = tree
    where = Containment(root)
    assert where.relative(root / "notes/a.md") == "notes/a.md"
    assert where.relative(tmp_path / "real-root/notes/out-link.md") == "notes/out-link.md"  # the link itself
    assert where.relative(outside / "secret.md") is None and where.relative(root) is None
    assert where.relative("notes/a.md", cwd=root) == "notes/a.md"


def test_containment_needs_no_realpath_for_plain_paths(tree: tuple[Path, Path], monkeypatch):
    root, _ = tree
    where = Containment(root)
    calls = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p, *a, **k: calls.append(p) or real(p, *a, **k))
    for rel in ("notes/a.md", "notes/sub/b.md", "notes/missing.md"):
        assert where.inside(rel)
    assert calls == []
    assert not where.inside("notes/out-link.md") and len(calls) == 1


# -- folders ----------------------------------------------------------------------------------
def test_walk_matches_os_walk_and_takes_any_depth(tmp_path: Path):
    (tmp_path / "a/b/c").mkdir(parents=True)
    (tmp_path / "a/x.md").write_text("x")
    (tmp_path / "a/b/y.md").write_text("y")
    (tmp_path / "a/link").symlink_to(tmp_path / "a/b")

    def norm(rows):
        return sorted((d, sorted(ds), sorted(fs)) for d, ds, fs in rows)

    assert norm(walk(tmp_path)) == norm(os.walk(tmp_path))
    deep = tmp_path / "deep"
    try:
        make_folders(os.path.join(deep, *(["d"] * 1500)))  # Path.mkdir(parents=True) recursed per level
        make_folders(os.path.join(deep, *(["d"] * 1500)))  # again: nothing to do
        assert sum(1 for _ in walk(deep)) == 1501
    finally:  # pytest's own clean-up of old temporary folders recurses per level
        remove_tree(deep)


# -- bounded save diffs -----------------------------------------------------------------------
def _apply(old: list[str], diff: list[str]) -> list[str]:
    if not diff:
        return old
    m = re.match(r"@@ -(\d+),(\d+) \+(\d+),(\d+) @@", diff[2])
    assert m
    start = int(m[1]) - 1 if int(m[2]) else int(m[1])
    body = diff[3:]
    before = [line[1:] for line in body if line[0] in " -"]
    after = [line[1:] for line in body if line[0] in " +"]
    assert old[start:start + len(before)] == before
    return old[:start] + after + old[start + len(before):]


@HYP
@given(old=st.lists(st.sampled_from("abc"), max_size=8), new=st.lists(st.sampled_from("abc"), max_size=8))
def test_the_linear_diff_turns_the_old_text_into_the_new(old: list[str], new: list[str]):
    assert _apply(old, _ends_diff("x.md", old, new)) == new


def test_a_large_diff_is_bounded_and_shows_the_change():
    before = "".join(f"- [N{i}](notes/n{i}.md) — route {i}\n" for i in range(50000))
    after = before + "- [New](notes/new.md) — the new route\n"
    diff = diff_lines("_index.md", before, after)
    assert "+- [New](notes/new.md) — the new route" in diff and len(diff) < 20
    huge = diff_lines("notes/huge.md", "", "".join(f"line {i}\n" for i in range(100000)))
    assert len(huge) < 100 and any("not shown" in line for line in huge)
    assert "+line 99999" in huge


LINK_TARGETS = st.sampled_from(["a", "a/b", "b.md", "a/b.md", "../out", "../out/x.md", "/", "missing",
                                "a/../../out", "c", "loop"])
SEGMENTS = st.sampled_from(["a", "b", "c", "b.md", "x.md", "loop", "out"])


@settings(max_examples=120, deadline=None)
@given(links=st.dictionaries(st.sampled_from(["c", "a/c", "loop", "a/b/c", "x.md"]), LINK_TARGETS, max_size=4),
       rels=st.lists(st.lists(SEGMENTS, min_size=1, max_size=4).map("/".join), min_size=1, max_size=6))
def test_containment_matches_realpath_on_any_tree_of_links(links: dict[str, str], rels: list[str]):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "out").mkdir()
        (base / "out/x.md").write_text("x")
        root = base / "root"
        (root / "a/b").mkdir(parents=True)
        (root / "b.md").write_text("b")
        (root / "a/b.md").write_text("b")
        for rel, target in links.items():
            path = root / rel
            if not os.path.lexists(path) and path.parent.is_dir() and not path.parent.is_symlink():
                path.symlink_to(target)
        where = Containment(root)
        real_root = os.path.realpath(root)
        for rel in rels:
            real = os.path.realpath(root / rel)
            assert where.inside(rel) is (real == real_root or real.startswith(real_root + os.sep)), rel
            parts = rel.split("/")
            linked = any(os.path.islink(root.joinpath(*parts[:i + 1])) for i in range(len(parts)))
            if where.inside(rel) and not linked:
                assert not where.through_link(rel), rel
            if linked:
                assert where.through_link(rel), rel
