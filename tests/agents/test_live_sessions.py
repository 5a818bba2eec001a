"""Live sessions of the real agent clients with the model replaced by a script (tests/agents/
scripted_model.py; offline): what the model's tool calls meet on the other side.

- Claude Code (`claude -p`, the plugin loaded with `--plugin-dir`, Bash allowed): a `pmem`
  write the model confirms itself (`--yes`, `--token`) is refused by the plugin's shell door
  (`pmem hook pre-shell`) before it runs; the refusal comes back to the model as the tool
  result, and the file stays. A harmless `pmem check` runs.
- Codex (`codex exec` with a custom provider, the shipped `[mcp_servers.pmem]` block): the
  `memory_*` tools reach the model, and `memory_apply` gets the headless answer agents/README.md
  documents ("Headless runs").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_model import Reply, ScriptedModel, Text, ToolCall

from roots import REPO, active_file, make_root

pytestmark = pytest.mark.e2e
PLUGIN = REPO / "agents" / "claude-code"
SESSION_TIMEOUT = 240  # seconds; a session normally ends within a few


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The `tool_result` blocks of a Messages API request."""
    return [c for m in body.get("messages", []) if isinstance(m.get("content"), list)
            for c in m["content"] if isinstance(c, dict) and c.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content)


def bash_once(command: str):
    """The model: runs `command` through Bash once, then ends its turn. Requests without the
    Bash tool (the client's own side calls) get a short text."""

    def script(_kind: str, body: dict[str, Any]) -> list[Reply]:
        if tool_results(body):
            return [Text("done")]
        if any(t.get("name") == "Bash" for t in body.get("tools", [])):
            return [ToolCall("Bash", {"command": command, "description": "Run pmem"})]
        return [Text("ok")]

    return script


