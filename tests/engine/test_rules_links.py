"""PM402: relative Markdown links to files that are not in the root."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from engine_helpers import findings, only, ranges
from pmem_lsp.engine.memory_file import MemoryFile
from roots import active_file, make_root

F = "notes/x.md"


def note(body: str) -> str:
    return active_file("X note", body="## Links\n" + body)


def link_findings(tmp_path, body, rel=F, files=None):
    root = make_root(tmp_path, {rel: note(body) if rel != "_core/profile.md" else "# Profile\n\n" + body,
                                **(files or {})})
    return only(findings(root), "PM402")  # PM403 (absolute and ~ paths) has its own tests


# -- positives ------------------------------------------------------------------------------


def test_pm402_range_message_severity(tmp_path):
    found = link_findings(tmp_path, "See the [packing list](packing-list.md) first.\n")
    line = 10  # "# X note", "", "Status…", "", "## Summary", 3 bullets, "", "## Links", text
    assert ranges(found) == [(F, "PM402", line, 23, line, 38)]
    assert found[0].message == ("link target `packing-list.md` (resolves to `notes/packing-list.md`) does not exist "
                                "in the memory root")
    assert found[0].severity.value == "warning"


@pytest.mark.parametrize("body, written, target", [
    ("[a](../projects/gone.md)\n", "../projects/gone.md", "projects/gone.md"),
    ("[a](./gone.md#part)\n", "./gone.md#part", "notes/gone.md"),
    ("[a](gone%20file.md)\n", "gone%20file.md", "notes/gone file.md"),
    ("[a](<gone file.md>)\n", "gone file.md", "notes/gone file.md"),
    ("[a](gone.md \"title\")\n", "gone.md", "notes/gone.md"),
    ("![photo](img/photo.jpg)\n", "img/photo.jpg", "notes/img/photo.jpg"),
    ("[ref]: gone.md\n", "gone.md", "notes/gone.md"),
    ("- item with [a](gone.md)\n", "gone.md", "notes/gone.md"),
    ("> quoted [a](gone.md)\n", "gone.md", "notes/gone.md"),
    ("| [a](gone.md) | cell |\n", "gone.md", "notes/gone.md"),
    ("### Heading with [a](gone.md)\n", "gone.md", "notes/gone.md"),
])
def test_pm402_forms(tmp_path, body, written, target):
    found = link_findings(tmp_path, body)
    assert [(f.code, f.line) for f in found] == [("PM402", 10)]
    assert found[0].message == f"link target `{written}` (resolves to `{target}`) does not exist in the memory root"


def test_pm402_every_broken_link_on_a_line(tmp_path):
    found = link_findings(tmp_path, "[a](one.md) and [b](two.md) and [ok](../projects/alpha.md)\n")
    assert ranges(found) == [(F, "PM402", 10, 4, 10, 10), (F, "PM402", 10, 20, 10, 26)]


def test_pm402_in_core(tmp_path):
    found = link_findings(tmp_path, "See [work](work.md).\n", rel="_core/profile.md")
    assert ranges(found) == [("_core/profile.md", "PM402", 2, 11, 2, 18)]


# -- negatives ------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    "[beta](beta.md) [alpha](../projects/alpha.md) [self](x.md)\n",
    "[part](beta.md#part) [dot](./beta.md) [query](beta.md?plain=1)\n",
    "[anchor](#links) [empty]()\n",
    "[web](https://example.com/x.md) [mail](mailto:me@example.com) [ftp](ftp://h/x.md)\n",
    "[abs](/etc/x.md) [home](~/x.md) [drive](C:/x.md)\n",
    "[folder](../projects) [folder2](../projects/) [root](..) [up](../_core/profile.md)\n",
    "[outside](../../elsewhere.md)\n",
    "`[code](gone.md)` and ``[also](gone.md)``\n",
    "```\n[fenced](gone.md)\n```\n",
    "~~~\n[fenced](gone.md)\n~~~\n",
    "    [indented code](gone.md)\n",
    "<!-- [comment](gone.md) -->\n",
    "[space](my%20file.md) [angle](<my file.md>)\n",
    "[archived](../_archive/_index.md)\n",
    "Just [brackets] and (parentheses) and a wiki [[gone]].\n",
])
def test_pm402_not(tmp_path, body):
    assert link_findings(tmp_path, body, files={"notes/my file.md": active_file("Mine")}) == []


def test_pm402_not_in_index_or_archive(tmp_path):
    root = make_root(tmp_path, {
        "_archive/projects/old.md": "# Old\n\nSee [gone](gone.md).\n",
        "_archive/_index.md": "# Archive index\n\nSee [gone](gone.md).\n",
    })
    assert only(findings(root), "PM402") == []


def test_pm402_not_for_an_excluded_or_unreadable_target(tmp_path):
    found = findings(make_root(tmp_path, {F: note("[d](../drafts/a.md) [e](../drafts/deep/b.md)\n"),
                                          "drafts/a.md": "# A\n", "drafts/deep/b.md": "# B\n",
                                          "_index.md": "# I\n\n- [A](projects/alpha.md) — a\n"
                                                       "- [B](notes/beta.md) — b\n- [X](notes/x.md) — x\n"}),
                     {"exclude": ["drafts"]})
    assert found == []


def test_pm402_links_are_relative_to_the_linking_file(tmp_path):
    body = "[a](alpha.md)\n"  # notes/alpha.md does not exist; projects/alpha.md does
    found = link_findings(tmp_path, body)
    assert [f.message for f in found] == ["link target `alpha.md` (resolves to `notes/alpha.md`) does not exist in the memory root; "
                                          "did it move to `projects/alpha.md`?"]


def test_pm402_crlf_and_bom(tmp_path):
    text = "\ufeff# X\r\n\r\n## Summary\r\n- a\r\n- b\r\n- c\r\n\r\nSee [gone](gone.md).\r\n"
    root = make_root(tmp_path, {F: text})
    assert ranges(only(findings(root), "PM402")) == [(F, "PM402", 7, 11, 7, 18)]


# -- link reference definitions follow CommonMark (issue 13) --------------------------------


def test_footnotes_and_prose_after_a_definition_are_not_links(tmp_path):
    body = ("Text with a footnote[^1] and another[^note].\n\n"
            "[^1]: This is a footnote.\n[^note]: 这是一个脚注。\n\n"
            "[x]: other.md and more words after the destination\n\n"
            "Some paragraph\n[y]: inside-the-paragraph.md\n\n"
            "[real]: gone.md \"A title\"\n[also]: <gone two.md>\n")
    found = link_findings(tmp_path, body)
    assert [f.message for f in found] == ["link target `gone.md` (resolves to `notes/gone.md`) does not exist in the memory root",
                                          "link target `gone two.md` (resolves to `notes/gone two.md`) does not exist "
                                          "in the memory root"]


_PIECES = st.sampled_from([
    "", "A paragraph line.", "Another line of prose", "# A heading", "- a list item",
    "[{label}]: {dest}", "[{label}]: {dest} \"Title\"", "[{label}]: {dest} 'Title'", "[{label}]: {dest} (Title)",
    "[{label}]: <{dest_space}>", "[{label}]: {dest} and more words", "   [{label}]: {dest}",
    "[^{label}]: A footnote.", "[{label}]:{dest}",
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, min_size=1, max_size=10))
def test_definitions_agree_with_markdown_it(pieces):
    """Our link reference definitions are CommonMark's (markdown-it-py as the oracle), except
    footnotes (`[^1]: …`), which are an extension CommonMark reads as definitions. Not
    generated: a definition whose destination is on the next line (`[x]:` then `y.md`) and
    definitions inside block quotes, which we read as no link at all (never as a wrong one)."""
    lines = [p.format(label=f"l{i}", dest=f"d{i}.md", dest_space=f"d {i}.md") for i, p in enumerate(pieces)]
    text = "\n".join(lines) + "\n"
    env: dict = {}
    MarkdownIt("commonmark").parse(text, env)
    expected = sorted((ref["map"][0], unquote(ref["href"])) for label, ref in env.get("references", {}).items()
                      if not label.startswith("^") and not lines[ref["map"][0]].startswith(">"))
    ours = sorted((link.line, link.target) for link in MemoryFile(text).links if link.definition)
    assert ours == expected, text


def test_a_link_without_md_resolves_to_the_note_foam_and_obsidian_write(tmp_path):
    body = "See [a](note-a) and [b](<note b>) and [gone](note-gone) and [c](note-c.md).\n[ref]: note-a \"A\"\n"
    found = link_findings(tmp_path, body, files={"notes/note-a.md": active_file("A"),
                                                 "notes/note b.md": active_file("B"),
                                                 "notes/note-c.md": active_file("C")})
    assert [f.message for f in found] == ["link target `note-gone` (resolves to `notes/note-gone`) does not exist in the memory root"]


@pytest.mark.parametrize("body", [
    'The [[Server Rack|rack]]("19 inch") holds it.\n',
    "Siehe [[Netzwerk|Netz]](Keller) für Details.\n",
    "参见 [[项目计划|计划]](草稿) 的说明。\n",
    "Also [[notes/gone]](gone.md) in passing.\n",
])
def test_a_wiki_link_followed_by_parentheses_is_not_a_link_to_them(tmp_path, body):
    assert link_findings(tmp_path, body) == []


def test_a_markdown_link_whose_text_only_holds_brackets_is_still_checked(tmp_path):
    found = link_findings(tmp_path, "See [the [big] plan](plan.md) and [[x]](y.md).\n")
    assert [f.message for f in found] == ["link target `plan.md` (resolves to `notes/plan.md`) does not exist in the memory root"]


# PM403's pre-filter, written literal-first for speed, against the plain form it replaced.
_HINT_ORACLE = r"[\s`(:：]/[A-Za-z]"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=" \t\n`(:：/aZ.~-é中", max_size=40))
def test_the_source_path_hint_finds_what_the_plain_pattern_finds(text):
    import re

    from pmem_lsp.engine.rules.source_paths import _ABSOLUTE_HINT

    assert bool(_ABSOLUTE_HINT.search(text)) == bool(re.search(_HINT_ORACLE, text))


# -- Windows paths (issue 44) -------------------------------------------------------------------


def test_a_backslash_path_says_the_backslash_is_the_problem_and_offers_the_slash_form(tmp_path):
    import datetime as dt

    from engine_helpers import scan
    from pmem_lsp.engine.catalogue import quick_fixes

    root = make_root(tmp_path, {F: note("![top](images\\3-top.png) and [plan](<images\\图 (1).md>)\n"),
                                "notes/images/3-top.png": "png", "notes/images/图 (1).md": "# 图\n"})
    found = only(findings(root), "PM402")
    assert len(found) == 2
    for f, slashed in zip(found, ("images/3-top.png", "images/图 (1).md"), strict=True):
        assert "backslash" in f.message and f"`notes/{slashed}` exists" in f.message
        assert "does not exist in the memory root" not in f.message
    fixes = quick_fixes(scan(root), found[0], dt.date(2026, 12, 1))
    assert [e.new_text for fx in fixes for e in fx.edits] == ["images/3-top.png"]


def test_a_backslash_path_whose_slash_form_is_missing_too_says_both(tmp_path):
    found = link_findings(tmp_path, "![top](images\\gone.png)\n")
    assert len(found) == 1 and "backslash" in found[0].message
    assert "`notes/images/gone.png` does not exist either" in found[0].message
    assert found[0].data["slash_target"] is None


# -- TeX math holds no link (issue 44) ------------------------------------------------------


@pytest.mark.parametrize("body", [
    "Loss: $-y\\log a^{[L](i)}$\n",
    "Weights:\n\n$$\nW^{[l](k)} = 0\n$$\n",
    "Inline display $$W^{[l](k)} = 0$$ here.\n",
    "- in an item $a^{[L](i)}$\n",
    "Across lines $a^{[L](i)}\nand b$ in one paragraph.\n",
])
def test_a_link_shape_inside_math_is_no_link(tmp_path, body):
    assert link_findings(tmp_path, body) == []


def test_prices_in_prose_leave_the_links_between_them(tmp_path):
    """`$5 … $10`: a `$` followed by a space closes nothing, and a closer before a digit is none
    (Pandoc's rule): no math, the link is found."""
    body = "It costs $5 and [the list](list.md) is $10.\n"
    assert [link.target for link in MemoryFile(body).links] == ["list.md"]
    found = link_findings(tmp_path, body)
    assert [f.message for f in found] == ["link target `list.md` (resolves to `notes/list.md`) does not exist "
                                          "in the memory root"]


@pytest.mark.parametrize("body, targets", [
    ("\\$[a](x.md)$\n", ["x.md"]),  # an escaped dollar opens nothing
    ("[cost $5$](x.md) $a[b](c)$\n", ["x.md"]),  # math in a link's text; a link in math
    ("[a](notes/$x$.md)\n", ["notes/$x$.md"]),  # a dollar in a target opens no math
    ("`$[a](x.md)$` and [b](y.md)\n", ["y.md"]),  # a code span before math
    ("- price $5 see [a](x.md)\n- total 3$\n", ["x.md"]),  # two items, not one span
    ("$ a$ [a](x.md) $b $\n", ["x.md"]),  # a space after the opener, before the closer
    ("# Title $[a](b)$ [c](d.md)\n", ["d.md"]),
])
def test_math_follows_pandocs_rule(body, targets):
    assert [link.target for link in MemoryFile(body).links] == targets


_MATH_BODY = st.text(alphabet="abxyL{}^_+-=()[]\\ 0123456789", max_size=12)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_MATH_BODY, _MATH_BODY, st.booleans(), st.sampled_from(["", "Loss: ", "- ", "> "]))
def test_generated_math_with_a_link_inside_never_gives_pm402(tmp_path_factory, before, after, display, lead):
    """Math holding `[a](b)` is no link; a link after it on the same line still is."""
    tmp_path = tmp_path_factory.mktemp("math")
    inner = before.replace("$", "") + "[a](gone-in-math.md)" + after.replace("$", "")
    math = f"$${inner}$$" if display else f"$x{inner}x$"
    found = link_findings(tmp_path, f"{lead}{math} then [b](gone.md)\n")
    assert [f.message.split("`")[1] for f in found] == ["gone.md"], math


