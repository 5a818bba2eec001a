"""`pmem hook pre-write|post-write`: the agent's file writes, checked (engine/hooks.py).

Exit codes follow Claude Code's hooks: 0 lets the call go on (a file outside the memory root,
a tool that does not write, nothing wrong); 2 from `pre-write` blocks the call and hands
stderr to the agent (the reason, never the secret); 1 is an error the user sees (input we
cannot read) and blocks nothing. `post-write` cannot undo a write: it answers with
`{"decision": "block", "reason": …}` on stdout, which puts the reason next to the tool's
result for the agent to act on.

A file outside the root costs a JSON parse and a path comparison: no engine import.

Nothing these hooks say tells the agent how to get a check out of its way (issue 25): the
agent reads every message, and a message that names the way round a check is a way round it.
What a person may decide (a value that is not a secret, a weaker setting) is done in their
editor or their own `.pmem.toml` edit, never through the agent's write.
"""

from __future__ import annotations

import json
import os
import threading
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
SETTINGS_FILE = ".pmem.toml"  # engine/settings_defaults.py's, without importing the engine at all


def _inside(root: Path, path: Path) -> str | None:
    """`path` relative to `root` (POSIX), or None when it is outside (links in the folders
    resolved on both sides, so a root reached through a link is recognised)."""
    from ..engine.zones import Containment  # small: os and pathlib only

    return Containment(root).relative(path)


def guarded_roots(root: Path, path: Path) -> list[tuple[Path, str]]:
    """The memory roots a write to `path` is guarded for, each with the path inside it.

    A write lands where `path` leads, links followed (a client's file write follows a link
    that is the file itself, dangling or not): both the path as written and where it lands
    are looked at, and each guarded in every root that holds it, so the stricter zone holds
    (`notes/ai.md` linked to `_archive/_index.md` is an archive write; a file outside linked
    to the root's `.pmem.toml` is a settings write). For each: the configured `root` alone
    when it holds the file, else every folder above it that looks like a memory root
    (`zones.roots_above`: `_index.md`, `_core/` or `_archive/` in it), the nearest first.
    Not the nearest alone: `_archive/` holds an `_index.md` of its own, and a write to
    `M/_archive/_index.md` judged in `M/_archive` would be a plain index write. A few `stat`
    calls a folder level; empty when no root holds the file."""
    from ..engine.zones import roots_above

    found: list[tuple[Path, str]] = []
    seen: set[tuple[str, str]] = set()  # a root reached by a link and by its real path: judged once
    landing = Path(os.path.realpath(path))
    for where in (path, landing) if landing != path else (path,):
        rel = _inside(root, where)
        places = [(root, rel)] if rel is not None else [(f, _inside(f, where)) for f in roots_above(where)]
        for folder, inner in places:
            key = (os.path.realpath(folder), inner or "")
            if inner is not None and key not in seen:
                seen.add(key)
                found.append((folder, inner))
    return found


def hook_call(argv: list[str]) -> tuple[str | None] | None:
    """(the `--root` given or None,) when `argv` is exactly `[--root R] hook EVENT`; else None."""
    root_arg = None
    rest = list(argv)
    if rest[:1] == ["--root"] and len(rest) >= 2:
        root_arg, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith("--root="):
        root_arg, rest = rest[0][len("--root="):], rest[1:]
    if len(rest) != 2 or rest[0] != "hook" or rest[1] not in ("pre-write", "post-write", "pre-shell"):
        return None
    return (root_arg,)


SHELL_REFUSAL = ("pmem applies a change to the memory only after the user's own yes, and the user is not asked "
                 "when an agent runs it with a confirmation of its own; nothing was run. Show the user the preview "
                 "(the same command without it) and let them apply it themselves, at their terminal.")
# Accepting a review says the person has seen what the agents changed (docs/design.md §11):
# an agent accepting it would hide its own changes from them.
REVIEW_REFUSAL = ("accepting a review is the user's own word that they have seen what changed, so only they "
                  "can give it; nothing was run. Tell the user what you changed and let them look at it with "
                  "`pmem review`, at their terminal or in their editor.")
# Forgetting drops every stored version of a file: the way back from any later mistake.
FORGET_REFUSAL = ("forgetting a file drops every version of it that history keeps, which only the user can "
                  "decide; nothing was run. If a secret was written to memory, tell the user which file holds it.")


