"""A "no" through `pmem mcp` stays a no (docs/decisions.md, "A declined change stays declined"):
an agent that reads the answer and follows every step pmem names — the command, then the
token the command prints, `--yes` — writes nothing. Only the person, at a terminal where the
CLI asks them, applies it; a later yes through MCP clears the no.

The server is driven by the MCP SDK's own client over stdio; the CLI runs as real processes,
without a terminal (as an agent's shell tool runs it) and on a pseudo-terminal (a person).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from mcp import types
from test_mcp_server import NOTE, call, digest, session

from pty_terminal import run_at_terminal
from roots import make_root

pytestmark = pytest.mark.e2e


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "server-stderr.log"


def answer(action: str, content: dict | None = None):
    async def callback(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action=action, content=content)
    return callback


def cli(args: list[str], *, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The CLI as an agent's shell tool runs it: no terminal."""
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], input=stdin, capture_output=True,
                          text=True, timeout=120, env=os.environ.copy())


def as_an_agent(command: str) -> list[subprocess.CompletedProcess[str]]:
    """Everything an agent gets to by doing what pmem's messages say: the command, then any
    `--token` command it prints, and the command with `--yes`."""
    argv = shlex.split(command)
    assert argv[0] == "pmem"
    runs = [cli(argv[1:])]
    told = re.search(r"pmem --root .* --token \S+", runs[0].stderr)
    if told:
        runs.append(cli(shlex.split(told.group(0))[1:]))
    runs.append(cli([*argv[1:], "--yes"]))
    runs.append(cli([*argv[1:], "--format", "json"]))
    return runs


async def decline(root: Path, log: Path, action: str, arguments: dict) -> tuple[dict, dict]:
    async with session(root, log, answer(action)) as client:
        error, shown, _ = await call(client, "memory_preview", arguments)
        assert not error and shown["token"]
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
    assert error and data["applied"] is False
    return shown, data


@pytest.mark.parametrize("action", ["decline"])
async def test_a_declined_save_is_not_written_by_following_pmems_own_messages(tmp_path, log, action):
    root = make_root(tmp_path)
    before = digest(root)
    shown, data = await decline(root, log, action, {"operation": "save", "path": "notes/e_decline.md",
                                                    "content": NOTE})
    message = data["error"]["message"]
    assert data["error"]["kind"] == "declined"
    assert "nothing was written" in message and "Do not retry" in message
    assert data["command"] == shown["command"] and shown["command"] in message  # headless runs rely on it
    # The MCP token itself, carried to the CLI (a token is the same binding in every process).
    runs = [*as_an_agent(shown["command"]), cli([*shlex.split(shown["command"])[1:], "--token", shown["token"]])]
    assert digest(root) == before, "nothing was written"
    for done in runs:
        assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
        said = done.stdout + done.stderr
        assert "the user declined this change" in said and "--token" not in said and "--yes" not in said
        assert shown["token"] not in said


@pytest.mark.parametrize("operation, path", [("archive", "projects/alpha.md")])
async def test_a_declined_lifecycle_change_is_not_applied_either(tmp_path, log, operation, path):
    root = make_root(tmp_path)
    before = digest(root)
    shown, data = await decline(root, log, "decline", {"operation": operation, "path": path})
    assert "--content-file" not in shown["command"]
    runs = [*as_an_agent(shown["command"]), cli([*shlex.split(shown["command"])[1:], "--token", shown["token"]]),
            # The same file named another way is the same change.
            cli(["--root", str(root), operation, f"./{path}", "--reason", "another reason", "--yes"])]
    assert digest(root) == before
    assert all(done.returncode == 2 for done in runs), [(d.returncode, d.stderr) for d in runs]


async def test_at_a_terminal_the_person_is_asked_and_decides(tmp_path, log):
    root = make_root(tmp_path)
    before = digest(root)
    shown, _ = await decline(root, log, "decline", {"operation": "save", "path": "notes/e_decline.md",
                                                    "content": NOTE})
    args = shlex.split(shown["command"])[1:]
    code, screen = run_at_terminal(args, "n", env=os.environ.copy())
    assert code == 0 and "declined this change" in screen and "Cancelled; nothing was changed." in screen
    assert digest(root) == before
    code, screen = run_at_terminal([*args, "--yes"], None, env=os.environ.copy())
    assert code == 2 and "the user declined this change" in screen and digest(root) == before
    code, screen = run_at_terminal(args, "y", env=os.environ.copy())
    assert code == 0 and "Done: saved" in screen, screen
    assert (root / "notes/e_decline.md").read_text(encoding="utf-8") == NOTE
    # The person's yes cleared the no: a save there again is an ordinary preview.
    again = cli(["--root", str(root), "save", "notes/e_decline.md"], stdin=NOTE + "More.\n")
    assert again.returncode == 3 and "--token" in again.stderr, again.stderr