def test_a_link_nested_in_a_link_is_quoted_as_written(tmp_path):
    """Issue 44: the target was quoted normalised (`//` made `/`), which the user never wrote."""
    body = "- [repo]([https://github.com/x/y](https://github.com/x/y))\n"
    found = link_findings(tmp_path, body)
    assert [f.message for f in found] == [
        "link target `[https://github.com/x/y](https://github.com/x/y)` (resolves to "
        "`notes/[https:/github.com/x/y](https:/github.com/x/y)`) does not exist in the memory root: "
        "it looks like a link nested in a link (write `[text](url)`)"]
    assert "\n" not in found[0].message


# -- a stale link to a file that moved (issue 44's trial: `creative_writing/X.md` → `creative/X.md`) --


def _fixed_line(root, finding) -> str:
    import datetime as dt

    from engine_helpers import scan
    from pmem_lsp.engine.catalogue import quick_fixes

    fixes = quick_fixes(scan(root), finding, dt.date(2026, 12, 1))
    assert [fx.title for fx in fixes] == [f"Link to {finding.data['moved_to']}"]
    (edit,) = fixes[0].edits
    line = (root / finding.path).read_text(encoding="utf-8").splitlines()[edit.line]
    return line[:edit.col] + edit.new_text + line[edit.end_col:]


