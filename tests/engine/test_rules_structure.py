"""PM001–PM006: the shape of the root, and the baseline and demo roots as a whole."""

from __future__ import annotations

import shutil

import pytest

from engine_helpers import findings, only, problems, ranges, rows, scan
from pmem_lsp.engine.zones import INDEX
from roots import BASELINE, DEMO, demo_copy, make_root


def unreadable(state) -> list[tuple[str, str | None]]:
    return [(p.path, p.reason) for p in state.read_problems() if p.unreadable]


# -- the well-formed baseline ---------------------------------------------------------------


def test_baseline_has_no_findings_at_all(tmp_path):
    root = make_root(tmp_path)
    assert findings(root) == []
    state = scan(root)
    assert sorted(state.files) == ["_archive/_index.md", "_core/preferences.md", "_core/profile.md",
                                  "_index.md", "notes/beta.md", "projects/alpha.md"]
    assert "_archive/_trash" in state.dirs and unreadable(state) == []


def test_baseline_with_more_files_and_hidden_folders_is_clean(tmp_path):
    root = make_root(tmp_path, {
        "ideas/deep/nested/idea.md": BASELINE["projects/alpha.md"],
        ".git/config": "[core]\n",
        ".obsidian/workspace.json": "{}",
        "notes/.draft.md": "no summary, not routed, hidden",
        ".pmem.toml": "",
    })
    assert problems(findings(root)) == [] and findings(root) == []


# -- PM001 lifecycle-missing ----------------------------------------------------------------


@pytest.mark.parametrize("remove, missing", [
    (["_archive/_trash"], "_archive/_trash/"),
    (["_archive/_index.md"], "_archive/_index.md"),
    (["_archive/_trash", "_archive/_index.md"], "_archive/_trash/, _archive/_index.md"),
    (["_archive"], "_archive/, _archive/_trash/, _archive/_index.md"),
])
def test_pm001(tmp_path, remove, missing):
    root = make_root(tmp_path)
    for rel in remove:
        path = root / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    found = findings(root)
    assert ranges(found) == [(INDEX, "PM001", 0, 0, 0, 0)]
    assert found[0].message == f"lifecycle structure incomplete, missing {missing}: run `pmem upgrade`"
    assert found[0].severity.value == "warning"


def test_pm001_and_pm002_on_index_line_1_even_without_index(tmp_path):
    root = make_root(tmp_path, {"_archive": None, "_index.md": None})
    assert ranges(findings(root)) == [(INDEX, "PM001", 0, 0, 0, 0), (INDEX, "PM002", 0, 0, 0, 0)]


def test_pm001_not_when_the_lifecycle_folders_are_empty(tmp_path):
    root = make_root(tmp_path, {"_archive/_index.md": ""})
    assert findings(root) == []


# -- PM002 index-missing --------------------------------------------------------------------


def test_pm002(tmp_path):
    root = make_root(tmp_path, {"_index.md": None})
    found = findings(root)
    # Without an index, no route is checked: PM202 is not reported for every file.
    assert ranges(found) == [(INDEX, "PM002", 0, 0, 0, 0)]
    assert found[0].severity.value == "warning"


def test_pm002_not_without_active_files(tmp_path):
    root = make_root(tmp_path, {"_index.md": None, "projects/alpha.md": None, "notes/beta.md": None})
    assert findings(root) == []


def test_pm002_not_for_non_markdown_active_files(tmp_path):
    root = make_root(tmp_path, {"_index.md": None, "projects/alpha.md": None, "notes/beta.md": None,
                                "notes/data.csv": "a,b\n"})
    assert rows(findings(root)) == [("notes/data.csv", 0, "PM005")]


# -- PM003 core-missing ---------------------------------------------------------------------


@pytest.mark.parametrize("remove", [["_core/profile.md"], ["_core/preferences.md"],
                                    ["_core/profile.md", "_core/preferences.md"], ["_core"]])
def test_pm003_one_finding_per_missing_file(tmp_path, remove):
    root = make_root(tmp_path, {rel: None for rel in remove})
    expected = [rel for rel in ("_core/preferences.md", "_core/profile.md")
                if rel in remove or "_core" in remove]
    found = findings(root)
    assert ranges(found) == [(rel, "PM003", 0, 0, 0, 0) for rel in expected]
    assert {f.severity.value for f in found} == {"information"}


def test_pm003_not_for_other_core_files_or_case(tmp_path):
    root = make_root(tmp_path, {"_core/work.md": "# Work\n"})
    assert findings(root) == []


# -- PM004 core-too-large -------------------------------------------------------------------


