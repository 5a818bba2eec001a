"""PM201–PM207: `_index.md` routes (docs/design.md §2.3), parsed and checked against a root on disk."""

from __future__ import annotations

import os
import stat

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import pmem_lsp.engine.root_state as root_state_module
from engine_helpers import TODAY, doc, findings, only, ranges, rows, scan
from pmem_lsp.engine.index_routes import parse_index
from pmem_lsp.engine.status_report import memory_status
from roots import active_file, make_root

INDEX = "_index.md"
HEAD = "# Memory index\n\n## Projects\n- [Alpha](projects/alpha.md) — alpha project\n\n## Notes\n"
X = active_file("X note")


def unreadable(state) -> list[tuple[str, str | None]]:
    return [(p.path, p.reason) for p in state.read_problems() if p.unreadable]


def index_root(tmp_path, *lines: str, files: dict | None = None):
    """Baseline root whose index routes alpha (line 3) and then `lines` from line 6 on."""
    index = HEAD + "".join(line + "\n" for line in lines)
    if not any("beta" in line for line in lines):
        index += "- [Beta](notes/beta.md) — beta note\n"
    return make_root(tmp_path, {INDEX: index, **(files or {})})


def route_findings(tmp_path, *lines, files=None, overrides=None):
    return [f for f in findings(index_root(tmp_path, *lines, files=files), overrides) if f.code.startswith("PM2")]


# -- route forms and separators: valid routes give nothing ----------------------------------

VALID_FORMS = [
    "- [X](notes/x.md) — x note",
    "- [X](notes/x.md) – x note",
    "- [X](notes/x.md) - x note",
    "- [X](notes/x.md): x note",
    "- [X](notes/x.md)：x note",
    "- [X](notes/x.md) | x note",
    "* [X](notes/x.md) — x note",
    "+ [X](notes/x.md) — x note",
    "1. [X](notes/x.md) — x note",
    "- [X](./notes/x.md) — x note",
    "- [X](notes/x.md#details) — x note",
    "- [X](notes/x.md \"title\") — x note",
    "- **[X](notes/x.md)** — x note",
    "- <notes/x.md> — x note",
    "- `notes/x.md` — x note",
    "- `./notes/x.md#part` : x note",
    "- [[notes/x]] — x note",
    "- [[notes/x|X note]] — x note",
    "- [[notes/x.md]] — x note",
    "- [[notes/x#part]] — x note",
    "- [[notes/x.md#part|X]] — x note",
    "- notes/x.md — x note",
    "- notes/x.md – x note",
    "- notes/x.md - x note",
    "- notes/x.md: x note",
    "- notes/x.md：x note",
    "- notes/x.md | x note",
    "- ./notes/x.md — x note",
    "| [X](notes/x.md) | x note |",
    "| <notes/x.md> | x note |",
    "| `notes/x.md` | x note |",
    "| [[notes/x]] | x note |",
    "| [[notes/x|X]] | x note |",
    "| [[notes/x\\|X]] | x note |",
    "| notes/x.md | x note |",
    "|notes/x.md|x note|",
    "  - [X](notes/x.md) — nested list items are routes too",
]


@pytest.mark.parametrize("line", VALID_FORMS)
def test_valid_route_forms(tmp_path, line):
    assert route_findings(tmp_path, line, files={"notes/x.md": X}) == []


@pytest.mark.parametrize("line", VALID_FORMS)
def test_route_forms_parse_to_the_file_and_description(line):
    model = parse_index(doc("# Index\n\n" + line + "\n"))
    assert model.malformed == ()
    (route,) = model.routes
    assert route.path == "notes/x.md" and route.problem is None
    assert route.description in ("x note", "nested list items are routes too")
    assert line[route.start:route.end] == route.written
    assert route.table is line.startswith("|")


@pytest.mark.parametrize("line, rel", [
    ("- [X](notes/my%20file.md) — x", "notes/my file.md"),
    ("- [X](<notes/my file.md>) — x", "notes/my file.md"),
    ("- <notes/my file.md> — x", "notes/my file.md"),
    ("- [[notes/my file]] — x", "notes/my file.md"),
    ("- [[notes/my%20file|Mine]] — x", "notes/my file.md"),
    ("- `notes/caf%C3%A9.md` — x", "notes/café.md"),
    ("- [X](notes/caf%C3%A9.md) — x", "notes/café.md"),
    ("- [X](notes/../notes/x.md) — x", "notes/x.md"),
    ("- [四川](notes/四川.md) — x", "notes/四川.md"),
])
def test_escapes_and_normalisation(tmp_path, line, rel):
    assert route_findings(tmp_path, line, files={rel: X}) == []


# Names as real vaults have them (Obsidian): spaces, CJK, parentheses, brackets. Every form of
# docs/design.md §2.3 takes them (issue 13: a code span with a space was silently no route).
SPACED = "notes/Plugins (core)/Bases syntax.md"


