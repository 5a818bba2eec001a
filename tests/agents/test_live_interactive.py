"""The real Codex TUI (0.171.0) on a pseudo-terminal, the model replaced by a script (tests/agents/
scripted_model.py; offline): what a person at the terminal sees when the agent applies a pmem
preview, and whether their yes applies it.

The scripted model previews archiving notes/x.md (`memory_preview`), then calls `memory_apply`
with the token. Codex (the shipped `approval_mode = "prompt"`) shows its own question,
`Allow the pmem MCP server to run tool "memory_apply"?` with the token, "1. Allow / 2. Cancel";
the test answers Enter (Allow). Then:

- with the shipped configuration (`PMEM_MCP_ELICITATION = "off"`), pmem applies on the token:
  the note is archived. Codex's question is the person's yes.
- with pmem's own confirmation left on (the line removed), pmem asks Codex through MCP
  elicitation (`elicitation/create`, a one-boolean form); Codex 0.171 answers `cancel` at once
  and never shows the question, so nothing is written, after the person said yes.

Claude Code (2.1.332, `claude` with the plugin loaded by `--plugin-dir`, memory_preview allowed by
`--allowedTools`): Claude Code asks "Do you want to proceed?" before memory_apply (Yes), then
shows pmem's own question ("MCP server "plugin:pmem:pmem" requests your input", the preview,
an "Apply this change" box, Accept / Decline; it arrives as the 2026-07-28 `input_required`);
ticking the box and Accept archives the note.

House style as tests/pty_terminal.py: no sleeps; the output is read until the expected text
appears, within a generous bound. Two exceptions, observed: Codex drops a key pressed the moment
its approval dialog opens, so Enter is pressed again (at most once a second) while the dialog is
still open and the tool has not run; Claude Code drops an Enter pressed the moment its form
shows the cursor on Accept (an Enter 30 ms after "❯ Accept" was drawn left the form open, the
MCP call at "Fulfilling input required by 'tools/call' (round 1)" and no `elicitation/create`
answer in its debug log, for minutes), so Accept's Enter is pressed again (at most once a second)
until pmem has applied.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scripted_model import Reply, ScriptedModel, Text, ToolCall

from roots import REPO, active_file, make_root

pytestmark = pytest.mark.e2e
GENEROUS_SECONDS = 180.0
ROWS, COLUMNS = 50, 160
ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78DEHMc]")
APPROVAL = 'Allow the pmem MCP server to run tool "memory_apply"?'



def read_terminal(leader: int) -> bytes | None:
    """What the client drew within half a second (b"" if nothing; None once the terminal is
    gone), answering its cursor-position and device-attribute queries as a terminal does."""
    ready, _, _ = select.select([leader], [], [], 0.5)
    if not ready:
        return b""
    try:
        chunk = os.read(leader, 65536)
    except OSError:
        return None
    if b"\x1b[6n" in chunk:
        os.write(leader, b"\x1b[1;1R")
    if b"\x1b[c" in chunk:
        os.write(leader, b"\x1b[?62;22c")
    return chunk

def plain(shown: bytes) -> str:
    """What the terminal showed, escapes removed and runs of blanks made one (a TUI moves the
    cursor between the pieces of one line)."""
    return re.sub(r"\s+", " ", ESCAPES.sub(b" ", shown).decode("utf-8", "replace"))


def outputs(body: dict[str, Any]) -> list[str]:
    """The `function_call_output` texts of a Responses API request."""
    found = []
    for item in body.get("input", []):
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            out = item.get("output")
            found.append("\n".join(p.get("text", "") for p in out if isinstance(p, dict))
                         if isinstance(out, list) else str(out))
    return found


def mcp_json(text: str) -> dict[str, Any]:
    return json.loads(text[text.index("{"):])


def preview_then_apply(_kind: str, body: dict[str, Any]) -> list[Reply]:
    """The model. Requests without tools are Codex's own (a title for the session)."""
    if not body.get("tools"):
        return [Text("Archive a note")]
    done = outputs(body)
    if not done:
        return [ToolCall("memory_preview", {"operation": "archive", "path": "notes/x.md", "reason": "r"},
                         namespace="mcp__pmem")]
    if len(done) == 1:
        return [ToolCall("memory_apply", {"token": mcp_json(done[0])["token"]}, namespace="mcp__pmem")]
    return [Text("done")]


