"""PM301–PM305: `_archive/_index.md` records against the archived files (docs/design.md §2.4)."""

from __future__ import annotations

import datetime as dt
import os

import pytest

import pmem_lsp.engine.root_state as root_state_module
from engine_helpers import TODAY, doc, findings, only, ranges, rows
from pmem_lsp.engine.archive_index import parse_archive_index
from roots import active_file, make_root

AI = "_archive/_index.md"
OLD = active_file("Old project")


def record(original="projects/old.md", *, status="archived", location=None, index_line=True,
           archived="2026-09-14", deleted=None, recover_by=None, heading=None, extra=""):
    """A record as pmem writes it, with any field left out by passing None/False."""
    if location is None:
        location = ("_archive/_trash/" if status == "trashed" else "_archive/") + original
    lines = [heading or f"## {original}"]
    if status:
        lines.append(f"- status: {status}")
    if original:
        lines.append(f"- original: {original}")
    if location:
        lines.append(f"- location: {location}")
    if index_line:
        lines.append(f"- index-line: - [Old]({original}) — shipped in March")
    if archived:
        lines.append(f"- archived: {archived}")
    if deleted:
        lines.append(f"- deleted: {deleted}")
    if recover_by:
        lines.append(f"- recover-by: {recover_by}")
    lines.append("- reason: project finished")
    return "\n".join(lines) + "\n" + extra


def archive_root(tmp_path, *records: str, files: dict | None = None):
    text = "# Archive index\n\n" + "\n".join(records)
    return make_root(tmp_path, {AI: text, **(files or {})})


def archive_findings(tmp_path, *records, files=None, today=TODAY):
    found = findings(archive_root(tmp_path, *records, files=files), today=today)
    return [f for f in found if f.code.startswith("PM3")]


TRASHED = dict(status="trashed", deleted="2026-11-20", recover_by="2026-12-20")


# -- well-formed records --------------------------------------------------------------------


def test_archived_and_trashed_records_are_clean(tmp_path):
    found = findings(archive_root(
        tmp_path, record(), record("notes/gone.md", **TRASHED),
        files={"_archive/projects/old.md": OLD, "_archive/_trash/notes/gone.md": OLD}))
    assert found == []


def test_reader_is_tolerant(tmp_path):
    text = ("### `projects/old.md`\n"
            "- **Status:** Archived\n"
            "- Original: `./projects/old.md`\n"
            "* LOCATION: _archive/projects/old.md\n"
            "- Index_Line: - [Old](projects/old.md) — shipped\n"
            "- archived : 2026-09-14\n"
            "- Reason：done\n"
            "- owner: kept on rewrite\n")
    assert archive_findings(tmp_path, text, files={"_archive/projects/old.md": OLD}) == []
    (rec,) = parse_archive_index(doc("# A\n\n" + text))
    assert rec.heading_line == 2 and rec.heading_level == 3 and rec.title == "projects/old.md"
    assert [(f.key, f.value) for f in rec.fields] == [
        ("status", "Archived"), ("original", "projects/old.md"), ("location", "_archive/projects/old.md"),
        ("index-line", "- [Old](projects/old.md) — shipped"), ("archived", "2026-09-14"),
        ("reason", "done"), ("owner", "kept on rewrite")]
    assert rec.status == "archived" and not rec.is_legacy


def test_index_line_is_kept_exactly():
    text = "## projects/a.md\n- index-line: * [A](projects/a.md)  —  two  spaces  \n"
    (rec,) = parse_archive_index(doc(text))
    assert rec.get("index-line") == "* [A](projects/a.md)  —  two  spaces  "


def test_grouping_headings_are_not_records():
    text = "# Archive index\n\n## Archived\nSome prose.\n\n## Trash\n\n## projects/a.md\n- status: archived\n"
    assert [r.title for r in parse_archive_index(doc(text))] == ["projects/a.md"]


def test_a_heading_naming_a_file_is_a_record_even_without_fields():
    (rec,) = parse_archive_index(doc("## notes/x.md\nJust a note.\n"))
    assert rec.fields == () and rec.is_legacy


# -- PM301 archive-unrecorded ---------------------------------------------------------------


@pytest.mark.parametrize("rel, line, end", [
    ("_archive/projects/old.md", 0, 13),
    ("_archive/_trash/notes/gone.md", 0, 13),
    ("_archive/deep/a/b.md", 0, 13),
])
def test_pm301_on_title(tmp_path, rel, line, end):
    found = archive_findings(tmp_path, files={rel: "# Old project\n\nText.\n"})
    assert ranges(found) == [(rel, "PM301", line, 0, line, end)]
    assert found[0].severity.value == "warning"


