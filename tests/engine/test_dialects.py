"""Both dialects read and written, and every cross pair with the format's reference CLI
(docs/design.md §2.5; docs/decisions.md, "Dialects").

The reference CLI is modelled strictly from its documented behaviour in `tests/reference_cli.py`:
its reader takes every line after a `### ` heading up to the next one as one record, which is
how a record pmem wrote used to be lost.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import reference_cli as ref
from engine_helpers import findings, scan
from pmem_lsp.engine.archive_index import NO_ROUTE, PMEM, V010, parse_archive_index, record_location
from pmem_lsp.engine.catalogue import quick_fixes
from pmem_lsp.engine.health_proposal import memory_health
from pmem_lsp.engine.index_edit import append_record, format_record, root_dialect
from pmem_lsp.engine.lifecycle.fs_applier import run_steps
from pmem_lsp.engine.lifecycle.operations import context, make_plan
from pmem_lsp.engine.lifecycle.safety import Refusal
from pmem_lsp.engine.line_index import LineIndex
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.settings import Settings
from pmem_lsp.engine.zones import discover_root
from roots import active_file, write_root

AI = "_archive/_index.md"
DAY = dt.date(2026, 11, 20)
LATER = dt.date(2026, 11, 25)
V010_INDEX = (
    "# Memory Index\n\n"
    "- projects/a.md — the a project\n"
    "- projects/b.md — the b project\n"
    "- notes/c.md — c notes\n"
)


def v010_root(tmp_path: Path, archive: str = "# Archive Index\n\n", index: str = V010_INDEX) -> Path:
    return write_root(tmp_path / "memory", {
        "_core/profile.md": "# Profile\n", "_core/preferences.md": "# Preferences\n",
        "_index.md": index, AI: archive, "_archive/_trash/": "",
        "projects/a.md": active_file("A"), "projects/b.md": active_file("B"), "notes/c.md": active_file("C"),
    })


def pmem(root: Path, op: str, path: str | None = None, reason: str | None = None, today: dt.date = DAY):
    plan = make_plan(context(root, today), op, path, reason)
    run_steps(root, plan)
    return plan


def text(root: Path, rel: str) -> str:
    return (root / rel).read_text(encoding="utf-8")


def pm3(root: Path, today: dt.date = DAY) -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in findings(root, today=today) if f.code.startswith("PM3")]


# -- reading --------------------------------------------------------------------------
def test_a_v010_record_reads_with_pmem_names(tmp_path: Path) -> None:
    archive = ("# Archive Index\n\n### projects/x.md\n- original_path: projects/x.md\n- state: trashed\n"
               "- archived_at: 2026-01-02\n- reason: done\n- active_index_line: - projects/x.md — x things\n"
               "- deleted_at: 2026-01-03\n- recover_deadline: 2026-02-02\n")
    (record,) = parse_archive_index(MemoryFile(archive))
    assert record.dialect == V010
    assert record.get("original") == "projects/x.md" and record.status == "trashed"
    assert record.saved_route == "- projects/x.md — x things"
    assert record.get("recover-by") == "2026-02-02" and record.get("deleted") == "2026-01-03"


def test_no_active_index_line_is_no_saved_route(tmp_path: Path) -> None:
    archive = f"### notes/x.md\n- original_path: notes/x.md\n- state: archived\n- active_index_line: {NO_ROUTE}\n"
    (record,) = parse_archive_index(MemoryFile(archive))
    assert record.saved_route is None and record.is_legacy


def test_a_well_formed_reference_record_has_no_finding(tmp_path: Path) -> None:
    root = v010_root(tmp_path)
    ref.archive(root, "projects/a.md", "finished", DAY)
    assert pm3(root) == []


def test_reference_trash_past_its_deadline_is_pm304_and_in_health(tmp_path: Path) -> None:
    root = v010_root(tmp_path)
    ref.archive(root, "notes/c.md", "old", DAY)
    ref.delete(root, "notes/c.md", DAY)
    late = DAY + dt.timedelta(days=40)
    assert [c for c, _ in pm3(root, late)] == ["PM304"]
    report = memory_health(root, Settings(), today=late)
    assert [t.path for t in report.expired_trash] == ["_archive/_trash/notes/c.md"]
    assert ref.health(root, late)[1] == ["notes/c.md"]


# -- dialect of a root ----------------------------------------------------------------------
@pytest.mark.parametrize(("setting", "archive", "index", "expected"), [
    (None, "", "", V010),
    (None, "", "- [A](projects/a.md) — a\n", PMEM),
    (None, "", "- projects/a.md — a\n", V010),
    (None, "## x.md\n- status: archived\n", "- projects/a.md — a\n", PMEM),
    (None, "### x.md\n- state: archived\n", "- [A](projects/a.md) — a\n", V010),
    ("pmem", "### x.md\n- state: archived\n", "", PMEM),
    ("v0.10", "## x.md\n- status: archived\n", "", V010),
])
def test_root_dialect(setting, archive, index, expected) -> None:
    assert root_dialect(setting, archive, index) == expected


def test_the_setting_fixes_the_dialect(tmp_path: Path) -> None:
    root = v010_root(tmp_path)
    (root / ".pmem.toml").write_text('dialect = "pmem"\n', encoding="utf-8")
    pmem(root, "archive", "projects/a.md", "done")
    assert "## projects/a.md\n- status: archived\n" in text(root, AI)


# -- every cross pair -------------------------------------------------------------------------
def test_pmem_archive_then_reference_delete_and_recover(tmp_path: Path) -> None:
    root = v010_root(tmp_path)
    pmem(root, "archive", "projects/a.md", "finished")
    assert "### projects/a.md\n- original_path: projects/a.md\n- state: archived\n" in text(root, AI)
    assert ref.records(text(root, AI))["projects/a.md"]["active_index_line"] == "- projects/a.md — the a project"
    ref.delete(root, "projects/a.md", LATER)
    assert pm3(root, LATER) == []
    ref.recover(root, "projects/a.md")
    assert (root / "projects/a.md").is_file()
    assert "- projects/a.md — the a project" in text(root, "_index.md").splitlines()
    assert ref.records(text(root, AI)) == {} and parse_archive_index(MemoryFile(text(root, AI))) == []


def test_reference_archive_then_pmem_delete_recover_restores_the_saved_line(tmp_path: Path) -> None:
    root = v010_root(tmp_path, index=V010_INDEX.replace("- projects/b.md — the b project\n",
                                                        "- projects/b.md — the b project (hand-written)\n"))
    ref.archive(root, "projects/b.md", "done", DAY)
    pmem(root, "delete", "projects/b.md", today=LATER)
    assert (root / "_archive/_trash/projects/b.md").is_file()
    rec = ref.records(text(root, AI))["projects/b.md"]
    assert rec["state"] == "trashed" and rec["recover_deadline"] == "2026-12-25" and rec["deleted_at"] == "2026-11-25"
    assert "location" not in text(root, AI)
    assert pm3(root, LATER) == []
    plan = pmem(root, "recover", "projects/b.md", today=LATER)
    assert plan.facts["proposed"] == "no"
    assert "- projects/b.md — the b project (hand-written)" in text(root, "_index.md").splitlines()
    assert ref.records(text(root, AI)) == {}


def test_reference_archive_and_delete_then_pmem_purge(tmp_path: Path) -> None:
    root = v010_root(tmp_path)
    ref.archive(root, "notes/c.md", "old", DAY)
    ref.delete(root, "notes/c.md", DAY)
    late = DAY + dt.timedelta(days=31)
    pmem(root, "purge", "notes/c.md", today=late)
    assert not (root / "_archive/_trash/notes/c.md").exists()
    assert ref.records(text(root, AI)) == {}


def test_pmem_archive_delete_then_reference_recover(tmp_path: Path) -> None:
    root = v010_root(tmp_path)
    pmem(root, "archive", "notes/c.md", "old")
    pmem(root, "delete", "notes/c.md", today=LATER)
    rec = ref.records(text(root, AI))["notes/c.md"]
    assert rec["state"] == "trashed" and rec["recover_deadline"] == "2026-12-25"
    ref.recover(root, "notes/c.md")
    assert (root / "notes/c.md").is_file()


def test_upstream_record_then_pmem_record_never_merge(tmp_path: Path) -> None:
    """The lost record of the issue: a, archived by the reference, then b by pmem, then the
    reference recovers or deletes a — b's record must come through whole."""
    for action in ("recover", "delete"):
        root = v010_root(tmp_path / action)
        ref.archive(root, "projects/a.md", "done", DAY)
        pmem(root, "archive", "projects/b.md", "done too")
        def b_fields(root: Path = root) -> list[tuple[str, str]]:
            (b,) = [r for r in parse_archive_index(MemoryFile(text(root, AI))) if r.title == "projects/b.md"]
            return [(f.key, f.value) for f in b.fields]

        before = b_fields()
        if action == "recover":
            ref.recover(root, "projects/a.md")
        else:
            ref.delete(root, "projects/a.md", LATER)
        assert b_fields() == before  # b's record comes through whole, for both readers
        assert ref.records(text(root, AI))["projects/b.md"]["state"] == "archived"
        assert ref.records(text(root, AI))["projects/b.md"]["deleted_at"] is None
        pmem(root, "recover", "projects/b.md", today=LATER)
        assert (root / "projects/b.md").is_file()