def codex_tui(tmp_path: Path, codex: Path, shipped: str, model: ScriptedModel) -> tuple[str, list[str]]:
    """Runs `codex "Archive notes/x.md"` at a terminal; answers Codex's approval of
    memory_apply with Enter (its first choice, Allow). (What the terminal showed, the tool
    outputs the model got back) once the model has both tool results."""
    codex_home = tmp_path / "home" / ".codex"
    codex_home.mkdir(parents=True)
    provider = (f'model = "scripted-model"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
                f'name = "Scripted"\nbase_url = "{model.url}/v1"\nwire_api = "responses"\n'
                f'env_key = "SCRIPTED_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n')
    (codex_home / "config.toml").write_text(provider + shipped, encoding="utf-8")
    env = {"HOME": str(codex_home.parent), "CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "dummy",
           "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])}
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    proc = subprocess.Popen([str(codex), "Archive notes/x.md"], stdin=follower, stdout=follower, stderr=follower,
                            env=env, cwd=tmp_path, start_new_session=True, close_fds=True)
    os.close(follower)
    shown = b""
    pressed = 0.0
    deadline = time.monotonic() + GENEROUS_SECONDS
    try:
        while True:
            results = [outputs(b) for b in model.posts("/responses")]
            if any(len(r) >= 2 for r in results):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"codex: no memory_apply result after {GENEROUS_SECONDS:.0f} s; shown: "
                                     f"{plain(shown)[-1500:]}")
            if proc.poll() is not None:
                raise AssertionError(f"codex ended ({proc.returncode}); shown: {plain(shown)[-1500:]}")
            chunk = read_terminal(leader)
            if chunk is None:
                break
            shown += chunk
            text = plain(shown)
            waiting = APPROVAL in text and not re.search(r"(Called|Failed) pmem\.memory_apply",
                                                         text[text.rindex(APPROVAL):] if APPROVAL in text else "")
            if waiting and time.monotonic() > pressed + 1.0:
                os.write(leader, b"\r")  # Enter: "1. Allow"
                pressed = time.monotonic()
        # Let the final turn reach the screen (the model's last reply), so `shown` is whole.
        while "done" not in plain(shown).rsplit("memory_apply", 1)[-1] and time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    shown += os.read(leader, 65536)
                except OSError:
                    break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the session this test started (codex and its pmem mcp)
        proc.wait(timeout=30)
        os.close(leader)
    [both] = [r for r in (outputs(b) for b in model.posts("/responses")) if len(r) >= 2][:1]
    return plain(shown), both


def shipped_config(root: Path) -> str:
    shipped = (REPO / "agents" / "codex" / "config.toml").read_text(encoding="utf-8")
    assert 'PMEM_ROOT = "~/.persistent-memory"' in shipped
    assert '\napproval_mode = "prompt"\n' in shipped
    return shipped.replace('"~/.persistent-memory"', json.dumps(str(root)))


@pytest.mark.parametrize("approval", ["shipped", "line removed"])
def test_codex_tui_applies_memory_apply_after_the_persons_yes_with_the_shipped_config(tmp_path: Path,
                                                                                        agent_clients, approval):
    """"line removed": without `approval_mode = "prompt"` (as `codex mcp add` leaves it), Codex
    0.171 still asks for a tool annotated destructive, as memory_apply is, but offers "Allow for
    this session" and "Always allow" too: one of those, with pmem's confirmation off, lets every
    later memory_apply run unasked. The shipped line keeps it to Allow / Cancel each time."""
    root = make_root(tmp_path, {"notes/x.md": active_file("X")})
    shipped = shipped_config(root)
    assert '\nPMEM_MCP_ELICITATION = "off"\n' in shipped, "the shipped config lets Codex's own question decide"
    if approval == "line removed":
        shipped = shipped.replace('\napproval_mode = "prompt"\n', "\n")
    with ScriptedModel(preview_then_apply) as model:
        shown, (preview, applied) = codex_tui(tmp_path, agent_clients["codex"], shipped, model)
    # What the person saw: Codex's question, with the token and Allow / Cancel.
    assert APPROVAL in shown and "1. Allow" in shown, shown[-3000:]
    if approval == "shipped":
        assert "2. Cancel" in shown and "Always allow" not in shown and "for this session" not in shown
    else:
        assert "2. Allow for this session" in shown and "3. Always allow" in shown and "4. Cancel" in shown
    token = mcp_json(preview)["token"]
    assert f"token: {token}" in shown
    assert "Apply this change to your memory?" not in shown, "pmem asked nothing: its question is off"
    result = mcp_json(applied)
    assert result["applied"] is True, applied
    assert not (root / "notes" / "x.md").exists() and (root / "_archive" / "notes" / "x.md").exists()