async def test_a_later_yes_through_mcp_clears_the_no(tmp_path, log):
    root = make_root(tmp_path)
    await decline(root, log, "decline", {"operation": "archive", "path": "projects/alpha.md"})
    refused = cli(["--root", str(root), "archive", "projects/alpha.md", "--yes"])
    assert refused.returncode == 2
    async with session(root, log, answer("accept", {"confirm": True})) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "archive", "path": "projects/alpha.md",
                                                            "reason": "done"})
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
    assert not error and data["applied"] is True
    # Recovered through the CLI with a token, as any change nobody declined.
    shown_cli = cli(["--root", str(root), "recover", "projects/alpha.md"])
    assert shown_cli.returncode == 3 and "--token" in shown_cli.stderr
    async with session(root, log, answer("decline")) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "recover", "path": "projects/alpha.md"})
        await call(client, "memory_apply", {"token": shown["token"]})
    assert cli(["--root", str(root), "recover", "projects/alpha.md", "--yes"]).returncode == 2


async def test_a_session_that_cannot_ask_does_not_apply_a_declined_change(tmp_path, log):
    root = make_root(tmp_path)
    before = digest(root)
    await decline(root, log, "decline", {"operation": "archive", "path": "projects/alpha.md"})
    async with session(root, log) as client:  # a client that declares no elicitation
        _, shown, _ = await call(client, "memory_preview", {"operation": "archive", "path": "projects/alpha.md"})
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
    assert error and data["error"]["kind"] == "declined" and "Do not retry" in data["error"]["message"]
    assert digest(root) == before


def shell_door_blocks_every_write(runs: list[subprocess.CompletedProcess[str]], root: Path, before: str) -> None:
    """What an agent reaches by following pmem's messages after a question nobody answered: the
    preview (exit 3, nothing written), and commands with the token or --yes, which the shell
    door blocks before they run (they are not run here: run, they would be the person's)."""
    from pmem_lsp.engine.shell_door import confirmed_write

    assert runs[0].returncode == 3 and digest(root) == before
    told = re.search(r"pmem --root .* --token \S+", runs[0].stderr)
    assert told and confirmed_write(told.group(0))


@pytest.mark.parametrize("action", ["cancel"])
async def test_a_dismissed_question_is_no_no_and_the_agent_is_still_stopped(tmp_path, log, action):
    """A headless run cancels every question: nobody declined, so the person's own command later
    is not refused as "you declined this"; the agent's way to apply it itself is the shell."""
    root = make_root(tmp_path)
    before = digest(root)
    shown, data = await decline(root, log, action, {"operation": "archive", "path": "projects/alpha.md"})
    assert data["error"]["kind"] == "cancelled" and "nothing was written" in data["error"]["message"]
    assert shown["command"] in data["error"]["message"] and "declined" not in data["error"]["message"]
    argv = shlex.split(shown["command"])
    shell_door_blocks_every_write([cli(argv[1:])], root, before)
    applied = cli([*argv[1:], "--yes"])  # the person's own yes (a terminal or a script of theirs)
    assert applied.returncode == 0 and "declined" not in applied.stdout + applied.stderr, applied.stderr


async def test_a_question_that_could_not_be_asked_is_no_yes_either(tmp_path, log):
    root = make_root(tmp_path)
    before = digest(root)

    async def failing(context, params: types.ElicitRequestParams) -> types.ErrorData:
        return types.ErrorData(code=types.INTERNAL_ERROR, message="the dialog failed")

    async with session(root, log, failing) as client:
        _, shown, _ = await call(client, "memory_preview", {"operation": "archive", "path": "projects/alpha.md"})
        error, data, _ = await call(client, "memory_apply", {"token": shown["token"]})
    assert error and data["error"]["kind"] == "not-confirmed" and shown["command"] in data["error"]["message"]
    # No yes, and no no: nobody answered. Nothing was written, and the agent's own way to apply
    # it goes through the shell, where the shell door stops it.
    shell_door_blocks_every_write([cli(shlex.split(shown["command"])[1:])], root, before)