def answer_shell(text: str, err: TextIO) -> int:
    """`pmem hook pre-shell`: an agent's shell command (Claude Code's `Bash` tool call) that runs
    a pmem write confirmed by the agent itself is blocked (engine/shell_door.py); every other
    command, and input that is not a shell call, passes. Standard library only: the agent
    waits for it before every command it runs."""
    try:
        data = json.loads(text or "null")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return exit_codes.OK  # nothing pmem can read as a command: not a pmem write either
    tool_input = data.get("tool_input") if isinstance(data, dict) else None
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return exit_codes.OK
    from ..engine.shell_door import confirmed_write

    write = confirmed_write(command)
    if write is None:
        return exit_codes.OK
    if write == "review":
        err.write(f"pmem: blocked: `pmem review --accept` run by an agent: {REVIEW_REFUSAL}\n")
    elif write == "history --forget":
        err.write(f"pmem: blocked: `pmem history --forget` run by an agent: {FORGET_REFUSAL}\n")
    else:
        err.write(f"pmem: blocked: `pmem {write}` with the agent's own confirmation: {SHELL_REFUSAL}\n")
    return BLOCK


def answer_outside(root_arg: str | None, text: str) -> int | None:
    """The hook's answer to a write outside the root (or a tool that does not write), found
    before argparse, the redaction and most of the engine are imported (issue 18: an agent
    pays the start on every write); None when it must go the whole way (`run_hook`), which
    also says what is wrong with an input that is not understood."""
    try:
        data = json.loads(text or "null")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    from ..engine.hooks import HookInputError, read_tool_call
    from ..engine.zones import discover_root

    try:
        write = read_tool_call(data)
    except HookInputError:
        return None
    if write is None:
        return exit_codes.OK
    root = discover_root(root_arg)
    if _inside(root, write.path) is not None:
        return None
    # Outside the configured root: pre-write still guards a folder that looks like a memory
    # root (docs/decisions.md, "Hooks: a root that is not configured"), post-write does not.
    if data.get("hook_event_name") == "PostToolUse" or not guarded_roots(root, write.path):
        return exit_codes.OK
    return None


def run_hook(root: Path, event: str, stdin: TextIO, out: TextIO, err: TextIO, *, watchdog: bool = False) -> int:
    """One hook call. `watchdog` (the `pmem hook` process): pre-write blocks a write it cannot
    check before the client's timeout (`_block_when_too_slow`); a process that goes on after
    the call (a test) leaves it off, since the watchdog ends the process."""
    if event == "pre-shell":
        return answer_shell(stdin.read(), err)
    try:
        data = json.loads(stdin.read() or "null")
    except RecursionError:  # json's decoder recurses per nesting level: 300k `[` is no tool call
        err.write(f"pmem hook {event}: the input is nested too deeply to be a tool call; nothing was checked\n")
        return HOOK_ERROR
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
    if event == "pre-write":
        timer = _block_when_too_slow(err) if watchdog else None
        try:
            code = _pre_write_all(root, write, event, err)
            if code == exit_codes.OK:
                _keep_before(root, data, write)
                _record(root, data, write, before=True)
            return code
        finally:
            if timer is not None:
                timer.cancel()
    rel = _inside(root, write.path)
    if rel is None:
        return exit_codes.OK
    if _zone(rel) == "hidden":
        return exit_codes.OK  # an editor's or a tool's own settings: not memory
    _record(root, data, write, before=False)
    try:
        return _post_write(root, rel, data, write, out, err)
    except HookInputError as exc:
        err.write(f"pmem hook {event}: {exc}; nothing was checked\n")
        return HOOK_ERROR


def _keep_before(root: Path, data: dict, write: ToolWrite) -> None:
    """A write of a memory file of the root about to go ahead: its text now, for post-write to
    report what the write changed, not what was there (engine/before_write.py)."""
    rel = _inside(root, write.path)
    if rel is not None and rel.lower().endswith(".md") and _zone(rel) in ("core", "index", "active"):
        from ..engine.before_write import keep

        keep(root, data, _current(write.path))


def _record(root: Path, data: dict, write: ToolWrite, before: bool) -> None:
    """History (docs/design.md §11): before the agent's write, the file as it is (writer
    `outside`) when it differs from the newest entry; after it, the file as written (writer
    `agent`, with the tool, the client and the session). Only that one file: cheap on any
    root, and the next pmem command records whatever else changed."""
    rel = _inside(root, write.path)
    if rel is None or not (rel.lower().endswith(".md") and _zone(rel) != "hidden" or rel == SETTINGS_FILE):
        return
    from ..engine.history.recording import agent_writer, record_file_quietly
    from ..engine.history.store import Writer

    if before:
        record_file_quietly(root, rel, Writer("outside"), "changed outside pmem")
    else:
        record_file_quietly(root, rel, *agent_writer(data, write.tool, rel))


