"""Quick fixes (text-only edits, docs/design.md §4 "fix" column): each one, applied to the text the
root state holds and written back, makes its finding go away and brings no new problem."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

import pytest

from engine_helpers import TODAY, problems, scan
from pmem_lsp.engine.analysis import analyze
from pmem_lsp.engine.catalogue import quick_fixes
from pmem_lsp.engine.findings import Finding
from pmem_lsp.engine.fixes import Fix, TextEdit
from pmem_lsp.engine.index_edit import split_keepends
from pmem_lsp.engine.root_state import RootState
from roots import active_file, make_root, summary_block

INDEX = "_index.md"
ARCHIVE_INDEX = "_archive/_index.md"
HEAD = "# Memory index\n\n## Projects\n- [Alpha](projects/alpha.md) — about alpha\n\n## Notes\n"
BETA = "- [Beta](notes/beta.md) — about beta\n"
LOOSE = active_file("Loose note", summary=summary_block(prefix="First"))


# -- helpers --------------------------------------------------------------------------------

def offset(text: str, line: int, col: int) -> int:
    lines = split_keepends(text)
    assert 0 <= line <= len(lines), (line, len(lines))
    start = sum(len(x) for x in lines[:line])
    if line == len(lines):
        assert col == 0 and (not lines or lines[-1].endswith(("\n", "\r")))
    else:
        assert col <= len(lines[line].rstrip("\r\n")), (line, col, lines[line])
    return start + col


def apply(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (all on one file) as an editor would."""
    spans = sorted(((offset(text, e.line, e.col), offset(text, e.end_line, e.end_col), e.new_text)
                    for e in edits), key=lambda s: (s[0], s[1]))
    for (s1, e1, _), (s2, _e2, _) in zip(spans, spans[1:], strict=False):
        assert e1 <= s2 and not (s1 == e1 == s2), "overlapping edits"
    for start, end, new in reversed(spans):
        assert start <= end
        text = text[:start] + new + text[end:]
    return text


def find(state: RootState, code: str, path: str | None = None) -> Finding:
    found = [f for f in analyze(state, TODAY) if f.code == code and (path is None or f.path == path)]
    assert len(found) == 1, found
    return found[0]


def apply_fix(root: Path, state: RootState, fix: Fix) -> dict[str, str]:
    """Apply `fix` to the root state's texts, write them to disk; the new texts by path."""
    by_path: dict[str, list[TextEdit]] = {}
    for e in fix.edits:
        by_path.setdefault(e.path, []).append(e)
    out = {}
    for rel, edits in by_path.items():
        new = apply(state.files[rel].text or "", edits)
        (root / rel).write_text(new, encoding="utf-8", newline="")
        out[rel] = new
    return out


def key(f: Finding) -> tuple:
    return f.path, f.code


def check_fix(root: Path, code: str, title: str, path: str | None = None,
              allowed_new: tuple[str, ...] = ()) -> dict[str, str]:
    """Scan, take the one `code` finding, apply the fix titled `title`, re-scan: the finding is
    gone and no warning or error appeared (besides `allowed_new` codes). The new texts."""
    state = scan(root)
    before = analyze(state, TODAY)
    finding = find(state, code, path)
    fixes = quick_fixes(state, finding, TODAY)
    chosen = [f for f in fixes if f.title == title]
    assert len(chosen) == 1, [f.title for f in fixes]
    assert chosen[0].code == code
    texts = apply_fix(root, state, chosen[0])
    after = analyze(scan(root), TODAY)
    assert (finding.path, finding.code, finding.message) not in {(f.path, f.code, f.message) for f in after}
    was = Counter(key(f) for f in problems(before) if f != finding)
    now = Counter(key(f) for f in problems(after) if f.code not in allowed_new)
    assert now - was == Counter(), f"new problems: {[f for f in problems(after) if (now - was)[key(f)]]}"
    return texts


def titles(root: Path, code: str, path: str | None = None) -> list[str]:
    state = scan(root)
    return [f.title for f in quick_fixes(state, find(state, code, path), TODAY)]