def test_a_pmem_dialect_record_goes_before_the_first_reference_block(tmp_path: Path) -> None:
    """A root whose setting says pmem, with a reference block in its archive index: the new
    `## ` record is written where the reference CLI cannot read it as part of that block."""
    root = v010_root(tmp_path)
    (root / ".pmem.toml").write_text('dialect = "pmem"\n', encoding="utf-8")
    ref.archive(root, "projects/a.md", "done", DAY)
    pmem(root, "archive", "projects/b.md", "done too")
    lines = text(root, AI).splitlines()
    assert lines.index("## projects/b.md") < lines.index("### projects/a.md")
    ref.delete(root, "projects/a.md", LATER)
    b = next(r for r in parse_archive_index(MemoryFile(text(root, AI))) if r.title == "projects/b.md")
    assert b.get("status") == "archived" and b.get("deleted") is None
    assert not [c for c, _ in pm3(root, LATER) if c == "PM307"]


def test_a_merged_record_is_pm307_with_a_fix_that_separates_it(tmp_path: Path) -> None:
    archive = ("# Archive Index\n\n### projects/a.md\n- original_path: projects/a.md\n- state: archived\n"
               "- archived_at: 2026-11-01\n- reason: x\n- active_index_line: - projects/a.md — a\n\n"
               "## projects/b.md\n- status: archived\n- original: projects/b.md\n- location: _archive/projects/b.md\n"
               "- index-line: - projects/b.md — b\n- archived: 2026-11-02\n- reason: y\n")
    root = v010_root(tmp_path, archive=archive)
    write_root(root, {"_archive/projects/a.md": "# A\n", "_archive/projects/b.md": "# B\n"})
    codes = [f for f in findings(root, today=DAY) if f.code in ("PM306", "PM307")]
    assert {f.code for f in codes} == {"PM306", "PM307"}
    fix = quick_fixes(scan(root), next(f for f in codes if f.code == "PM307"), DAY)[0]
    (edit,) = fix.edits
    old = text(root, AI)
    at = LineIndex(old)
    new = old[:at.offset(edit.line, edit.col)] + edit.new_text + old[at.offset(edit.end_line, edit.end_col):]
    assert ref.records(new)["projects/b.md"]["active_index_line"] == "- projects/b.md — b"
    assert ref.records(new)["projects/a.md"]["active_index_line"] == "- projects/a.md — a"
    (root / AI).write_text(new, encoding="utf-8")
    assert [c for c, _ in pm3(root) if c in ("PM306", "PM307")] == []


