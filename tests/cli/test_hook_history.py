"""The agent hooks' recording points (docs/design.md §11, "When"): pre-write records the file as
it is before the agent's write when it differs from the newest entry (writer `outside`),
post-write the file as written (writer `agent`: the tool, the client, the session). Only that
file changes between entries: the hook never walks the root."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from pmem_lsp.cli.hook import run_hook
from pmem_lsp.engine.history.store import Writer, open_store
from roots import make_root

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with git")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("PMEM_HOOK_CLIENT", raising=False)
    return make_root(tmp_path, {"notes/n.md": "# N\n\nFact one.\n"})


def call(root: Path, event: str, text: str) -> dict:
    return {"session_id": "sess-42", "hook_event_name": event, "cwd": str(root), "tool_name": "Write",
            "tool_input": {"file_path": str(root / "notes/n.md"), "content": text}}


def hook(root: Path, event: str, payload: dict) -> int:
    return run_hook(root, event, io.StringIO(json.dumps(payload)), io.StringIO(), io.StringIO())


def test_a_write_between_an_outside_edit_records_outside_then_agent_with_tool_and_session(root: Path):
    store = open_store(root)
    store.record(Writer("pmem"), "first")
    (root / "notes/n.md").write_text("# N\n\nFact one, edited by hand.\n")  # nobody recorded this
    assert hook(root, "pre-write", call(root, "PreToolUse", "# N\n\nWritten by the agent.\n")) == 0
    (root / "notes/n.md").write_text("# N\n\nWritten by the agent.\n")
    assert hook(root, "post-write", call(root, "PostToolUse", "# N\n\nWritten by the agent.\n")) == 0
    newest, before, first = store.entries()[:3]
    assert first.title == "first"
    assert before.writer.kind == "outside" and before.files == [("notes/n.md", "changed")]
    assert store.text_at(before.commit, "notes/n.md") == b"# N\n\nFact one, edited by hand.\n"
    assert newest.writer == Writer("agent", "Write notes/n.md · Claude Code · session sess-42")
    assert newest.files == [("notes/n.md", "changed")]
    assert store.text_at(newest.commit, "notes/n.md") == b"# N\n\nWritten by the agent.\n"
    # The rest of the tree is the newest entry's: every other file is kept.
    assert set(store.blobs_of(newest.commit)) == set(store.blobs_of(first.commit))
    # Nothing changed since: a whole recording adds no entry.
    assert store.record(Writer("outside"), "changed outside pmem") is None


def test_pre_write_records_nothing_when_the_file_is_as_recorded_and_the_client_can_be_named(
        root: Path, monkeypatch: pytest.MonkeyPatch):
    store = open_store(root)
    store.record(Writer("pmem"), "first")
    assert hook(root, "pre-write", call(root, "PreToolUse", "# N\n")) == 0
    assert len(store.entries()) == 1
    monkeypatch.setenv("PMEM_HOOK_CLIENT", "Codex")
    (root / "notes/new.md").write_text("# New\n")
    payload = call(root, "PostToolUse", "# New\n")
    payload["tool_input"]["file_path"] = str(root / "notes/new.md")
    assert hook(root, "post-write", payload) == 0
    newest = store.entries()[0]
    assert newest.writer.detail.startswith("Write notes/new.md · Codex")
    assert newest.files == [("notes/new.md", "added")]


def test_hooks_create_no_store(root: Path, tmp_path: Path):
    hook(root, "post-write", call(root, "PostToolUse", "# N\n\nFact one.\n"))
    assert not (tmp_path / "state").exists()