def test_codex_tui_cancels_pmems_own_confirmation_without_showing_it(tmp_path: Path, agent_clients):
    """pmem's confirmation on (the shipped line removed): Codex 0.171 answers pmem's
    `elicitation/create` with `cancel` itself, without showing it, after the person allowed the
    call. Nothing is written, and nothing is recorded as declined (a cancel is not a no)."""
    root = make_root(tmp_path, {"notes/x.md": active_file("X")})
    shipped = shipped_config(root).replace('\nPMEM_MCP_ELICITATION = "off"\n', "\n")
    before = (root / "notes" / "x.md").read_bytes()
    with ScriptedModel(preview_then_apply) as model:
        shown, (_preview, applied) = codex_tui(tmp_path, agent_clients["codex"], shipped, model)
    assert APPROVAL in shown, shown[-3000:]
    assert "Apply this change to your memory?" not in shown, "Codex showed pmem's question after all"
    result = mcp_json(applied)
    assert result["applied"] is False and result["error"]["kind"] == "cancelled", applied
    assert (root / "notes" / "x.md").read_bytes() == before and not (root / "_archive" / "notes" / "x.md").exists()
    assert not list((tmp_path / "home").rglob("declined.json")), "a cancel was recorded as the person's no"


# -- Claude Code -----------------------------------------------------------------------------------
PLUGIN = REPO / "agents" / "claude-code"
TOOL = "mcp__plugin_pmem_pmem__"
CLAUDE_KEY = "sk-ant-scripted-dummy-0123456789abcdefghij"
PMEM_ASKS = "requests your input"


def tool_results(body: dict[str, Any]) -> list[str]:
    """The texts of a Messages API request's `tool_result` blocks, WaitForMcpServers' left out."""
    found = []
    for message in body.get("messages", []):
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                text = ("\n".join(c.get("text", "") for c in content if isinstance(c, dict))
                        if isinstance(content, list) else str(content))
                if not text.startswith("ready:"):
                    found.append(text)
    return found


def first_json(text: str) -> dict[str, Any]:
    """The JSON object a pmem tool answered (Claude Code may append a reminder after it)."""
    found, _end = json.JSONDecoder().raw_decode(text[text.index("{"):])
    return found


def claude_preview_then_apply(_kind: str, body: dict[str, Any]) -> list[Reply]:
    """The model. Interactive Claude Code does not wait for MCP servers before the first
    request; the model waits for them with the client's own WaitForMcpServers tool."""
    names = {t.get("name") for t in body.get("tools", [])}
    done = tool_results(body)
    if TOOL + "memory_preview" not in names:
        waited = sum(1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
                     for b in m["content"] if isinstance(b, dict) and b.get("name") == "WaitForMcpServers")
        return [ToolCall("WaitForMcpServers", {})] if "WaitForMcpServers" in names and waited < 3 else [Text("ok")]
    if not done:
        return [ToolCall(TOOL + "memory_preview", {"operation": "archive", "path": "notes/x.md", "reason": "r"})]
    if len(done) == 1:
        return [ToolCall(TOOL + "memory_apply", {"token": first_json(done[0])["token"]})]
    return [Text("done")]