def test_pmem_dialect_roots_keep_their_records(tmp_path: Path) -> None:
    root = v010_root(tmp_path, index=V010_INDEX.replace("- projects/a.md", "- [A](projects/a.md)")
                     .replace("- projects/b.md", "- [B](projects/b.md)").replace("- notes/c.md", "- [C](notes/c.md)"))
    pmem(root, "archive", "projects/a.md", "done")
    assert "## projects/a.md\n- status: archived\n- original: projects/a.md\n" in text(root, AI)


def test_no_route_is_written_as_the_reference_says(tmp_path: Path) -> None:
    root = v010_root(tmp_path, index="# Memory Index\n\n- projects/a.md — a\n")
    pmem(root, "archive", "notes/c.md", "no route")
    assert ref.records(text(root, AI))["notes/c.md"]["active_index_line"] == NO_ROUTE
    with pytest.raises(ref.ReferenceError_):
        ref.recover(root, "notes/c.md")
    plan = make_plan(context(root, LATER), "recover", "notes/c.md")
    assert plan.facts["proposed"] == "yes"


def test_a_new_route_in_an_index_without_routes_is_a_v010_line(tmp_path: Path) -> None:
    root = v010_root(tmp_path, index="# Memory Index\n\n")
    pmem(root, "route", "projects/a.md")
    assert ref.status_routes(root) == [("projects/a.md", True)]


