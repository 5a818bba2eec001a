"""`pmem doctor` and `pmem setup AGENT` (engine/runtime_contract.py, docs/design.md §12) against the
configuration folders the real clients write: Claude Code's `claude mcp add` and plugin install,
Codex's `codex mcp add`; and what `setup` writes is read back by the real clients."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from pmem_lsp.engine.shell_door import confirmed_write
from roots import make_root

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def machine(tmp_path: Path, agent_clients) -> dict[str, str]:
    """A home of its own, with pmem and both clients on PATH."""
    home = tmp_path / "home"
    home.mkdir()
    bins = {str(Path(sys.executable).parent), str(agent_clients["claude"].parent)}
    return {**{k: v for k, v in os.environ.items() if k not in ("PMEM_ROOT", "PERSISTENT_MEMORY_HOME")},
            "HOME": str(home), "CODEX_HOME": str(home / ".codex"), "XDG_CONFIG_HOME": str(home / ".config"),
            "PATH": os.pathsep.join([*bins, "/usr/bin", "/bin"])}


def run(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def pmem(env: dict[str, str], root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return run(env, sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *argv)


def doctor(env: dict[str, str], root: Path) -> dict:
    done = pmem(env, root, "doctor", "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    assert (done.returncode == 0) == data["ok"]
    return data


def agent(data: dict, name: str) -> dict:
    return next(a for a in data["agents"] if a["name"] == name)


def test_claude_code_set_up_by_its_own_mcp_add_on_this_root_is_ok(tmp_path: Path, machine, agent_clients):
    root = make_root(tmp_path)
    (Path(machine["CODEX_HOME"])).mkdir()  # Codex present too, not set up: its problems are its own
    added = run(machine, str(agent_clients["claude"]), "mcp", "add", "--scope", "user", "pmem", "--env",
                f"PMEM_ROOT={root}", "--", "pmem", "mcp")
    assert added.returncode == 0, added.stderr
    claude = agent(doctor(machine, root), "claude-code")
    assert claude["found"] and claude["reaches"] == ["MCP server pmem (user scope)"]
    assert claude["root"] == str(root) and claude["problems"] == [] and claude["ok"]


def test_the_plugin_without_a_root_is_found_and_setup_fixes_it_as_claude_code_reads_it(
        tmp_path: Path, machine, agent_clients):
    root = make_root(tmp_path / "elsewhere")
    claude_bin = str(agent_clients["claude"])
    assert run(machine, claude_bin, "plugin", "marketplace", "add", str(REPO / "agents")).returncode == 0
    assert run(machine, claude_bin, "plugin", "install", "pmem@pmem-lsp").returncode == 0
    claude = agent(doctor(machine, root), "claude-code")
    assert claude["reaches"] == ["plugin pmem@pmem-lsp"]
    [problem] = claude["problems"]
    assert "would use" in problem["what"] and str(root) in problem["fix"]

    before = (Path(machine["HOME"]) / ".claude.json").read_bytes()
    shown = pmem(machine, root, "setup", "claude-code")  # no terminal, no --yes: a preview only
    assert shown.returncode == 3 and "PMEM_ROOT" in shown.stdout
    assert (Path(machine["HOME"]) / ".claude.json").read_bytes() == before
    assert confirmed_write(f"pmem --root {root} setup claude-code --yes"), "an agent cannot apply it itself"
    applied = pmem(machine, root, "setup", "claude-code", "--yes")
    assert applied.returncode == 0, applied.stderr
    got = run(machine, claude_bin, "mcp", "get", "pmem")  # the real client reads what setup wrote
    assert got.returncode == 0 and str(root) in got.stdout, got.stdout + got.stderr
    data = doctor(machine, root)
    assert agent(data, "claude-code")["ok"] and agent(data, "claude-code")["root"] == str(root)
    assert pmem(machine, root, "setup", "claude-code").stdout.strip().endswith("nothing to change")


def test_codex_added_by_its_own_mcp_add_without_a_root_is_told_what_to_change(tmp_path: Path, machine, agent_clients):
    root = make_root(tmp_path)
    Path(machine["CODEX_HOME"]).mkdir()
    added = run(machine, str(agent_clients["codex"]), "mcp", "add", "pmem", "--", "pmem", "mcp")
    assert added.returncode == 0, added.stderr
    codex = agent(doctor(machine, root), "codex")
    whats = " | ".join(p["what"] for p in codex["problems"])
    assert "would use" in whats and "not required" in whats and "no persistent-memory skill" in whats
    refused = pmem(machine, root, "setup", "codex", "--yes")  # the person's own table: edited by hand
    assert refused.returncode == 2 and "edit it by hand" in refused.stderr


def test_setup_codex_writes_a_config_the_real_codex_reads(tmp_path: Path, machine, agent_clients):
    root = make_root(tmp_path)
    codex_home = Path(machine["CODEX_HOME"])
    codex_home.mkdir()
    (codex_home / "config.toml").write_text('model = "gpt-5"\n', encoding="utf-8")  # the person's own line stays
    applied = pmem(machine, root, "setup", "codex", "--yes")
    assert applied.returncode == 0, applied.stderr
    listed = run(machine, str(agent_clients["codex"]), "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [server] = [s for s in json.loads(listed.stdout) if s["name"] == "pmem"]
    # Codex's own approval of memory_apply is the yes: Codex cancels pmem's (tests/agents/test_live_interactive.py).
    assert server["transport"]["env"] == {"PMEM_ROOT": str(root), "PMEM_MCP_ELICITATION": "off"}
    written = tomllib.loads((codex_home / "config.toml").read_text(encoding="utf-8"))["mcp_servers"]["pmem"]
    assert written["tools"]["memory_apply"]["approval_mode"] == "prompt", "the two lines go together"
    assert (codex_home / "config.toml").read_text(encoding="utf-8").startswith('model = "gpt-5"\n')
    codex = agent(doctor(machine, root), "codex")
    assert codex["ok"], codex["problems"]
    assert (codex_home / "skills" / "persistent-memory" / "SKILL.md").is_file()


def test_a_machine_without_agents_and_without_a_root(tmp_path: Path, machine):
    env = {**machine, "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])}
    data = doctor(env, tmp_path / "no-root-here")
    assert not data["ok"] and "does not exist" in data["rootProblems"][0]["what"]
    assert "init" in data["rootProblems"][0]["fix"]
    assert [a["found"] for a in data["agents"]] == [False, False]
