"""PM403, PM501–PM503 and the health proposal, in the engine: plain and git-backed roots,
English and Chinese wording, duplicates found by sketch and checked exactly, incrementally."""

from __future__ import annotations

import builtins
import datetime as dt
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import TODAY, findings, only, rows, scan
from pmem_lsp.engine import status_report as status_module
from pmem_lsp.engine.analysis import Analysis
from pmem_lsp.engine.health_proposal import ARCHIVE, DELETE, KEEP, archive_reason, health_report
from pmem_lsp.engine.rules import stale as stale_module
from pmem_lsp.engine.rules.duplicates import BUCKET_CAP
from pmem_lsp.engine.status_report import memory_status
from roots import BERTHS, CRANES, DEMO, TRASH_RECORDS, active_file, demo_copy, edited, git, make_root

DAY = 86400.0


def at_noon(day: dt.date) -> float:
    return time.mktime(dt.datetime(day.year, day.month, day.day, 12).timetuple())


def age(root: Path, rel: str, days: int) -> None:
    """Set `rel`'s modification time to `days` before TODAY."""
    when = at_noon(TODAY - dt.timedelta(days=days))
    os.utime(root / rel, (when, when))


def health_rows(root: Path, overrides=None, today=TODAY) -> list[tuple]:
    return rows(only(findings(root, overrides, today), "PM403", "PM5"))


# -- PM501 stale -----------------------------------------------------------------------------


def test_pm501_by_modification_time(tmp_path):
    root = make_root(tmp_path)
    age(root, "projects/alpha.md", 120)
    age(root, "notes/beta.md", 30)
    age(root, "_core/profile.md", 400)  # core files are never stale
    found = only(findings(root), "PM501")
    assert rows(found) == [("projects/alpha.md", 0, "PM501")]
    since = (TODAY - dt.timedelta(days=120)).isoformat()
    assert found[0].message == (f"unchanged since {since}, 120 days ago (by its modification time; "
                                "`stale.days` is 90): archive it if it is no longer needed")
    assert found[0].severity.value == "information"


def test_pm501_honours_stale_days_and_the_boundary(tmp_path):
    root = make_root(tmp_path)
    age(root, "projects/alpha.md", 90)
    age(root, "notes/beta.md", 89)
    assert health_rows(root) == [("projects/alpha.md", 0, "PM501")]
    assert health_rows(root, {"stale": {"days": 30}}) == [("notes/beta.md", 0, "PM501"), ("projects/alpha.md", 0, "PM501")]
    assert health_rows(root, {"ignore": ["PM501"]}) == []


def test_pm501_archived_and_trashed_files_are_never_stale(tmp_path):
    root = make_root(tmp_path, {"_archive/projects/old.md": active_file("Old"),
                                "_archive/_trash/projects/older.md": active_file("Older")})
    for rel in ("_archive/projects/old.md", "_archive/_trash/projects/older.md"):
        age(root, rel, 500)
    assert only(findings(root), "PM501") == []


def git_root(tmp_path: Path) -> Path:
    """A root committed in three steps: alpha long ago, beta recently, gamma never."""
    root = make_root(tmp_path, {"notes/gamma.md": active_file("Gamma")})
    git(root, "init", "-q")
    git(root, "add", "_core", "_archive", "projects/alpha.md")
    git(root, "commit", "-qm", "old", when=dt.datetime(2026, 3, 2, 12))
    git(root, "add", "notes/beta.md", "_index.md")
    git(root, "commit", "-qm", "recent", when=dt.datetime(2026, 11, 20, 12))
    return root


pytestmark_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytestmark_git
def test_pm501_in_a_git_repository_the_last_commit_decides(tmp_path, monkeypatch):
    root = git_root(tmp_path)
    # A fresh clone: every modification time is "now". Gamma is untracked and old by mtime.
    age(root, "notes/gamma.md", 200)
    calls = []
    real_run = subprocess.run

    def counting_run(cmd, *a, **kw):
        calls.append(cmd)
        return real_run(cmd, *a, **kw)

    monkeypatch.setattr(stale_module.subprocess, "run", counting_run)
    found = only(findings(root), "PM501")
    assert rows(found) == [("notes/gamma.md", 0, "PM501"), ("projects/alpha.md", 0, "PM501")]
    assert "unchanged since 2026-03-02, 274 days ago (by its last commit;" in found[1].message
    assert "(by its modification time;" in found[0].message
    # One `git log` for the whole root (and one `git status`), never one process per file.
    assert [c[c.index("log")] for c in calls if "log" in c] == ["log"]
    assert len(calls) == 2


@pytestmark_git
def test_pm501_git_uncommitted_changes_count_by_their_modification_time(tmp_path):
    root = git_root(tmp_path)
    (root / "projects/alpha.md").write_text(active_file("Alpha project", body="Edited today.\n"))
    assert only(findings(root), "PM501") == []  # modified since its 2026-03-02 commit
    age(root, "projects/alpha.md", 100)  # ...but that edit is itself old
    assert rows(only(findings(root), "PM501")) == [("projects/alpha.md", 0, "PM501")]


@pytestmark_git
def test_pm501_git_checks_change_nothing_in_the_repository(tmp_path):
    root = git_root(tmp_path)
    # A stat-dirty index (touched file): `git status` would normally rewrite `.git/index`.
    os.utime(root / "notes/beta.md")

    def digest() -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    before = digest()
    findings(root)
    assert digest() == before


def test_pm501_without_git_falls_back_to_mtime(tmp_path, monkeypatch):
    root = make_root(tmp_path)
    (root / ".git").mkdir()  # looks like a repository, but git cannot read it
    age(root, "notes/beta.md", 95)
    assert health_rows(root) == [("notes/beta.md", 0, "PM501")]
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))  # no git at all
    assert health_rows(root) == [("notes/beta.md", 0, "PM501")]