def test_an_archive_that_refuses_leaves_both_indexes(tmp_path: Path) -> None:
    root = v010_root(tmp_path)
    ref.archive(root, "projects/a.md", "done", DAY)
    write_root(root, {"projects/a.md": "# A again\n"})
    with pytest.raises(Refusal):
        make_plan(context(root, DAY), "archive", "projects/a.md", "again")


# -- the root's other name ------------------------------------------------------------------
def test_persistent_memory_home_after_pmem_root(tmp_path: Path) -> None:
    home = str(tmp_path / "home-root")
    assert discover_root(None, {"PERSISTENT_MEMORY_HOME": home}) == Path(home)
    assert discover_root(None, {"PERSISTENT_MEMORY_HOME": home, "PMEM_ROOT": "/x/pmem"}) == Path("/x/pmem")
    assert discover_root("/x/opt", {"PERSISTENT_MEMORY_HOME": home, "PMEM_ROOT": "/x/pmem"}) == Path("/x/opt")
    assert discover_root(None, {"HOME": str(tmp_path)}).name == ".persistent-memory"


# -- property: what pmem writes reads back alike with both readers, and never merges -----------
_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Zl", "Zp")), min_size=1, max_size=40)
_WORD = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Lo", "Nd"), whitelist_characters="-_ "),
                min_size=1, max_size=12).map(str.strip).filter(bool)


def _one_line(text: str) -> str:
    return " ".join(text.split())


_RECORD = st.fixed_dictionaries({
    "original": st.tuples(st.sampled_from(["projects", "notes", "ideas"]), _WORD).map(lambda t: f"{t[0]}/{t[1]}.md"),
    "status": st.sampled_from(["archived", "trashed"]),
    "reason": _TEXT.map(_one_line).filter(bool),
    "route": st.one_of(st.none(), _TEXT.map(lambda t: "- " + _one_line(t) + " — x")),
    "dialect": st.sampled_from([PMEM, V010]),
})


@settings(max_examples=200, deadline=None)
@example(records=[{"original": "notes/a.md", "status": "archived", "reason": "**bold** start", "route": None,
                   "dialect": PMEM}, {"original": "notes/b.md", "status": "trashed", "reason": "__x", "dialect": V010,
                                      "route": "- notes/b.md — b"}], preamble="")
