"""Lifecycle plans carried out by the filesystem applier (docs/design.md §2.3, §2.4, §3).

Each test plans on a real root (`context(root, today)`), applies through the one door (`execute`; the applier alone, `run_steps`, where a test is about the applier), and looks
at the bytes on disk: records, route lines, line endings, what is left untouched.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path

import pytest

from engine_helpers import findings, problems, rows
from pmem_lsp.engine.archive_index import parse_archive_index
from pmem_lsp.engine.lifecycle.execute import Confirmed, Tokened, execute
from pmem_lsp.engine.lifecycle.fs_applier import ApplyError, run_steps
from pmem_lsp.engine.lifecycle.operations import context, make_plan, replan
from pmem_lsp.engine.lifecycle.plan import MakeDir, Move, Remove, WriteText
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.safety import CHANGED, COLLISION, SETTINGS, STATE, STRUCTURE, Refusal
from pmem_lsp.engine.memory_file import MemoryFile
from roots import active_file, make_root

AI = "_archive/_index.md"
ARCHIVED_ON = dt.date(2026, 11, 20)
DELETED_ON = dt.date(2026, 11, 25)
RECOVER_BY = "2026-12-25"
ALPHA = active_file("Alpha project")
INDEX = (
    "# Memory index\n"
    "\n"
    "Routes to active memory.\n"
    "\n"
    "## Projects\n"
    "- [Alpha project](projects/alpha.md) — the alpha work\n"
    "- [Gamma](projects/gamma.md) — gamma things\n"
    "\n"
    "## Notes\n"
    "- [Beta](notes/beta.md) — about beta\n"
)


def root_with(tmp_path: Path, changes: dict | None = None, index: str = INDEX) -> Path:
    files = {"projects/gamma.md": active_file("Gamma"), "_index.md": index}
    files.update(changes or {})
    return make_root(tmp_path, files)


def run(root: Path, op: str, path: str | None = None, reason: str | None = None, today: dt.date = ARCHIVED_ON):
    """Plan `op`, then apply it through the one door (`execute`: the lock, a re-plan, undo)."""
    plan = make_plan(context(root, today), op, path, reason)
    execute(root, Confirmed(Request(op, path, reason), plan), today=today)
    return plan


def digest(root: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if rel in skip:
                continue
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def lines_of(text: str) -> list[str]:
    return sorted(text.splitlines(keepends=True))


def section_lines(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return [ln for ln in lines[start:end] if ln.strip()]


# -- archive → delete → recover -----------------------------------------------------------
ROUTE_STYLES = [
    "- [Alpha project](projects/alpha.md) — the alpha work",
    "- [Alpha project](projects/alpha.md) — the alpha work  ",  # trailing spaces (a hard break)
    "* [Alpha project](projects/alpha.md): the alpha work",
    "1. [Alpha project](./projects/alpha.md) – the alpha work",
    "- [[projects/alpha]] — the alpha work",
    "- [[projects/alpha|Alpha]] — the alpha work",
    "- `projects/alpha.md` — the alpha work",
    "- <projects/alpha.md> | the alpha work",
    "- projects/alpha.md - the alpha work",
    "  - [Alpha project](projects/alpha.md) — indented under a parent",
    "- [Alpha project](projects/alpha.md#top)\t—\tthe alpha work with tabs",
    "- [阿尔法](projects/alpha.md)：阿尔法项目 — 数据",
    "- [Alpha project](projects/alpha.md) — a description with — dashes and index-line: inside",
]


@pytest.mark.parametrize("route", ROUTE_STYLES)
def test_archive_delete_recover_round_trip_restores_bytes_and_the_exact_route_line(tmp_path, route):
    index = INDEX.replace("- [Alpha project](projects/alpha.md) — the alpha work", route)
    root = root_with(tmp_path, index=index)
    data = (root / "projects/alpha.md").read_bytes()
    archive_before = (root / AI).read_bytes()

    plan = run(root, "archive", "projects/alpha.md", "project finished", ARCHIVED_ON)
    assert plan.facts["index-line"] == route
    assert route not in (root / "_index.md").read_text(encoding="utf-8").splitlines()
    assert (root / "_archive/projects/alpha.md").read_bytes() == data
    assert not (root / "projects/alpha.md").exists()

    run(root, "delete", "projects/alpha.md", today=DELETED_ON)
    assert (root / "_archive/_trash/projects/alpha.md").read_bytes() == data
    assert not (root / "_archive/projects/alpha.md").exists()

    plan = run(root, "recover", "projects/alpha.md", today=DELETED_ON + dt.timedelta(days=1))
    assert plan.facts["proposed"] == "no" and plan.facts["route"] == route
    assert (root / "projects/alpha.md").read_bytes() == data
    assert not (root / "_archive/_trash/projects/alpha.md").exists()
    after = (root / "_index.md").read_text(encoding="utf-8")
    assert lines_of(after) == lines_of(index)  # every line back, the route byte for byte
    assert (root / AI).read_bytes() == archive_before
    assert problems(findings(root)) == []


def test_records_carry_the_section_2_4_fields(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md", "project finished", ARCHIVED_ON)
    assert (root / AI).read_text(encoding="utf-8") == (
        "# Archive index\n"
        "\n"
        "## projects/alpha.md\n"
        "- status: archived\n"
        "- original: projects/alpha.md\n"
        "- location: _archive/projects/alpha.md\n"
        "- index-line: - [Alpha project](projects/alpha.md) — the alpha work\n"
        "- index-after: ## Projects\n"
        "- index-before: - [Gamma](projects/gamma.md) — gamma things\n"
        "- archived: 2026-11-20\n"
        "- reason: project finished\n"
    )
    assert rows(findings(root)) == []

    plan = run(root, "delete", "_archive/projects/alpha.md", today=DELETED_ON)
    assert plan.facts["recover-by"] == RECOVER_BY
    assert (root / AI).read_text(encoding="utf-8") == (
        "# Archive index\n"
        "\n"
        "## projects/alpha.md\n"
        "- status: trashed\n"
        "- original: projects/alpha.md\n"
        "- location: _archive/_trash/projects/alpha.md\n"
        "- index-line: - [Alpha project](projects/alpha.md) — the alpha work\n"
        "- index-after: ## Projects\n"
        "- index-before: - [Gamma](projects/gamma.md) — gamma things\n"
        "- archived: 2026-11-20\n"
        "- reason: project finished\n"
        "- deleted: 2026-11-25\n"
        "- recover-by: 2026-12-25\n"
    )
    assert rows(findings(root, today=DELETED_ON)) == []


@pytest.mark.parametrize("deleted,recover_by", [
    (dt.date(2026, 1, 31), "2026-03-02"), (dt.date(2028, 2, 10), "2028-03-11"), (dt.date(2026, 12, 15), "2027-01-14"),
])
def test_recover_by_is_the_deletion_date_plus_30_days(tmp_path, deleted, recover_by):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md", today=deleted - dt.timedelta(days=3))
    plan = run(root, "delete", "projects/alpha.md", today=deleted)
    record = parse_archive_index(MemoryFile((root / AI).read_text(encoding="utf-8")))[0]
    assert record.get("deleted") == deleted.isoformat()
    assert record.get("recover-by") == recover_by == plan.facts["recover-by"]
    assert recover_by in plan.preview


def test_the_reason_is_one_line_and_defaults(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md", "line one\nline two\r\n- status: hacked")
    record = parse_archive_index(MemoryFile((root / AI).read_text(encoding="utf-8")))[0]
    assert record.get("reason") == "line one line two - status: hacked"
    assert record.get("status") == "archived"
    run(root, "archive", "projects/gamma.md")
    gamma = parse_archive_index(MemoryFile((root / AI).read_text(encoding="utf-8")))[1]
    assert gamma.get("reason") == "archived from the editor"


def test_delete_keeps_unknown_keys_and_other_records(tmp_path):
    text = ("# Archive index\n\n## notes/keep.md\n- status: archived\n- original: notes/keep.md\n"
            "- location: _archive/notes/keep.md\n- index-line:\n- archived: 2026-01-01\n- reason: r\n\n"
            "## projects/old.md\n- Status: archived\n- original: projects/old.md\n- location: _archive/projects/old.md\n"
            "- index-line: - [Old](projects/old.md) — old\n- archived: 2026-01-01\n- owner: Mara\n- reason: done\n")
    root = root_with(tmp_path, {AI: text, "_archive/projects/old.md": active_file("Old"),
                                "_archive/notes/keep.md": active_file("Keep")})
    run(root, "delete", "projects/old.md", today=DELETED_ON)
    after = (root / AI).read_text(encoding="utf-8")
    assert after.startswith(text.split("## projects/old.md")[0])  # the other record untouched
    assert "- owner: Mara\n" in after
    old = parse_archive_index(MemoryFile(after))[1]
    assert (old.status, old.get("location"), old.get("recover-by")) == ("trashed", "_archive/_trash/projects/old.md", RECOVER_BY)


# -- legacy records --------------------------------------------------------------------------
LEGACY_INDEX = (
    "# Memory index\n\n"
    "## Projects\n"
    "- `projects/alpha.md` — alpha\n"
    "- `projects/gamma.md` — gamma things\n"
    "- `projects/delta.md` — delta things\n"
    "\n"
    "## Notes\n"
    "- `notes/beta.md` — about beta\n"
)
LEGACY_RECORD = ("# Archive index\n\n## projects/legacy.md\n- status: archived\n- original: projects/legacy.md\n"
                 "- archived: 2025-01-01\n- reason: old\n")


def test_recover_of_a_legacy_record_proposes_a_route_in_the_house_style_and_shows_it(tmp_path):
    root = root_with(tmp_path, {"projects/delta.md": active_file("Delta"),
                                "_archive/projects/legacy.md": active_file("Legacy project"), AI: LEGACY_RECORD},
                     index=LEGACY_INDEX)
    plan = make_plan(context(root, ARCHIVED_ON), "recover", "projects/legacy.md")
    expected = "- `projects/legacy.md` — Fact number 1 about the work."
    assert plan.facts["proposed"] == "yes" and plan.facts["route"] == expected
    assert "PROPOSED" in plan.preview
    assert f"    {expected}" in plan.preview.splitlines()
    run_steps(root, plan)
    index = (root / "_index.md").read_text(encoding="utf-8")
    assert section_lines(index, "## Projects")[-1] == expected  # at the end of the matching section
    assert section_lines(index, "## Notes") == ["- `notes/beta.md` — about beta"]
    assert (root / AI).read_text(encoding="utf-8") == "# Archive index\n"
    assert problems(findings(root)) == []


def test_legacy_recover_without_a_matching_section_goes_at_the_end_in_the_default_style(tmp_path):
    index = "# Memory index\n\n## Notes\n- [Beta](notes/beta.md) — about beta\n\n"
    root = root_with(tmp_path, {"projects/gamma.md": None, "projects/alpha.md": None,
                                "_archive/projects/legacy.md": active_file("Legacy project",
                                                                          summary=""),
                                AI: LEGACY_RECORD}, index=index)
    plan = run(root, "recover", "projects/legacy.md")
    expected = "- [Legacy project](projects/legacy.md) — Legacy project"
    assert plan.facts["route"] == expected and "PROPOSED" in plan.preview
    assert (root / "_index.md").read_text(encoding="utf-8").rstrip("\n").splitlines()[-1] == expected


def test_a_saved_route_goes_back_where_it_was(tmp_path):
    root = root_with(tmp_path)
    before = (root / "_index.md").read_text(encoding="utf-8")
    run(root, "archive", "projects/alpha.md")
    plan = run(root, "recover", "projects/alpha.md")
    assert "back after: ## Projects" in plan.preview
    assert (root / "_index.md").read_text(encoding="utf-8") == before
    assert "PROPOSED" not in make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md").preview


@pytest.mark.parametrize("which", ["first", "middle", "last"])
def test_recover_restores_the_index_byte_for_byte_wherever_the_line_was(tmp_path, which):
    lines = ["- [Alpha project](projects/alpha.md) — the alpha work", "- [Gamma](projects/gamma.md) — gamma things",
             "- [Delta](projects/delta.md) — delta things"]
    order = {"first": [0, 1, 2], "middle": [1, 0, 2], "last": [1, 2, 0]}[which]
    index = INDEX.replace("- [Alpha project](projects/alpha.md) — the alpha work\n- [Gamma](projects/gamma.md) — "
                          "gamma things\n", "".join(lines[i] + "\n" for i in order))
    root = root_with(tmp_path, {"projects/alpha.md": ALPHA, "projects/delta.md": active_file("Delta")}, index=index)
    run(root, "archive", "projects/alpha.md")
    assert "alpha" not in (root / "_index.md").read_text(encoding="utf-8")
    run(root, "recover", "projects/alpha.md")
    assert (root / "_index.md").read_text(encoding="utf-8") == index


def test_recover_falls_back_to_the_other_neighbour_then_to_the_end_of_the_section(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md")
    # The heading above it was renamed meanwhile: the line below still places it.
    index = (root / "_index.md").read_text(encoding="utf-8").replace("## Projects", "## Projects (2026)")
    (root / "_index.md").write_text(index, encoding="utf-8")
    run(root, "recover", "projects/alpha.md")
    assert section_lines((root / "_index.md").read_text(encoding="utf-8"), "## Projects (2026)") == [
        "- [Alpha project](projects/alpha.md) — the alpha work", "- [Gamma](projects/gamma.md) — gamma things"]
    # Both neighbours gone: the end of the file's section, as for a route without a record.
    root = root_with(tmp_path / "b")
    run(root, "archive", "projects/alpha.md")
    index = (root / "_index.md").read_text(encoding="utf-8").replace("## Projects\n- [Gamma](projects/gamma.md) — "
                                                                    "gamma things\n", "## projects\n- gamma\n")
    (root / "_index.md").write_text(index, encoding="utf-8")
    run(root, "recover", "projects/alpha.md")
    assert section_lines((root / "_index.md").read_text(encoding="utf-8"), "## projects") == [
        "- gamma", "- [Alpha project](projects/alpha.md) — the alpha work"]


def test_a_file_archived_without_a_route_comes_back_without_one_unless_asked(tmp_path):
    # Never an empty `index-line:` (it would read as "restore an empty line"): `routed: no`
    # says the file had none, so the root returns to that state (issue 26).
    index = INDEX.replace("- [Alpha project](projects/alpha.md) — the alpha work\n", "")
    root = root_with(tmp_path, {"projects/alpha.md": ALPHA}, index=index)
    plan = run(root, "archive", "projects/alpha.md")
    assert plan.facts["index-line"] == "" and [type(s) for s in plan.steps] == [Move, WriteText]
    record = (root / AI).read_text(encoding="utf-8")
    assert "index-line" not in record and "- routed: no\n" in record
    plan = make_plan(context(root), "recover", "projects/alpha.md")
    assert "the file had no route when it was archived; none is added" in plan.preview
    assert "recover with --add-route (the editor's \"and add a route\" action, or `add_route` in MCP); it would add this PROPOSED route:" in plan.preview
    assert [(type(s), getattr(s, "path", None)) for s in plan.steps] == [(Move, None), (WriteText, AI)]
    asked = make_plan(context(root), "recover", "projects/alpha.md", add_route=True)
    assert "add this PROPOSED route (asked for: the file had none when archived)" in asked.preview
    assert [(type(s), getattr(s, "path", None)) for s in asked.steps] == [
        (Move, None), (WriteText, "_index.md"), (WriteText, AI)]
    run_steps(root, plan)
    assert (root / "_index.md").read_text(encoding="utf-8") == index


def test_a_legacy_record_without_a_saved_line_still_proposes_a_route(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md")
    text = (root / AI).read_text(encoding="utf-8")
    legacy = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("- index-"))
    (root / AI).write_text(legacy, encoding="utf-8")
    plan = make_plan(context(root), "recover", "projects/alpha.md")
    assert "add this PROPOSED route (the record has no saved route line)" in plan.preview
    assert [getattr(s, "path", None) for s in plan.steps] == [None, "_index.md", AI]


# -- purge -------------------------------------------------------------------------------------
def test_purge_refuses_before_recover_by_and_works_after(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md", today=ARCHIVED_ON)
    run(root, "delete", "projects/alpha.md", today=DELETED_ON)
    before = digest(root)
    for day in (DELETED_ON, dt.date(2026, 12, 24), dt.date(2026, 12, 25)):
        with pytest.raises(Refusal) as exc:
            make_plan(context(root, day), "purge", "projects/alpha.md")
        assert exc.value.rule == STATE and RECOVER_BY in exc.value.message
    assert digest(root) == before
    plan = run(root, "purge", "_archive/_trash/projects/alpha.md", today=dt.date(2026, 12, 26))
    assert [type(s) for s in plan.steps] == [Remove, WriteText]
    assert "PERMANENTLY" in plan.preview and plan.action == "Delete permanently"
    assert not (root / "_archive/_trash/projects/alpha.md").exists()
    assert (root / AI).read_text(encoding="utf-8") == "# Archive index\n"
    assert problems(findings(root)) == []


def test_purge_refuses_an_archived_not_trashed_file(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md")
    with pytest.raises(Refusal) as exc:
        make_plan(context(root, dt.date(2030, 1, 1)), "purge", "projects/alpha.md")
    assert exc.value.rule == STATE


# -- refusals that change nothing -----------------------------------------------------------------
def test_delete_of_an_active_file_refuses_with_archive_it_first(tmp_path):
    root = root_with(tmp_path)
    before = digest(root)
    for raw in ("projects/alpha.md", "./projects/alpha.md"):
        with pytest.raises(Refusal) as exc:
            make_plan(context(root, ARCHIVED_ON), "delete", raw)
        assert "archive it first" in exc.value.message
    assert digest(root) == before


def test_recover_refuses_when_the_original_path_is_occupied(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md")
    (root / "projects/alpha.md").write_text("# A new alpha\n", encoding="utf-8")
    before = digest(root)
    with pytest.raises(Refusal) as exc:
        make_plan(context(root, ARCHIVED_ON), "recover", "_archive/projects/alpha.md")
    assert exc.value.rule == COLLISION and "occupied" in exc.value.message
    assert digest(root) == before
    run(root, "delete", "_archive/projects/alpha.md", today=DELETED_ON)
    before = digest(root)
    with pytest.raises(Refusal) as exc:
        make_plan(context(root, DELETED_ON), "recover", "_archive/_trash/projects/alpha.md")
    assert exc.value.rule == COLLISION
    assert digest(root) == before
    assert (root / "projects/alpha.md").read_text(encoding="utf-8") == "# A new alpha\n"


def test_archive_refuses_when_the_archive_location_is_taken(tmp_path):
    root = root_with(tmp_path, {"_archive/projects/alpha.md": "# An older alpha\n"})
    before = digest(root)
    with pytest.raises(Refusal) as exc:
        make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md")
    assert exc.value.rule == COLLISION
    assert digest(root) == before


def test_a_collision_that_appears_after_the_preview_stops_before_anything_moves(tmp_path):
    root = root_with(tmp_path)
    plan = make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md")
    (root / "_archive/projects").mkdir()
    (root / "_archive/projects/alpha.md").write_text("# Someone else\n", encoding="utf-8")
    before = digest(root)
    with pytest.raises(Refusal):
        replan(context(root, ARCHIVED_ON), plan, "projects/alpha.md")
    with pytest.raises(ApplyError) as exc:
        run_steps(root, plan)  # even without the re-plan, the applier never overwrites
    assert exc.value.rule == COLLISION and exc.value.done == ()
    assert digest(root) == before


@pytest.mark.parametrize("missing", [["_archive"], ["_archive/_trash"], ["_archive/_index.md"]])
@pytest.mark.parametrize("op,path", [("archive", "projects/alpha.md"), ("delete", "projects/old.md"),
                                     ("delete", "_archive/projects/old.md"), ("recover", "projects/old.md"),
                                     ("recover", "_archive/projects/old.md"), ("purge", "projects/old.md")])
def test_operations_without_lifecycle_structure_refuse_and_point_to_upgrade(tmp_path, missing, op, path):
    root = root_with(tmp_path, {"_archive/projects/old.md": active_file("Old")})
    import shutil
    for rel in missing:
        target = root / rel
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    if missing == ["_archive"]:
        (root / "_archive").mkdir()  # only the old file's folder, no trash and no records
        (root / "_archive/projects").mkdir()
        (root / "_archive/projects/old.md").write_text(active_file("Old"), encoding="utf-8")
        (root / "_archive/_index.md").write_text("# Archive index\n", encoding="utf-8")
    before = digest(root)
    with pytest.raises(Refusal) as exc:
        make_plan(context(root, ARCHIVED_ON), op, path)
    assert exc.value.rule == STRUCTURE and "upgrade" in exc.value.message
    assert digest(root) == before


def test_operations_on_a_root_with_no_archive_at_all_point_to_upgrade(tmp_path):
    root = make_root(tmp_path, {"_archive/_trash/": None})
    import shutil
    shutil.rmtree(root / "_archive")
    for op in ("archive", "delete", "recover", "purge"):
        with pytest.raises(Refusal) as exc:
            make_plan(context(root, ARCHIVED_ON), op, "projects/alpha.md" if op == "archive" else "projects/gone.md")
        assert exc.value.rule == STRUCTURE and "upgrade" in exc.value.message, (op, exc.value.message)


# -- upgrade ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("remove,created", [
    (["_archive"], ["_archive", "_archive/_trash", AI]),
    (["_archive/_trash"], ["_archive/_trash"]),
    ([AI], [AI]),
    (["_archive/_trash", AI], ["_archive/_trash", AI]),
])
def test_upgrade_creates_only_what_is_missing_and_touches_nothing_else(tmp_path, remove, created):
    import shutil
    root = root_with(tmp_path, {"_archive/projects/old.md": active_file("Old"), "notes/raw.bin": "x" * 10,
                                "projects/nosummary.md": "# No summary\n\nJust text.\n"})
    for rel in remove:
        target = root / rel
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    stats = {p: (root / p).stat().st_mtime_ns for p in digest(root) if (root / p).is_file()}
    before = digest(root)
    plan = run(root, "upgrade")
    assert [s.path for s in plan.steps] == created
    assert all(isinstance(s, MakeDir) or (isinstance(s, WriteText) and s.before is None) for s in plan.steps)
    after = digest(root)
    assert {k: v for k, v in after.items() if k not in created} == before
    assert {p: (root / p).stat().st_mtime_ns for p in stats} == stats
    assert not [f for f in findings(root) if f.code == "PM001"]
    assert run(root, "upgrade").empty  # a second upgrade has nothing to do
    assert digest(root) == after


def test_upgrade_refuses_when_a_lifecycle_path_is_the_wrong_kind(tmp_path):
    import shutil
    root = root_with(tmp_path)
    shutil.rmtree(root / "_archive/_trash")
    (root / "_archive/_trash").write_text("not a folder", encoding="utf-8")
    before = digest(root)
    with pytest.raises(Refusal):
        make_plan(context(root, ARCHIVED_ON), "upgrade")
    assert digest(root) == before


# -- re-validation at execution ------------------------------------------------------------------
def test_replan_refuses_when_the_route_line_was_edited_after_the_preview(tmp_path):
    root = root_with(tmp_path)
    plan = make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md", "done")
    index = root / "_index.md"
    index.write_text(index.read_text(encoding="utf-8").replace("the alpha work", "the alpha work, edited"), encoding="utf-8")
    before = digest(root)
    with pytest.raises(Refusal) as exc:
        replan(context(root, ARCHIVED_ON), plan, "projects/alpha.md", "done")
    assert exc.value.rule == CHANGED
    with pytest.raises(ApplyError) as exc2:
        run_steps(root, plan)  # the stale plan itself is refused before anything moves
    assert exc2.value.rule == CHANGED and exc2.value.done == ()
    assert digest(root) == before


def test_replan_refuses_when_the_record_was_edited_after_the_preview(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md")
    plan = make_plan(context(root, DELETED_ON), "recover", "projects/alpha.md")
    ai = root / AI
    ai.write_text(ai.read_text(encoding="utf-8").replace("the alpha work", "something else"), encoding="utf-8")
    with pytest.raises(Refusal) as exc:
        replan(context(root, DELETED_ON), plan, "projects/alpha.md")
    assert exc.value.rule == CHANGED


def test_replan_keeps_lines_an_agent_appended_meanwhile(tmp_path):
    root = root_with(tmp_path, {"notes/agent.md": active_file("Agent note"), "notes/other.md": active_file("Other")})
    plan = make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md", "done")
    index = root / "_index.md"
    text = index.read_text(encoding="utf-8")
    text = text.replace("Routes to active memory.", "Routes to active memory, kept short.")
    text += "- [Agent note](notes/agent.md) — written by an agent meanwhile\n"
    index.write_text(text, encoding="utf-8")
    ai = root / AI
    ai.write_text(ai.read_text(encoding="utf-8") + "\n<!-- an agent's comment -->\n", encoding="utf-8")
    fresh = replan(context(root, ARCHIVED_ON), plan, "projects/alpha.md", "done")
    run_steps(root, fresh)
    after = index.read_text(encoding="utf-8")
    assert after == text.replace("- [Alpha project](projects/alpha.md) — the alpha work\n", "")
    assert "<!-- an agent's comment -->" in ai.read_text(encoding="utf-8")
    assert (root / "_archive/projects/alpha.md").is_file()


def test_replan_refuses_when_the_file_is_gone_or_the_plan_changed(tmp_path):
    root = root_with(tmp_path)
    plan = make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md", "done")
    with pytest.raises(Refusal):  # a different reason is a different record: not what was confirmed
        replan(context(root, ARCHIVED_ON), plan, "projects/alpha.md", "another reason")
    (root / "projects/alpha.md").unlink()
    with pytest.raises(Refusal):
        replan(context(root, ARCHIVED_ON), plan, "projects/alpha.md", "done")


# -- line endings and encodings -----------------------------------------------------------------------
def test_crlf_indexes_keep_crlf_through_the_round_trip(tmp_path):
    index = INDEX.replace("\n", "\r\n")
    root = root_with(tmp_path, {AI: "# Archive index\r\n"}, index=index)
    (root / "_index.md").write_bytes(index.encode("utf-8"))
    (root / AI).write_bytes(b"# Archive index\r\n")
    run(root, "archive", "projects/alpha.md", "done")
    for rel in ("_index.md", AI):
        data = (root / rel).read_bytes()
        assert data.count(b"\n") == data.count(b"\r\n") and b"\r\r" not in data, (rel, data)
    record = parse_archive_index(MemoryFile((root / AI).read_text(encoding="utf-8")))[0]
    assert record.get("index-line") == "- [Alpha project](projects/alpha.md) — the alpha work"
    run(root, "delete", "projects/alpha.md", today=DELETED_ON)
    run(root, "recover", "projects/alpha.md", today=DELETED_ON)
    data = (root / "_index.md").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n")
    assert sorted(data.split(b"\r\n")) == sorted(index.encode("utf-8").split(b"\r\n"))
    assert (root / AI).read_bytes() == b"# Archive index\r\n"


def test_a_bom_is_kept(tmp_path):
    root = root_with(tmp_path)
    (root / "_index.md").write_bytes(b"\xef\xbb\xbf" + INDEX.encode("utf-8"))
    run(root, "archive", "projects/alpha.md")
    assert (root / "_index.md").read_bytes().startswith(b"\xef\xbb\xbf# Memory index\n")
    run(root, "recover", "projects/alpha.md")
    assert sorted((root / "_index.md").read_bytes()[3:].splitlines()) == sorted(INDEX.encode().splitlines())


@pytest.mark.parametrize("bad", [b"\xff\xfe broken", b"caf\xe9", b"nul \x00 byte"])
@pytest.mark.parametrize("which", ["_index.md", AI])
def test_an_index_pmem_cannot_decode_exactly_is_never_rewritten_and_nothing_moves(tmp_path, bad, which):
    root = root_with(tmp_path)
    path = root / which
    path.write_bytes(path.read_bytes() + b"<!-- " + bad + b" -->\n")
    before = digest(root)
    try:
        plan = make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md")
    except Refusal:
        pass
    else:
        with pytest.raises(ApplyError) as exc:
            run_steps(root, plan)
        assert exc.value.done == ()
    assert digest(root) == before


def test_an_invalid_index_is_left_alone_on_recover_too(tmp_path):
    root = root_with(tmp_path)
    run(root, "archive", "projects/alpha.md")
    (root / "_index.md").write_bytes((root / "_index.md").read_bytes() + b"- caf\xe9 stray line\n")
    before = digest(root)
    plan = make_plan(context(root, ARCHIVED_ON), "recover", "projects/alpha.md")
    with pytest.raises(ApplyError) as exc:
        run_steps(root, plan)
    assert exc.value.done == () and "UTF-8" in exc.value.message
    assert digest(root) == before


def test_archive_of_an_unrouted_file_leaves_an_invalid_index_alone_and_works(tmp_path):
    root = root_with(tmp_path, {"notes/unrouted.md": active_file("Unrouted")})
    (root / "_index.md").write_bytes((root / "_index.md").read_bytes() + b"- caf\xe9 stray line\n")
    index = (root / "_index.md").read_bytes()
    plan = run(root, "archive", "notes/unrouted.md")
    assert [s.path for s in plan.writes()] == [AI]
    assert (root / "_index.md").read_bytes() == index


def test_plans_are_plain_ordered_data_with_the_route_removed_after_the_move(tmp_path):
    root = root_with(tmp_path)
    plan = make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md", "done")
    assert [type(s).__name__ for s in plan.steps] == ["Move", "WriteText", "WriteText"]
    assert plan.steps[0] == Move("projects/alpha.md", "_archive/projects/alpha.md")
    assert [s.path for s in plan.writes()] == [AI, "_index.md"]
    assert plan.signature() == make_plan(context(root, ARCHIVED_ON), "archive", "projects/alpha.md", "done").signature()
    for line in ("projects/alpha.md → _archive/projects/alpha.md",
                 "- [Alpha project](projects/alpha.md) — the alpha work", "recover projects/alpha.md"):
        assert line in plan.preview


# -- the root's settings: used as they are, or nothing is planned ------------------------------
@pytest.mark.parametrize("broken", ["not toml [", 'dialect = "v0.10"\nselect = [', "folder", "dangling link"])
@pytest.mark.parametrize("op, path", [("archive", "projects/alpha.md"), ("save", "notes/new.md"),
                                      ("route", "projects/alpha.md"), ("upgrade", None)])
def test_no_write_is_planned_on_settings_that_cannot_be_used(tmp_path, broken, op, path):
    """A `.pmem.toml` that is there but unusable would decide the write by the defaults (the
    dialect of the record, the checks of a save) without anyone knowing (a review)."""
    root = root_with(tmp_path, {"projects/alpha.md": ALPHA})
    settings = root / ".pmem.toml"
    if broken == "folder":
        settings.mkdir()
    elif broken == "dangling link":
        settings.symlink_to(root / "nowhere.toml")
    else:
        settings.write_text(broken, encoding="utf-8")
    before = digest(root)
    with pytest.raises(Refusal) as refused:
        make_plan(context(root), op, path, "done", content="# New\n\n## Summary\n- a\n- b\n")
    assert refused.value.rule == SETTINGS and ".pmem.toml" in refused.value.message
    assert digest(root) == before


def test_a_token_is_stale_once_the_settings_change(tmp_path):
    """The token binds `.pmem.toml`: a dialect changed after the preview would write a record
    other than the one the user saw."""
    from pmem_lsp.engine.lifecycle.preview import StalePreview, preview

    root = root_with(tmp_path, {"projects/alpha.md": ALPHA})
    (root / ".pmem.toml").write_text('dialect = "v0.10"\n', encoding="utf-8")
    request = Request("archive", "projects/alpha.md", "done")
    shown = preview(context(root), request)
    assert shown.token is not None
    (root / ".pmem.toml").write_text('dialect = "pmem"\n', encoding="utf-8")
    before = digest(root)
    with pytest.raises(StalePreview):
        execute(root, Tokened(request, shown.token))
    assert digest(root) == before
    (root / ".pmem.toml").write_text('dialect = "v0.10"\n', encoding="utf-8")  # as previewed: applies
    execute(root, Tokened(request, shown.token))
    assert (root / "_archive/projects/alpha.md").is_file()


@pytest.mark.parametrize("op, path", [("archive", "projects/alpha.md"), ("save", "notes/new.md")])
def test_a_plan_reads_the_settings_once(tmp_path, monkeypatch, op, path):
    """`.pmem.toml` changed while a plan is made (the hook swaps it right after each read, as an
    editor saving it would): the plan holds to what it read. Two reads checked one file and
    wrote in the other's dialect."""
    import pmem_lsp.engine.settings as settings_module

    root = root_with(tmp_path, {"projects/alpha.md": ALPHA, AI: "# Archive index\n"})
    settings = root / ".pmem.toml"
    settings.write_text('dialect = "pmem"\n', encoding="utf-8")
    real, reads = settings_module.read_settings_file, []

    def swapping(at: Path) -> dict:
        raw = real(at)
        reads.append(raw.get("dialect"))
        settings.write_text('dialect = "v0.10"\n' if raw.get("dialect") == "pmem" else 'dialect = "pmem"\n',
                            encoding="utf-8")
        return raw

    monkeypatch.setattr(settings_module, "read_settings_file", swapping)
    plan = make_plan(context(root, ARCHIVED_ON), op, path, "done",
                     content="# New\n\n## Summary\n- a\n- b\n- c\n", description="a new note")
    assert reads == ["pmem"]
    monkeypatch.undo()
    run_steps(root, plan)
    if op == "archive":  # the record in the dialect read: pmem's own `## path` block
        assert "## projects/alpha.md\n- status: archived\n" in (root / AI).read_text(encoding="utf-8")
    else:  # the route line in pmem's own form, `- [Title](path) — description`
        assert "- [New](notes/new.md) — a new note\n" in (root / "_index.md").read_text(encoding="utf-8")