@pytest.mark.parametrize("body, moved, fixed", [
    ("[plan](../projects/plan.md#goals)\n", "archive2/plan.md", "[plan](../archive2/plan.md#goals)"),
    ("[list](<old place/packing list.md>)\n", "trips/packing list.md", "[list](<../trips/packing list.md>)"),
    ("[list](old%20place/packing%20list.md)\n", "trips/packing list.md", "[list](<../trips/packing list.md>)"),
    ("[a](trips/packing)\n", "notes/later/packing.md", "[a](later/packing)"),  # `.md` left out, as written
    ("[a](gone/Rust%20%3F.md)\n", "notes/Rust ?.md", "[a](<Rust %3F.md>)"),
])
def test_a_link_to_a_file_that_moved_asks_and_fixes(tmp_path, body, moved, fixed):
    root = make_root(tmp_path, {F: note(body), moved: "# Moved\n\n- here now\n"})
    found = only(findings(root), "PM402")
    assert len(found) == 1
    assert found[0].message.endswith(f"does not exist in the memory root; did it move to `{moved}`?")
    assert found[0].data["moved_to"] == moved
    assert _fixed_line(root, found[0]).endswith(fixed)


def test_no_hint_where_no_file_or_several_or_only_the_trash_have_the_name(tmp_path):
    body = "[a](old/one.md) [b](old/two.md) [c](old/three.md)\n"
    files = {"p/two.md": "# Two\n", "q/two.md": "# Two\n", "_archive/_trash/three.md": "# Three\n",
             ".hidden/three.md": "# Three\n"}
    found = link_findings(tmp_path, body, files=files)
    assert len(found) == 3
    assert all("did it move" not in f.message and not (f.data or {}).get("moved_to") for f in found)