@given(records=st.lists(_RECORD, min_size=1, max_size=6, unique_by=lambda r: r["original"]),
       preamble=st.sampled_from(["", "# Archive Index\n", "# Archive index\n\nOld files.\n"]))
def test_every_written_record_reads_back_alike_and_alone(records, preamble) -> None:
    text = preamble
    for r in records:
        fields = [("status", r["status"]), ("original", r["original"]),
                  ("location", ("_archive/_trash/" if r["status"] == "trashed" else "_archive/") + r["original"])]
        if r["route"] is not None:
            fields.append(("index-line", r["route"]))
        fields += [("archived", "2026-11-01"), ("reason", r["reason"])]
        if r["status"] == "trashed":
            fields += [("deleted", "2026-11-02"), ("recover-by", "2026-12-02")]
        text = append_record(text, format_record(r["original"], fields, "\n", r["dialect"]))
    # pmem's reader: every record, alone, with its values.
    parsed = {p.title: p for p in parse_archive_index(MemoryFile(text))}
    assert set(parsed) == {r["original"] for r in records}
    for r in records:
        p = parsed[r["original"]]
        assert p.dialect == r["dialect"]
        assert (p.status, p.get("original"), p.get("reason"), p.saved_route) == (
            r["status"], r["original"], r["reason"], r["route"])
        assert record_location(p) == ("_archive/_trash/" if r["status"] == "trashed" else "_archive/") + r["original"]
    # The reference CLI's reader: every v0.10 record with its values, and no other record inside a block.
    seen = ref.records(text)
    assert set(seen) == {r["original"] for r in records if r["dialect"] == V010}
    for r in records:
        if r["dialect"] == V010:
            got = seen[r["original"]]
            assert (got["state"], got["reason"], got["active_index_line"]) == (
                r["status"], r["reason"], r["route"] if r["route"] is not None else NO_ROUTE)
    for block in ref.parse(text).blocks:
        assert not [line for line in block.body if line.startswith("#")]


# -- migrate and init ------------------------------------------------------------------------------
MIXED = ("# Archive Index\n\n### projects/new.md\n- original_path: projects/new.md\n- state: archived\n"
         "- archived_at: 2026-11-01\n- reason: x\n- active_index_line: - projects/new.md — n\n\n"
         "## projects/old.md\n- status: trashed\n- original: projects/old.md\n- location: _archive/_trash/projects/old.md\n"
         "- index-line: - [Old](projects/old.md) — old\n- archived: 2026-10-01\n- reason: y\n"
         "- deleted: 2026-10-02\n- recover-by: 2026-11-01\n- extra-key: kept\n")


@pytest.mark.parametrize("target", [V010, PMEM])
def test_migrate_previews_then_converts_every_record_keeping_every_field(tmp_path: Path, target: str) -> None:
    root = v010_root(tmp_path, archive=MIXED)
    write_root(root, {"_archive/projects/new.md": "# N\n", "_archive/_trash/projects/old.md": "# O\n"})
    before = {r.title: {(f.key, f.value) for f in r.fields} for r in parse_archive_index(MemoryFile(MIXED))}
    plan = make_plan(context(root, DAY), "migrate", target)
    assert text(root, AI) == MIXED  # a plan changes nothing
    assert "rewrite 1 record(s)" in plan.preview
    run_steps(root, plan)
    after = parse_archive_index(MemoryFile(text(root, AI)))
    assert {r.dialect for r in after} == {target}
    if target == V010:  # a saved line becomes the one the reference CLI reads (issue 40)
        before["projects/old.md"] = {(k, "- projects/old.md — old" if k == "index-line" else v)
                                     for k, v in before["projects/old.md"]}
    for r in after:
        fields = {(f.key, f.value) for f in r.fields}
        assert fields - {("location", "_archive/_trash/projects/old.md"), ("location", "_archive/projects/new.md")} == \
            before[r.title] - {("location", "_archive/_trash/projects/old.md")}
    assert [c for c, _ in pm3(root) if c in ("PM306", "PM307")] == []
    if target == V010:
        assert ref.records(text(root, AI))["projects/old.md"]["recover_deadline"] == "2026-11-01"
    else:
        assert ref.records(text(root, AI)) == {}
    assert make_plan(context(root, DAY), "migrate", target).steps == ()