# -- PM502 concluded -------------------------------------------------------------------------


@pytest.mark.parametrize("text, line", [
    (active_file("A", metadata="Status: done\n"), 2),
    (active_file("A", metadata="Owner: Mara\nStatus: Completed (2026-05-01)\n"), 3),
    (active_file("A", metadata="**Status:** shipped\n"), 2),
    (active_file("A", metadata="State: closed — handed over\n"), 2),
    ("---\nstatus: finished\n---\n" + active_file("A", metadata=""), 1),
    (active_file("A", metadata="状态：已完成\n"), 2),
    (active_file("A", metadata="状态: 结束\n"), 2),
    (active_file("A", summary="## Summary\n- Client work for the harbour.\n- Status: concluded\n- Paid.\n"), 6),
    (active_file("A", summary="## Summary\n- Completed on 2026-03-01; the client signed off.\n- B.\n- C.\n"), 5),
    (active_file("A", summary="## Summary\n- The project is finished.\n- B.\n- C.\n"), 5),
    (active_file("A", summary="## Summary\n- ✅ Done.\n- B.\n- C.\n"), 5),
    (active_file("A", summary="## 摘要\n- 项目已完成，客户已验收。\n- 预算：十万。\n- 负责人：张三。\n"), 5),
    (active_file("A", summary="## 摘要\n- 已结束（2026-06）。\n- 预算：十万。\n- 负责人：张三。\n"), 5),
    (active_file("A", summary="## Summary\n- Completed: 2026-05-01\n- B.\n- C.\n"), 5),
])
def test_pm502_concluded_in_english_and_chinese(tmp_path, text, line):
    root = make_root(tmp_path, {"notes/done.md": text})
    assert health_rows(root) == [("notes/done.md", line, "PM502")]


@pytest.mark.parametrize("text", [
    active_file("A", metadata="Status: not done\n"),
    active_file("A", metadata="Status: active\n"),
    active_file("A", metadata="Status: doneish\n"),
    active_file("A", metadata="Notes: done with the first draft\n"),
    active_file("A", metadata="状态：进行中\n"),
    active_file("A", summary="## Summary\n- Shipped v1; v2 planned for March.\n- B.\n- C.\n"),
    active_file("A", summary="## Summary\n- Completed the ERP source; stock levels next.\n- B.\n- C.\n"),
    active_file("A", summary="## Summary\n- Done: webshop; pending: ERP.\n- B.\n- C.\n"),
    active_file("A", summary="## 摘要\n- 已完成第一阶段。\n- 预算：十万。\n- 负责人：张三。\n"),
    active_file("A", summary="## 摘要\n- 完成度 80%。\n- 预算：十万。\n- 负责人：张三。\n"),
    active_file("A", body="## Log\n- Done.\nStatus: done\n"),  # neither metadata nor summary
    # A reading list: some listed things were finished, the list itself is not (issue 13).
    active_file("Reading list", summary="## Summary\n- Finished in 2026: Dune, Piranesi, The Overstory.\n"
                "- Reading now: Middlemarch.\n- Next: a history of the Baltic.\n"),
    active_file("A", summary="## Summary\n- Done: login page and signup.\n- B.\n- C.\n"),
])
def test_pm502_not_for_progress_or_elsewhere(tmp_path, text):
    root = make_root(tmp_path, {"notes/open.md": text})
    assert health_rows(root) == []


def test_pm502_only_in_active_files_and_its_reason_quotes_the_line(tmp_path):
    root = make_root(tmp_path, {"_archive/notes/old.md": active_file("Old", metadata="Status: archived\n"),
                                "notes/done.md": active_file("Done", metadata="Status: done\n"),
                                "_core/work.md": "# Work\n\nStatus: done\n"})
    found = only(findings(root), "PM5")
    assert rows(found) == [("notes/done.md", 2, "PM502")]
    assert (found[0].col, found[0].end_col) == (0, len("Status: done"))
    assert archive_reason(found[0]) == "concluded: Status: done"


def test_pm502_reason_masks_a_secret_on_the_line(tmp_path):
    token = "Tr0ub4dor" + "&3xyzQ"
    root = make_root(tmp_path, {"notes/done.md": active_file(
        "Done", summary=f"## Summary\n- Status: done, password: {token}\n- B.\n- C.\n")})
    found = only(findings(root), "PM502")
    reason = archive_reason(found[0])
    assert reason.startswith("concluded: Status: done, password: ") and token not in reason
    assert token not in found[0].message


# -- PM503 duplicates ------------------------------------------------------------------------


def test_pm503_a_renamed_copy_with_a_few_words_changed_is_found(tmp_path):
    copy = edited(CRANES, ("fifteen minutes", "ten minutes"), ("north quay", "south quay"),
                  ("night shift and why", "evening shift and why"))
    root = make_root(tmp_path, {"projects/cranes.md": CRANES, "notes/crane-dashboard-2.md": copy})
    age(root, "projects/cranes.md", 10)  # the original is older
    found = only(findings(root), "PM503")
    assert rows(found) == [("notes/crane-dashboard-2.md", 0, "PM503")]
    assert found[0].message.startswith("near-duplicate of `projects/cranes.md` (same title, 9")
    assert archive_reason(found[0]) == "duplicate of projects/cranes.md"