def test_pm004_on_largest_core_file_title(tmp_path):
    big = "# Work history\n\n" + "- a line of baseline context that is long enough.\n" * 170
    root = make_root(tmp_path, {"_core/work.md": big})
    found = findings(root)
    assert ranges(found) == [("_core/work.md", "PM004", 0, 0, 0, 14)]
    total = sum(p.stat().st_size for p in (root / "_core").rglob("*") if p.is_file())
    size = (root / "_core/work.md").stat().st_size
    assert total > 8192
    assert found[0].message == (f"`_core/` is {total} bytes, over 8192 (largest file: {size} bytes); "
                                "it is loaded on every activation")


def test_pm004_threshold_is_inclusive_and_configurable(tmp_path):
    root = make_root(tmp_path)
    total = sum(p.stat().st_size for p in (root / "_core").rglob("*") if p.is_file())
    assert only(findings(root, {"core": {"maxBytes": total}}), "PM004") == []
    found = only(findings(root, {"core": {"maxBytes": total - 1}}), "PM004")
    # The larger of the two baseline files, at its title.
    assert ranges(found) == [("_core/profile.md", "PM004", 0, 0, 0, 9)]


def test_pm004_without_title_is_on_line_1(tmp_path):
    root = make_root(tmp_path, {"_core/notes.md": "x" * 9000 + "\n"})
    assert ranges(only(findings(root), "PM004")) == [("_core/notes.md", "PM004", 0, 0, 0, 9000)]


# -- PM005 raw-material ---------------------------------------------------------------------


@pytest.mark.parametrize("rel", ["notes/data.csv", "projects/photo.jpg", "_core/cv.pdf",
                                 "_archive/projects/dump.json", "README", "notes/script.py"])
def test_pm005_non_markdown(tmp_path, rel):
    root = make_root(tmp_path, {rel: "raw"})
    found = [f for f in findings(root) if f.code == "PM005"]
    assert ranges(found) == [(rel, "PM005", 0, 0, 0, 0)]
    assert found[0].severity.value == "warning"


def test_pm005_oversized_markdown_on_title(tmp_path):
    text = "# Big export\n\n" + ("- row of exported data, not memory\n" * 7800)
    assert len(text.encode()) > 256 * 1024
    root = make_root(tmp_path, {"notes/big.md": text})
    found = only(findings(root), "PM005")
    assert ranges(found) == [("notes/big.md", "PM005", 0, 0, 0, 12)]
    assert found[0].message.startswith("266 KiB file in memory (over 256 KiB)")


def test_pm005_size_limit_is_configurable_and_exclusive(tmp_path):
    head = "# K\n\n## Summary\n- a\n- b\n- c\n"
    root = make_root(tmp_path, {"notes/k.md": head + "x" * (1024 - len(head))})
    assert (root / "notes/k.md").stat().st_size == 1024
    assert only(findings(root, {"largeFile": {"kb": 1}}), "PM005") == []
    (root / "notes/k.md").write_text((root / "notes/k.md").read_text() + "y")
    assert rows(only(findings(root, {"largeFile": {"kb": 1}}), "PM005")) == [("notes/k.md", 0, "PM005")]


def test_pm005_not_for_hidden_or_settings_files(tmp_path):
    root = make_root(tmp_path, {".pmem.toml": "", ".git/HEAD": "ref", "notes/.cache/x.bin": "x"})
    assert findings(root) == []


# -- PM006 index-too-long -------------------------------------------------------------------


def _index_with(lines: int) -> str:
    head = "# Index\n\n## Notes\n- [B](notes/beta.md) — b\n- [A](projects/alpha.md) — a\n"
    return head + "\n" * (lines - 5)


@pytest.mark.parametrize("n, fires", [(200, False), (201, True)])
def test_pm006_line_limit(tmp_path, n, fires):
    root = make_root(tmp_path, {"_index.md": _index_with(n)})
    found = findings(root)
    assert ranges(found) == ([(INDEX, "PM006", 0, 0, 0, 0)] if fires else [])
    if fires:
        size = (root / INDEX).stat().st_size
        assert found[0].message.startswith(f"`_index.md` has 201 lines and {size} bytes (limits: 200 lines, 16384 bytes)")


def test_pm006_byte_limit(tmp_path):
    root = make_root(tmp_path)
    size = (root / INDEX).stat().st_size
    assert findings(root, {"index": {"maxBytes": size}}) == []
    assert rows(findings(root, {"index": {"maxBytes": size - 1}})) == [(INDEX, 0, "PM006")]
    assert rows(findings(root, {"index": {"maxLines": 3}})) == [(INDEX, 0, "PM006")]


def test_pm006_default_bytes(tmp_path):
    index = "# Index\n\n- [B](notes/beta.md) — b\n- [A](projects/alpha.md) — a\n\n" + ("<!-- " + "x" * 200 + " -->\n") * 80
    root = make_root(tmp_path, {"_index.md": index})
    assert (root / INDEX).stat().st_size > 16384
    assert rows(findings(root)) == [(INDEX, 0, "PM006")]


# -- the demo root --------------------------------------------------------------------------

