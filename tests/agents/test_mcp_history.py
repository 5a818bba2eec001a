"""`memory_history` and `memory_diff` (issue 42): the history the CLI shows, as an agent reads
it — the same JSON, secrets masked, read-only; no agent surface accepts a review."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from pmem_lsp.engine.lifecycle.execute import Confirmed, execute
from pmem_lsp.engine.lifecycle.operations import context
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.mcp import tools
from pmem_lsp.mcp.server import DESCRIPTIONS
from roots import make_root

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="history needs git")
TOKEN = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"


def test_history_lists_a_pmem_archive_and_an_outside_edit_with_their_writers(tmp_path: Path):
    root = make_root(tmp_path)
    request = Request("archive", "projects/alpha.md", "shipped")
    execute(root, Confirmed(request, request.plan(context(root))))
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "by-hand.md").write_text("# By hand\n\nWritten outside pmem.\n", encoding="utf-8")
    entries = tools.history(root)["entries"]
    kinds = [e["writer"]["kind"] for e in entries]
    assert kinds[0] == "outside" and "pmem" in kinds
    pmem_entry = next(e for e in entries if e["writer"]["kind"] == "pmem")
    assert "archive" in pmem_entry["title"] and "projects/alpha.md" in pmem_entry["title"]
    assert tools.history(root, path="notes/by-hand.md")["entries"][0]["files"][0]["path"] == "notes/by-hand.md"


def test_diff_masks_a_secret_an_outside_writer_left(tmp_path: Path):
    root = make_root(tmp_path)
    tools.history(root)  # the first entry: the root as it is
    note = root / "notes" / "leak.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(f"# Leak\n\nCI pushes with {TOKEN} nightly.\n", encoding="utf-8")
    data = tools.diff(root, since="1d")
    assert "notes/leak.md" in data["diff"] and TOKEN not in data["diff"] and TOKEN[8:24] not in data["diff"]


def test_a_bad_entry_is_a_tool_error_and_no_tool_accepts_a_review(tmp_path: Path):
    root = make_root(tmp_path)
    with pytest.raises(tools.ToolFailure) as refused:
        tools.diff(root, entry="0123456789ab")
    assert refused.value.kind == "usage"
    assert not any("accept" in name for name in DESCRIPTIONS), "only the person accepts a review"