def test_pm503_titles_are_the_same_as_normalised(tmp_path):
    """Case, punctuation and width do not make another title (the sketch keeps the title as
    written and normalises it only for a pair)."""
    copy = edited(CRANES, ("# Harbour crane dashboard", "# ＨＡＲＢＯＵＲ crane-dashboard!"), ("fifteen", "twenty"))
    root = make_root(tmp_path, {"projects/cranes.md": CRANES, "notes/copy.md": copy})
    age(root, "projects/cranes.md", 10)
    found = only(findings(root), "PM503")
    assert rows(found) == [("notes/copy.md", 0, "PM503")]
    assert "(same title, " in found[0].message


def test_pm503_a_retitled_copy_is_found_by_its_text(tmp_path):
    copy = edited(CRANES, ("# Harbour crane dashboard", "# Crane dashboards (copy)"), ("fifteen", "twenty"))
    root = make_root(tmp_path, {"projects/cranes.md": CRANES, "notes/copy.md": copy})
    age(root, "projects/cranes.md", 10)
    found = only(findings(root), "PM503")
    assert rows(found) == [("notes/copy.md", 0, "PM503")]
    assert "same title" not in found[0].message


CRANE_UPKEEP = """# Harbour crane dashboard

Status: active

## Summary
- Maintenance view of the same cranes: breakdowns, spare parts and service intervals.
- Fed by the maintenance system's work orders, not by the terminal operating system.
- Owned by the technical department; the operations dashboard is a separate note.

## Context
The technical manager asked for a second page that shows which cranes are due for service
and which parts are on order. Work orders are exported nightly as a CSV file with the crane
number, the fault code, the technician and the hours spent on the repair.

Spreader faults are the most common, followed by hoist brakes and cabin air conditioning in
summer. Parts for the older cranes come from a single supplier in Finland, with lead times
of up to six weeks, so the page shows the stock of critical parts next to the due dates.

## Decisions
- Fault codes are grouped into five families agreed with the technicians in October.
- Service intervals are counted in operating hours, read from the crane's own counter.
"""


def test_pm503_two_different_notes_on_the_same_topic_are_not(tmp_path):
    # Same title, same cranes, same harbour: different notes.
    root = make_root(tmp_path, {"projects/cranes.md": CRANES, "projects/crane-upkeep.md": CRANE_UPKEEP,
                                "projects/berths.md": BERTHS})
    assert only(findings(root), "PM503") == []


def test_pm503_reported_on_the_newer_then_the_shorter(tmp_path):
    longer = CRANES + "\nOne more line that only the longer copy has, at the end.\n"
    root = make_root(tmp_path, {"a/cranes.md": CRANES, "b/cranes.md": longer})
    now = time.time()
    os.utime(root / "a/cranes.md", (now, now))
    os.utime(root / "b/cranes.md", (now - 5 * DAY, now - 5 * DAY))
    assert rows(only(findings(root), "PM503")) == [("a/cranes.md", 0, "PM503")]  # newer
    os.utime(root / "b/cranes.md", (now, now))
    assert rows(only(findings(root), "PM503")) == [("a/cranes.md", 0, "PM503")]  # same age: shorter


@pytest.mark.parametrize("apart", [0.000_001, 0.3, 0.999])
def test_pm503_files_copied_together_tie_whichever_was_written_last(tmp_path, apart):
    """Two files copied together get change times microseconds apart, in either order: within
    `TIE_WINDOW` that is a tie, so the shorter is reported, then the later path — the same
    file whichever of the two the copy wrote last."""
    longer = CRANES + "\nOne more line that only the longer copy has, at the end.\n"
    root = make_root(tmp_path, {"a/cranes.md": CRANES, "b/cranes.md": longer,
                                "c/quay.md": BERTHS, "d/quay.md": BERTHS})
    now = time.time()
    for first, second in (("a/cranes.md", "b/cranes.md"), ("b/cranes.md", "a/cranes.md")):
        for later, earlier in ((second, first), ("d/quay.md", "c/quay.md")):
            os.utime(root / earlier, (now, now))
            os.utime(root / later, (now + apart, now + apart))
        # the shorter of the pair; for two copies of one size, the later path
        assert rows(only(findings(root), "PM503")) == [("a/cranes.md", 0, "PM503"), ("d/quay.md", 0, "PM503")]
        os.utime(root / "c/quay.md", (now + apart, now + apart))
        os.utime(root / "d/quay.md", (now, now))
        assert rows(only(findings(root), "PM503")) == [("a/cranes.md", 0, "PM503"), ("d/quay.md", 0, "PM503")]


def test_pm503_a_second_apart_is_no_tie(tmp_path):
    """From `TIE_WINDOW` on, the later change is reported, the longer file too."""
    longer = CRANES + "\nOne more line that only the longer copy has, at the end.\n"
    root = make_root(tmp_path, {"a/cranes.md": CRANES, "b/cranes.md": longer})
    now = time.time()
    os.utime(root / "a/cranes.md", (now, now))
    os.utime(root / "b/cranes.md", (now + 1.0, now + 1.0))
    assert rows(only(findings(root), "PM503")) == [("b/cranes.md", 0, "PM503")]