def test_migrate_to_v010_rewrites_route_lines_the_reference_reads(tmp_path: Path) -> None:
    index = "# Memory index\n\n- [A](projects/a.md) — the a project\n* `projects/b.md`: b\n- [C](<notes/c d.md>) — spaced\n"
    root = v010_root(tmp_path, index=index)
    write_root(root, {"notes/c d.md": "# CD\n"})
    run_steps(root, make_plan(context(root, DAY), "migrate", V010))
    assert text(root, "_index.md") == ("# Memory index\n\n- projects/a.md — the a project\n- projects/b.md — b\n"
                                       "- [C](<notes/c d.md>) — spaced\n")
    assert ref.status_routes(root)[:2] == [("projects/a.md", True), ("projects/b.md", True)]


def test_migrate_refuses_an_unknown_dialect(tmp_path: Path) -> None:
    with pytest.raises(Refusal):
        make_plan(context(v010_root(tmp_path), DAY), "migrate", "v9")


def test_a_root_made_by_init_is_written_in_v010(tmp_path: Path) -> None:
    root = tmp_path / "new"
    run_steps(root, make_plan(context(root, DAY), "init"))
    write_root(root, {"projects/a.md": "# A\n\n## Summary\n- one\n- two\n- three\n"})
    pmem(root, "route", "projects/a.md")
    assert ref.status_routes(root) == [("projects/a.md", True)]
    pmem(root, "archive", "projects/a.md", "done")
    assert ref.records(text(root, AI))["projects/a.md"]["active_index_line"] == "- projects/a.md — one"


def test_reference_delete_then_pmem_recover_from_the_trash(tmp_path: Path) -> None:
    root = v010_root(tmp_path)
    ref.archive(root, "notes/c.md", "old", DAY)
    ref.delete(root, "notes/c.md", DAY)
    assert pm3(root, LATER) == []  # no PM301 on the trashed file, no PM302, no PM303
    plan = pmem(root, "recover", "notes/c.md", today=LATER)
    assert plan.facts["proposed"] == "no" and (root / "notes/c.md").is_file()
    assert text(root, "_index.md").splitlines()[-1] == "- notes/c.md — c notes"
    assert ref.records(text(root, AI)) == {}


_PATH = st.tuples(st.sampled_from(["projects", "notes", "笔记"]),
                  st.text(st.characters(whitelist_categories=("Ll", "Lu", "Lo", "Nd"), whitelist_characters="-_.()"),
                          min_size=1, max_size=12)).map(lambda t: f"{t[0]}/{t[1]}.md")


@settings(max_examples=200, deadline=None)
@given(path=_PATH, desc=_TEXT.map(_one_line).filter(bool), form=st.sampled_from(["link", "code", "angle", "wiki"]))
def test_migrated_route_lines_read_alike_with_both_readers(tmp_path_factory, path: str, desc: str, form: str) -> None:
    from pmem_lsp.engine.index_edit import format_target, reads_back
    from pmem_lsp.engine.index_routes import parse_index
    from pmem_lsp.engine.lifecycle.operations import migrate_routes

    target = format_target(form, path, "Title")
    line = f"- {target} — {desc}"
    if not reads_back(line, path) or "—" in desc:
        return
    new, changed = migrate_routes(f"# Memory Index\n\n{line}\n")
    routes = parse_index(MemoryFile(new)).routes
    assert [r.path for r in routes] == [path]
    if changed:
        root = tmp_path_factory.mktemp("idx")
        (root / "_index.md").write_text(new, encoding="utf-8")
        assert [p for p, _ in ref.status_routes(root)] == [path]
        assert " ".join(routes[0].description.split()) == desc