@pytest.mark.parametrize("line", [
    f"- `{SPACED}` — x",
    f"- `{SPACED}`: x",
    f"- ``{SPACED}`` — x",
    f"- [Bases](<{SPACED}>) — x",
    f"- [Bases [core]](<{SPACED}>) — x",
    "- [Bases](notes/Plugins%20(core)/Bases%20syntax.md) — x",
    "- [[notes/Plugins (core)/Bases syntax]] — x",
    "- [[notes/Plugins (core)/Bases syntax|Bases]] — x",
    f"- <{SPACED}> — x",
    f"- {SPACED} — x",
    f"- {SPACED}: x",
    f"| `{SPACED}` | x |",
    "| [[notes/Plugins (core)/Bases syntax]] | x |",
])
def test_names_with_spaces_route_in_every_form(tmp_path, line):
    model = parse_index(doc("# Index\n\n" + line + "\n"))
    assert [r.path for r in model.routes] == [SPACED] and model.malformed == ()
    assert route_findings(tmp_path, line, files={SPACED: X}) == []


@pytest.mark.parametrize("line, reason", [
    ("- [Bases](notes/Bases syntax.md) — x",
     "the link's target `notes/Bases syntax.md` holds a space, so it cannot be read: write it as "
     "`<notes/Bases syntax.md>` (or each space as `%20`)"),
    ("| [Bases](notes/Bases syntax.md) | x |",
     "the link's target `notes/Bases syntax.md` holds a space, so it cannot be read: write it as "
     "`<notes/Bases syntax.md>` (or each space as `%20`)"),
    ("- [Bases](notes/Bases syntax.md#Part (two)) — x",
     "the link's target cannot be read: write a path with spaces as `<notes/a b.md>` or `notes/a%20b.md`"),
    ("- [[notes/a[b]] — x", "the wiki link cannot be read as a target"),
    ("- Bases syntax.md — a root-level name with a space: no folder, so no bare path",
     "list item mentions a file but does not start with a target"),
])
def test_a_line_that_means_a_route_but_cannot_be_read_is_pm206(tmp_path, line, reason):
    found = only(route_findings(tmp_path, line, files={"notes/Bases syntax.md": X}), "PM206")
    assert [f.message for f in found] == [reason]


@pytest.mark.parametrize("line, line_no", [
    ("- [Bases](notes/Bases syntax.md) — x", 7),
    ("| [Bases](notes/Bases syntax.md) | x |", 7),
    ("- The syntax of bases is in notes/Bases syntax.md", 7),
])
def test_a_file_an_unreadable_line_means_is_told_which_line(tmp_path, line, line_no):
    """PM202 on the file says where its route is and that it cannot be read, never "no route"
    (it has one: the person wrote it); the fix is PM206's, so PM202 offers none."""
    from pmem_lsp.engine.analysis import analyze
    from pmem_lsp.engine.catalogue import quick_fixes

    root = index_root(tmp_path, line, files={"notes/Bases syntax.md": X, "notes/other.md": X})
    state = scan(root)
    found = {f.path: f for f in analyze(state) if f.code == "PM202"}
    assert found["notes/Bases syntax.md"].message == (
        f"its route on line {line_no} of `_index.md` cannot be read (PM206 there): agents never load this "
        "file until that line is fixed")
    assert found["notes/other.md"].message.startswith("no route in `_index.md`: agents never load this file; add a route")
    assert quick_fixes(state, found["notes/Bases syntax.md"], TODAY) == []
    assert quick_fixes(state, found["notes/other.md"], TODAY) != []


@pytest.mark.parametrize("line, fixed", [
    ("- [Bases](notes/Bases syntax.md) — x", "- [Bases](<notes/Bases syntax.md>) — x"),
    ("- **[Bases](notes/Bases syntax.md)** — x", "- **[Bases](<notes/Bases syntax.md>)** — x"),
    ("| [Bases](notes/Bases syntax.md) | x |", "| [Bases](<notes/Bases syntax.md>) | x |"),
])
def test_the_fix_of_a_spaced_link_route_writes_it_in_angle_brackets(tmp_path, line, fixed):
    from pmem_lsp.engine.analysis import analyze
    from pmem_lsp.engine.catalogue import quick_fixes

    root = index_root(tmp_path, line, files={"notes/Bases syntax.md": X})
    state = scan(root)
    [pm206] = [f for f in analyze(state) if f.code == "PM206"]
    [fix] = quick_fixes(state, pm206, TODAY)
    [edit] = fix.edits
    old = (root / "_index.md").read_text(encoding="utf-8")
    lines = old.split("\n")
    lines[edit.line] = lines[edit.line][:edit.col] + edit.new_text + lines[edit.line][edit.end_col:]
    (root / "_index.md").write_text("\n".join(lines), encoding="utf-8")
    assert fixed in lines
    after = analyze(scan(root))
    assert [f for f in after if f.code in ("PM202", "PM206")] == []
    # Changed since the finding: the fix is not offered on a line it did not read.
    (root / "_index.md").write_text(old.replace("Bases]", "Bases page]"), encoding="utf-8")
    assert quick_fixes(scan(root), pm206, TODAY) == []