def test_the_hint_follows_a_file_of_that_name_appearing_and_vanishing(tmp_path):
    """PM402's findings are kept per file while what the check reads of the root is unchanged:
    a file of the target's name is part of that, in the editor's incremental analysis too."""
    from engine_helpers import scan
    from pmem_lsp.engine.analysis import Analysis

    root = make_root(tmp_path, {F: note("[a](old/plan.md)\n")})
    state = scan(root)
    analysis = Analysis(state)

    def hints() -> list[str]:
        return [f.message.partition("; ")[2] for f in only(analysis.all(), "PM402")]

    assert hints() == [""]
    (root / "projects").mkdir(exist_ok=True)
    (root / "projects/plan.md").write_text("# Plan\n", encoding="utf-8")
    analysis.update(state.refresh("projects/plan.md"))
    assert hints() == ["did it move to `projects/plan.md`?"]
    (root / "projects/plan.md").unlink()
    analysis.update(state.refresh("projects/plan.md"))
    assert hints() == [""]


def test_the_hint_follows_a_target_that_vanished_first_and_then_reappeared_elsewhere(tmp_path):
    """The analysis indexes only missing targets by name: a target that goes missing later must
    join that index, so that its file's twin appearing elsewhere still brings the hint."""
    from engine_helpers import scan
    from pmem_lsp.engine.analysis import Analysis

    root = make_root(tmp_path, {F: note("[a](plan.md)\n"), "notes/plan.md": "# Plan\n"})
    state = scan(root)
    analysis = Analysis(state)
    assert only(analysis.all(), "PM402") == []
    (root / "notes/plan.md").unlink()
    analysis.update(state.refresh("notes/plan.md"))
    assert [f.message.partition("; ")[2] for f in only(analysis.all(), "PM402")] == [""]
    (root / "projects").mkdir(exist_ok=True)
    (root / "projects/plan.md").write_text("# Plan\n", encoding="utf-8")
    analysis.update(state.refresh("projects/plan.md"))
    assert [f.message.partition("; ")[2] for f in only(analysis.all(), "PM402")] == ["did it move to `projects/plan.md`?"]