def test_pm503_threshold_setting(tmp_path):
    lines = CRANES.splitlines()
    long_lines = [i for i, line in enumerate(lines) if len(line) >= 20]
    # Three of the fifteen long lines rewritten (at most five, so always a candidate): about
    # 0.69 similar, not near-identical.
    rewritten = {long_lines[2], long_lines[7], long_lines[12]}
    copy = "\n".join(f"Replaced with a different sentence about something else, number {i} of the copy."
                     if i in rewritten else line for i, line in enumerate(lines)) + "\n"
    root = make_root(tmp_path, {"projects/cranes.md": CRANES, "notes/quay.md": copy.replace("# Harbour", "# Quay")})
    age(root, "projects/cranes.md", 3)
    assert only(findings(root), "PM503") == []
    assert only(findings(root, {"duplicates": {"threshold": 0.75}}), "PM503") == []
    found = only(findings(root, {"duplicates": {"threshold": 0.6}}), "PM503")
    assert rows(found) == [("notes/quay.md", 0, "PM503")] and "(68% similar text)" in found[0].message
    # The same title does not lower the bar: a pair is similar at the threshold, or no pair.
    (root / "notes/quay.md").write_text(copy, encoding="utf-8")
    assert only(findings(root), "PM503") == []
    found = only(findings(root, {"duplicates": {"threshold": 0.6}}), "PM503")
    assert rows(found) == [("notes/quay.md", 0, "PM503")] and "(same title, 68% similar text)" in found[0].message


def test_pm503_short_notes_are_never_duplicates(tmp_path):
    root = make_root(tmp_path, {"notes/a.md": active_file("Same"), "notes/b.md": active_file("Same")})
    assert only(findings(root), "PM503") == []


def test_pm503_chinese_copies(tmp_path):
    text = ("# 四川家常菜笔记\n\n## 摘要\n- 麻婆豆腐要用郫县豆瓣和花椒面，最后勾芡两次。\n- 回锅肉先煮后炒，五花肉切薄片。\n"
            "- 鱼香肉丝没有鱼，靠泡椒、糖和醋的比例。\n\n## 细节\n" +
            "".join(f"第{i}步：把锅烧热，放油，等油温到六成热再下料，火候要稳，不要着急翻炒。\n" for i in range(8)))
    copy = text.replace("六成热", "七成热", 1).replace("# 四川家常菜笔记", "# 川菜笔记")
    root = make_root(tmp_path, {"notes/sichuan.md": text, "notes/chuan.md": copy})
    age(root, "notes/sichuan.md", 2)
    assert rows(only(findings(root), "PM503")) == [("notes/chuan.md", 0, "PM503")]


def test_pm503_incremental_matches_a_fresh_analysis_and_stays_local(tmp_path):
    notes = {f"notes/n{i}.md": edited(BERTHS, ("# Berth planning model", f"# Note {i}"),
                                      ("fourteen days", f"{i} days and {i * 7} hours"),
                                      ("once an hour", f"every {i} minutes"),
                                      ("every quarter", f"every {i} weeks"),
                                      ("a spreadsheet", f"spreadsheet {i}"),
                                      ("Python package", f"package {i}"),
                                      ("overlapping bars", f"bars {i}"),
                                      ("last quarter", f"last {i} months")) for i in range(30)}
    root = make_root(tmp_path, {"projects/cranes.md": CRANES, **notes})
    age(root, "projects/cranes.md", 5)
    analysis = Analysis(scan(root), TODAY)
    assert only(analysis.all(), "PM503") == []

    def apply(rel: str, text: str | None) -> set[str]:
        path = root / rel
        if text is None:
            path.unlink()
        else:
            path.write_text(text, encoding="utf-8")
        return analysis.update(analysis.state.refresh(rel))

    def fresh() -> dict:
        return Analysis(scan(root), TODAY).by_path()

    before = analysis.duplicates.compared
    changed = apply("notes/copy.md", edited(CRANES, ("fifteen", "five")))
    assert analysis.duplicates.compared - before <= 2  # compared with its candidates only
    assert "notes/copy.md" in changed
    assert rows(only(analysis.all(), "PM503")) == [("notes/copy.md", 0, "PM503")]
    assert analysis.by_path() == fresh()
    # The copy drifts away: its finding goes.
    apply("notes/copy.md", BERTHS.replace("Berth planning", "Something else entirely") + CRANES[:200])
    assert only(analysis.all(), "PM503") == []
    assert analysis.by_path() == fresh()
    # It comes back; then the original is edited (now newer): the finding moves to it.
    apply("notes/copy.md", edited(CRANES, ("fifteen", "five")))
    os.utime(root / "notes/copy.md", (time.time() - DAY, time.time() - DAY))
    analysis.update(analysis.state.refresh("notes/copy.md"))  # a day old now, for the analysis too
    changed = apply("projects/cranes.md", CRANES.replace("Power BI", "Power BI Premium"))
    assert {"projects/cranes.md", "notes/copy.md"} <= changed
    assert rows(only(analysis.all(), "PM503")) == [("projects/cranes.md", 0, "PM503")]
    assert analysis.by_path() == fresh()
    # The original goes away: nothing left to duplicate.
    apply("notes/copy.md", None)
    assert only(analysis.all(), "PM503") == []
    assert analysis.by_path() == fresh()


# -- PM403 source-path-missing ---------------------------------------------------------------


def test_pm403_missing_pointers_in_code_spans_and_links(tmp_path):
    real = tmp_path / "source.csv"
    real.write_text("a,b\n")
    body = ("## Sources\n"
            "- Raw exports: `~/pmem-test-does-not-exist/exports/` and `~/pmem-test-does-not-exist/x.csv:12`\n"
            f"- Present: `{real}` and [present]({real})\n"
            "- Spec: [spec](/home/pmem-test-nobody/spec.pdf) and [home](~/pmem-test-gone.md#part)\n"
            "- Not pointers: `/api/v1/orders`, `cd ~/code && make`, `~/<project>/notes`, `/tmp/*.csv`, "
            "`//cdn/x.js`\n"
            "```\n~/pmem-test-does-not-exist/in-a-fence.md\n`~/pmem-test-does-not-exist/fenced`\n```\n")
    root = make_root(tmp_path, {"notes/src.md": active_file("Sources", body=body),
                                "_core/profile.md": "# Profile\n\n- Photo folder: `/Users/pmem-test-nobody/photos`\n",
                                "_archive/notes/old.md": active_file("Old", body="`~/pmem-test-gone/archived`\n")})
    found = only(findings(root), "PM403")
    assert [(f.path, f.line, f.message.split("`")[1]) for f in found] == [
        ("_core/profile.md", 2, "/Users/pmem-test-nobody/photos"),
        ("notes/src.md", 10, "~/pmem-test-does-not-exist/exports/"),
        ("notes/src.md", 10, "~/pmem-test-does-not-exist/x.csv:12"),
        ("notes/src.md", 12, "/home/pmem-test-nobody/spec.pdf"),
        ("notes/src.md", 12, "~/pmem-test-gone.md#part"),
    ]
    line = (root / "notes/src.md").read_text().splitlines()[10]
    assert line[found[1].col:found[1].end_col] == "~/pmem-test-does-not-exist/exports/"
    assert found[1].severity.value == "information"


