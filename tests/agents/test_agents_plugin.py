"""The agent set-ups in agents/ (docs/design.md §10): the Claude Code plugin's manifests, the
Codex pieces and the skill. Formats as documented for Claude Code (plugins reference, hooks
reference) and Codex (MCP, skills), and the Agent Skills front matter rules; `claude plugin
validate` would be better still, but no `claude` binary is installed here.

Every `pmem` command the configs run and every `pmem` command line the skill and the README
show must parse with the real CLI parser.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: tomli is a dependency there
    import tomli as tomllib

from pmem_lsp.cli.main import build_parser, serve_main

REPO = Path(__file__).resolve().parents[2]
AGENTS = REPO / "agents"
PLUGIN = AGENTS / "claude-code"
SKILL = PLUGIN / "skills" / "persistent-memory" / "SKILL.md"
CODEX = AGENTS / "codex"
WRITE_COMMANDS = ("save", "route", "upgrade", "archive", "delete", "recover", "purge", "init")


# The Agent Skills front matter fields (agentskills.io): the only ones every client loads
# (claude.ai uploads reject others; Codex needs name and description).
SKILL_FIELDS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
PLUGIN_FIELDS = {"$schema", "name", "displayName", "version", "description", "author", "homepage", "repository",
                 "license", "keywords", "metadata", "defaultEnabled", "skills", "commands", "agents", "hooks",
                 "mcpServers", "lspServers", "outputStyles", "userConfig", "dependencies"}
LSP_FIELDS = {"command", "args", "extensionToLanguage", "transport", "env", "initializationOptions", "settings",
              "workspaceFolder", "startupTimeout", "maxRestarts", "diagnostics"}


def load_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def argv_of(command: str) -> list[str]:
    """A shell command line as argv, without redirections, pipes and comments."""
    words = shlex.split(command, comments=True)
    for i, word in enumerate(words):
        if word in ("<", ">", "|", "&&", ";", "2>") or word.startswith(("<", ">")):
            return words[:i]
    return words


def normal(argv: list[str]) -> str:
    return shlex.join(argv)


def parses(argv: list[str]) -> bool:
    assert argv and argv[0] == "pmem", argv
    try:
        build_parser().parse_args(argv[1:])
    except SystemExit as exc:
        return exc.code == 0
    return True


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^ *```[a-z]*\n(.*?)^ *```", text, flags=re.M | re.S)


def shown_commands(path: Path) -> list[str]:
    """The `pmem` command lines in a Markdown file: the lines of its code blocks, and inline
    code spans that are a whole command (no `…` placeholder)."""
    text = path.read_text(encoding="utf-8")
    found = []
    for block in code_blocks(text):
        found += [line.strip() for line in block.splitlines() if line.strip().startswith("pmem ")]
    for span in re.findall(r"`(pmem [^`]+)`", text):
        span = " ".join(span.split())
        if "…" not in span and "DIR" not in span and "PATH" not in span and "COMMAND" not in span:
            found.append(span)
    return found


def front_matter(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path}: no front matter"
    head, _, _ = text[4:].partition("\n---\n")
    fields = {}
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        assert sep and key == key.strip() and key, f"{path}: not a `key: value` line: {line!r}"
        value = value.strip()
        # A YAML plain scalar: no `: ` or ` #` inside, no indicator character first.
        assert ": " not in value and " #" not in value and value[:1] not in set("[]{}&*!|>'\"%@`#,?-"), \
            f"{path}: `{key}` needs quoting in YAML: {value!r}"
        fields[key] = value
    return fields


# -- the Claude Code plugin ---------------------------------------------------------------
def test_the_plugin_manifest():
    manifest = load_json(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "pmem"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", manifest["name"])
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert manifest["version"] == pyproject["project"]["version"]
    assert 20 < len(manifest["description"]) < 1024
    assert set(manifest) <= PLUGIN_FIELDS, set(manifest) - PLUGIN_FIELDS
    # Components sit at the plugin root, not inside .claude-plugin/.
    assert sorted(p.name for p in (PLUGIN / ".claude-plugin").iterdir()) == ["plugin.json"]


def test_the_local_marketplace_holds_the_plugin():
    market = load_json(AGENTS / ".claude-plugin" / "marketplace.json")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", market["name"])
    assert market["name"] not in ("claude-code-marketplace", "claude-code-plugins", "claude-plugins-official",
                                  "anthropic-marketplace", "anthropic-plugins", "agent-skills")
    assert market["owner"]["name"]
    [entry] = market["plugins"]
    assert entry["name"] == "pmem"
    assert (AGENTS / entry["source"] / ".claude-plugin" / "plugin.json").is_file()


def test_the_hooks_guard_writes_before_and_after_and_the_shell_before():
    config = load_json(PLUGIN / "hooks" / "hooks.json")
    assert set(config) <= {"description", "hooks"}
    assert set(config["hooks"]) == {"PreToolUse", "PostToolUse"}
    writes = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
    expected = {("PreToolUse", frozenset(writes)): ["pmem", "hook", "pre-write"],
                ("PostToolUse", frozenset(writes)): ["pmem", "hook", "post-write"],
                ("PreToolUse", frozenset({"Bash"})): ["pmem", "hook", "pre-shell"]}
    seen = {}
    for event, groups in config["hooks"].items():
        for group in groups:
            # Only letters, digits and `|`: Claude Code matches the exact tool names.
            assert re.fullmatch(r"[A-Za-z|]+", group["matcher"])
            [handler] = group["hooks"]
            assert handler["type"] == "command"
            # Shell form (every Claude Code version runs it); `args` is newer.
            assert "args" not in handler
            assert isinstance(handler["timeout"], int) and 1 <= handler["timeout"] <= 60  # seconds
            seen[(event, frozenset(group["matcher"].split("|")))] = argv_of(handler["command"])
    assert seen == expected


def test_the_mcp_server_entry():
    servers = load_json(PLUGIN / ".mcp.json")["mcpServers"]
    assert servers == {"pmem": {"command": "pmem", "args": ["mcp"]}}


def test_the_language_server_is_declared_for_markdown():
    servers = load_json(PLUGIN / ".lsp.json")
    assert set(servers) == {"pmem"}
    server = servers["pmem"]
    assert set(server) <= LSP_FIELDS, "restartOnCrash and shutdownTimeout make Claude Code before 2.1.205 skip it"
    assert server["command"] == "pmem-lsp" and server.get("args", []) == []
    assert server["extensionToLanguage"] == {".md": "markdown"}
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["pmem-lsp"] == "pmem_lsp.cli.main:serve_main"
    with pytest.raises(SystemExit) as done:
        serve_main(["--help"])  # the entry point parses its (empty) arguments
    assert done.value.code == 0


def configured_commands() -> list[list[str]]:
    hooks = load_json(PLUGIN / "hooks" / "hooks.json")["hooks"]
    out = [argv_of(h["command"]) for groups in hooks.values() for g in groups for h in g["hooks"]]
    for server in load_json(PLUGIN / ".mcp.json")["mcpServers"].values():
        out.append([server["command"], *server["args"]])
    codex = tomllib.loads((CODEX / "config.toml").read_text(encoding="utf-8"))["mcp_servers"]["pmem"]
    out.append([codex["command"], *codex["args"]])
    return out


def test_every_command_the_configs_run_is_a_pmem_command():
    for argv in configured_commands():
        assert parses(argv), f"`{normal(argv)}` is not a pmem command"


# -- the skill -------------------------------------------------------------------------------
def test_the_skill_front_matter_follows_the_agent_skills_rules():
    for path in (SKILL, CODEX / "skills" / "persistent-memory" / "SKILL.md"):
        fields = front_matter(path)
        assert set(fields) <= SKILL_FIELDS, set(fields) - SKILL_FIELDS
        name = fields["name"]
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and len(name) <= 64
        assert name == path.parent.name
        assert 1 <= len(fields["description"]) <= 1024
        assert len(fields.get("compatibility", "")) <= 500


def test_codex_gets_the_same_skill():
    assert (CODEX / "skills" / "persistent-memory" / "SKILL.md").read_bytes() == SKILL.read_bytes()


SHOWN = sorted({c for path in (SKILL, AGENTS / "README.md", CODEX / "AGENTS.md") for c in shown_commands(path)})


def test_the_skill_shows_the_whole_procedure():
    commands = [argv_of(c) for c in shown_commands(SKILL)]
    used = {argv[1] for argv in commands if len(argv) > 1}
    assert {"status", "health", "check", "save", "route", "archive", "delete", "recover", "purge", "upgrade",
            "init"} <= used
    text = SKILL.read_text(encoding="utf-8")
    for phrase in ("--token", "summary", "explicit yes", "stale-preview", "`--yes` or `--token` yourself",
                   "memory_apply", "pmem review --format json"):
        assert phrase in text, phrase
    # The MCP tools it names are the server's.
    from pmem_lsp.mcp.server import DESCRIPTIONS

    assert set(re.findall(r"`(memory_[a-z]+)", text)) == set(DESCRIPTIONS)


@pytest.mark.parametrize("line", SHOWN)
def test_every_command_line_shown_parses(line):
    argv = argv_of(line)
    assert "--yes" not in argv and "-y" not in argv, "agents never pass --yes"
    if len(argv) > 1 and argv[1] in WRITE_COMMANDS:
        assert "--format" in argv, "a write an agent runs asks for the JSON preview"
    assert parses(argv), f"`{normal(argv)}` does not parse"


# -- Codex -----------------------------------------------------------------------------------
def test_the_codex_config():
    config = tomllib.loads((CODEX / "config.toml").read_text(encoding="utf-8"))
    server = config["mcp_servers"]["pmem"]
    assert server["command"] == "pmem" and server["args"] == ["mcp"]
    assert server["tools"]["memory_apply"]["approval_mode"] in ("auto", "prompt", "approve")
    assert set(server) <= {"command", "args", "env", "env_vars", "cwd", "startup_timeout_sec", "tool_timeout_sec",
                           "enabled", "required", "enabled_tools", "disabled_tools", "default_tools_approval_mode",
                           "tools"}
    agents_md = (CODEX / "AGENTS.md").read_text(encoding="utf-8")
    assert len(agents_md.encode("utf-8")) < 4096, "AGENTS.md shares a 32 KiB budget with the project's own"
    for tool in ("memory_load", "memory_read", "memory_preview", "memory_apply"):
        assert tool in agents_md


def test_the_readme_shows_the_three_set_ups():
    text = (AGENTS / "README.md").read_text(encoding="utf-8")
    assert text.startswith("# Use it from your agent")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert [h.split(":")[0] for h in headings] == ["1. Claude Code plugin", "2. MCP only", "3. Hooks only",
                                                  "What is guarded, and what is not"]
    for block in code_blocks(text):
        stripped = block.strip()
        if stripped.startswith("{"):
            json.loads(stripped)  # every JSON snippet is valid JSON
    toml_blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    assert toml_blocks and all(tomllib.loads(b) for b in toml_blocks)