@pytest.mark.parametrize("line", [
    "- See notes.md for the rest",
    "- `npm run build.sh` — a command, not a path",
    "- Ideas: see the notes folder",
])
def test_prose_with_spaces_is_still_not_a_route(line):
    assert parse_index(doc("# Index\n\n" + line + "\n")).routes == ()




def test_headings_blank_lines_comments_and_prose_are_ignored(tmp_path):
    lines = ["", "Some prose about notes/x.md that is not a list item.",
             "<!-- - [Old](notes/old.md) — commented out -->",
             "```", "- [Fenced](notes/fenced.md) — example", "```",
             "### Sub-heading with [a link](notes/gone.md)",
             "| File | What |", "|---|---|", "| :--- | ---: |",
             "- [X](notes/x.md) — x"]
    assert route_findings(tmp_path, *lines, files={"notes/x.md": X}) == []


def test_table_of_contents_anchors_are_not_routes(tmp_path):
    # `[Notes](#notes)` links to a heading of the index itself: not a route, not malformed.
    assert route_findings(tmp_path, "- [Projects](#projects) — jump to the projects",
                          "- [Notes](<#notes>)", "* [Top](#)") == []


# -- PM201 route-dangling -------------------------------------------------------------------


def test_pm201_range_and_severity(tmp_path):
    found = route_findings(tmp_path, "- [Gone](notes/gone.md) — deleted long ago")
    assert ranges(found) == [(INDEX, "PM201", 6, 9, 6, 22)]
    assert found[0].severity.value == "error"
    assert found[0].message == "`notes/gone.md` does not exist"


@pytest.mark.parametrize("line, start, end", [
    ("- <notes/gone.md> — x", 3, 16),
    ("- `notes/gone.md` — x", 3, 16),
    ("- [[notes/gone]] — x", 4, 14),
    ("- [[notes/gone|Gone]] — x", 4, 14),
    ("- notes/gone.md — x", 2, 15),
    ("| notes/gone.md | x |", 2, 15),
    ("- [G](notes/gone.md#part) — x", 6, 24),
])
def test_pm201_every_form(tmp_path, line, start, end):
    assert ranges(route_findings(tmp_path, line)) == [(INDEX, "PM201", 6, start, 6, end)]


def test_pm201_suggests_a_likely_rename(tmp_path):
    found = route_findings(tmp_path, "- [X](projects/x.md) — x", files={"notes/x.md": X})
    assert rows(found) == [(INDEX, 6, "PM201"), ("notes/x.md", 0, "PM202")]
    assert found[0].message == "`projects/x.md` does not exist; did it move to `notes/x.md`?"


def test_pm201_no_suggestion_when_ambiguous(tmp_path):
    found = route_findings(tmp_path, "- [X](projects/x.md) — x", "- [X](notes/x.md) — x",
                           "- [X](ideas/x.md) — x",
                           files={"notes/x.md": X, "ideas/x.md": X})
    assert [f.message for f in found] == ["`projects/x.md` does not exist"]


def test_pm201_case_matters(tmp_path):
    found = route_findings(tmp_path, "- [X](notes/X.md) — x", "- [X](notes/x.md) — x", files={"notes/x.md": X})
    assert rows(found) == [(INDEX, 6, "PM201")]