def test_pm403_only_stats_never_reads_outside_the_root(tmp_path, monkeypatch):
    outside = tmp_path / "outside.md"
    outside.write_text("# secret source\n")
    root = make_root(tmp_path, {"notes/src.md": active_file("Sources", body=f"Sources: `{outside}` and `{tmp_path}/gone.md`.\n")})
    state = scan(root)
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *a, **kw):
        opened.append(str(file))
        return real_open(file, *a, **kw)

    def spy_os_open(path, *a, **kw):
        opened.append(str(path))
        return real_os_open(path, *a, **kw)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    found = only(Analysis(state, TODAY).all(), "PM403")
    assert [f.message.split("`")[1] for f in found] == [f"{tmp_path}/gone.md"]
    assert not [p for p in opened if not p.startswith(str(root))]


# -- the demo --------------------------------------------------------------------------------


def test_the_demo_has_no_health_findings_even_with_fresh_or_old_mtimes(tmp_path):
    assert health_rows(DEMO, today=dt.date.today()) == []
    copy = tmp_path / "demo"
    demo_copy(copy)
    found = health_rows(copy, today=dt.date.today())
    assert found == []  # a fresh clone: every file is new
    for path in copy.rglob("*.md"):
        os.utime(path, (time.time() - 400 * DAY,) * 2)
    assert {code for _, _, code in health_rows(copy, today=dt.date.today())} == {"PM501"}


# -- the health proposal ---------------------------------------------------------------------

def health_root(tmp_path: Path) -> Path:
    copy = edited(CRANES, ("fifteen", "five"))
    root = make_root(tmp_path, {"projects/cranes.md": CRANES, "notes/cranes-copy.md": copy,
                                "projects/berths.md": BERTHS.replace("Status: active", "Status: done"),
                                "notes/beta.md": active_file("Beta note"),
                                "_archive/_trash/projects/ancient.md": active_file("Ancient"),
                                "_archive/_trash/projects/recent.md": active_file("Recent"),
                                "_archive/_index.md": TRASH_RECORDS})
    age(root, "projects/cranes.md", 120)
    age(root, "notes/beta.md", 100)
    age(root, "projects/berths.md", 200)
    return root


def test_health_report_classifies_each_candidate_with_its_command(tmp_path):
    root = health_root(tmp_path)
    report = health_report(Analysis(scan(root), TODAY))
    got = [(i.number, i.proposal, i.path, i.reason, i.command, i.arguments) for i in report.items]
    since = (TODAY - dt.timedelta(days=100)).isoformat()
    assert got == [
        (1, DELETE, "notes/cranes-copy.md",
         "duplicate of projects/cranes.md; archive it first, delete it from the archive later",
         "pmem.archive", {"path": "notes/cranes-copy.md", "reason": "duplicate of projects/cranes.md"}),
        # Grouped by why, the most relevant first: concluded, then stale by age (oldest first).
        (2, ARCHIVE, "projects/berths.md", "concluded: Status: done; also unchanged for 200 days",
         "pmem.archive", {"path": "projects/berths.md", "reason": "concluded: Status: done"}),
        # The original is stale too, so it is a candidate of its own rather than "keep".
        (3, ARCHIVE, "projects/cranes.md", f"stale: unchanged since {(TODAY - dt.timedelta(days=120)).isoformat()}",
         "pmem.archive", {"path": "projects/cranes.md",
                          "reason": f"stale: unchanged since {(TODAY - dt.timedelta(days=120)).isoformat()}"}),
        (4, ARCHIVE, "notes/beta.md", f"stale: unchanged since {since}",
         "pmem.archive", {"path": "notes/beta.md", "reason": f"stale: unchanged since {since}"}),
    ]
    assert [(t.path, t.recover_by.isoformat(), t.days_expired, t.command, t.arguments) for t in report.expired_trash] == [
        ("_archive/_trash/projects/ancient.md", "2026-10-01", 61, "pmem.purge",
         {"path": "_archive/_trash/projects/ancient.md"})]
    assert report.lifecycle_ready
    assert [i.group for i in report.items] == ["duplicate", "concluded", "stale", "stale"]
    text = report.text()
    assert "Proposal: 4 items (1 duplicate, 1 concluded, 2 stale)" in text
    assert text.index("Duplicates — archive the copy (1):") < text.index("Concluded — archive (1):") \
        < text.index("Stale — archive, the longest unchanged first (2):")
    assert "  1. delete: notes/cranes-copy.md — duplicate of projects/cranes.md;" in text
    assert text.index("Expired trash") > text.index("  4. archive")
    assert "  - _archive/_trash/projects/ancient.md (was projects/ancient.md): recover-by 2026-10-01, expired 61 days ago" in text
    assert "recent.md" not in text  # not expired yet