def test_pm301_non_markdown_on_line_1(tmp_path):
    found = archive_findings(tmp_path, files={"_archive/data.csv": "a,b\n"})
    assert ranges(found) == [("_archive/data.csv", "PM301", 0, 0, 0, 0)]


def test_pm301_when_record_points_elsewhere(tmp_path):
    found = archive_findings(tmp_path, record(), files={"_archive/projects/old.md": OLD, "_archive/projects/other.md": OLD})
    assert rows(found) == [("_archive/projects/other.md", 0, "PM301")]


def test_pm301_location_derived_from_original_and_status(tmp_path):
    # Without `location:`, the record still covers the file (and says the field is missing).
    found = archive_findings(tmp_path, record(location=False), record("notes/gone.md", location=False, **TRASHED),
                             files={"_archive/projects/old.md": OLD, "_archive/_trash/notes/gone.md": OLD})
    assert rows(found, severity=True) == [(AI, 2, "PM303", "warning"), (AI, 9, "PM303", "warning")]
    assert [f.message for f in found] == ["record for `projects/old.md`: missing location",
                                          "record for `notes/gone.md`: missing location"]


def test_pm301_not_for_the_archive_index_or_lifecycle_folders(tmp_path):
    assert archive_findings(tmp_path, files={"_archive/_trash/": None, "_archive/empty/": None}) == []


def test_pm301_not_when_the_archive_index_cannot_be_read(tmp_path, monkeypatch):
    root = archive_root(tmp_path, record(), files={"_archive/projects/old.md": OLD})
    real_open = os.open

    def failing_open(path, *args, **kwargs):
        if str(path).endswith(AI):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(root_state_module, "_os_open", failing_open)
    # Unreadable is not "no record": nothing is concluded about the archived file.
    assert findings(root) == []


def test_pm301_when_the_archive_index_is_missing(tmp_path):
    root = make_root(tmp_path, {AI: None, "_archive/projects/old.md": OLD})
    assert rows(findings(root)) == [("_archive/projects/old.md", 0, "PM301"), ("_index.md", 0, "PM001")]


# -- PM302 archive-record-dangling ----------------------------------------------------------


def test_pm302_on_record_heading(tmp_path):
    found = archive_findings(tmp_path, record())
    assert ranges(found) == [(AI, "PM302", 2, 0, 2, 18)]
    assert found[0].message == "no file at `_archive/projects/old.md`"
    assert found[0].severity.value == "warning"


def test_pm302_trashed(tmp_path):
    found = archive_findings(tmp_path, record("notes/gone.md", **TRASHED))
    assert rows(found) == [(AI, 2, "PM302")]
    assert found[0].message == "no file at `_archive/_trash/notes/gone.md`"


def test_pm302_not_when_location_is_under_a_folder_that_cannot_be_listed(tmp_path, monkeypatch):
    root = archive_root(tmp_path, record(), files={"_archive/projects/old.md": OLD})
    real_scandir = os.scandir

    def failing_scandir(path):
        if str(path).endswith("_archive/projects"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(root_state_module.os, "scandir", failing_scandir)
    assert findings(root) == []


def test_pm302_not_for_an_unreadable_archived_file(tmp_path, monkeypatch):
    root = archive_root(tmp_path, record(), files={"_archive/projects/old.md": OLD})
    real_open = os.open

    def failing_open(path, *args, **kwargs):
        if str(path).endswith("_archive/projects/old.md"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(root_state_module, "_os_open", failing_open)
    assert findings(root) == []


# -- PM303 archive-record-incomplete --------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    (dict(status=None), "missing status"),
    (dict(archived=None), "missing archived"),
    (dict(status="lost"), "status `lost` is neither archived nor trashed"),
    (dict(archived="14/09/2026"), "archived `14/09/2026` is not a YYYY-MM-DD date"),
    (dict(archived="2026-02-30"), "archived `2026-02-30` is not a YYYY-MM-DD date"),
    (dict(location="projects/old.md"), "location `projects/old.md` is not in `_archive/`"),
    (dict(location="_archive/_trash/projects/old.md"), "location `_archive/_trash/projects/old.md` is not in `_archive/`"),
    (dict(status="trashed", location="_archive/projects/old.md", deleted="2026-11-01", recover_by="2026-12-01"),
     "location `_archive/projects/old.md` is not in `_archive/_trash/`"),
    (dict(status="trashed", location="_archive/projects/old.md"),
     "missing deleted, recover-by; location `_archive/projects/old.md` is not in `_archive/_trash/`"),
    (dict(status="trashed", location="_archive/projects/old.md", deleted="2026-11-20", recover_by="2026-11-01"),
     "location `_archive/projects/old.md` is not in `_archive/_trash/`; recover-by is before deleted"),
])
def test_pm303_warning(tmp_path, kwargs, message):
    found = archive_findings(tmp_path, record(**kwargs), files={"_archive/projects/old.md": OLD})
    found = only(found, "PM303")
    assert ranges(found) == [(AI, "PM303", 2, 0, 2, 18)]
    assert found[0].message == f"record for `projects/old.md`: {message}"
    assert found[0].severity.value == "warning"


