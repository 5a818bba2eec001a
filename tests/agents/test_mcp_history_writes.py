"""`memory_preview` operations `undo` and `restore` (issue 42, docs/design.md §11) through the MCP
SDK's own client over stdio: a preview and a token like every write, applied by `memory_apply`
through the one door after the user's yes (elicitation), refused with nothing changed on a
conflict or bad input; and no agent surface accepts a review.

The server runs as a process (`python -m pmem_lsp.mcp`) with the test run's own state folder,
so it and the test read one history store."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from test_mcp_server import answering, call, digest, session

from pmem_lsp.engine.history import review
from pmem_lsp.engine.history.recording import caught_up_store
from pmem_lsp.mcp.early_answers import LISTING
from roots import make_root

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with git")]

STATE = {"XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}  # tests/conftest.py: the run's own
NOTE = "# Beta note\n\n" + "".join(f"line {n}\n" for n in range(1, 13))


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "server-stderr.log"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    made = make_root(tmp_path, {"notes/beta.md": NOTE})
    caught_up_store(made)  # the first entry: the root as it is
    return made


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


async def newest_entry(client, path: str | None = None) -> dict:
    error, data, _ = await call(client, "memory_history", {"path": path} if path else {})
    assert not error, data
    return data["entries"][0]


async def test_undo_is_previewed_then_applied_after_the_users_yes(root: Path, log: Path):
    edit(root, "notes/beta.md", "line 3\n", "line 3 as an agent rewrote it\n")
    asked: list[str] = []
    async with session(root, log, answering("accept", {"confirm": True}, asked), env=STATE) as client:
        entry = await newest_entry(client)
        assert entry["writer"]["kind"] == "outside" and entry["files"] == [{"path": "notes/beta.md",
                                                                             "change": "changed"}]
        edit(root, "notes/beta.md", "line 10\n", "line 10, a later change the undo keeps\n")
        before = digest(root)
        error, shown, _ = await call(client, "memory_preview", {"operation": "undo", "entry": entry["id"]})
        assert not error, shown
        assert shown["operation"] == "undo" and shown["applied"] is False and shown["token"]
        assert "-line 3 as an agent rewrote it" in shown["preview"] and "+line 3" in shown["preview"]
        assert shlex.split(shown["command"])[-2:] == ["undo", entry["id"]]
        assert digest(root) == before, "a preview writes nothing"
        assert asked == []
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
    assert not error, done
    assert len(asked) == 1 and shown["preview"] in asked[0], "the user is asked, with the preview"
    assert done["applied"] is True and done["operation"] == "undo"
    text = (root / "notes/beta.md").read_text(encoding="utf-8")
    assert "line 3\n" in text and "agent rewrote" not in text
    assert "line 10, a later change the undo keeps\n" in text
    newest = caught_up_store(root).entries()[0]
    assert newest.writer.kind == "pmem" and newest.title == f"undid entry {entry['id']}"


async def test_a_declined_undo_writes_nothing_and_holds_only_that_entry(root: Path, log: Path):
    edit(root, "notes/beta.md", "line 3\n", "line 3 changed\n")
    caught_up_store(root)
    edit(root, "notes/beta.md", "line 9\n", "line 9 changed\n")
    async with session(root, log, answering("decline", None, []), env=STATE) as client:
        entry = await newest_entry(client)
        _, shown, _ = await call(client, "memory_preview", {"operation": "undo", "entry": entry["id"],
                                                            "paths": ["notes/beta.md"]})
        before = digest(root)
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert error and data["error"]["kind"] == "declined" and digest(root) == before
        error, data, _ = await call(client, "memory_history", {"path": "notes/beta.md"})
        older = data["entries"][1]["id"]
    # Without a question (no elicitation), the declined undo stays declined; another entry's
    # undo is another change (an undo is matched by its entry, not by its missing target).
    async with session(root, log, env=STATE) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "undo", "entry": entry["id"]})
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert error and data["error"]["kind"] == "declined" and digest(root) == before
        _, shown, _ = await call(client, "memory_preview", {"operation": "undo", "entry": older})
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert not error and done["applied"] is True, done
    text = (root / "notes/beta.md").read_text(encoding="utf-8")
    assert "line 3\n" in text and "line 9 changed\n" in text


async def test_restore_brings_back_a_deleted_file_and_an_archived_files_text(root: Path, log: Path):
    original = (root / "notes/beta.md").read_text(encoding="utf-8")
    (root / "notes/beta.md").unlink()  # deleted outside pmem
    async with session(root, log, env=STATE) as client:  # no elicitation: the token decides
        gone = await newest_entry(client)
        assert gone["files"] == [{"path": "notes/beta.md", "change": "removed"}]
        error, data, _ = await call(client, "memory_history", {"path": "notes/beta.md"})
        at = data["entries"][1]["id"]  # the entry before it was removed
        error, shown, _ = await call(client, "memory_preview", {"operation": "restore", "path": "notes/beta.md",
                                                                "at": at})
        assert not error, shown
        assert shown["token"] and "line 12" in shown["preview"]
        assert shlex.split(shown["command"])[-4:] == ["restore", "notes/beta.md", "--at", at]
        assert not (root / "notes/beta.md").exists()
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert not error and done["applied"] is True, done
        assert (root / "notes/beta.md").read_text(encoding="utf-8") == original

        # An archived file whose text an agent changed: back as it was when archived.
        _, shown, _ = await call(client, "memory_preview", {"operation": "archive", "path": "notes/beta.md",
                                                            "reason": "done"})
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert not error, done
        archived_at = (await newest_entry(client))["id"]
        with open(root / "_archive/notes/beta.md", "a", encoding="utf-8") as fh:
            fh.write("An agent's line in the archive.\n")
        records = (root / "_archive/_index.md").read_text(encoding="utf-8")
        error, shown, _ = await call(client, "memory_preview", {"operation": "restore", "at": archived_at,
                                                                "path": "_archive/notes/beta.md"})
        assert not error, shown
        assert "-An agent's line in the archive." in shown["preview"]
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert not error, done
    assert (root / "_archive/notes/beta.md").read_text(encoding="utf-8") == original
    assert (root / "_archive/_index.md").read_text(encoding="utf-8") == records, "the record is kept as it is"


async def test_a_conflicting_undo_and_bad_input_are_refused_with_nothing_changed(root: Path, log: Path):
    edit(root, "notes/beta.md", "line 5\n", "line 5 first\n")
    async with session(root, log, env=STATE) as client:
        first = await newest_entry(client)
        edit(root, "notes/beta.md", "line 5 first\n", "line 5 second\n")
        await newest_entry(client)  # recorded: a later change to the same line
        before = digest(root)
        error, data, _ = await call(client, "memory_preview", {"operation": "undo", "entry": first["id"]})
        assert error and data["applied"] is False and data["error"]["kind"] == "conflict", data
        assert "notes/beta.md" in data["error"]["message"] and "nothing was changed" in data["error"]["message"]
        refused = [
            ({"operation": "undo", "entry": "0123456789ab"}, "usage"),
            ({"operation": "undo"}, "arguments"),
            ({"operation": "undo", "entry": first["id"], "path": "notes/beta.md"}, "arguments"),
            ({"operation": "undo", "entry": first["id"], "paths": ["projects/alpha.md"]}, "usage"),
            ({"operation": "undo", "entry": first["id"], "paths": ["../outside.md"]}, "usage"),
            ({"operation": "restore", "path": "notes/beta.md", "at": "0123456789ab"}, "usage"),
            ({"operation": "restore", "path": "/etc/hostname", "at": first["id"]}, "usage"),
            ({"operation": "restore", "path": "notes/beta.md"}, "arguments"),
            ({"operation": "restore", "path": "notes/never.md", "at": first["id"]}, "usage"),
            ({"operation": "restore", "path": "notes/beta.md", "entry": first["id"]}, "arguments"),
        ]
        for arguments, kind in refused:
            error, data, _ = await call(client, "memory_preview", arguments)
            assert error and data["applied"] is False and data["error"]["kind"] == kind, (arguments, data)
        error, data, _ = await call(client, "memory_status")
        assert not error, "the session goes on"
    assert digest(root) == before


async def test_no_agent_surface_accepts_a_review(root: Path, log: Path):
    edit(root, "notes/beta.md", "line 2\n", "line 2 by an agent\n")
    store = caught_up_store(root)
    pending = [e.commit for e in review.unreviewed(store)]
    assert pending
    async with session(root, log, env=STATE) as client:
        tools = (await client.list_tools()).tools
        entry = await newest_entry(client)
        _, shown, _ = await call(client, "memory_preview", {"operation": "undo", "entry": entry["id"]})
        error, done, _ = await call(client, "memory_apply", {"token": shown["token"]})
        assert not error, done
        for operation in ("review", "accept"):
            error, data, _ = await call(client, "memory_preview", {"operation": operation})
            assert error and data["error"]["kind"] == "arguments"
    for tool in tools:
        properties = tool.input_schema.get("properties", {})
        assert "accept" not in tool.name and not any("accept" in name for name in properties), tool.name
        enum = properties.get("operation", {}).get("enum", [])
        assert not any("review" in op or "accept" in op for op in enum)
    listing = json.loads(LISTING.read_text(encoding="utf-8"))
    assert "accept" not in json.dumps([t["inputSchema"] for t in listing["tools/list"]["tools"]])
    # An undo applied through MCP is a change like any other: the entries stay unreviewed.
    still = {e.commit for e in review.unreviewed(caught_up_store(root))}
    assert set(pending) <= still


def test_the_persons_command_for_an_mcp_undo_applies_the_same_change(root: Path):
    """The preview's `command` (for a headless run: the person runs it) is `pmem undo ENTRY`."""
    from pmem_lsp.mcp import tools

    edit(root, "notes/beta.md", "line 7\n", "line 7 changed\n")
    entry = caught_up_store(root).entries()[0].id
    shown = tools.make_preview(root, tools.Previews(), "undo", entry=entry)
    argv = shlex.split(shown["command"])
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *argv[1:], "--yes"], capture_output=True,
                          text=True, timeout=120, env=os.environ)
    assert done.returncode == 0, done.stderr
    assert "line 7\n" in (root / "notes/beta.md").read_text(encoding="utf-8")
