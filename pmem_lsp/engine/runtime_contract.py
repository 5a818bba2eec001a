"""The runtime contract, checked (docs/design.md §12): `pmem doctor` and `pmem setup AGENT`.

The format's Runtime Contract says shared memory works only when each agent can discover the
skill (or an equivalent instruction), every agent uses the same local path, and the user may
read and write it. This module reads — never writes — the documented configuration of the
agents it finds (Claude Code: `~/.claude.json`, `~/.claude/settings.json`, its plugins and
skills; Codex: `$CODEX_HOME/config.toml`, its skills and `AGENTS.md`) and says, per agent,
how it reaches the memory, which root it would use, and each problem with the exact step
that fixes it. `setup_changes` turns the fixable ones into file changes for `pmem setup`,
which shows them and writes them only after the person's yes. Nothing here sends anything
anywhere, and no agent's own memory store (`CLAUDE.md`, Codex's memories) is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .zones import DEFAULT_ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CLAUDE, CODEX = "claude-code", "codex"
AGENTS = (CLAUDE, CODEX)
SKILL = "persistent-memory"
ROOT_VARIABLES = ("PMEM_ROOT", "PERSISTENT_MEMORY_HOME")


@dataclass(frozen=True)
class Problem:
    what: str
    fix: str  # the exact step, for a person
    by_setup: bool = False  # `pmem setup AGENT` carries the fix out


@dataclass
class AgentReport:
    name: str
    found: bool
    where: list[str] = field(default_factory=list)  # the configuration files and folders read
    reaches: list[str] = field(default_factory=list)  # how it reaches the memory: plugin, mcp, skill
    root: str | None = None  # the memory root its MCP server would use
    problems: list[Problem] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        return {"name": self.name, "found": self.found, "where": self.where, "reaches": self.reaches,
                "root": self.root, "ok": self.found and not self.problems,
                "problems": [{"what": p.what, "fix": p.fix, "setup": p.by_setup} for p in self.problems]}


@dataclass
class DoctorReport:
    root: str
    root_problems: list[Problem]
    agents: list[AgentReport]

    @property
    def ok(self) -> bool:
        return not self.root_problems and all(not a.problems for a in self.agents if a.found)

    def data(self) -> dict[str, Any]:
        return {"root": self.root, "ok": self.ok,
                "rootProblems": [{"what": p.what, "fix": p.fix, "setup": p.by_setup} for p in self.root_problems],
                "agents": [a.data() for a in self.agents]}


@dataclass(frozen=True)
class Places:
    """Where the agents keep their configuration, from the environment pmem runs in."""

    home: Path
    codex_home: Path
    environ: dict[str, str]

    @classmethod
    def of(cls, environ: dict[str, str] | None = None) -> Places:
        env = dict(os.environ if environ is None else environ)
        home = Path(env.get("HOME") or os.path.expanduser("~"))
        codex = Path(os.path.expanduser(env.get("CODEX_HOME") or str(home / ".codex")))
        return cls(home, codex, env)


def _expand(value: str, home: Path) -> Path:
    if value == "~" or value.startswith("~/"):
        value = str(home) + value[1:]
    return Path(value).absolute()


def _root_from(env: dict[str, str], home: Path) -> Path:
    """The root a pmem started with `env` resolves (zones.discover_root, with this home)."""
    chosen = next((env[v] for v in ROOT_VARIABLES if env.get(v)), None)
    return _expand(chosen, home) if chosen else _expand(DEFAULT_ROOT, home)


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _read_json(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"{path} cannot be read ({type(exc).__name__})"
    return (data, None) if isinstance(data, dict) else (None, f"{path} is not a JSON object")


def _read_toml(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")), None
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return None, f"{path} cannot be read ({type(exc).__name__})"


def check_root(root: Path) -> list[Problem]:
    """The third condition: the user may read and write the root."""
    if not root.exists():
        return [Problem(f"the memory root {root} does not exist",
                        f"create it: pmem --root {root} init (it previews, then asks)")]
    if not root.is_dir():
        return [Problem(f"the memory root {root} is not a folder", "point PMEM_ROOT at the memory folder")]
    problems = []
    if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
        problems.append(Problem(f"you cannot read and write {root}",
                                f"give yourself access: chmod u+rwx {root} (or chown it to you)"))
    mode = stat.S_IMODE(root.stat().st_mode)
    if mode & 0o002:
        problems.append(Problem(f"{root} is writable by every user, who could write what your agents read",
                                f"chmod o-w {root}"))
    return problems


def _pmem_on_path(env: dict[str, str]) -> bool:
    return shutil.which("pmem", path=env.get("PATH")) is not None


def check_claude(places: Places, root: Path) -> AgentReport:
    home = places.home
    config, settings = home / ".claude.json", home / ".claude" / "settings.json"
    found = config.exists() or (home / ".claude").is_dir() or shutil.which("claude", path=places.environ.get("PATH"))
    report = AgentReport(CLAUDE, bool(found))
    if not found:
        return report
    report.where = [str(p) for p in (config, settings) if p.exists()]
    data, problem = _read_json(config)
    user_settings, settings_problem = _read_json(settings)
    for bad in (problem, settings_problem):
        if bad:
            report.problems.append(Problem(bad, "repair the file, or let Claude Code write it again"))
    enabled = (user_settings or {}).get("enabledPlugins") or {}
    plugin = next((k for k, on in enabled.items() if isinstance(k, str) and k.split("@")[0] == "pmem" and on), None)
    server = ((data or {}).get("mcpServers") or {}).get("pmem")
    skill = home / ".claude" / "skills" / SKILL / "SKILL.md"
    if plugin:
        report.reaches.append(f"plugin {plugin}")
    if isinstance(server, dict):
        report.reaches.append("MCP server pmem (user scope)")
    if skill.is_file():
        report.reaches.append(f"skill {skill}")
    if not report.reaches:
        report.problems.append(Problem(
            "Claude Code has neither pmem's plugin, its MCP server nor the persistent-memory skill: it will not "
            "read the memory",
            "in Claude Code: /plugin marketplace add /path/to/pmem-lsp/agents, then /plugin install pmem@pmem-lsp; "
            "or run: pmem setup claude-code (adds the MCP server)", by_setup=True))
    # The root its MCP server resolves: the server's env table, else Claude Code's settings
    # `env`, else the environment Claude Code is started from (this one).
    env = {**places.environ, **((user_settings or {}).get("env") or {})}
    if isinstance(server, dict):
        env = {**env, **(server.get("env") or {})}
    if report.reaches:
        used = _root_from({k: str(v) for k, v in env.items()}, home)
        report.root = str(used)
        if not _same(used, root):
            report.problems.append(Problem(
                f"Claude Code's pmem would use {used}, not {root}",
                f"set PMEM_ROOT={root} in the pmem MCP server's env (pmem setup claude-code does), or in "
                "~/.claude/settings.json's env", by_setup=isinstance(server, dict) or not plugin))
        if not _pmem_on_path(places.environ):
            report.problems.append(Problem("`pmem` is not on PATH, so Claude Code cannot start it",
                                           "install pmem (pipx install /path/to/pmem-lsp) or put its folder on PATH"))
    return report


def check_codex(places: Places, root: Path) -> AgentReport:
    config = places.codex_home / "config.toml"
    found = places.codex_home.is_dir() or shutil.which("codex", path=places.environ.get("PATH"))
    report = AgentReport(CODEX, bool(found))
    if not found:
        return report
    report.where = [str(p) for p in (config, places.codex_home / "AGENTS.md") if p.exists()]
    data, problem = _read_toml(config)
    if problem:
        report.problems.append(Problem(problem, "repair the file (codex mcp list says where it fails)"))
    server = ((data or {}).get("mcp_servers") or {}).get("pmem")
    skill = places.codex_home / "skills" / SKILL / "SKILL.md"
    agents_md = places.codex_home / "AGENTS.md"
    instructed = skill.is_file() or (agents_md.is_file() and "persistent" in agents_md.read_text(
        encoding="utf-8", errors="replace").lower())
    if isinstance(server, dict) and server.get("enabled", True) is not False:
        report.reaches.append("MCP server pmem")
    if instructed:
        report.reaches.append(f"skill {skill}" if skill.is_file() else f"instructions {agents_md}")
    if not isinstance(server, dict):
        report.problems.append(Problem("Codex has no pmem MCP server", "run: pmem setup codex (adds "
                                       "[mcp_servers.pmem] to config.toml)", by_setup=True))
    elif server.get("enabled", True) is False:
        report.problems.append(Problem("Codex's pmem MCP server is turned off (enabled = false)",
                                       f"remove `enabled = false` from [mcp_servers.pmem] in {config}"))
    if not instructed:
        report.problems.append(Problem(
            "Codex has no persistent-memory skill or instruction: it will not know when to read the memory",
            f"copy agents/codex/skills/{SKILL}/ to {places.codex_home / 'skills' / SKILL}/", by_setup=True))
    if isinstance(server, dict):
        # Codex passes only a few variables of its environment to MCP servers, never PMEM_ROOT:
        # the server's env table decides, else the default root.
        env = {k: str(v) for k, v in (server.get("env") or {}).items()}
        used = _root_from(env, places.home)
        report.root = str(used)
        if not _same(used, root):
            report.problems.append(Problem(f"Codex's pmem would use {used}, not {root}",
                                           f'set PMEM_ROOT = "{root}" in [mcp_servers.pmem.env] of {config}',
                                           by_setup=False))
        if server.get("required") is not True:
            report.problems.append(Problem(
                "Codex's pmem server is not required: `codex exec` may start without its tools",
                f"add `required = true` under [mcp_servers.pmem] in {config}"))
    return report


def doctor(root: Path, places: Places | None = None) -> DoctorReport:
    places = places or Places.of()
    return DoctorReport(str(root), check_root(root), [check_claude(places, root), check_codex(places, root)])


# -- setup: the fixable problems as file changes ------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    path: Path
    before: str | None  # None: the file is created
    after: str
    why: str


def _skill_source() -> Path | None:
    """The skill as this checkout ships it (agents/codex/skills/…), when pmem runs from one."""
    here = Path(__file__).resolve().parents[2] / "agents" / "codex" / "skills" / SKILL / "SKILL.md"
    return here if here.is_file() else None


def setup_changes(agent: str, root: Path, places: Places | None = None) -> list[FileChange]:
    """What `pmem setup AGENT` writes: for Claude Code, the pmem MCP server (with this root) in
    `~/.claude.json`; for Codex, `[mcp_servers.pmem]` in `config.toml` and the skill. Empty
    when there is nothing to do. Raises ValueError with the reason when it cannot."""
    places = places or Places.of()
    if agent == CLAUDE:
        return _setup_claude(places, root)
    if agent == CODEX:
        return _setup_codex(places, root)
    raise ValueError(f"unknown agent {agent!r}; one of: {', '.join(AGENTS)}")


def _setup_claude(places: Places, root: Path) -> list[FileChange]:
    path = places.home / ".claude.json"
    data, problem = _read_json(path)
    if problem:
        raise ValueError(problem + "; nothing was changed")
    before = path.read_text(encoding="utf-8") if data is not None else None
    data = dict(data or {})
    servers = dict(data.get("mcpServers") or {})
    wanted = {"type": "stdio", "command": "pmem", "args": ["mcp"], "env": {"PMEM_ROOT": str(root)}}
    current = servers.get("pmem")
    if isinstance(current, dict) and current.get("command") == "pmem" and _same(
            _root_from({k: str(v) for k, v in {**places.environ, **(current.get("env") or {})}.items()},
                       places.home), root):
        return []
    servers["pmem"] = {**(current if isinstance(current, dict) else {}), **wanted,
                       "env": {**((current or {}).get("env") or {} if isinstance(current, dict) else {}),
                               "PMEM_ROOT": str(root)}}
    data["mcpServers"] = servers
    return [FileChange(path, before, json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                       f"the pmem MCP server for Claude Code (user scope), on {root}")]


def _setup_codex(places: Places, root: Path) -> list[FileChange]:
    path = places.codex_home / "config.toml"
    data, problem = _read_toml(path)
    if problem:
        raise ValueError(problem + "; nothing was changed")
    changes = []
    before = path.read_text(encoding="utf-8") if data is not None else None
    if "pmem" in ((data or {}).get("mcp_servers") or {}):
        server = data["mcp_servers"]["pmem"] if data else {}
        used = _root_from({k: str(v) for k, v in (server.get("env") or {}).items()}, places.home)
        if not _same(used, root) or server.get("required") is not True:
            # A table of the person's own: rewriting TOML would drop their comments; say what to change.
            raise ValueError(f"{path} already has [mcp_servers.pmem]; edit it by hand: required = true, and "
                             f'PMEM_ROOT = "{root}" in [mcp_servers.pmem.env]; nothing was changed')
    else:
        block = ("\n# Persistent Memory (pmem setup codex)\n[mcp_servers.pmem]\ncommand = \"pmem\"\n"
                 "args = [\"mcp\"]\nrequired = true\n\n[mcp_servers.pmem.env]\n"
                 f"PMEM_ROOT = {json.dumps(str(root))}\n"
                 "# Codex's question below is your yes (Codex cancels pmem's own, unseen).\n"
                 "PMEM_MCP_ELICITATION = \"off\"\n\n[mcp_servers.pmem.tools.memory_apply]\n"
                 "approval_mode = \"prompt\"\n")
        text = before or ""
        changes.append(FileChange(path, before, (text.rstrip("\n") + "\n" if text.strip() else "") + block,
                                  f"the pmem MCP server for Codex, on {root}"))
    skill = places.codex_home / "skills" / SKILL / "SKILL.md"
    source = _skill_source()
    if not skill.exists() and source is not None:
        changes.append(FileChange(skill, None, source.read_text(encoding="utf-8"),
                                  "the persistent-memory skill, so Codex knows when to read the memory"))
    return changes
