"""`pmem hook pre-write|post-write`: the agent's file writes, checked (engine/hooks.py).

Exit codes follow Claude Code's hooks: 0 lets the call go on (a file outside the memory root,
a tool that does not write, nothing wrong); 2 from `pre-write` blocks the call and hands
stderr to the agent (the reason, never the secret); 1 is an error the user sees (input we
cannot read) and blocks nothing. `post-write` cannot undo a write: it answers with
`{"decision": "block", "reason": …}` on stdout, which puts the reason next to the tool's
result for the agent to act on.

A file outside the root costs a JSON parse and a path comparison: no engine import.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from . import exit_codes

if TYPE_CHECKING:
    from ..engine.hooks import ToolWrite
    from ..engine.settings import Settings

BLOCK = 2  # Claude Code: a PreToolUse hook's exit 2 blocks the call
HOOK_ERROR = 1  # a non-blocking error, shown to the user
_ARCHIVE_ZONES = ("archive", "trash", "archive-index")
REPORTED = ("error", "warning")  # post-write speaks of what needs the agent's attention


def _inside(root: Path, path: Path) -> str | None:
    """`path` relative to `root` (POSIX), or None when it is outside (links in the folders
    resolved on both sides, so a root reached through a link is recognised)."""
    from ..engine.zones import Containment  # small: os and pathlib only

    return Containment(root).relative(path)


def hook_call(argv: list[str]) -> tuple[str | None] | None:
    """(the `--root` given or None,) when `argv` is exactly `[--root R] hook EVENT`; else None."""
    root_arg = None
    rest = list(argv)
    if rest[:1] == ["--root"] and len(rest) >= 2:
        root_arg, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith("--root="):
        root_arg, rest = rest[0][len("--root="):], rest[1:]
    if len(rest) != 2 or rest[0] != "hook" or rest[1] not in ("pre-write", "post-write"):
        return None
    return (root_arg,)


def answer_outside(root_arg: str | None, text: str) -> int | None:
    """The hook's answer to a write outside the root (or a tool that does not write), found
    before argparse, the redaction and most of the engine are imported (issue 18: an agent
    pays the start on every write); None when it must go the whole way (`run_hook`), which
    also says what is wrong with an input that is not understood."""
    try:
        data = json.loads(text or "null")
    except (ValueError, UnicodeDecodeError):
        return None
    from ..engine.hooks import HookInputError, read_tool_call
    from ..engine.zones import discover_root

    try:
        write = read_tool_call(data)
    except HookInputError:
        return None
    if write is None or _inside(discover_root(root_arg), write.path) is None:
        return exit_codes.OK
    return None


def run_hook(root: Path, event: str, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    try:
        data = json.loads(stdin.read() or "null")
    except (ValueError, UnicodeDecodeError) as exc:
        err.write(f"pmem hook {event}: the input is not JSON ({type(exc).__name__}); nothing was checked\n")
        return HOOK_ERROR
    from ..engine.hooks import HookInputError, read_tool_call

    try:
        write = read_tool_call(data)
    except HookInputError as exc:
        err.write(f"pmem hook {event}: {exc}; nothing was checked\n")
        return HOOK_ERROR
    if write is None:
        return exit_codes.OK
    rel = _inside(root, write.path)
    if rel is None:
        return exit_codes.OK
    from ..engine.zones import zone_of

    zone = zone_of(rel).value
    if zone == "hidden":
        return exit_codes.OK  # an editor's or a tool's own settings: not memory
    try:
        if event == "pre-write":
            return _pre_write(root, rel, zone, write, err)
        return _post_write(root, rel, write, out, err)
    except HookInputError as exc:
        err.write(f"pmem hook {event}: {exc}; nothing was checked\n")
        return HOOK_ERROR


def _settings(root: Path, err: TextIO) -> Settings:
    from ..engine.settings import Settings, SettingsError, resolve_settings

    try:
        return resolve_settings(root)
    except SettingsError as exc:
        err.write(f"pmem hook: {exc}; checking with the default settings\n")
        return Settings()


def _current(path: Path) -> str | None:
    from ..engine.root_state import read_regular_text

    return read_regular_text(path)


def _pre_write(root: Path, rel: str, zone: str, write: ToolWrite, err: TextIO) -> int:
    from ..engine.hooks import new_secrets, resulting_text
    from .terminal import one_line

    if zone in _ARCHIVE_ZONES:
        err.write(f"pmem: blocked: `{one_line(rel)}` is in `_archive/`, which only `pmem archive`, `delete`, `recover` "
                  "and `purge` change, so that the archive records stay right. Use those (preview first, "
                  "then `--token` after the user's yes).\n")
        return BLOCK
    before = _current(write.path)
    after = resulting_text(write, before)
    if after is None:
        return exit_codes.OK  # the edit cannot apply; the agent's tool says so itself
    found = new_secrets(rel, before, after, _settings(root, err))
    if not found:
        return exit_codes.OK
    where = "; ".join(f"line {f.line + 1}: {f.message}" for f in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    # The finding's message names the kind and a masked hint, never the value, and says what to do.
    err.write(f"pmem: blocked: this write would store a likely secret in memory, which every agent reads — "
              f"`{one_line(rel)}` {where}{more}\n")
    return BLOCK


def _post_write(root: Path, rel: str, write: ToolWrite, out: TextIO, err: TextIO) -> int:
    from ..engine.catalogue import RULES, severity_of
    from ..engine.checking import check_files
    from ..engine.hooks import written_lines
    from ..engine.zones import INDEX
    from .terminal import one_line

    after = _current(write.path)
    if after is None:
        return exit_codes.OK  # the write did not happen, or left no readable file
    findings = check_files(root, _settings(root, err), [rel]).findings
    if rel == INDEX:
        # The index holds everyone's routes: speak of the lines this write put there.
        lines = written_lines(write, after)
        findings = [f for f in findings if lines is None or f.line in lines]
    findings = [f for f in findings if severity_of(f).value in REPORTED]
    if not findings:
        return exit_codes.OK
    listed = "\n".join(f"- {one_line(rel)}:{f.line + 1}: {f.code} {RULES[f.code].name}: {one_line(f.message)}"
                       for f in findings[:10])
    more = f"\n- … and {len(findings) - 10} more (`pmem check {rel}`)" if len(findings) > 10 else ""
    reason = (f"pmem found problems in `{one_line(rel)}` after this write:\n{listed}{more}\n"
              "Fix them now (`pmem rules CODE` explains each; `pmem route add PATH` adds a missing route).")
    out.write(json.dumps({"decision": "block", "reason": reason}, ensure_ascii=False) + "\n")
    return exit_codes.OK