def _source_lines_reference(doc: MemoryFile) -> list[int]:
    """`_source_lines` as it was before its fast path (issue 44): every heading merged with the
    lines holding a `/`, in line order."""
    from pmem_lsp.engine.markdown import PARAGRAPH
    from pmem_lsp.engine.memory_file import parse_metadata_line
    from pmem_lsp.engine.rules.source_paths import declares_source
    out: list[int] = []
    source_level = 0
    start = doc.front_matter_end
    heads = {h.line: h for h in doc.headings if h.top_level}
    for n in sorted(heads.keys() | {n for n, line in enumerate(doc.lines) if "/" in line}):
        heading = heads.get(n)
        if heading is not None:
            if heading is not doc.title and (not source_level or heading.level <= source_level):
                source_level = heading.level if declares_source(heading.text) else 0
            continue
        if n >= start and doc.blocks.line_kinds[n - start] != PARAGRAPH:
            continue
        if source_level and doc.top_item_at(n) is not None:
            out.append(n)
            continue
        line = doc.lines[n]
        parsed = parse_metadata_line(line) if ":" in line or "：" in line else None
        if parsed is not None and declares_source(parsed[0]):
            out.append(n)
    return out


_SOURCE_LINE_PARTS = [
    "# Sources", "# Notes", "## Sources", "## 资料", "## Commands", "### Repo", "Sources", "=======",
    "Source: ~/x/y.md", "**Repo**: /opt/app", "- Path: `~/data`", "来源：~/笔记/a.md", "Folder (2): /srv/x",
    "see src/app: the code", "- ~/raw/exports", "- item /usr/x", "  continued /home/x", "1. /data/x",
    "```", "~~~", "---", "source: ~/fm", "> Source: ~/q", "", "text", "<!-- Source: ~/c -->", "## Summary",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_SOURCE_LINE_PARTS), max_size=14), st.sampled_from(["\n", "\r\n"]))
