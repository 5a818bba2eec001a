"""Every client command README.md and agents/README.md show, checked against the client's real
argument syntax (issue 25: the README's `claude mcp add --scope user --env PMEM_ROOT=… pmem --
pmem mcp` was rejected by Claude Code).

What the models below follow, as looked up for this issue:

- `claude mcp add [options] <name> <commandOrUrl> [args...]` (Claude Code's `claude mcp add
  --help`; the CLI is built on commander.js). Options: `-s/--scope <scope>` (local, user,
  project), `-t/--transport <transport>` (stdio, sse, http), `-e/--env <env...>` and
  `-H/--header <header...>`, which are *variadic*: they take every following argument up to
  the next one that starts with `-`, so a name written after `--env KEY=VALUE` is taken as a
  second env value ("Invalid environment variable format: pmem") — the name goes before
  `--env`, or `--` ends the options; `--client-id <id>`, `--client-secret`, `--callback-port
  <port>`. After `--` every argument is positional: the server's command and its arguments.
- `codex mcp add <NAME> [--env KEY=VALUE]... -- <COMMAND>...` (Codex's CLI, built on clap):
  `--env` takes one `KEY=VALUE` per occurrence; the command follows `--`.
- Codex's `config.toml`: a server is `[mcp_servers.NAME]` with `command` and `args`; the
  variables it gets are `[mcp_servers.NAME.env]` (a table of strings). Codex starts servers
  with a short list of the shell's variables (PATH, HOME, …), never PMEM_ROOT, so the root
  must be in that table.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: tomli is a dependency there
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
DOCS = (REPO / "README.md", REPO / "agents" / "README.md")
CODEX_CONFIG = REPO / "agents" / "codex" / "config.toml"


class Rejected(ValueError):
    """What the client would say instead of adding the server."""


_CLAUDE_VALUED = {"-s": "scope", "--scope": "scope", "-t": "transport", "--transport": "transport",
                  "--client-id": "client-id", "--callback-port": "callback-port"}
_CLAUDE_VARIADIC = {"-e": "env", "--env": "env", "-H": "header", "--header": "header"}
_CLAUDE_FLAGS = {"--client-secret": "client-secret"}


def claude_mcp_add(argv: list[str]) -> dict:
    """`claude mcp add` parsed as commander.js parses it: {name, command, env, scope}."""
    assert argv[:3] == ["claude", "mcp", "add"], argv
    options: dict[str, list[str]] = {}
    positional: list[str] = []
    rest = argv[3:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--":
            positional += rest[i + 1:]
            break
        if word.startswith("-"):  # before `--` an option is read wherever it stands
            key, _, inline = word.partition("=")
            if key in _CLAUDE_VALUED:
                value = inline or (rest[i + 1] if i + 1 < len(rest) else None)
                if value is None:
                    raise Rejected(f"option '{key}' argument missing")
                options.setdefault(_CLAUDE_VALUED[key], []).append(value)
                i += 1 if inline else 2
                continue
            if key in _CLAUDE_VARIADIC:
                values = [inline] if inline else []
                j = i + 1
                while j < len(rest) and not rest[j].startswith("-"):
                    values.append(rest[j])
                    j += 1
                options.setdefault(_CLAUDE_VARIADIC[key], []).extend(values)
                i = j
                continue
            if key in _CLAUDE_FLAGS:
                options[_CLAUDE_FLAGS[key]] = []
                i += 1
                continue
            raise Rejected(f"unknown option '{word}'")
        positional.append(word)
        i += 1
    env = options.get("env", [])
    for value in env:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", value):
            raise Rejected(f"Invalid environment variable format: {value}")
    scope = options.get("scope", ["local"])[-1]
    if scope not in ("local", "user", "project"):
        raise Rejected(f"invalid scope {scope}")
    if len(positional) < 2:
        raise Rejected("missing required argument 'name' or 'commandOrUrl'")
    return {"name": positional[0], "command": positional[1:], "env": dict(v.split("=", 1) for v in env),
            "scope": scope}


def codex_mcp_add(argv: list[str]) -> dict:
    """`codex mcp add` parsed as clap parses it: {name, command, env}."""
    assert argv[:3] == ["codex", "mcp", "add"], argv
    rest = argv[3:]
    if "--" not in rest:
        raise Rejected("a stdio server's command follows `--`")
    head, command = rest[:rest.index("--")], rest[rest.index("--") + 1:]
    env: dict[str, str] = {}
    names = []
    i = 0
    while i < len(head):
        if head[i] == "--env":
            if i + 1 >= len(head) or "=" not in head[i + 1]:
                raise Rejected("--env takes KEY=VALUE")
            key, _, value = head[i + 1].partition("=")
            env[key] = value
            i += 2
        elif head[i].startswith("-"):
            raise Rejected(f"unexpected argument '{head[i]}'")
        else:
            names.append(head[i])
            i += 1
    if len(names) != 1 or not command:
        raise Rejected("usage: codex mcp add <NAME> [--env KEY=VALUE]... -- <COMMAND>...")
    return {"name": names[0], "command": command, "env": env}


def shown(prefix: str) -> list[str]:
    """The command lines starting with `prefix` in the docs' code blocks, inline code and
    the Codex config's comments."""
    found = []
    for path in (*DOCS, CODEX_CONFIG):
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r"^ *```[a-z]*\n(.*?)^ *```", text, flags=re.M | re.S):
            found += [line.strip() for line in block.splitlines() if line.strip().startswith(prefix)]
        for span in re.findall(r"`([^`]+)`", text):
            span = " ".join(span.split())
            if span.startswith(prefix):
                found.append(span)
    return sorted(set(found))