# -- PM202: add route -----------------------------------------------------------------------

def test_add_route_goes_at_the_end_of_the_matching_section(tmp_path):
    root = make_root(tmp_path, {"notes/loose.md": LOOSE, INDEX: HEAD + BETA + "\n## Other\n- x.md — x\n",
                                "x.md": active_file("X")})
    texts = check_fix(root, "PM202", "Add route to _index.md", "notes/loose.md")
    assert texts[INDEX] == (HEAD + BETA + "- [Loose note](notes/loose.md) — First number 1 about the work.\n"
                            "\n## Other\n- x.md — x\n")


def test_add_route_follows_the_style_most_routes_use_and_falls_back_to_the_end(tmp_path):
    index = "# Index\n\n- `projects/alpha.md`: alpha\n- `notes/beta.md`: beta"  # no final newline
    root = make_root(tmp_path, {"misc/loose.md": LOOSE, INDEX: index})
    texts = check_fix(root, "PM202", "Add route to _index.md", "misc/loose.md")
    assert texts[INDEX] == index + "\n- `misc/loose.md`: First number 1 about the work.\n"


def test_add_route_without_a_summary_uses_the_title(tmp_path):
    root = make_root(tmp_path, {"notes/bare.md": "# Bare note\n\nJust text.\n", INDEX: HEAD + BETA})
    texts = check_fix(root, "PM202", "Add route to _index.md", "notes/bare.md")
    assert texts[INDEX].endswith(BETA + "- [Bare note](notes/bare.md) — Bare note\n")


def test_add_route_is_computed_against_the_open_buffer_as_one_edit(tmp_path):
    root = make_root(tmp_path, {"notes/loose.md": LOOSE, INDEX: HEAD + BETA})
    state = scan(root)
    buffer = "# Memory index\r\n\r\n## Notes\r\n" + BETA.replace("\n", "\r\n") + "\r\n## Projects\r\n" \
        "- [Alpha](projects/alpha.md) — about alpha\r\n"
    state.set_buffer(INDEX, buffer)
    finding = find(state, "PM202", "notes/loose.md")
    [fix] = quick_fixes(state, finding, TODAY)
    assert len(fix.edits) == 1 and fix.preferred
    edit = fix.edits[0]
    assert (edit.path, edit.line, edit.col, edit.end_line, edit.end_col) == (INDEX, 4, 0, 4, 0)
    assert apply(buffer, list(fix.edits)) == (
        "# Memory index\r\n\r\n## Notes\r\n" + BETA.replace("\n", "\r\n")
        + "- [Loose note](notes/loose.md) — First number 1 about the work.\r\n"
        + "\r\n## Projects\r\n- [Alpha](projects/alpha.md) — about alpha\r\n")


# -- PM201 / PM205 / PM203: remove, repoint -------------------------------------------------

def test_remove_dangling_route(tmp_path):
    root = make_root(tmp_path, {INDEX: HEAD + BETA + "- [Gone](notes/gone.md) — gone\n"})
    assert titles(root, "PM201") == ["Remove route to `notes/gone.md`"]
    texts = check_fix(root, "PM201", "Remove route to `notes/gone.md`")
    assert texts[INDEX] == HEAD + BETA


def test_remove_last_route_line_without_newline(tmp_path):
    root = make_root(tmp_path, {INDEX: HEAD + BETA + "- [Gone](notes/gone.md) — gone"})
    texts = check_fix(root, "PM201", "Remove route to `notes/gone.md`")
    assert texts[INDEX] == HEAD + BETA


def test_remove_archived_route(tmp_path):
    root = make_root(tmp_path, {INDEX: HEAD + BETA + "- [Old](notes/old.md) — old\n",
                                "_archive/notes/old.md": active_file("Old")})
    texts = check_fix(root, "PM205", "Remove route to `notes/old.md`")
    assert texts[INDEX] == HEAD + BETA