def claude_session(tmp_path: Path, claude: Path, model: ScriptedModel, prompt: str) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "XDG_CONFIG_HOME": str(home / ".config"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
           "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-scripted-dummy",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    # Not bypassPermissions: Claude Code refuses it as root; `--allowedTools Bash` lets Bash run
    # without a prompt, so only the hook stands between the call and the shell.
    return subprocess.run([str(claude), "-p", prompt, "--plugin-dir", str(PLUGIN), "--allowedTools", "Bash",
                           "--output-format", "json", "--model", "claude-sonnet-4-5"],
                          env=env, cwd=work, capture_output=True, text=True, timeout=SESSION_TIMEOUT,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("confirmation", ["--yes", "--token 0123456789abcdef"])
def test_claude_code_plugin_blocks_the_agents_own_confirmation_in_bash(tmp_path: Path, agent_clients,
                                                                       confirmation: str):
    root = make_root(tmp_path, {"notes/x.md": active_file("X")})
    note = root / "notes" / "x.md"
    before = note.read_bytes()
    command = f"pmem --root {root} archive notes/x.md --reason r {confirmation}"
    with ScriptedModel(bash_once(command)) as model:
        done = claude_session(tmp_path, agent_clients["claude"], model, "Archive notes/x.md")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [bash_call] = [c for b in model.posts("/messages") for m in b.get("messages", []) if m["role"] == "assistant"
                   and isinstance(m["content"], list) for c in m["content"] if c.get("type") == "tool_use"][:1]
    assert bash_call["input"]["command"] == command, "the client sent back the call the script made"
    [result] = {json.dumps(r, sort_keys=True): r for b in model.posts("/messages") for r in tool_results(b)}.values()
    text = result_text(result)
    assert result.get("is_error") is True, text
    assert "pmem: blocked: `pmem archive`" in text and "let them apply it themselves" in text, text
    assert note.read_bytes() == before, "the shell door let the write through"
    assert not (root / "_archive" / "notes" / "x.md").exists()


def test_claude_code_plugin_lets_a_harmless_pmem_command_run(tmp_path: Path, agent_clients):
    root = make_root(tmp_path, {"notes/x.md": active_file("X")})
    with ScriptedModel(bash_once(f"pmem --root {root} check; echo exit=$?")) as model:
        done = claude_session(tmp_path, agent_clients["claude"], model, "Check the memory")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [result] = {json.dumps(r, sort_keys=True): r for b in model.posts("/messages") for r in tool_results(b)}.values()
    text = result_text(result)
    assert "blocked" not in text, text
    assert "exit=" in text, f"the command did not run: {text}"


# -- Codex -----------------------------------------------------------------------------------------
MEMORY_TOOLS = {"memory_load", "memory_read", "memory_status", "memory_health", "memory_check", "memory_history",
                "memory_diff", "memory_preview", "memory_apply"}


def codex_tools(body: dict[str, Any]) -> dict[str, set[str]]:
    """The tools of a Responses API request: namespace → its function names ("" for top level)."""
    tools: dict[str, set[str]] = {}
    for tool in body.get("tools", []):
        if tool.get("type") == "namespace":
            tools.setdefault(tool["name"], set()).update(t["name"] for t in tool.get("tools", []))
        elif tool.get("name"):
            tools.setdefault("", set()).add(tool["name"])
    return tools


def output_text(item: dict[str, Any]) -> str:
    """A `function_call_output`'s text (Codex sends a string or a list of `input_text` parts)."""
    output = item.get("output")
    if isinstance(output, list):
        return "\n".join(p.get("text", "") for p in output if isinstance(p, dict))
    return str(output)


def outputs(body: dict[str, Any]) -> list[str]:
    return [output_text(i) for i in body.get("input", []) if isinstance(i, dict)
            and i.get("type") == "function_call_output"]


def mcp_json(text: str) -> dict[str, Any]:
    """The JSON a pmem tool answered, from Codex's "Wall time: …\\nOutput:\\n{…}" wrapping."""
    return json.loads(text[text.index("{"):])


def preview_then_apply(namespace: str):
    """The model: previews archiving notes/x.md, applies the preview's token, then ends."""

    def script(_kind: str, body: dict[str, Any]) -> list[Reply]:
        done = outputs(body)
        if not done:
            return [ToolCall("memory_preview", {"operation": "archive", "path": "notes/x.md", "reason": "r"},
                             namespace=namespace)]
        if len(done) == 1:
            return [ToolCall("memory_apply", {"token": mcp_json(done[0])["token"]}, namespace=namespace)]
        return [Text("done")]

    return script


@pytest.mark.parametrize("approval", ["shipped", "line removed"])
def test_codex_exec_gets_the_tools_under_required_and_memory_apply_is_refused_headless(tmp_path: Path,
                                                                                       agent_clients, approval):
    root = make_root(tmp_path, {"notes/x.md": active_file("X")})
    note = root / "notes" / "x.md"
    before = note.read_bytes()
    codex_home = tmp_path / "home" / ".codex"
    codex_home.mkdir(parents=True)
    shipped = (REPO / "agents" / "codex" / "config.toml").read_text(encoding="utf-8")
    assert 'PMEM_ROOT = "~/.persistent-memory"' in shipped and "required = true" in shipped
    shipped = shipped.replace('"~/.persistent-memory"', json.dumps(str(root)))  # the one line a person edits
    if approval == "line removed":  # Codex's own default for a tool annotated destructive, as memory_apply is
        assert '\napproval_mode = "prompt"\n' in shipped
        shipped = shipped.replace('\napproval_mode = "prompt"\n', "\n")
    with ScriptedModel(preview_then_apply("mcp__pmem")) as model:
        provider = (f'model = "scripted-model"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
                    f'name = "Scripted"\nbase_url = "{model.url}/v1"\nwire_api = "responses"\n'
                    f'env_key = "SCRIPTED_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n')
        (codex_home / "config.toml").write_text(provider + shipped, encoding="utf-8")
        env = {"HOME": str(codex_home.parent), "CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "dummy",
               "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])}
        done = subprocess.run([str(agent_clients["codex"]), "exec", "--skip-git-repo-check", "--json",
                               "Archive notes/x.md"], env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=SESSION_TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    bodies = model.posts("/responses")
    assert len(bodies) == 3, [outputs(b) for b in bodies]
    # The first request already offers every pmem tool. (With `required = false` it does too, now
    # that `pmem mcp` answers its tool list early: this shows the shipped block works, not that
    # `required` is what makes it work.)
    assert codex_tools(bodies[0]).get("mcp__pmem") == MEMORY_TOOLS, codex_tools(bodies[0])
    preview, applied = outputs(bodies[-1])
    shown = mcp_json(preview)
    assert shown["applied"] is False and shown["token"].startswith("archive-")
    assert shown["command"] == f"pmem --root {root} archive notes/x.md --reason r", "the way a person applies it"
    # agents/README.md, "Headless runs": Codex refuses the call before pmem sees it (approval
    # policy `never`; the shipped approval_mode = "prompt", and Codex 0.171's default for a
    # destructive tool without the line). With approval_mode = "approve" the call would reach
    # pmem, Codex would decline its confirmation, and that decline would be remembered as a no.
    assert "requires approval, but approval policy is never" in applied, applied
    assert note.read_bytes() == before and not (root / "_archive" / "notes" / "x.md").exists()