def test_claude_code_tui_asks_pmems_question_and_the_persons_accept_applies(tmp_path: Path, agent_clients):
    root = make_root(tmp_path, {"notes/x.md": active_file("X")})
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    # A person who has used Claude Code before: onboarding done, this key and folder trusted.
    state = {"hasCompletedOnboarding": True, "theme": "dark",
             "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []},
             "projects": {str(work): {"hasTrustDialogAccepted": True, "allowedTools": []}}}
    (home / ".claude" / ".claude.json").write_text(json.dumps(state), encoding="utf-8")
    with ScriptedModel(claude_preview_then_apply) as model:
        env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "XDG_CONFIG_HOME": str(home / ".config"),
               "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
               "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": CLAUDE_KEY, "PMEM_ROOT": str(root),
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
               "ENABLE_TOOL_SEARCH": "false",  # the pmem tools in the tool list, not behind a search
               "TERM": "xterm-256color", "LANG": "C.UTF-8"}
        # Each step: (text that must have appeared since the last key, the key). The first
        # "Do you want to proceed?" is Claude Code's permission for memory_apply (Yes is first).
        steps = [("Do you want to proceed?", b"\r"), (PMEM_ASKS, b""), ("Esc to cancel", b" "), ("\u2612", b"\x1b[B"),
                 ("\u276f Accept", b"\r")]
        # Accept's Enter again while pmem has not applied (the first may be dropped, see the top).
        shown = run_claude(work, agent_clients["claude"], env, model, steps,
                           again=lambda: (root / "notes" / "x.md").exists())
    assert "Apply a confirmed preview" in shown and "Do you want to proceed?" in shown, shown[-3000:]
    assert f'MCP server \u201cplugin:pmem:pmem\u201d {PMEM_ASKS}' in shown, shown[-3000:]
    assert "move: notes/x.md \u2192 _archive/notes/x.md" in shown and "Apply this change" in shown
    [_preview, applied] = next(r for r in (tool_results(b) for b in model.posts("/messages")) if len(r) >= 2)
    assert first_json(applied)["applied"] is True, applied
    assert not (root / "notes" / "x.md").exists() and (root / "_archive" / "notes" / "x.md").exists()


def run_claude(work: Path, claude: Path, env: dict[str, str], model: ScriptedModel,
               steps: list[tuple[str, bytes]], again: Callable[[], bool]) -> str:
    """`claude "Archive notes/x.md"` at a terminal; each step's key is typed once its text has
    been shown after the previous key, and the last step's key again (at most once a second)
    while `again()`. Returns what the terminal showed once the model has both tool results."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    proc = subprocess.Popen([str(claude), "Archive notes/x.md", "--plugin-dir", str(PLUGIN), "--model",
                             "claude-sonnet-4-5", "--allowedTools", TOOL + "memory_preview"],
                            stdin=follower, stdout=follower, stderr=follower, env=env, cwd=work,
                            start_new_session=True, close_fds=True)
    os.close(follower)
    shown = b""
    since = 0  # the step's text is looked for after this offset of `shown`
    last, pressed = b"", 0.0  # the last key typed, and when
    deadline = time.monotonic() + GENEROUS_SECONDS
    try:
        while not any(len(tool_results(b)) >= 2 for b in model.posts("/messages")):
            if time.monotonic() > deadline:
                raise AssertionError(f"claude: no memory_apply result after {GENEROUS_SECONDS:.0f} s; steps left "
                                     f"{steps}; shown: {plain(shown)[-1500:]}")
            if proc.poll() is not None:
                raise AssertionError(f"claude ended ({proc.returncode}); shown: {plain(shown)[-1500:]}")
            chunk = read_terminal(leader)
            if chunk is None:
                break
            shown += chunk
            while steps and steps[0][0] in plain(shown[since:]):
                text, key = steps.pop(0)
                if key:  # a step without a key only waits for its text: the next one may be in the same chunk
                    since, last, pressed = len(shown), key, time.monotonic()
                    os.write(leader, key)
                    break
            if not steps and time.monotonic() > pressed + 1.0 and again():
                os.write(leader, last)
                pressed = time.monotonic()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the session this test started (claude and its pmem mcp)
        proc.wait(timeout=30)
        os.close(leader)
    return plain(shown)