def test_remove_duplicate_route_removes_the_later_line(tmp_path):
    dup = "- [Beta again](notes/beta.md) — again\n"
    root = make_root(tmp_path, {INDEX: HEAD + BETA + dup + "\n## End\n"})
    texts = check_fix(root, "PM203", "Remove duplicate route")
    assert texts[INDEX] == HEAD + BETA + "\n## End\n"


@pytest.mark.parametrize(("written", "expected"), [
    ("- [Old name](notes/old.md) — renamed", "- [Old name](archive-2026/old.md) — renamed"),
    ("- [Old name](./notes/old.md#part) — renamed", "- [Old name](./archive-2026/old.md#part) — renamed"),
    ("- [[notes/old]] — renamed", "- [[archive-2026/old]] — renamed"),
    ("- [[notes/old.md|Old]] — renamed", "- [[archive-2026/old.md|Old]] — renamed"),
    ("- `notes/old.md` — renamed", "- `archive-2026/old.md` — renamed"),
    ("- <notes/old.md> — renamed", "- <archive-2026/old.md> — renamed"),
    ("- notes/old.md — renamed", "- archive-2026/old.md — renamed"),
    ("| [Old](notes/old.md) | renamed |", "| [Old](archive-2026/old.md) | renamed |"),
])
def test_point_to_the_renamed_file_keeps_the_route_form(tmp_path, written, expected):
    moved = "archive-2026/old.md"
    root = make_root(tmp_path, {INDEX: HEAD + BETA + written + "\n", moved: active_file("Old")})
    assert titles(root, "PM201") == [f"Point to `{moved}`", "Remove route to `notes/old.md`"]
    texts = check_fix(root, "PM201", f"Point to `{moved}`")
    assert texts[INDEX] == HEAD + BETA + expected + "\n"


def test_point_to_escapes_spaces_in_a_link(tmp_path):
    root = make_root(tmp_path, {INDEX: HEAD + BETA + "- [Old](notes/old.md) — renamed\n",
                                "my notes/old.md": active_file("Old")})
    texts = check_fix(root, "PM201", "Point to `my notes/old.md`")
    assert texts[INDEX].endswith("- [Old](<my notes/old.md>) — renamed\n")


def test_point_to_offers_each_file_of_that_name_when_ambiguous_none_preferred(tmp_path):
    root = make_root(tmp_path, {INDEX: HEAD + BETA + "- [Old](notes/old.md) — renamed\n",
                                "a/old.md": active_file("Old A"), "b/old.md": active_file("Old B")})
    assert titles(root, "PM201") == ["Point to `a/old.md`", "Point to `b/old.md`", "Remove route to `notes/old.md`"]
    state = scan(root)
    (finding,) = [f for f in analyze(state, TODAY) if f.code == "PM201"]
    assert not any(fix.preferred for fix in quick_fixes(state, finding, TODAY))


def test_point_to_files_whose_name_or_title_is_close(tmp_path):
    # A note renamed with its title kept, and one renamed to a longer name: both are offered,
    # the closer first (the same title); a file with an unrelated name and title is not.
    root = make_root(tmp_path, {INDEX: HEAD + BETA + "- [Coffee](notes/coffee.md) — brewing notes\n",
                                "notes/coffee-brewing.md": active_file("Brewing"),
                                "notes/kaffe.md": active_file("Coffee"),
                                "notes/taxes.md": active_file("Taxes 2026")})
    assert titles(root, "PM201") == ["Point to `notes/kaffe.md`", "Point to `notes/coffee-brewing.md`",
                                     "Remove route to `notes/coffee.md`"]
    texts = check_fix(root, "PM201", "Point to `notes/coffee-brewing.md`")
    assert texts[INDEX].endswith("- [Coffee](notes/coffee-brewing.md) — brewing notes\n")


def test_no_point_to_when_already_routed(tmp_path):
    root2 = make_root(tmp_path / "two", {INDEX: HEAD + BETA + "- [Old](notes/old.md) — renamed\n"
                                         "- [A](a/old.md) — a\n", "a/old.md": active_file("Old A")})
    assert titles(root2, "PM201") == ["Remove route to `notes/old.md`"]