def stale_root(tmp_path: Path, n: int, fresh: int = 1) -> Path:
    """A root of `n` stale notes (n+1 … 2n+100 days old) beside `fresh` current ones."""
    files = {f"notes/n{i:03}.md": active_file(f"Note {i}") for i in range(n)}
    files.update({f"projects/f{i}.md": active_file(f"Fresh {i}") for i in range(fresh)})
    root = make_root(tmp_path, {**files, "projects/alpha.md": None, "notes/beta.md": None})
    for i in range(n):
        age(root, f"notes/n{i:03}.md", 100 + i)
    return root


def test_health_text_is_grouped_bounded_and_oldest_first_while_json_keeps_every_item(tmp_path):
    root = stale_root(tmp_path, 25)
    report = health_report(Analysis(scan(root), TODAY))
    assert len(report.items) == 25 and not report.all_stale
    text = report.text()
    listed = [line for line in text.splitlines() if ". archive: notes/" in line]
    # The ten longest unchanged, in that order, then a count of the rest.
    assert [line.split("archive: ")[1].split(" ")[0] for line in listed] == [
        f"notes/n{i:03}.md" for i in range(24, 14, -1)]
    assert "  … and 15 more" in text and "`pmem health --all` lists every item" in text
    everything = report.text(None)
    assert sum(". archive: notes/" in line for line in everything.splitlines()) == 25
    assert "more" not in everything
    data = report.as_dict()
    assert len(data["items"]) == 25 and data["groups"] == [
        {"group": "stale", "title": "Stale — archive, the longest unchanged first", "count": 25}]
    assert data["allStale"] is False and data["activeFiles"] == 26


def test_health_of_a_root_where_everything_is_stale_says_so_in_one_line(tmp_path):
    root = stale_root(tmp_path, 40, fresh=0)
    report = health_report(Analysis(scan(root), TODAY))
    assert report.all_stale and len(report.items) == 40
    text = report.text()
    newest = (TODAY - dt.timedelta(days=100)).isoformat()
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("Everything is stale")] == [
        f"Everything is stale: none of the 40 active files changed since {newest}. Archive what is finished, "
        "or raise `stale.days` for a root of reference notes (`pmem health --all` lists them)."]
    assert not any(". archive: " in line for line in lines)
    assert len(lines) < 10
    assert sum(". archive: " in line for line in report.text(None).splitlines()) == 40
    assert report.as_dict()["allStale"] is True


def test_health_keeps_the_original_of_a_duplicate(tmp_path):
    root = health_root(tmp_path)
    age(root, "projects/cranes.md", 10)  # the original is current, and older than its copy
    report = health_report(Analysis(scan(root), TODAY))
    keep = [i for i in report.items if i.proposal == KEEP]
    assert [(i.path, i.reason, i.command) for i in keep] == [
        ("projects/cranes.md", "the copy to keep: notes/cranes-copy.md duplicates it", None)]
    assert report.as_dict()["items"][-1]["command"] is None


def test_health_without_lifecycle_structure_says_upgrade_first(tmp_path):
    root = make_root(tmp_path, {"_archive/_trash/": None, "_archive/_index.md": None, "_archive/": None})
    shutil.rmtree(root / "_archive")
    report = health_report(Analysis(scan(root), TODAY))
    assert not report.lifecycle_ready
    assert "run `pmem upgrade` before archiving" in report.text()


# -- status never reads the archive ----------------------------------------------------------


def test_status_counts_active_files_and_never_touches_the_archive(tmp_path, monkeypatch):
    root = make_root(tmp_path, {"notes/loose.md": active_file("Loose"), "_archive/projects/old.md": active_file("Old"),
                                "_archive/_index.md": TRASH_RECORDS, "raw/data.csv": "a,b\n"})
    index = (root / "_index.md").read_text().replace("- [Loose](notes/loose.md) — about loose\n", "")
    (root / "_index.md").write_text(index + "- [Old](_archive/projects/old.md) — archived\n")
    touched: list[str] = []

    def guard(real):
        def wrapper(path, *a, **kw):
            if "_archive" in os.fspath(path) if isinstance(path, (str, bytes, os.PathLike)) else False:
                touched.append(os.fspath(path))
                raise PermissionError(13, "the archive is off limits", os.fspath(path))
            return real(path, *a, **kw)
        return wrapper

    for module, name in ((builtins, "open"), (os, "scandir"), (os, "listdir"), (os, "stat"), (os, "lstat"), (os, "open")):
        monkeypatch.setattr(module, name, guard(getattr(module, name)))
    status = memory_status(root)
    monkeypatch.undo()
    assert touched == []
    assert [p for p, _ in status.active_files] == ["notes/beta.md", "notes/loose.md", "projects/alpha.md"]
    assert [p for p, _ in status.unrouted] == ["notes/loose.md"]
    assert [r.path for r in status.active] == ["notes/beta.md", "projects/alpha.md"]
    text = status.text()
    assert "Not routed: 1 active file, " in text and "All active files: 3, " in text
    assert "  _archive/projects/old.md — archived  (not an active memory file)" in text
    data = status.as_dict()
    assert data["active"]["files"] == 3 and data["active"]["unrouted"] == ["notes/loose.md"]
    assert status_module.tokens(data["active"]["bytes"]) == data["active"]["tokens"]