def _pre_write_all(root: Path, write: ToolWrite, event: str, err: TextIO) -> int:
    from ..engine.hooks import HookInputError

    # A folder that looks like a memory root, though not the configured one, is guarded
    # too (its secrets are as readable); post-write's findings stay the configured root's.
    # Under several such folders, the write is judged in each and any block holds.
    try:
        for guarded, where in guarded_roots(root, write.path):
            code = _pre_write(guarded, where, _zone(where), write, err)
            if code != exit_codes.OK:
                return code
    except HookInputError as exc:
        err.write(f"pmem hook {event}: {exc}; nothing was checked\n")
        return HOOK_ERROR
    return exit_codes.OK


# Seconds pre-write may take before it blocks the write: below the client's own timeout (10 s in
# the plugin's hooks.json), after which Claude Code lets the write through unchecked.
DEADLINE = 8.0


def _block_when_too_slow(err: TextIO) -> threading.Timer:
    """Fail closed: a write whose check outlasts the client's timeout would land unchecked (a
    review: a few megabytes of markup glued between letters cost a second each to read as
    rendered). A watchdog blocks it first. The words name no way around the check."""
    from ..engine.env_seconds import env_seconds

    seconds = env_seconds("PMEM_HOOK_DEADLINE", DEADLINE) or DEADLINE  # 0 would block every write

    def too_slow() -> None:
        try:
            err.write(f"pmem: this write could not be checked within {seconds:g} s, so it was blocked; "
                      "nothing was written. Write the file in smaller parts, each of which is checked\n")
            err.flush()
        finally:
            os._exit(BLOCK)

    timer = threading.Timer(seconds, too_slow)
    timer.daemon = True
    timer.start()
    return timer


def _zone(rel: str) -> str:
    from ..engine.zones import zone_of

    return zone_of(rel).value


def _settings(root: Path, err: TextIO) -> Settings:
    # No settings model (pydantic, ~100 ms) for a root without `.pmem.toml`: the agent waits.
    from ..engine.settings_defaults import SettingsError, default_settings, settings_for

    try:
        return settings_for(root)
    except SettingsError as exc:
        err.write(f"pmem hook: {exc}; checking with the default settings\n")
        return default_settings()


def _current(path: Path) -> str | None:
    from ..engine.root_state import read_regular_text

    return read_regular_text(path)


def _whole(path: Path) -> str | None:
    """The whole text of a regular file bigger than the analysis cap (2 MiB), decoded as the
    root state decodes it; None for a smaller file (`_current` holds it all) or one that
    cannot be read. Read once, as bytes: linear in the file's size."""
    from ..engine.root_state import MAX_ANALYSED_BYTES, read_regular_text

    return read_regular_text(path, limit=None, larger_than=MAX_ANALYSED_BYTES)


def _block(err: TextIO, rel: str, why: str) -> int:
    from .terminal import one_line

    err.write(f"pmem: blocked: `{one_line(rel)}`: {why}\n")
    return BLOCK


def _pre_write(root: Path, rel: str, zone: str, write: ToolWrite, err: TextIO) -> int:
    from ..engine.hooks import (
        added_text,
        edited_lines,
        new_secrets,
        resulting_text,
        secret_in_name,
        weakened_settings,
    )
    from ..engine.zones import zone_of

    kind = secret_in_name(rel)
    if kind is not None:
        from ..engine.secrets import mask_name

        return _block(err, mask_name(rel), f"the file's name holds a likely {kind}, and every agent reads "
                                              "the names in memory. Choose a name that says what the file is about.")
    if rel.lower() == SETTINGS_FILE:  # the same file on a case-insensitive file system
        before = _current(write.path)
        after = resulting_text(write, before)
        if after is None:
            return _block(err, rel, "pmem cannot tell what this edit does to the memory root's settings, "
                                    "which are the person's to change. Ask them to make the change.")
        if before is None and os.path.lexists(write.path):
            return _block(err, rel, "pmem cannot read the memory root's settings, so it cannot tell what this "
                                    "write would change; they are the person's to change. Ask them.")
        weaker = weakened_settings(before, after)
        if weaker:
            why = "; ".join(weaker)
            return _block(err, rel, f"pmem cannot let this write change what it checks ({why}). The memory "
                                    "root's settings are the person's to change, not an agent's: tell them "
                                    "what you wanted and why.")
        # The settings sit in the root beside the memory, as readable: a secret in a comment
        # of a valid file is refused like one in a note.
        return _secrets_block(err, rel, new_secrets(before, after, _settings(root, err)), 0)
    if zone == "hidden":
        return exit_codes.OK  # an editor's or a tool's own settings: not memory
    if zone in _ARCHIVE_ZONES or zone_of(rel.lower()).value in _ARCHIVE_ZONES:
        # `_ARCHIVE/_index.md` is `_archive/_index.md` on a case-insensitive file system.
        return _block(err, rel, "it is in `_archive/`, which only `pmem archive`, `delete`, `recover` and "
                                "`purge` change, so that the archive records stay right. Use those (preview "
                                "first, then `--token` after the user's yes).")
    # One read: a file over the analysis cap is read whole for an edit, else up to the cap.
    whole = _whole(write.path) if write.tool in ("Edit", "MultiEdit") else None
    before = whole if whole is not None else _current(write.path)
    first = 0
    if whole is not None:
        # Over the analysis cap: the edit applied to the whole file, and the lines it touches
        # judged as they would be after it (a secret completed past the cap is found).
        before = whole
        after = resulting_text(write, whole)
        if after is not None:
            before, after, first = edited_lines(whole, after)
    else:
        after = resulting_text(write, before)
    # When the result cannot be worked out, what the write brings in is judged on its own.
    judged = after if after is not None else added_text(write)
    return _secrets_block(err, rel, new_secrets(before, judged, _settings(root, err)), first)