def test_records_under_a_grouping_heading_the_reference_never_finds_are_not_merged(tmp_path: Path) -> None:
    archive = ("# Archive index\n\n### 2026\n\n#### projects/a.md\n- status: archived\n- original: projects/a.md\n"
               "- location: _archive/projects/a.md\n- index-line: - [A](projects/a.md) — a\n- archived: 2026-11-01\n"
               "- reason: x\n")
    root = v010_root(tmp_path, archive=archive, index="- [B](projects/b.md) — b\n")
    write_root(root, {"_archive/projects/a.md": "# A\n", "projects/a.md": None})
    assert [c for c, _ in pm3(root)] == []


def test_a_v010_record_hovers_in_its_own_spelling() -> None:
    from pmem_lsp.engine.navigation.hover_text import record_card

    archive = ("### notes/x.md\n- original_path: notes/x.md\n- state: trashed\n- archived_at: 2026-11-01\n"
               "- reason: old\n- active_index_line: - notes/x.md — x\n- deleted_at: 2026-11-02\n"
               "- recover_deadline: 2026-12-02\n")
    (record,) = parse_archive_index(MemoryFile(archive))
    card = "\n".join(record_card(record, DAY))
    assert "- original_path: `notes/x.md`" in card and "- recover_deadline: 2026-12-02 — 12 days left" in card


# -- a field over several lines (issue 40) --------------------------------------------
@pytest.mark.parametrize("second_line", ["and the follow-up is elsewhere", "```", "<div>", "the end: really"])
def test_a_multi_line_reason_is_one_field_and_recover_restores_the_saved_line(tmp_path: Path,
                                                                              second_line: str) -> None:
    """The reference CLI writes a reason with a line break as continuation lines that are not
    `- key:` fields. Read as Markdown, a continuation like a fence or an HTML block hid the
    `active_index_line` below it, and recover invented a route instead of restoring it."""
    root = v010_root(tmp_path, index=V010_INDEX.replace("- projects/b.md — the b project\n",
                                                        "- projects/b.md — the b project (hand-written)\n"))
    ref.archive(root, "projects/b.md", f"shipped\n{second_line}", DAY)
    assert f"- reason: shipped\n{second_line}\n- active_index_line: " in text(root, AI)
    records = parse_archive_index(MemoryFile(text(root, AI)))
    assert [r.get("reason") for r in records] == [f"shipped\n{second_line}"]
    assert records[0].saved_route == "- projects/b.md — the b project (hand-written)"
    plan = pmem(root, "recover", "projects/b.md", today=LATER)
    assert plan.facts["proposed"] == "no"
    assert "- projects/b.md — the b project (hand-written)" in text(root, "_index.md").splitlines()
    assert ref.records(text(root, AI)) == {} and "shipped" not in text(root, AI)


def test_pmem_delete_keeps_a_multi_line_reason_whole(tmp_path: Path) -> None:
    """Fields a delete adds go after the last field's last line, never inside a continued value."""
    root = v010_root(tmp_path)
    ref.archive(root, "projects/b.md", "shipped", DAY)
    (root / AI).write_text(text(root, AI).replace("- active_index_line: - projects/b.md — the b project\n", "")
                           + "- reason2: one\nand two\n", encoding="utf-8")
    pmem(root, "delete", "projects/b.md", today=LATER)
    assert "- reason2: one\nand two\n" in text(root, AI)
    [record] = parse_archive_index(MemoryFile(text(root, AI)))
    assert record.get("reason2") == "one\nand two" and record.status == "trashed"