DEMO_FINDINGS = [  # 1-based lines, as `pmem check` prints them
    ("_index.md", 13, "PM201", "error"),
    ("notes/meal-planning.md", 5, "PM106", "warning"),
    ("notes/reading-list.md", 1, "PM100", "hint"),
    ("notes/reading-list.md", 1, "PM202", "warning"),
    ("notes/travel-2026.md", 20, "PM402", "warning"),
    ("projects/garden-sensors.md", 6, "PM102", "warning"),
    ("projects/invoice-automation.md", 15, "PM101", "warning"),
    ("projects/sourdough-blog.md", 10, "PM104", "warning"),
]


def test_demo_gives_exactly_its_deliberate_findings():
    found = findings(DEMO)
    assert [(f.path, f.line + 1, f.code, f.severity.value) for f in found] == DEMO_FINDINGS
    assert [(f.col, f.end_col) for f in found] == [
        (21, 49), (0, 8), (0, 14), (0, 14), (60, 75), (0, 10), (0, 10), (2, 6)]


def _replace(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_demo_with_its_problems_fixed_is_clean(tmp_path):
    root = tmp_path / "demo"
    demo_copy(root)
    # PM201: drop the route to the file that does not exist.
    _replace(root / "_index.md", "- [Website redesign](projects/website-redesign.md) — new layout and typography for the cooking blog\n", "")
    # PM100 + PM202: give the reading list a summary and a route.
    _replace(root / "notes/reading-list.md", "# Reading list\n\n",
             "# Reading list\n\n## Summary\n- Six books queued, data engineering first.\n"
             "- Re-reading chapters 8–9 of Fundamentals of Data Engineering.\n"
             "- Two books read this year.\n\n## About\n")
    _replace(root / "_index.md", "- `notes/sichuan-cooking.md`",
             "- [Reading list](notes/reading-list.md) — books and long articles in priority order\n"
             "- `notes/sichuan-cooking.md`")
    # PM106: rename the TL;DR heading.
    _replace(root / "notes/meal-planning.md", "## TL;DR\n", "## Summary\n")
    # PM402: unlink the missing packing list.
    _replace(root / "notes/travel-2026.md", "the [packing list](packing-list.md)", "the packing list")
    # PM102: a third bullet.
    _replace(root / "projects/garden-sensors.md", "home PostgreSQL when online.\n",
             "home PostgreSQL when online.\n- Goal: a season of data to compare bed layouts.\n")
    # PM101: move the summary up, right after the metadata.
    path = root / "projects/invoice-automation.md"
    text = path.read_text(encoding="utf-8")
    start = text.index("## Summary\n")
    end = text.index("## Decisions\n")
    block = text[start:end]
    text = text[:start] + text[end:]
    text = text.replace("Updated: 2026-11-20\n\n", "Updated: 2026-11-20\n\n" + block + "## Background\n", 1)
    path.write_text(text, encoding="utf-8")
    # PM104: state a fact instead of TODO.
    _replace(root / "projects/sourdough-blog.md", "- TODO\n", "- Parts 4–8 are outlined but not drafted.\n")

    found = findings(root)
    assert problems(found) == []
    assert found == []


def test_demo_check_does_not_modify_the_demo():
    before = {p: p.read_bytes() for p in DEMO.rglob("*") if p.is_file()}
    findings(DEMO)
    assert {p: p.read_bytes() for p in DEMO.rglob("*") if p.is_file()} == before


# -- folders the scan could not list ---------------------------------------------------------


@pytest.mark.parametrize("folder", ["_core", "_archive"])
def test_pm001_pm003_not_for_a_folder_that_cannot_be_listed(tmp_path, monkeypatch, folder):
    """Running as root, a folder's mode does not stop listing it, so `os.scandir` is made to
    fail (EACCES) for that one folder: what is inside is unknown, not missing."""
    import os

    import pmem_lsp.engine.root_state as root_state_module

    root = make_root(tmp_path)
    real_scandir = os.scandir

    def failing_scandir(path):
        if str(path).endswith("/" + folder):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(root_state_module.os, "scandir", failing_scandir)
    state = scan(root)
    assert unreadable(state) == [(folder, "Permission denied")]
    assert findings(root) == []


def test_pm005_never_on_the_indexes_even_when_oversized(tmp_path):
    # An index too long is PM006 ("agents truncate long indexes"); "raw material, keep it in
    # its project" is the wrong advice for it (issue 13).
    big = "# Memory index\n\n" + "".join(f"- [N{i}](notes/n{i}.md) — note {i} " + "x" * 200 + "\n" for i in range(1400))
    archive = "# Archive index\n\n" + "Some text about old things. " * 12000 + "\n"
    root = make_root(tmp_path, {"_index.md": big, "_archive/_index.md": archive})
    codes = {(f.path, f.code) for f in findings(root, {"select": ["PM005", "PM006"]})}
    assert codes == {("_index.md", "PM006")}