def argv_of(line: str) -> list[str]:
    return shlex.split(line, comments=True)


def test_the_model_of_claude_mcp_add_rejects_what_claude_code_rejects():
    with pytest.raises(Rejected, match="Invalid environment variable format: pmem"):
        claude_mcp_add(argv_of("claude mcp add --scope user --env PMEM_ROOT=/m pmem -- pmem mcp"))
    ok = claude_mcp_add(argv_of("claude mcp add --scope user pmem --env PMEM_ROOT=/m -- pmem mcp"))
    assert ok == {"name": "pmem", "command": ["pmem", "mcp"], "env": {"PMEM_ROOT": "/m"}, "scope": "user"}
    with pytest.raises(Rejected):
        codex_mcp_add(argv_of("codex mcp add --env PMEM_ROOT=/m pmem pmem mcp"))


@pytest.mark.parametrize("line", shown("claude mcp add"))
def test_every_claude_mcp_add_shown_adds_pmem_mcp(line):
    added = claude_mcp_add(argv_of(line))
    assert added["name"] == "pmem" and added["command"] == ["pmem", "mcp"], line
    assert set(added["env"]) <= {"PMEM_ROOT", "PMEM_MCP_ELICITATION"}


@pytest.mark.parametrize("line", shown("codex mcp add"))
def test_every_codex_mcp_add_shown_adds_pmem_mcp_with_its_root(line):
    added = codex_mcp_add(argv_of(line))
    assert added["name"] == "pmem" and added["command"] == ["pmem", "mcp"], line
    assert "PMEM_ROOT" in added["env"], "Codex does not pass PMEM_ROOT from the shell"


def test_both_clients_commands_are_shown():
    assert shown("claude mcp add") and shown("codex mcp add")


def codex_tables() -> list[dict]:
    tables = [tomllib.loads(CODEX_CONFIG.read_text(encoding="utf-8"))]
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        tables += [tomllib.loads(b) for b in re.findall(r"```toml\n(.*?)```", text, flags=re.S) if "mcp_servers" in b]
    return tables


def test_every_codex_config_shown_gives_the_server_its_root():
    tables = codex_tables()
    assert len(tables) >= 2, "the config file and the README's snippet"
    for config in tables:
        server = config["mcp_servers"]["pmem"]
        assert server["command"] == "pmem" and server["args"] == ["mcp"]
        env = server["env"]
        assert isinstance(env, dict) and isinstance(env.get("PMEM_ROOT"), str) and env["PMEM_ROOT"]
        assert all(isinstance(v, str) for v in env.values())


def test_the_agents_readme_says_what_is_guarded_and_what_is_not():
    text = (REPO / "agents" / "README.md").read_text(encoding="utf-8")
    section = text.split("## What is guarded, and what is not", 1)[1]
    for phrase in ("Bash", "apply_patch", "allow-secret", ".pmem.toml", "times out"):
        assert phrase in section, phrase
    assert "Headless runs" in text and "docs/decisions.md" in text