# -- PM301: add record ----------------------------------------------------------------------

def test_add_record_for_an_archived_file_keeps_its_route_line(tmp_path):
    route = "- [Old](notes/old.md) — the old one"
    root = make_root(tmp_path, {INDEX: HEAD + BETA + route + "\n", "_archive/notes/old.md": active_file("Old")})
    texts = check_fix(root, "PM301", "Add record to _archive/_index.md", "_archive/notes/old.md")
    assert texts[ARCHIVE_INDEX] == (
        "# Archive index\n\n## notes/old.md\n- status: archived\n- original: notes/old.md\n"
        "- location: _archive/notes/old.md\n"
        f"- index-line: {route}\n- archived: 2026-12-01\n- reason: recorded by pmem\n")


def test_add_record_for_a_trashed_file_sets_the_deadline(tmp_path):
    root = make_root(tmp_path, {"_archive/_trash/notes/old.md": active_file("Old")})
    title = "Add record to _archive/_index.md (trashed today: recoverable until 2026-12-31)"
    texts = check_fix(root, "PM301", title, "_archive/_trash/notes/old.md")
    assert texts[ARCHIVE_INDEX] == (
        "# Archive index\n\n## notes/old.md\n- status: trashed\n- original: notes/old.md\n"
        "- location: _archive/_trash/notes/old.md\n- archived: 2026-12-01\n- reason: recorded by pmem\n"
        "- deleted: 2026-12-01\n- recover-by: 2026-12-31\n")


def test_no_record_fix_without_an_archive_index(tmp_path):
    root = make_root(tmp_path, {"_archive/notes/old.md": active_file("Old"), ARCHIVE_INDEX: None})
    assert titles(root, "PM301") == []


# -- PM100 / PM101 / PM106: the Summary -----------------------------------------------------

SKELETON = "## Summary\n- TODO: current status\n- TODO: the key fact or decision\n- TODO: next step\n"


@pytest.mark.parametrize(("text", "expected"), [
    ("# Note\n\nStatus: active\n\n## Context\nBody.\n",
     "# Note\n\nStatus: active\n\n" + SKELETON + "\n## Context\nBody.\n"),
    ("# Note\nStatus: active\n## Context\nBody.\n",
     "# Note\nStatus: active\n\n" + SKELETON + "\n## Context\nBody.\n"),
    ("---\ntags: [x]\n---\n# Note\n\nProse first.\n",
     "---\ntags: [x]\n---\n# Note\n\n" + SKELETON + "\n## Details\n\nProse first.\n"),
    ("# Note", "# Note\n\n" + SKELETON),
    ("# 笔记\n\n正文。\n", "# 笔记\n\n## 摘要\n- TODO: 当前状态\n- TODO: 关键事实或决定\n- TODO: 下一步\n\n## 详情\n\n正文。\n"),
    # A lead-in sentence that ends in a colon belongs to its list: the skeleton goes before it,
    # not between them (issue 13); real metadata before it stays above the skeleton.
    ("# Shell\n\nStatus: active\nUseful lines:\n- `ls -la`\n- `du -sh`\n",
     "# Shell\n\nStatus: active\n\n" + SKELETON + "\n## Details\n\nUseful lines:\n- `ls -la`\n- `du -sh`\n"),
])
def test_insert_summary_skeleton(tmp_path, text, expected):
    root = make_root(tmp_path, {"notes/x.md": text})
    texts = check_fix(root, "PM100", "Insert a Summary skeleton", "notes/x.md", allowed_new=("PM104",))
    assert texts["notes/x.md"] == expected
    assert [f.code for f in analyze(scan(root), TODAY) if f.path == "notes/x.md"] == ["PM104"] * 3


BULLETS = "- one fact\n- two fact\n- three fact\n"