def test_pm303_original_not_active(tmp_path):
    found = archive_findings(tmp_path, record("_core/profile.md", location="_archive/_core/profile.md"),
                             files={"_archive/_core/profile.md": OLD})
    assert [f.message for f in found] == [
        "record for `_core/profile.md`: original `_core/profile.md` is not an active memory path"]


def test_pm303_legacy_record_is_information(tmp_path):
    found = archive_findings(tmp_path, record(index_line=False), files={"_archive/projects/old.md": OLD})
    assert rows(found, severity=True) == [(AI, 2, "PM303", "information")]
    assert found[0].message == ("legacy record for `projects/old.md`: no index-line, so recover will "
                                "propose a route for confirmation")


def test_pm303_incomplete_legacy_record_stays_a_warning(tmp_path):
    found = archive_findings(tmp_path, record(index_line=False, archived=None), files={"_archive/projects/old.md": OLD})
    assert rows(found, severity=True) == [(AI, 2, "PM303", "warning")]
    assert found[0].message == "record for `projects/old.md`: missing archived (legacy record: no index-line)"


def test_pm303_empty_index_line_is_not_legacy(tmp_path):
    text = record(index_line=False).replace("- archived:", "- index-line:\n- archived:")
    assert archive_findings(tmp_path, text, files={"_archive/projects/old.md": OLD}) == []


# -- PM304 trash-expired --------------------------------------------------------------------


@pytest.mark.parametrize("today, fires", [
    (dt.date(2026, 12, 19), False), (dt.date(2026, 12, 20), False), (dt.date(2026, 12, 21), True)])
def test_pm304_after_recover_by(tmp_path, today, fires):
    found = archive_findings(tmp_path, record("notes/gone.md", **TRASHED),
                             files={"_archive/_trash/notes/gone.md": OLD}, today=today)
    assert ranges(found) == ([(AI, "PM304", 2, 0, 2, 16)] if fires else [])
    if fires:
        assert found[0].severity.value == "information"
        assert found[0].message == ("`_archive/_trash/notes/gone.md` was due for recovery by 2026-12-20; "
                                    "it may be purged (with confirmation)")


def test_pm304_not_for_archived_or_missing_files(tmp_path):
    late = dt.date(2030, 1, 1)
    found = archive_findings(tmp_path, record(), record("notes/gone.md", **TRASHED),
                             files={"_archive/projects/old.md": OLD}, today=late)
    assert rows(found) == [(AI, 10, "PM302")]


def test_pm304_not_with_an_unparsable_deadline(tmp_path):
    found = archive_findings(tmp_path, record("notes/gone.md", status="trashed", deleted="2026-01-01",
                                              recover_by="soon"),
                             files={"_archive/_trash/notes/gone.md": OLD}, today=dt.date(2030, 1, 1))
    assert rows(found) == [(AI, 2, "PM303")]
    assert found[0].message == "record for `notes/gone.md`: recover-by `soon` is not a YYYY-MM-DD date"


# -- PM305 recover-blocked ------------------------------------------------------------------


def test_pm305_when_the_original_path_is_occupied(tmp_path):
    found = archive_findings(tmp_path, record(), files={"_archive/projects/old.md": OLD, "projects/old.md": OLD})
    assert ranges(found) == [(AI, "PM305", 2, 0, 2, 18)]
    assert found[0].message == "cannot recover: `projects/old.md` is occupied by another file"
    assert found[0].severity.value == "information"


def test_pm305_trashed_and_occupied_by_a_folder(tmp_path):
    found = archive_findings(tmp_path, record("notes/gone.md", **TRASHED),
                             files={"_archive/_trash/notes/gone.md": OLD, "notes/gone.md/": None})
    assert rows(found) == [(AI, 2, "PM305")]


def test_pm305_not_when_the_original_is_free_or_the_file_is_gone(tmp_path):
    assert archive_findings(tmp_path, record(), files={"_archive/projects/old.md": OLD, "projects/older.md": OLD}) == []
    found = archive_findings(tmp_path / "b", record(), files={"projects/old.md": OLD})
    assert rows(found) == [(AI, 2, "PM302")]
