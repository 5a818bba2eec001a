"""What a move does around it (engine/lifecycle/consequences.py): the links an archive or a
delete breaks, listed in the preview and as findings; the folders a recover empties, removed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from engine_helpers import findings
from pmem_lsp.engine.lifecycle.consequences import links_broken_by, prune_emptied
from pmem_lsp.engine.lifecycle.fs_applier import run_steps
from pmem_lsp.engine.lifecycle.operations import context, make_plan
from pmem_lsp.engine.lifecycle.preview import Request, preview, save_findings
from roots import base_files, demo_copy, summary_file, write_root

TODAY = dt.date(2026, 12, 1)


def linked_root(tmp_path: Path) -> Path:
    files = base_files()
    files["_index.md"] += ("- [Old](projects/old.md) — old\n- [A](notes/a.md) — a\n- [B](notes/b.md) — b\n"
                           "- [C](notes/c.md) — c\n")
    files["projects/old.md"] = summary_file("Old", extra="See [a](../notes/a.md).\n")
    files["notes/a.md"] = summary_file("A", extra="Back to [old](../projects/old.md#details) and [again](../projects/old).\n")
    files["notes/b.md"] = summary_file("B", extra="Nothing about it; [a](a.md) only. old.md is a word here.\n")
    files["notes/c.md"] = summary_file("C", extra="```\n[old](../projects/old.md)\n```\nIn a fence: no link.\n")
    files["_core/profile.md"] = "# Profile\n\nName: Test Person\n\nMy [old project](../projects/old.md).\n"
    files["_archive/projects/older.md"] = summary_file("Older", extra="[old](../../projects/old.md)\n")
    return write_root(tmp_path / "memory", files)


def test_the_links_an_archive_breaks_are_those_pm402_reports_after_it(tmp_path: Path):
    root = linked_root(tmp_path)
    broken = links_broken_by(root, ["projects/old.md"])
    assert [(b.path, b.line, b.target) for b in broken] == [
        ("_core/profile.md", 4, "projects/old.md"),
        ("notes/a.md", 13, "projects/old.md"), ("notes/a.md", 13, "projects/old.md")]
    # The oracle: archive it and ask PM402 (links in archived files and fences are not read).
    plan = make_plan(context(root, TODAY), "archive", "projects/old.md")
    run_steps(root, plan)
    after = sorted((f.path, f.line, f.col) for f in findings(root) if f.code == "PM402")
    assert after == sorted((b.path, b.line, b.start) for b in broken)


def test_the_archive_preview_and_its_findings_list_the_broken_links(tmp_path: Path):
    root = linked_root(tmp_path)
    shown = preview(context(root, TODAY), Request("archive", "projects/old.md"))
    text = shown.plan.preview
    assert "  links that will break: 3 in 2 active files" in text
    assert "    notes/a.md:14 → projects/old.md\n" in text and "    _core/profile.md:5 → projects/old.md\n" in text
    assert text.index("links that will break") < text.index("To undo")
    found = save_findings(root, shown)
    assert [(f.code, f.path, f.line) for f in found] == [("PM402", "_core/profile.md", 4), ("PM402", "notes/a.md", 13),
                                                         ("PM402", "notes/a.md", 13)]
    assert all("will not exist after this archive" in f.message for f in found)


def test_an_archive_that_breaks_nothing_says_nothing_about_links(tmp_path: Path):
    root = linked_root(tmp_path)
    shown = preview(context(root, TODAY), Request("archive", "notes/c.md"))
    assert "links that will break" not in shown.plan.preview
    assert save_findings(root, shown) == []


def test_a_long_list_is_cut_in_the_text_but_kept_in_the_findings(tmp_path: Path):
    files = base_files()
    files["notes/hub.md"] = summary_file("Hub")
    files["_index.md"] += "- [Hub](notes/hub.md) — hub\n"
    for i in range(14):
        files[f"notes/n{i:02}.md"] = summary_file(f"N{i}", extra="[hub](hub.md)\n")
        files["_index.md"] += f"- [N{i}](notes/n{i:02}.md) — n\n"
    root = write_root(tmp_path / "memory", files)
    shown = preview(context(root, TODAY), Request("archive", "notes/hub.md"))
    assert "links that will break: 14 in 14 active files" in shown.plan.preview
    assert "    … and 4 more" in shown.plan.preview and "notes/n10.md" not in shown.plan.preview
    assert len(save_findings(root, shown)) == 14


def test_the_demo_archive_of_airflow_tips_names_both_broken_links(tmp_path: Path):
    root = demo_copy(tmp_path / "memory")
    shown = preview(context(root, TODAY), Request("archive", "notes/airflow-tips.md"))
    assert {(f.path, f.code) for f in save_findings(root, shown)} == {
        ("projects/conference-talk.md", "PM402"), ("projects/retail-pipeline.md", "PM402")}


def test_a_delete_lists_links_to_the_archived_copy(tmp_path: Path):
    root = linked_root(tmp_path)
    run_steps(root, make_plan(context(root, TODAY), "archive", "notes/c.md"))
    (root / "notes/b.md").write_text(summary_file("B", extra="[archived c](../_archive/notes/c.md)\n"), encoding="utf-8")
    shown = preview(context(root, TODAY), Request("delete", "notes/c.md"))
    assert "    notes/b.md:14 → _archive/notes/c.md" in shown.plan.preview
    assert [(f.path, f.code) for f in save_findings(root, shown)] == [("notes/b.md", "PM402")]


def test_recover_removes_the_folders_it_emptied_in_the_archive(tmp_path: Path):
    files = base_files()
    files["_index.md"] += "- [Deep](projects/x/y/deep.md) — d\n- [Kept](projects/x/kept.md) — k\n"
    files["projects/x/y/deep.md"] = summary_file("Deep")
    files["projects/x/kept.md"] = summary_file("Kept")
    root = write_root(tmp_path / "memory", files)
    for rel in ("projects/x/y/deep.md", "projects/x/kept.md"):
        run_steps(root, make_plan(context(root, TODAY), "archive", rel))
    run_steps(root, make_plan(context(root, TODAY), "recover", "projects/x/y/deep.md"))
    # `y/` emptied and removed; `x/` still holds an archived file.
    assert not (root / "_archive/projects/x/y").exists()
    assert (root / "_archive/projects/x/kept.md").is_file()
    run_steps(root, make_plan(context(root, TODAY), "recover", "projects/x/kept.md"))
    assert sorted(p.name for p in (root / "_archive").iterdir()) == ["_index.md", "_trash"]
    assert (root / "projects/x/y/deep.md").is_file() and (root / "projects/x/kept.md").is_file()


def test_pruning_never_removes_the_lifecycle_folders_or_a_folder_with_anything_in_it(tmp_path: Path):
    root = write_root(tmp_path / "memory", {**base_files(), "_archive/_trash/notes/": None, "_archive/notes/.keep": "x"})
    (root / "_archive/_trash/notes").mkdir(parents=True, exist_ok=True)
    assert prune_emptied(root, "_archive/_trash/notes/gone.md") == ["_archive/_trash/notes"]
    assert (root / "_archive/_trash").is_dir()
    assert prune_emptied(root, "_archive/notes/gone.md") == []  # a hidden file is still a file
    assert (root / "_archive/notes/.keep").exists()
    assert prune_emptied(root, "_archive/gone.md") == [] and (root / "_archive").is_dir()
    assert prune_emptied(root, "notes/gone.md") == []  # only `_archive/` is tidied


def test_a_sessions_state_is_used_as_it_is_with_its_buffers(tmp_path: Path):
    """The server passes its scanned state (no rescan): a link typed in an unsaved buffer counts."""
    from pmem_lsp.engine.root_state import RootState
    from pmem_lsp.engine.settings import Settings

    root = linked_root(tmp_path)
    state = RootState.scan(root, Settings())
    state.set_buffer("notes/b.md", summary_file("B", extra="Now [old](../projects/old.md).\n"))
    assert [b.path for b in links_broken_by(root, ["projects/old.md"], state)] == [
        "_core/profile.md", "notes/a.md", "notes/a.md", "notes/b.md"]
    assert "notes/b.md" not in [b.path for b in links_broken_by(root, ["projects/old.md"])]  # the disk


def _trashed_long_ago(tmp_path: Path, rel: str) -> Path:
    files = base_files()
    files["_index.md"] += f"- [Deep]({rel}) — d\n"
    files[rel] = summary_file("Deep")
    root = write_root(tmp_path / "memory", files)
    run_steps(root, make_plan(context(root, TODAY), "archive", rel))
    run_steps(root, make_plan(context(root, TODAY), "delete", rel))
    index = root / "_archive/_index.md"
    index.write_text(index.read_text().replace((TODAY + dt.timedelta(days=30)).isoformat(), "2020-01-01"))
    return root


def test_purge_removes_the_folders_it_emptied_in_the_trash(tmp_path: Path):
    from pmem_lsp.engine.lifecycle.fs_applier import run_steps

    for runner, name in ((run_steps, "plain"), (lambda r, p: run_steps(r, p, undo=True), "with-undo")):
        root = _trashed_long_ago(tmp_path / name, "projects/x/y/deep.md")
        assert (root / "_archive/_trash/projects/x/y/deep.md").is_file()
        runner(root, make_plan(context(root, TODAY), "purge", "projects/x/y/deep.md"))
        assert sorted(p.name for p in (root / "_archive/_trash").iterdir()) == [], name
        assert sorted(p.name for p in (root / "_archive").iterdir()) == ["_index.md", "_trash"], name