def test_pm403_only_pointers_not_every_path_in_prose(tmp_path):
    # Issue 13: a backticked system path in a sentence is an example or an instruction, not a
    # pointer to the user's material; a link target, a `Source:`-like line and the items
    # under a source heading are. Plain paths count there too; one finding per path per line.
    body = ("## Setup\n"
            "Edit `~/.zshrc-pmem-test-gone` and run `/usr/local/bin/pmem-test-gone` once; "
            "credentials live in `~/.aws/pmem-test-gone`.\n\n"
            "Source: ~/pmem-test-gone/homelab/ansible (and `~/pmem-test-gone/homelab/ansible` again)\n"
            "- Repo: `/srv/pmem-test-gone/site.git`\n"
            "- 来源：~/pmem-test-gone/资料/报告.pdf\n"
            "- Raw data: [exports](~/pmem-test-gone/exports.csv)\n\n"
            "## Materials\n"
            "- The scans, ~/pmem-test-gone/scans/ on the NAS\n"
            "### Older\n"
            "- `/mnt/pmem-test-gone/old`\n"
            "## Next steps\n"
            "- Copy it to ~/pmem-test-gone/elsewhere later\n")
    root = make_root(tmp_path, {"notes/src.md": active_file("Sources", body=body)})
    found = only(findings(root), "PM403")
    lines = (root / "notes/src.md").read_text(encoding="utf-8").splitlines()
    assert [(lines[f.line][:12], lines[f.line][f.col:f.end_col]) for f in found] == [
        ("Source: ~/pm", "~/pmem-test-gone/homelab/ansible"),
        ("- Repo: `/sr", "/srv/pmem-test-gone/site.git"),
        ("- 来源：~/pmem-", "~/pmem-test-gone/资料/报告.pdf"),
        ("- Raw data: ", "~/pmem-test-gone/exports.csv"),
        ("- The scans,", "~/pmem-test-gone/scans/"),
        ("- `/mnt/pmem", "/mnt/pmem-test-gone/old"),
    ]


def test_a_health_command_names_the_real_path_or_there_is_none_and_a_note_says_why():
    import os

    from pmem_lsp.engine.health_proposal import ARCHIVE, HealthItem

    def item(path: str) -> HealthItem:
        return HealthItem(1, path, ARCHIVE, "stale: unchanged since 2020-01-01", ("PM501",), "pmem.archive",
                          {"path": path, "reason": "stale"})

    plain = item("notes/with space.md")
    assert plain.as_dict()["command"] == ["pmem", "archive", "notes/with space.md", "--reason", "stale"]
    assert plain.as_dict(editor=True)["command"] == {"command": "pmem.archive",
                                                     "arguments": [{"path": "notes/with space.md", "reason": "stale"}]}
    token = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"
    for path in (os.fsdecode(b"notes/bad\xffname.md"), "notes/new\nline.md", f"notes/{token}.md"):
        for editor in (False, True):
            data = item(path).as_dict(editor)
            assert data["command"] is None and data["note"], data
            assert "\n" not in data["path"] and token not in repr(data["command"])
    assert item("notes/new\nline.md").as_dict()["path"] == "notes/new\\x0aline.md"


@pytest.mark.parametrize("when", [0.0, at_noon(dt.date(2020, 1, 1)), -DAY])
def test_pm501_and_health_date_a_file_of_1970_like_any_other(tmp_path, when):
    """0 is the epoch, a real modification time (a restored backup, a tar without times), not "unknown"."""
    root = make_root(tmp_path)
    os.utime(root / "notes/beta.md", (when, when))
    found = only(findings(root), "PM501")
    assert [f.path for f in found] == ["notes/beta.md"]
    day = dt.date.fromtimestamp(when)
    assert found[0].data["changed"] == day.isoformat() and found[0].data["days"] == (TODAY - day).days
    report = health_report(Analysis(scan(root), TODAY))
    assert [(i.path, i.proposal) for i in report.items] == [("notes/beta.md", ARCHIVE)]
    assert report.items[0].reason == f"stale: unchanged since {day.isoformat()}"


# -- PM403 on prose (issue 44) -------------------------------------------------------------------


@pytest.mark.parametrize("line, pointer", [
    ("Source: /opt/pmem-test-gone-d41d/bin。", "/opt/pmem-test-gone-d41d/bin"),  # a full stop after the path
    ("来源：~/pmem-test-gone-d41d/笔记，", "~/pmem-test-gone-d41d/笔记"),  # CJK letters stay, the comma goes
    ("Path: ~/pmem-test-gone-d41d/x（旧）", "~/pmem-test-gone-d41d/x"),
])
def test_pm403_stops_a_path_at_cjk_punctuation(tmp_path, line, pointer):
    root = make_root(tmp_path, {"notes/src.md": active_file("Sources", body=line + "\n")})
    found = only(findings(root), "PM403")
    assert [f.data["pointer"] for f in found] == [pointer]


@pytest.mark.parametrize("line", [
    "路径：CNI 插件默认装在 /opt/pmem-test-gone-d41d/bin。",
    "Path: on every node the plugins are installed under /opt/pmem-test-gone-d41d/bin",
    "## Sources\n- the server keeps its logs in /var/pmem-test-gone-d41d/log for a week",
    # A code span in a sentence is a mention too (a Korean nginx how-to under `### location`).
    "### location\n- `root` 는 Nginx가 정적 파일을 제공할 디렉토리 경로를 지정합니다. 위의 예에서는 "
    "`/usr/share/pmem-test-gone-d41d/html` 디렉토리에서 제공합니다.",
    "Path: on every node the plugins are installed under `/opt/pmem-test-gone-d41d/bin`",
])
def test_pm403_takes_no_server_path_in_a_sentence_for_a_source_pointer(tmp_path, line):
    root = make_root(tmp_path, {"notes/src.md": active_file("Sources", body=line + "\n")})
    assert only(findings(root), "PM403") == []


