"""Commands a user is meant to run can be copied (issue 46): each sits in a fenced block on one
line, none is inline code broken across lines, and every `claude mcp add` / `codex mcp add` in
README.md and agents/README.md is run through the real client's own parser (in a throwaway
home) and leaves the server the text says."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from roots import REPO

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

DOCS = [REPO / "README.md", REPO / "agents" / "README.md"]
FENCE = re.compile(r"^\s*(```|~~~)")
# Inline code that starts a command a user runs: these belong in a fenced block.
SET_UP = re.compile(r"^(claude (mcp|plugin|--plugin-dir)|codex mcp|/plugin (marketplace add|install) \S|pipx install|export )")
COMMAND_WORDS = {"claude", "codex", "pmem", "make", "pip", "pipx", "npm", "git", "cd", "export", "python", "cargo",
                 "maturin", "/plugin", "nvim", "emacs"}


def split(doc: Path) -> tuple[str, list[str]]:
    """The document's prose (fenced lines blanked, so line numbers stay) and its fenced lines."""
    prose, fenced, inside = [], [], False
    for line in doc.read_text(encoding="utf-8").split("\n"):
        if FENCE.match(line):
            inside = not inside
            prose.append("")
            continue
        (fenced if inside else prose).append(line)
        if inside:
            prose.append("")
    return "\n".join(prose), fenced


def commands(fenced: list[str], program: str) -> list[list[str]]:
    """Each fenced line that runs `program … mcp add`, as the shell splits it (comments dropped)."""
    return [shlex.split(line, comments=True) for line in fenced if line.strip().startswith(f"{program} mcp add")]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.relative_to(REPO).as_posix())
def test_no_command_is_inline_code_broken_across_lines_or_left_in_prose(doc: Path):
    prose, _fenced = split(doc)
    broken, unfenced = [], []
    for m in re.finditer(r"`([^`]+)`", prose):
        code = m.group(1)
        line = prose[:m.start()].count("\n") + 1
        if "\n" in code and code.split()[0] in COMMAND_WORDS:
            broken.append((line, code))
        if SET_UP.match(code):
            unfenced.append((line, code))
    assert not broken, f"{doc.relative_to(REPO)}: commands broken across lines (put them in a fenced block): {broken}"
    assert not unfenced, f"{doc.relative_to(REPO)}: set-up commands in prose (put them in a fenced block): {unfenced}"


def test_the_documents_give_both_clients_a_command():
    fenced = [line for doc in DOCS for line in split(doc)[1]]
    assert len(commands(fenced, "claude")) >= 2 and len(commands(fenced, "codex")) >= 1


def _client_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    return {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "XDG_CONFIG_HOME": str(home / ".config")}


def _expected(argv: list[str]) -> tuple[str, list[str], dict[str, str]]:
    """What the line means: the server's name, its command line after `--`, its --env values."""
    cut = argv.index("--")
    options, command = argv[3:cut], argv[cut + 1:]
    env = dict(options[i + 1].split("=", 1) for i, o in enumerate(options) if o in ("--env", "-e"))
    name = next(o for i, o in enumerate(options) if not o.startswith("-")
                and (i == 0 or options[i - 1] not in ("--env", "-e", "--scope", "-s", "--transport", "-t")))
    return name, command, env


@pytest.mark.e2e
@pytest.mark.parametrize("line", [" ".join(c) for doc in DOCS for c in commands(split(doc)[1], "claude")])
def test_each_claude_mcp_add_line_is_what_claude_code_reads(line: str, tmp_path: Path, agent_clients):
    argv = shlex.split(line)
    env = _client_env(tmp_path)
    done = subprocess.run([str(agent_clients["claude"]), *argv[1:]], env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    name, command, variables = _expected(argv)
    servers = json.loads((Path(env["HOME"]) / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers[name]["command"] == command[0] and servers[name]["args"] == command[1:]
    assert servers[name].get("env", {}) == variables


@pytest.mark.e2e
@pytest.mark.parametrize("line", [" ".join(c) for doc in DOCS for c in commands(split(doc)[1], "codex")])
def test_each_codex_mcp_add_line_is_what_codex_reads(line: str, tmp_path: Path, agent_clients):
    argv = shlex.split(line)
    env = _client_env(tmp_path)
    done = subprocess.run([str(agent_clients["codex"]), *argv[1:]], env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    name, command, variables = _expected(argv)
    config = tomllib.loads((Path(env["CODEX_HOME"]) / "config.toml").read_text(encoding="utf-8"))
    server = config["mcp_servers"][name]
    assert server["command"] == command[0] and server["args"] == command[1:]
    assert server.get("env", {}) == variables


@pytest.mark.e2e
def test_the_shipped_codex_config_loads_in_the_real_codex(tmp_path: Path, agent_clients):
    """agents/codex/config.toml as the README says to use it: the real Codex reads it (it
    type-checks `required` and `approval_mode` and refuses a file with a wrong one) and lists
    the pmem server it describes."""
    env = _client_env(tmp_path)
    shipped = (REPO / "agents" / "codex" / "config.toml").read_text(encoding="utf-8")
    (Path(env["CODEX_HOME"]) / "config.toml").write_text(shipped, encoding="utf-8")
    done = subprocess.run([str(agent_clients["codex"]), "mcp", "list", "--json"], env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    [server] = [s for s in json.loads(done.stdout) if s["name"] == "pmem"]
    assert server["enabled"] and server["transport"]["command"] == "pmem" and server["transport"]["args"] == ["mcp"]
    config = tomllib.loads(shipped)["mcp_servers"]["pmem"]
    assert config["required"] is True and config["tools"]["memory_apply"]["approval_mode"] == "prompt"