def _secrets_block(err: TextIO, rel: str, found: list, first: int) -> int:
    """Block the write when it adds likely secrets (`found`, at lines counted from `first`)."""
    if not found:
        return exit_codes.OK
    where = "; ".join(f"line {first + f.line + 1}: likely {f.kind} ({f.hint})" for f in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    marked = (" A write cannot declare a value not secret: only the person decides that, themselves."
              if any(f.marked for f in found) else "")
    # The kind and a masked hint, never the value.
    return _block(err, rel, f"this write would store a likely secret in memory, which every agent reads — "
                            f"{where}{more}. Leave the secret out (keep it in a password manager) and "
                            f"write what it is for instead.{marked}")


def _post_write(root: Path, rel: str, data: dict, write: ToolWrite, out: TextIO, err: TextIO) -> int:
    from ..engine.before_write import take
    from ..engine.catalogue import RULES, severity_of
    from ..engine.hooks import (
        any_active_file,
        brought_in,
        original_text,
        removed_routes,
        routes_left,
        written_file_findings,
        written_lines,
    )
    from ..engine.report import shown_path  # the paths as `pmem check` shows them: a token in one masked
    from ..engine.zones import INDEX, Zone, zone_of
    from .terminal import one_line

    kept = take(root, data)  # always taken: each is for one call
    after = _current(write.path)
    if after is None:
        return exit_codes.OK  # the write did not happen, or left no readable file
    response = data.get("tool_response")
    original = response.get("originalFile") if isinstance(response, dict) else None
    whole_before = original if isinstance(original, str) else kept  # the file's whole text before, if known
    found, found_before = written_file_findings(root, _settings(root, err), rel, whole_before)
    # What this write brought in, not the file's older problems (issue 43: "Fix them now" for
    # problems the agent did not cause invited edits nobody asked for).
    findings = brought_in(found, found_before)
    if rel == INDEX and found_before is None:
        # The index holds everyone's routes: speak of the lines this write put there.
        lines = written_lines(write, after)
        findings = [f for f in findings if lines is None or f.line in lines]
    findings = [f for f in findings if severity_of(f).value in REPORTED]
    shown = one_line(shown_path(rel))
    listed = [f"- {shown}:{f.line + 1}: {f.code} {RULES[f.code].name}: {one_line(f.message)}"
              for f in findings[:10]]
    if len(findings) > 10:
        listed.append(f"- … and {len(findings) - 10} more (`pmem check {shown}`)")
    if rel == INDEX:
        before = whole_before if whole_before is not None else original_text(data, write, after)
        gone = [p for p in removed_routes(before, after) if zone_of(p) is Zone.ACTIVE and (root / p).is_file()]
        listed += [f"- {one_line(shown_path(p))}: PM202 route-missing: this write removed its route from "
                   "`_index.md`, so agents never load it" for p in gone[:10]]
        if len(gone) > 10:
            listed.append(f"- … and {len(gone) - 10} more files whose route this write removed")
        if not routes_left(after) and (gone or any_active_file(root)):
            listed.insert(0, f"- {shown}:1: error: `_index.md` now routes no file at all, so agents load no "
                             "on-demand memory; put its routes back (each active file needs one)")
    if not listed:
        return exit_codes.OK
    body = "\n".join(listed)
    reason = (f"pmem found problems this write brought into `{shown}`:\n{body}\n"
              "Fix what this write broke (`pmem rules CODE` explains each; `pmem route add PATH` adds a missing "
              "route).")
    out.write(json.dumps({"decision": "block", "reason": reason}, ensure_ascii=False) + "\n")
    return exit_codes.OK