def test_pm403_a_short_label_before_a_plain_path_still_counts(tmp_path):
    body = ("## Sources\n- Raw exports ~/pmem-test-gone-d41d/exports\n- Notebooks `~/pmem-test-gone-d41d/nb`\n\n"
            "Repo: ~/pmem-test-gone-d41d/repo\nMaterials: `~/pmem-test-gone-d41d/data`\n")
    root = make_root(tmp_path, {"notes/src.md": active_file("Sources", body=body)})
    assert [f.data["pointer"] for f in only(findings(root), "PM403")] == [
        "~/pmem-test-gone-d41d/exports", "~/pmem-test-gone-d41d/nb", "~/pmem-test-gone-d41d/repo",
        "~/pmem-test-gone-d41d/data"]


# -- PM403's source lines: only headings and lines holding `/` are read (issue 44) ----------------


def _source_lines_oracle(doc):
    """`_source_lines` as first written: every line read in order."""
    from pmem_lsp.engine.markdown import PARAGRAPH
    from pmem_lsp.engine.memory_file import parse_metadata_line
    from pmem_lsp.engine.rules.source_paths import _LAST_WORD, SOURCE_WORDS, SOURCE_WORDS_CJK

    def declares(label):
        if any(word in label for word in SOURCE_WORDS_CJK):
            return True
        m = _LAST_WORD.search(label.strip("*_ "))
        return m is not None and m.group(1).lower() in SOURCE_WORDS

    out, level, start = [], 0, doc.front_matter_end
    kinds, heads = doc.blocks.line_kinds, {h.line: h for h in doc.headings if h.top_level}
    for n, line in enumerate(doc.lines):
        kind = kinds[n - start] if n >= start else PARAGRAPH
        heading = heads.get(n)
        if heading is not None:
            if heading is not doc.title and (not level or heading.level <= level):
                level = heading.level if declares(heading.text) else 0
            continue
        if kind is not PARAGRAPH or "/" not in line:
            continue
        if level and doc.top_item_at(n) is not None:
            out.append(n)
            continue
        if ":" in line or "：" in line:
            parsed = parse_metadata_line(line)
            if parsed is not None and declares(parsed[0]):
                out.append(n)
    return out


_SOURCE_PIECES = ["# Title", "## Sources", "### Data sources", "## 资料", "## Code / style", "## Notes",
                  "# Other", "- ~/a/b", "- see /opt/x", "  - /usr/y", "Source: ~/x", "来源：/opt/y",
                  "Path: `~/z`", "plain /usr/lib text", "text", "", "```", "~~~", "    /indented/code",
                  "> Repo: ~/q", "---", "source: /a", "title: x", "1. /b/c", "<div>/x</div>",
                  "Setext /a", "===", "Folder /x:", "Repo ~/r/s", "    Source: /code/x", "<div>Source: /x</div>"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_SOURCE_PIECES), max_size=24))
def test_pm403_source_lines_are_the_line_by_line_definition(pieces):
    from pmem_lsp.engine.memory_file import MemoryFile
    from pmem_lsp.engine.rules.source_paths import _source_lines

    doc = MemoryFile("\n".join(pieces) + "\n")
    assert _source_lines(doc) == _source_lines_oracle(doc)


def _copies_root(base: Path, names: list[str], times: list[float]) -> Path:
    root = make_root(base, {name: CRANES for name in names})
    for name, t in zip(names, times, strict=True):
        os.utime(root / name, (t, t))
    return root


@settings(max_examples=12, deadline=None)
@given(n=st.integers(2, BUCKET_CAP), data=st.data())
def test_pm503_copies_count_each_other_whatever_their_names_and_order(n, data):
    """A trial (github/awesome-copilot): 8 identical copies of `references/ax-profiles.md` in 8
    skill folders said "N more near-duplicates" with N = 0, 1, … 6 in file order. Each copy has
    the same other copies, so each finding counts the same, whatever the names (and so the scan
    order) and the change times. Up to `BUCKET_CAP` copies: beyond it the copies share only their
    whole sketch, and each is compared with the group's first files only (docs/decisions.md,
    "PM503: the count of other copies")."""
    folders = data.draw(st.lists(st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=8),
                                 min_size=n, max_size=n, unique=True))
    names = [f"{folder}/references/ax-profiles.md" for folder in folders]
    now = time.time()
    apart = data.draw(st.sampled_from([0.0, 2.0]))  # copied together (a tie), or written a while apart
    order = data.draw(st.permutations(range(n)))
    import tempfile
    counts = []
    for arrangement in (list(range(n)), order):  # the drawn order, and the names' own
        with tempfile.TemporaryDirectory() as tmp:
            root = _copies_root(Path(tmp), names, [now + apart * k for k in arrangement])
            found = only(findings(root), "PM503")
        assert len(found) == n - 1  # all but the one kept
        counts.append(sorted(f.data["others"] for f in found))
    assert counts[0] == counts[1] == [n - 2] * (n - 1)


@pytest.mark.parametrize("label", ["출처", "경로", "저장소"])
def test_pm403_reads_a_korean_source_label(tmp_path, label):
    # A real Korean vault wrote `출처:` ("source") before the path of its material; `경로` is a
    # path and `저장소` a repository. In a sentence the same word is prose, as in English.
    body = (f"{label}: ~/pmem-test-gone-ko/자료/노트.md\n\n"
            f"이 노트의 {label}는 ~/pmem-test-gone-ko/other 에 있었다.\n")
    root = make_root(tmp_path, {"notes/ko.md": active_file("Korean", body=body)})
    found = only(findings(root), "PM403")
    lines = (root / "notes/ko.md").read_text(encoding="utf-8").splitlines()
    assert [lines[f.line][f.col:f.end_col] for f in found] == ["~/pmem-test-gone-ko/자료/노트.md"]
