"""engine/saved_routes.py: after a recover that stopped between moving the file back and
writing its route, every path that adds a route for the file uses the line the archive record
saved, byte for byte, or refuses and says where it is (issue 46)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from test_fixes import apply_fix
from test_write_protocol import NOTE, TODAY, _half_recovered, run

from engine_helpers import findings, scan
from pmem_lsp.cli.main import main
from pmem_lsp.engine.catalogue import quick_fixes
from pmem_lsp.engine.index_edit import routes_to
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.safety import Refusal
from pmem_lsp.engine.rules.routes import route_fix
from pmem_lsp.engine.saved_routes import saved_line
from pmem_lsp.mcp import tools


def index_lines(root: Path) -> list[str]:
    return (root / "_index.md").read_text(encoding="utf-8").splitlines()


def assert_saved_line_restored(root: Path, saved: str) -> None:
    text = (root / "_index.md").read_text(encoding="utf-8")
    assert saved in text.splitlines() and len(routes_to(text, NOTE)) == 1, text


def test_the_saved_line_is_found_only_for_a_file_that_came_back(tmp_path: Path):
    root, saved = _half_recovered(tmp_path)
    archive = (root / "_archive" / "_index.md").read_text(encoding="utf-8")
    found = saved_line(archive, NOTE, lambda rel: (root / rel).is_file())
    assert found is not None and found.line == saved
    assert saved_line(archive, NOTE, lambda rel: True) is None  # still archived: not a half-done recover
    assert saved_line(archive, "notes/a1.md", lambda rel: False) is None


def test_the_quick_fix_uses_the_saved_line(tmp_path: Path):
    root, saved = _half_recovered(tmp_path)
    state = scan(root)
    fix = route_fix(state, NOTE)
    assert fix is not None
    apply_fix(root, state, fix)
    assert_saved_line_restored(root, saved)


def test_route_add_on_the_command_line_uses_the_saved_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root, saved = _half_recovered(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["--root", str(root), "route", "add", NOTE, "--yes"]) == 0
    assert_saved_line_restored(root, saved)


def test_route_through_the_engine_and_save_use_the_saved_line(tmp_path: Path):
    root, saved = _half_recovered(tmp_path)
    run(root, Request("save", NOTE, content=(root / NOTE).read_text(encoding="utf-8") + "\nOne more line.\n"))
    assert_saved_line_restored(root, saved)


def test_the_mcp_route_preview_shows_and_applies_the_saved_line(tmp_path: Path):
    root, saved = _half_recovered(tmp_path)
    previews = tools.Previews()
    data = tools.make_preview(root, previews, "route", NOTE)
    assert saved in data["preview"]
    tools.apply(root, previews.take(data["token"]), data["token"])
    assert_saved_line_restored(root, saved)


def test_a_description_over_a_saved_line_is_refused_saying_where_the_line_is(tmp_path: Path):
    root, saved = _half_recovered(tmp_path)
    with pytest.raises(Refusal) as refused:
        run(root, Request("route", NOTE, description="Bisque to cone 04."))
    assert "line " in refused.value.message and "_archive/_index.md" in refused.value.message
    assert saved in refused.value.message
    assert not routes_to((root / "_index.md").read_text(encoding="utf-8"), NOTE)


def test_a_saved_line_that_no_longer_reads_as_a_route_is_refused_never_replaced(tmp_path: Path):
    root, saved = _half_recovered(tmp_path)
    archive = root / "_archive" / "_index.md"
    archive.write_text(archive.read_text(encoding="utf-8").replace("(notes/a0.md)", "(notes/elsewhere.md)"),
                       encoding="utf-8")
    before = index_lines(root)
    with pytest.raises(Refusal) as refused:
        run(root, Request("route", NOTE))
    assert "_archive/_index.md" in refused.value.message
    assert index_lines(root) == before
    assert route_fix(scan(root), NOTE) is None  # no quick fix makes one up either
    assert any(f.code == "PM202" and f.path == NOTE for f in findings(root))
    assert not any(f.title.startswith("Add route") for f in quick_fixes(scan(root), next(
        f for f in findings(root) if f.code == "PM202" and f.path == NOTE), TODAY))


def test_completion_in_the_index_offers_the_saved_line(tmp_path: Path):
    from pmem_lsp.engine.navigation.path_completion import complete

    root, saved = _half_recovered(tmp_path)
    index = root / "_index.md"
    index.write_text(index.read_text(encoding="utf-8") + "- \n", encoding="utf-8")
    state = scan(root)
    line = len(index.read_text(encoding="utf-8").splitlines()) - 1
    items = {c.label: c.new_text for c in complete(state, "_index.md", line, 2).items}
    assert "- " + items[NOTE] == saved