@pytest.mark.parametrize(("text", "expected"), [
    ("# Note\n\nStatus: active\n\n## Context\nBody.\n\n## Summary\n" + BULLETS + "\n## More\nMore.\n",
     "# Note\n\nStatus: active\n\n## Summary\n" + BULLETS + "\n## Context\nBody.\n\n## More\nMore.\n"),
    ("# Note\n\nIntro prose.\n\n## Summary\n" + BULLETS,
     "# Note\n\n## Summary\n" + BULLETS + "\n## Details\n\nIntro prose.\n"),
    ("# Note\n\nIntro prose.\n\n## Summary\n" + BULLETS.rstrip("\n"),
     "# Note\n\n## Summary\n" + BULLETS + "\n## Details\n\nIntro prose."),
    ("# Note\nIntro prose.\n## Summary\n" + BULLETS + "## More\n",
     "# Note\n\n## Summary\n" + BULLETS + "\n## Details\n\nIntro prose.\n## More\n"),
    ("# Note\r\n\r\nIntro.\r\n\r\n## Summary\r\n" + BULLETS.replace("\n", "\r\n"),
     "# Note\r\n\r\n## Summary\r\n" + BULLETS.replace("\n", "\r\n") + "\r\n## Details\r\n\r\nIntro.\r\n"),
])
def test_move_summary_up(tmp_path, text, expected):
    root = make_root(tmp_path, {"notes/x.md": text})
    texts = check_fix(root, "PM101", "Move the summary up", "notes/x.md")
    assert texts["notes/x.md"] == expected


@pytest.mark.parametrize(("heading", "new"), [
    ("### Summary", "## Summary"),
    ("## summary", "## Summary"),
    ("## Summary:", "## Summary"),
    ("## TL;DR", "## Summary"),
    ("Summary\n-------", "## Summary"),
    ("## 总结", "## 摘要"),
    ("## 概要 ##", "## 摘要"),
])
def test_rename_summary_heading(tmp_path, heading, new):
    root = make_root(tmp_path, {"notes/x.md": f"# Note\n\nStatus: active\n\n{heading}\n{BULLETS}\n## Context\nBody.\n"})
    texts = check_fix(root, "PM106", f"Rename to `{new}`", "notes/x.md")
    assert texts["notes/x.md"] == f"# Note\n\nStatus: active\n\n{new}\n{BULLETS}\n## Context\nBody.\n"


# -- the contract ---------------------------------------------------------------------------

def test_findings_without_fixes_and_stale_findings_get_none(tmp_path):
    root = make_root(tmp_path, {"notes/x.md": "# Note\n\n## Summary\n- one\n"})
    state = scan(root)
    pm102 = find(state, "PM102", "notes/x.md")
    assert quick_fixes(state, pm102, TODAY) == []
    stale = Finding(INDEX, 40, 0, 40, 3, "PM201", "gone")
    assert quick_fixes(state, stale, TODAY) == []
    assert quick_fixes(state, Finding("notes/x.md", 0, 0, 0, 1, "PM106", "x"), TODAY) == []
    assert quick_fixes(state, Finding("notes/none.md", 0, 0, 0, 1, "PM100", "x"), dt.date(2026, 1, 1)) == []


def test_pm302_remove_record_when_the_file_is_back_at_its_original_path(tmp_path):
    # A recover that stopped after moving the file and restoring the route, before the record went.
    record = ("## notes/back.md\n- status: archived\n- original: notes/back.md\n"
              "- location: _archive/notes/back.md\n- index-line: - [Back](notes/back.md) — returned\n"
              "- archived: 2026-11-01\n- reason: done\n")
    root = make_root(tmp_path, {"_archive/_index.md": "# Archive index\n\n" + record,
                                "notes/back.md": active_file("Back")})
    state = scan(root)
    (finding,) = [f for f in analyze(state, TODAY) if f.code == "PM302"]
    (fix,) = quick_fixes(state, finding, TODAY)
    assert fix.title == "Remove the record (`notes/back.md` is back at its original path)" and fix.preferred
    apply_fix(root, state, fix)
    assert (root / "_archive/_index.md").read_text(encoding="utf-8") == "# Archive index\n"
    assert [f.code for f in analyze(scan(root), TODAY) if f.code.startswith("PM3")] == []