def test_source_lines_fast_path_answers_as_the_full_pass(parts, newline):
    from pmem_lsp.engine.rules.source_paths import _source_lines
    doc = MemoryFile(newline.join(parts) + newline)
    assert _source_lines(doc) == _source_lines_reference(doc)


# -- pre-tests that a text holds no link, no pointer (issue 44) --------------------------------

_LINK_PARTS = _SOURCE_LINE_PARTS + [
    "[a](notes/a.md)", "[d]: other.md", "[e]: <x y.md>", "see [b](~/raw/x.md)", "[c](/usr/x)", "[w]",
    "`[a](in code)`", "](", "]:", "    [i](indented.md)", "| [t](t.md) |", "$a^{[L](i)}$ [m](m.md)", "\\[n](n.md)",
]


def _as_python(text: str) -> MemoryFile:
    """`text`'s document as the Python code reads it (no native record)."""
    from pmem_lsp.engine import memory_file
    native, memory_file._NATIVE = memory_file._NATIVE, None
    try:
        return MemoryFile(text)
    finally:
        memory_file._NATIVE = native


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_LINK_PARTS), max_size=12), st.sampled_from(["\n", "\r\n", "\r"]))
def test_holds_no_link_is_said_only_of_a_text_without_links(parts, newline):
    text = newline.join(parts) + newline
    for doc in (MemoryFile(text), _as_python(text)):
        said = doc.holds_no_link  # asked before the links are made: from the rows or the text
        links = doc.links
        assert not said or links == [], text
        assert doc.holds_no_link == (not links)  # asked again, from the links made


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_LINK_PARTS), max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_link_paths_without_links_are_the_full_paths(parts, newline):
    from pmem_lsp.engine.root_state import FileEntry
    from pmem_lsp.engine.rules.broken_links import _link_paths, link_paths
    from pmem_lsp.engine.zones import Zone
    text = newline.join(parts) + newline
    for make in (MemoryFile, _as_python):
        entry, fresh = (FileEntry("notes/a.md", Zone.ACTIVE, len(text), 0.0, text=text, _doc=make(text))
                        for _ in range(2))
        found, full = link_paths(entry), _link_paths(fresh)
        assert (list(found.paths), list(found.at)) == (list(full.paths), list(full.at))