def test_pm201_not_for_an_unreadable_file(tmp_path, monkeypatch):
    """Running as root, chmod 000 does not stop reads, so the read itself is made to fail:
    `open` in the root-state module raises PermissionError (EACCES) for the one file."""
    root = index_root(tmp_path, "- [X](notes/x.md) — x", files={"notes/x.md": X})
    real_open = os.open

    def failing_open(path, *args, **kwargs):
        if str(path).endswith("notes/x.md"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(root_state_module, "_os_open", failing_open)
    state = scan(root)
    assert unreadable(state) == [("notes/x.md", "Permission denied")]
    assert findings(root) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads files whatever their mode; see the monkeypatched test above")
def test_pm201_not_for_a_chmod_000_file(tmp_path):
    root = index_root(tmp_path, "- [X](notes/x.md) — x", files={"notes/x.md": X})
    path = root / "notes/x.md"
    path.chmod(0)
    try:
        assert unreadable(scan(root)) == [("notes/x.md", "Permission denied")]
        assert findings(root) == []
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_pm201_not_under_a_folder_that_cannot_be_listed(tmp_path, monkeypatch):
    root = index_root(tmp_path, "- [X](notes/x.md) — x", files={"notes/x.md": X})
    real_scandir = os.scandir

    def failing_scandir(path):
        if str(path).endswith("/notes"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(root_state_module.os, "scandir", failing_scandir)
    state = scan(root)
    assert unreadable(state) == [("notes", "Permission denied")]
    assert findings(root) == []


@pytest.mark.parametrize("glob", ["notes/x.md", "notes/*.md", "**/x.md", "notes", "notes/", "notes/**"])
def test_pm201_not_for_an_excluded_file(tmp_path, glob):
    root = index_root(tmp_path, "- [X](notes/x.md) — x", files={"notes/x.md": X})
    found = findings(root, {"exclude": [glob]})
    # An excluded file is never read, so it is neither dangling nor unrouted.
    assert [f for f in found if f.code in ("PM201", "PM202")] == []


# -- PM202 route-missing --------------------------------------------------------------------


def test_pm202_on_title_of_unrouted_file(tmp_path):
    root = index_root(tmp_path, files={"notes/x.md": "\n\n# X note\n\n" + "## Summary\n- a\n- b\n- c\n"})
    found = only(findings(root), "PM2")
    assert ranges(found) == [("notes/x.md", "PM202", 2, 0, 2, 8)]
    assert found[0].severity.value == "warning"


def test_pm202_without_title_on_line_1(tmp_path):
    root = index_root(tmp_path, files={"notes/x.md": "plain prose\n"})
    assert ranges(only(findings(root), "PM202")) == [("notes/x.md", "PM202", 0, 0, 0, 11)]


def test_pm202_for_an_unreadable_unrouted_file(tmp_path, monkeypatch):
    root = index_root(tmp_path, files={"notes/x.md": X})
    real_open = os.open

    def failing_open(path, *args, **kwargs):
        if str(path).endswith("notes/x.md"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(root_state_module, "_os_open", failing_open)
    # Not routed whatever its text: reported on line 1, and nothing else about it.
    assert ranges(findings(root)) == [("notes/x.md", "PM202", 0, 0, 0, 0)]


@pytest.mark.parametrize("rel", ["_core/work.md", "_archive/_trash/", ".hidden/x.md", "notes/.x.md", "notes/data.txt"])
def test_pm202_not_for_files_outside_the_active_zone_or_non_markdown(tmp_path, rel):
    root = index_root(tmp_path, files={rel: "# T\n"})
    assert only(findings(root), "PM202") == []


def test_pm202_not_when_routed_only_in_a_table_or_by_wiki_link(tmp_path):
    root = index_root(tmp_path, "| [[notes/x|X]] | x |", "- [[notes/y]] — y",
                      files={"notes/x.md": X, "notes/y.md": X})
    assert findings(root) == []


def test_pm202_when_route_is_only_in_a_comment_or_fence(tmp_path):
    root = index_root(tmp_path, "<!-- - [X](notes/x.md) — x -->", "```", "- [Y](notes/y.md) — y", "```",
                      files={"notes/x.md": X, "notes/y.md": X})
    assert rows(findings(root)) == [("notes/x.md", 0, "PM202"), ("notes/y.md", 0, "PM202")]


def test_no_route_findings_without_an_index(tmp_path):
    root = make_root(tmp_path, {INDEX: None})
    assert rows(findings(root)) == [(INDEX, 0, "PM002")]


# -- PM203 route-duplicate ------------------------------------------------------------------


def test_pm203_on_the_later_line(tmp_path):
    found = route_findings(tmp_path, "- [X](notes/x.md) — x", "- [[notes/x]] — again",
                           "- `./notes/x.md#part` — and again", files={"notes/x.md": X})
    assert ranges(found) == [(INDEX, "PM203", 7, 4, 7, 11), (INDEX, "PM203", 8, 3, 8, 20)]
    assert [f.message for f in found] == ["`notes/x.md` is already routed on line 7"] * 2
    assert {f.severity.value for f in found} == {"warning"}


def test_pm203_dangling_duplicate_reports_both(tmp_path):
    found = route_findings(tmp_path, "- [G](notes/gone.md) — x", "- notes/gone.md — x")
    assert rows(found) == [(INDEX, 6, "PM201"), (INDEX, 7, "PM201"), (INDEX, 7, "PM203")]


def test_pm203_not_for_different_files_with_the_same_name(tmp_path):
    assert route_findings(tmp_path, "- [X](notes/x.md) — x", "- [X](ideas/x.md) — x",
                          files={"notes/x.md": X, "ideas/x.md": X}) == []


# -- PM204 route-invalid-target -------------------------------------------------------------


@pytest.mark.parametrize("target, message", [
    ("_core/profile.md", "invalid route target `_core/profile.md`: `_core/` is always loaded and is never routed"),
    ("_index.md", "invalid route target `_index.md`: the index cannot route to itself"),
    ("_archive/_index.md", "invalid route target `_archive/_index.md`: the archive index is never loaded"),
    ("_archive/projects/old.md", "invalid route target `_archive/projects/old.md`: archived files are never loaded; recover the file to route it"),
    ("_archive/_trash/projects/old.md", "invalid route target `_archive/_trash/projects/old.md`: trashed files are never loaded"),
    (".obsidian/x.md", "invalid route target `.obsidian/x.md`: hidden files are not memory (`.obsidian` starts with "
     "`.`): remove the route, or rename it so that no part of its path starts with `.`"),
    ("notes/data.csv", "invalid route target `notes/data.csv`: only Markdown files are memory files"),
    ("notes", "invalid route target `notes`: only Markdown files are memory files"),
    ("/home/me/notes/x.md", "invalid route target: absolute and home paths are not memory files; routes are relative to the root"),
    ("~/notes/x.md", "invalid route target: absolute and home paths are not memory files; routes are relative to the root"),
    ("C:/notes/x.md", "invalid route target: absolute and home paths are not memory files; routes are relative to the root"),
    ("mailto:me@example.com", "invalid route target: a URL is not a memory file"),
    ("../elsewhere/x.md", "invalid route target: the path leaves the memory root"),
    ("notes/../../x.md", "invalid route target: the path leaves the memory root"),
    ("https://example.com/x.md", "invalid route target: a URL is not a memory file"),
])
def test_pm204(tmp_path, target, message):
    found = route_findings(tmp_path, f"- [T]({target}) — t",
                           files={"notes/data.csv": "a,b\n", "_archive/projects/old.md": X})
    assert ranges(found) == [(INDEX, "PM204", 6, 6, 6, 6 + len(target))]
    assert found[0].message == message
    assert found[0].severity.value == "error"


def test_pm204_for_bare_and_angle_forms(tmp_path):
    found = route_findings(tmp_path, "- _core/profile.md — x", "- <~/x.md> — x", "- `/abs/x.md` — x")
    assert rows(found) == [(INDEX, 6, "PM204"), (INDEX, 7, "PM204"), (INDEX, 8, "PM204")]


@pytest.mark.parametrize("files", [
    {"notes/dir.md/": None},  # an empty folder
    {"notes/dir.md/a.md": X},  # a folder holding a Markdown file
])
def test_pm204_for_a_folder(tmp_path, files):
    found = route_findings(tmp_path, "- [Dir](notes/dir.md) — x", files=files)
    assert [f for f in found if f.code != "PM202"] == only(found, "PM204")  # not PM201: it exists
    assert ranges(only(found, "PM204")) == [(INDEX, "PM204", 6, 8, 6, 20)]
    assert only(found, "PM204")[0].message == "route target `notes/dir.md` is a folder, not a Markdown file"


def test_pm204_for_a_link_to_a_folder(tmp_path):
    root = index_root(tmp_path, "- [Dir](notes/dir.md) — x", files={"elsewhere/a.md": X})
    os.symlink(root / "elsewhere", root / "notes/dir.md")
    found = only(findings(root), "PM204")
    assert [f.message for f in found] == ["route target `notes/dir.md` is a folder, not a Markdown file"]


def test_pm204_for_a_folder_even_when_excluded(tmp_path):
    # The folder is seen when its parent is listed; only what is in it goes unread.
    root = index_root(tmp_path, "- [Dir](notes/dir.md) — x", files={"notes/dir.md/a.md": X})
    assert rows(only(findings(root, {"exclude": ["notes/dir.md"]}), "PM2")) == [(INDEX, 6, "PM204")]


def test_status_does_not_count_a_routed_folder(tmp_path):
    root = index_root(tmp_path, "- [Dir](notes/dir.md) — x", files={"notes/dir.md/a.md": X})
    report = memory_status(root)
    row = next(r for r in report.routes if r.path == "notes/dir.md")
    assert (row.size, row.note) == (None, "a folder, not a Markdown file")
    assert "notes/dir.md" not in {r.path for r in report.active}
    assert "  notes/dir.md — x  (a folder, not a Markdown file)" in report.text().splitlines()
    assert [p for p, _ in report.unrouted] == ["notes/dir.md/a.md"]


# -- PM205 route-archived -------------------------------------------------------------------


@pytest.mark.parametrize("where", ["_archive/notes/old.md", "_archive/_trash/notes/old.md"])
def test_pm205(tmp_path, where):
    found = route_findings(tmp_path, "- [Old](notes/old.md) — old", files={where: X})
    assert ranges(found) == [(INDEX, "PM205", 6, 8, 6, 20)]
    assert found[0].message == f"`notes/old.md` was archived (now `{where}`): remove this route"
    assert found[0].severity.value == "error"


def test_pm205_not_when_the_file_is_active_again(tmp_path):
    found = route_findings(tmp_path, "- [Old](notes/old.md) — old",
                           files={"_archive/notes/old.md": X, "notes/old.md": X})
    assert found == []


# -- PM206 route-malformed ------------------------------------------------------------------


@pytest.mark.parametrize("line, start, end", [
    ("- [X](notes/x.md)", 6, 16),
    ("- [X](notes/x.md) —", 6, 16),
    ("- [X](notes/x.md) :   ", 6, 16),
    ("- [[notes/x]]", 4, 11),
    ("- notes/x.md", 2, 12),
    ("| notes/x.md | |", 2, 12),
])
def test_pm208_a_route_without_a_description_is_named_for_what_it_is(tmp_path, line, start, end):
    found = route_findings(tmp_path, line, "- [X](notes/x.md) — the real route", files={"notes/x.md": X})
    assert only(found, "PM206") == []
    (f,) = only(found, "PM209")
    assert ranges([f]) == [(INDEX, "PM209", 6, start, 6, end)]
    assert f.message == "route has no description: add a short one after the target (` — what it is`)"
    assert f.severity.value == "warning"


@pytest.mark.parametrize("overrides, expected", [
    ({"select": ["PM206"]}, "warning"),  # a config written before PM209 existed keeps seeing it
    ({"select": ["PM209"]}, "warning"),
    ({"ignore": ["PM206"]}, None),
    ({"ignore": ["PM209"]}, None),
    ({"severity": {"PM206": "information"}}, "information"),
    ({"severity": {"PM206": "information", "PM209": "error"}}, "error"),
])
def test_pm208_follows_settings_written_for_pm206(tmp_path, overrides, expected):
    found = route_findings(tmp_path, "- [X](notes/x.md)", "- [X](notes/x.md) — the real route",
                           files={"notes/x.md": X}, overrides=overrides)
    got = [f.severity.value for f in found if f.code == "PM209"]
    assert got == ([] if expected is None else [expected])


@pytest.mark.parametrize("line, start, end, reason", [
    ("- see [X](notes/x.md) — x", 2, 25, "list item mentions a file but does not start with a target"),
    ("- X note: notes/x.md", 2, 20, "list item mentions a file but does not start with a target"),
    ("- X note → [[notes/x]]", 2, 22, "list item mentions a file but does not start with a target"),
    ("- ![X](notes/x.md) — x", 2, 22, "list item mentions a file but does not start with a target"),
    ("1. Read [the note](notes/x.md) first", 3, 36, "list item mentions a file but does not start with a target"),
])
def test_pm206(tmp_path, line, start, end, reason):
    found = only(route_findings(tmp_path, line, "- [X](notes/x.md) — the real route",
                                files={"notes/x.md": X}), "PM206")
    assert ranges(found) == [(INDEX, "PM206", 6, start, 6, end)]
    assert found[0].message == reason
    assert found[0].severity.value == "warning"


@pytest.mark.parametrize("line", [
    "- just a prose list item",
    "- Ideas for later: nothing yet",
    "- `code` — an inline code span that is not a path",
    "- see the notes folder",
    "Prose with a [link](notes/x.md) outside a list.",
    "> quoted prose about notes/x.md",
])
def test_pm206_not_for_prose(tmp_path, line):
    assert route_findings(tmp_path, line, "- [X](notes/x.md) — x", files={"notes/x.md": X}) == []


# -- PM207 route-description-long -----------------------------------------------------------


@pytest.mark.parametrize("length, fires", [(159, False), (160, False), (161, True)])
def test_pm207(tmp_path, length, fires):
    line = "- [X](notes/x.md) — " + "d" * length
    found = route_findings(tmp_path, line, files={"notes/x.md": X})
    assert ranges(found) == ([(INDEX, "PM207", 6, 0, 6, len(line))] if fires else [])
    if fires:
        assert found[0].severity.value == "information"
        assert found[0].message == f"route description is {length} characters; keep it under 160"


def test_pm207_counts_characters_not_bytes(tmp_path):
    line = "- [X](notes/x.md) — " + "长" * 160
    assert route_findings(tmp_path, line, files={"notes/x.md": X}) == []


def test_pm207_table_description_is_the_next_cell(tmp_path):
    line = "| [X](notes/x.md) | " + "d" * 161 + " |"
    assert rows(route_findings(tmp_path, line, files={"notes/x.md": X})) == [(INDEX, 6, "PM207")]


# -- generated route lines round-trip -------------------------------------------------------

_SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_四川笔记", min_size=1, max_size=10).filter(
    lambda s: not s.startswith("-"))
_DESCRIPTION = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789,.()'/&四川家常菜",
                       min_size=1, max_size=60).map(str.strip).filter(bool)
_SEPARATORS = [" — ", " – ", " - ", ": ", "：", " | "]
_FORMS = ["link", "link-dot", "link-angle", "link-escaped", "angle", "code", "wiki", "wiki-md", "wiki-label",
          "bare", "table-link", "table-wiki-label", "table-bare"]


# CommonMark's HTML block start conditions 1 and 6: these names after `<` and before a space.
_HTML_BLOCK_TAGS = set("""address article aside base basefont blockquote body caption center col colgroup dd details
dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html
iframe legend li link main menu menuitem nav noframes ol optgroup option p param search section summary table
tbody td tfoot th thead title tr track ul pre script style textarea""".split())


@settings(max_examples=300, deadline=None)
@given(segments=st.lists(_SEGMENT, min_size=1, max_size=3), space=st.booleans(),
       form=st.sampled_from(_FORMS), separator=st.sampled_from(_SEPARATORS), description=_DESCRIPTION,
       marker=st.sampled_from(["-", "*", "+", "1.", "12)"]), fragment=st.sampled_from(["", "#part", "#节"]))
def test_generated_routes_round_trip(segments, space, form, separator, description, marker, fragment):
    if space and form in ("link-angle", "link-escaped", "angle", "wiki", "wiki-label"):
        segments = segments[:-1] + [segments[-1] + " file"]
    path = "/".join(segments) + ".md"
    # `- <p file.md>` starts an HTML block in CommonMark (a `<p` tag with an attribute), not a
    # route: a bracketed name whose first word is an HTML block tag is not a target.
    assume(not (form == "angle" and " " in segments[0] and segments[0].split(" ")[0].lower() in _HTML_BLOCK_TAGS))
    stem = path[:-3]
    if form == "link-escaped":
        written = path.replace(" ", "%20")
    elif form == "link-dot":
        written = "./" + path
    elif form in ("wiki", "wiki-label", "table-wiki-label"):
        written = stem
    else:
        written = path
    target = {
        "link": f"[Label]({written}{fragment})", "link-dot": f"[Label]({written}{fragment})",
        "link-angle": f"[Label](<{written}{fragment}>)", "link-escaped": f"[Label]({written}{fragment})",
        "angle": f"<{written}{fragment}>", "code": f"`{written}{fragment}`",
        "wiki": f"[[{written}{fragment}]]", "wiki-md": f"[[{written}{fragment}]]",
        "wiki-label": f"[[{written}{fragment}|Label]]", "bare": f"{written}{fragment}",
        "table-link": f"[Label]({written}{fragment})", "table-wiki-label": f"[[{written}{fragment}|Label]]",
        "table-bare": f"{written}{fragment}",
    }[form]
    if form.startswith("table"):
        line = f"| {target} | {description} |"
        expected_description = description
    else:
        line = f"{marker} {target}{separator}{description}"
        expected_description = description

    model = parse_index(doc("# Index\n\n" + line + "\n"))
    assert model.malformed == ()
    (route,) = model.routes
    assert route.line == 2
    assert route.path == path
    assert route.problem is None
    assert route.description == expected_description
    assert line[route.start:route.end] == route.written
    assert route.written in (written + fragment, written)


# -- routes pmem writes read back (issue 13) ------------------------------------------------

_HOSTILE = st.text(alphabet="abcXYZ 01-_.()[]#%&'!~,;:：@+=四川笔记ノート", min_size=1, max_size=14).map(
    lambda t: t.strip()).filter(lambda t: t and t not in (".", "..") and not t.startswith((".", "-")))


@settings(max_examples=300, deadline=None)
@given(folder=st.sampled_from(["notes", "projects/2026 plans", "笔记", "a (b)"]), name=_HOSTILE,
       style=st.sampled_from(["link", "code", "wiki", "angle", "bare", "none"]),
       title=st.text(alphabet="abc []()`\\*_<>|四", max_size=12))
def test_a_route_pmem_writes_parses_back_to_the_same_path(folder, name, style, title):
    from pmem_lsp.engine.index_edit import format_target, insert_route, propose_route

    path = f"{folder}/{name}.md"
    existing = {"link": "- [A](notes/a.md) — a", "code": "- `notes/a.md` — a", "wiki": "- [[notes/a]] — a",
                "angle": "- <notes/a.md> — a", "bare": "- notes/a.md — a", "none": ""}[style]
    index = f"# Memory index\n\n## Notes\n{existing}\n"
    line = propose_route(index, path, title, "a description")
    model = parse_index(doc(index.replace(existing, line) if existing else index + line + "\n"))
    assert path in [r.path for r in model.routes], line
    assert not [m for m in model.malformed if m.line == model.routes[-1].line], line
    new_index = insert_route(index, path, line)
    assert path in [r.path for r in parse_index(doc(new_index)).routes]
    for form in ("link", "code", "wiki", "angle", "bare"):
        target = format_target(form, path, title)
        assert [r.path for r in parse_index(doc(f"- {target} — x\n")).routes] == [path], target


# -- PM201 on a `%` route whose literal name exists (issue 26) ---------------------------------

@pytest.mark.parametrize("line", [
    "- `notes/19%22 Server Rack.md` — the rack",
    "- [Rack](<notes/19%22 Server Rack.md>) — the rack",
    "- [Rack](notes/19%22%20Server%20Rack.md) — the rack",
    "- [[notes/19%22 Server Rack]] — the rack",
])
def test_pm201_names_the_file_whose_literal_name_holds_the_escape(tmp_path, line):
    from engine_helpers import scan
    from pmem_lsp.engine.index_routes import parse_index
    from pmem_lsp.engine.memory_file import MemoryFile
    from pmem_lsp.engine.rules.routes import FIXES
    literal = "notes/19%22 Server Rack.md"
    root = index_root(tmp_path, line, files={literal: X})
    found = [f for f in findings(root) if f.code == "PM201"]
    assert [f.message for f in found] == [
        '`notes/19" Server Rack.md` does not exist, but `notes/19%22 Server Rack.md` does: the route\'s `%` '
        "escapes are decoded; write each `%` of the name as `%25` to route that file"]
    import datetime as dt
    fixes = FIXES["PM201"](scan(root), found[0], dt.date(2026, 12, 1))
    assert fixes[0].title == f"Point to `{literal}`" and fixes[0].preferred
    (edit,) = fixes[0].edits
    index = (root / INDEX).read_text().split("\n")
    fixed = index[edit.line][:edit.col] + edit.new_text + index[edit.line][edit.end_col:]
    assert [r.path for r in parse_index(MemoryFile(fixed + "\n")).routes] == [literal]


def test_pm201_without_a_literal_twin_keeps_its_message(tmp_path):
    found = [f for f in route_findings(tmp_path, "- `notes/19%22 Rack.md` — the rack") if f.code == "PM201"]
    assert [f.message for f in found] == ['`notes/19" Rack.md` does not exist']


# -- issue 44: notes named with `?` and `#`; a sentence that ends in a path -----------------------


@pytest.mark.parametrize("name, written, escaped", [
    ("notes/Rust ?.md", "- <notes/Rust ?.md> — a question about Rust", "notes/Rust %3F.md"),
    ("notes/$?.md", "- [exit code](notes/$?.md) — the shell's last status", "notes/$%3F.md"),
    ("notes/# Lambda.md", "- `notes/# Lambda.md` — lambdas", "notes/%23 Lambda.md"),
    ("$?.md", "- [exit code]($?.md) — the shell's last status", "./$%3F.md"),  # read as `$`: "absolute"
    ("# Lambda.md", "- <# Lambda.md> — lambdas", "%23 Lambda.md"),  # read as empty
])
def test_pm204_on_a_name_with_query_or_fragment_marks_says_how_to_write_it(tmp_path, name, written, escaped):
    found = only(route_findings(tmp_path, written, files={name: X}), "PM204")
    assert len(found) == 1
    message = found[0].message
    assert "only Markdown files" not in message
    assert "%3F" in message and "%23" in message and escaped in message and f"`{name}` is there" in message
    assert found[0].data["escaped"] == escaped


def test_a_sentence_ending_in_a_path_is_malformed_with_the_route_as_its_fix(tmp_path):
    import datetime as dt

    from pmem_lsp.engine.catalogue import quick_fixes

    root = index_root(tmp_path, "- Notes for the launch are in projects/launch.md",
                      "- The launch plan lives in projects/launch plan.md",
                      files={"projects/launch.md": X, "projects/launch plan.md": X})
    found = [f for f in findings(root) if f.code.startswith("PM2") and f.path == INDEX]
    assert [(f.code, f.line) for f in found] == [("PM206", 6), ("PM206", 7)], rows(found)
    assert "projects/launch.md" in found[0].message and found[0].severity.value == "warning"
    state = scan(root)
    fixes = [e.new_text for f in found for fx in quick_fixes(state, f, dt.date(2026, 12, 1)) for e in fx.edits]
    assert fixes == ["projects/launch.md — Notes for the launch", "`projects/launch plan.md` — The launch plan"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["notes", "for", "the", "launch", "are", "in", "kept", "plan", "draft", "see"]),
                min_size=3, max_size=8),
       st.sampled_from(["projects/launch.md", "notes/a.md", "areas/home/plan.md"]))
def test_prose_then_a_path_never_becomes_a_route_to_a_sentence(words, path):
    """Generated sentences that end in a path: never a route whose path holds the sentence."""
    text = "# Memory index\n\n- " + " ".join(words) + " in " + path + "\n"
    model = parse_index(doc(text))
    assert all(" " not in (r.path or "").split("/")[0] for r in model.routes), (text, model.routes)


def test_a_folder_with_spaces_stays_a_route(tmp_path):
    assert route_findings(tmp_path, "- Plugins (core)/Daily notes.md — daily notes",
                          files={"Plugins (core)/Daily notes.md": X}) == []


@pytest.mark.parametrize("name, route", [
    ("notes/Rust ?.md", "- <notes/Rust %3F.md> — a question about Rust"),
    ("$?.md", "- [exit code](./$%3F.md) — the shell's last status"),
    ("notes/# Lambda.md", "- `notes/%23 Lambda.md` — lambdas"),
])
def test_the_escaped_form_pm204_suggests_routes_the_note(tmp_path, name, route):
    assert route_findings(tmp_path, route, files={name: X}) == []