def _source_pointers_reference(doc: MemoryFile) -> list:
    """`source_pointers` as it was before its early return (issue 44): the links looked at,
    then the hint asked of the text itself (not the core), then the source lines."""
    import re as _re
    from urllib.parse import unquote as _unquote

    from pmem_lsp.engine.memory_file import mask_code_spans
    from pmem_lsp.engine.paths import strip_fragment
    from pmem_lsp.engine.rules import source_paths as sp
    out: list = []
    seen: set = set()

    def add(line, start, end, written, path):
        if path is not None and (line, path) not in seen:
            seen.add((line, path))
            out.append(sp.SourcePointer(line, start, end, written, path))

    for link in doc.links:
        written = link.target.strip()
        if written.startswith(("/", "~")):
            add(link.line, link.start, link.end, written, sp._pointer(_unquote(strip_fragment(written))))
    text = doc.text
    hint = "~/" in text or text.startswith("/") or _re.search(r"[\s`(:：]/[A-Za-z]", text) is not None
    for n in sp._source_lines(doc) if hint else []:
        line = doc.lines[n]
        plain = mask_code_spans(line)
        for m in sp._CODE_SPAN.finditer(line):
            if sp._in_a_sentence(plain, m.start()):
                continue
            s, e = m.span(2)
            add(n, s, e, m.group(2).strip(), sp._pointer(m.group(2)))
        for link in doc.links:
            if link.line == n:
                plain = plain[:link.start] + " " * (link.end - link.start) + plain[link.end:]
        for m in sp._PLAIN_PATH.finditer(plain):
            written = m.group(0).rstrip(".:：,;!?")
            if len(written) > 1 and not sp._in_a_sentence(plain, m.start()):
                add(n, m.start(), m.start() + len(written), written, sp._pointer(written))
    out.sort(key=lambda p: (p.line, p.start))
    return out


_POINTER_PARTS = _LINK_PARTS + [
    "[h](~/home/x.md)", "[g]( /srv/a#x )", "- Source: `~/a b`", "Repo: `/opt/app:12` and ~/raw/y", "[u](/api/v1)",
    "[p](%7E/x)", "Path: /usr/local/bin, /tmp/x.", "text ~/in/a/sentence here", "/etc/hosts",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_POINTER_PARTS), max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_source_pointers_answer_as_the_full_pass(parts, newline):
    """The early return (no pointer link, no hint) and the core's hint give what every step gives."""
    from pmem_lsp.engine.rules.source_paths import source_pointers
    text = newline.join(parts) + newline
    for doc in (MemoryFile(text), _as_python(text)):
        assert source_pointers(doc) == _source_pointers_reference(doc), text


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["~/x", " ~/a/b.md:12 ", "~/a*", "~/笔记/x", "~/", "~user/x", "/usr/x", "//x", "/api/v1"]),
       st.sampled_from(["/home/u", "/home/u/", "/", "", None]))
def test_a_home_pointer_is_expanded_with_the_home_folder_of_the_moment(written, home):
    """`_pointer`'s memo of `~/…` is keyed on `HOME`: the answer is `expanduser`'s now."""
    import os

    from pmem_lsp.engine.rules.source_paths import FILE_ROOTS, _pointer
    saved = os.environ.get("HOME")
    try:
        if home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = home
        text = written.strip()
        if text.startswith("~/"):
            expanded = os.path.expanduser(text)
            expected = None if expanded.startswith("~") or any(c in text for c in "*?$<>{}[]| ") else expanded
            expected = expected and expected.removesuffix(":12")
        elif text.startswith("/") and not text.startswith("//"):
            first = text.lstrip("/").split("/", 1)[0]
            expected = text if first in FILE_ROOTS or os.path.isdir("/" + first) else None
        else:
            expected = None
        assert _pointer(written) == expected
    finally:
        if saved is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = saved


_LINE_PIECES = st.sampled_from(["~", "/", "//", "~/", "`", "``", "a", "Z", "_", "1", ".", " ", ":", "(", ")", "é", "笔",
                                "。", "，", "*", "'", "x.md", "/usr", "~/raw", "\t"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_LINE_PIECES, max_size=16).map("".join))
def test_the_pointer_searches_find_what_their_look_behind_first_forms_found(line):
    """`_CODE_SPAN` and `_PLAIN_PATH` start with their literal (a search that skips to it) and
    look behind it: the same matches as the patterns that looked behind first."""
    import re

    from pmem_lsp.engine.rules.source_paths import _CJK_PUNCTUATION, _CODE_SPAN, _PLAIN_PATH
    code_span = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
    plain_path = re.compile(rf"(?<![\w/~.])(?:~|(?=/[A-Za-z]))/?[^\s`'\"<>()\[\]{{}},;|*{_CJK_PUNCTUATION}]*")
    for fast, plain in ((_CODE_SPAN, code_span), (_PLAIN_PATH, plain_path)):
        assert [m.regs for m in fast.finditer(line)] == [m.regs for m in plain.finditer(line)]
