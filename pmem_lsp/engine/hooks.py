"""Agent hooks (docs/design.md §10): what a coding agent's file write would do to the memory,
judged before it happens (`pre-write`) and reported after (`post-write`).

The input is the agent's tool call as JSON (Claude Code's `PreToolUse`/`PostToolUse` shape):
`{"tool_name": "Write"|"Edit"|"MultiEdit"|"NotebookEdit", "tool_input": {"file_path",
"content" | "old_string"/"new_string"/"replace_all" | "edits": [...]} | {"notebook_path",
"new_source", "cell_id", "cell_type", "edit_mode"}, "cwd"}`. Unknown fields are ignored;
other tools are not ours to judge.

The edit is worked out the way the client applies it (issue 25): an empty `old_string`
creates the file, an `old_string` with straight quotes matches the file's curly ones,
`replace_all` replaces every occurrence. Where the result cannot be worked out, the text the
write brings in is judged on its own: an unknown way of applying never lets a secret by.

Before a write, the resulting text is computed and refused when it would put a new likely
secret into memory (the format's "never store secrets") or when it writes into `_archive/`
directly (archive, delete, recover and purge keep the records; a direct write breaks them).
After a write, the agent is told what its write left broken in that file: the findings of the
rules, and for `_index.md` the route problems on the lines it wrote.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported in the functions that need them: a hook starts fast
    from .findings import Finding
    from .settings import Settings

WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


class HookInputError(ValueError):
    """The tool call is not one we can read: said plainly, never a silent block."""


@dataclass(frozen=True)
class ToolWrite:
    tool: str
    path: Path  # absolute
    tool_input: dict[str, Any]


def read_tool_call(data: object) -> ToolWrite | None:
    """The write this tool call makes, or None when the tool does not write files."""
    if not isinstance(data, dict):
        raise HookInputError("the hook input is not a JSON object")
    tool = data.get("tool_name")
    if not isinstance(tool, str):
        raise HookInputError("the hook input has no `tool_name`")
    if tool not in WRITE_TOOLS:
        return None
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, dict):
        raise HookInputError(f"the {tool} call has no `tool_input` object")
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    raw = tool_input.get(key)
    if not isinstance(raw, str) or not raw:
        raise HookInputError(f"the {tool} call has no `tool_input.{key}`")
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        cwd = data.get("cwd")
        path = Path(cwd if isinstance(cwd, str) and cwd else os.getcwd()) / path
    return ToolWrite(tool, path, tool_input)


def _edits(write: ToolWrite) -> list[tuple[str, str, bool]]:
    if write.tool == "Edit" or "edits" not in write.tool_input:
        items = [write.tool_input]
    else:
        edits = write.tool_input.get("edits")
        if not isinstance(edits, list):
            raise HookInputError(f"the {write.tool} call's `edits` is not a list")
        items = edits
    out = []
    for item in items:
        old, new = (item.get("old_string"), item.get("new_string")) if isinstance(item, dict) else (None, None)
        if not isinstance(old, str) or not isinstance(new, str):
            raise HookInputError(f"an edit of the {write.tool} call lacks `old_string` or `new_string` text")
        out.append((old, new, bool(item.get("replace_all", False))))
    return out


# Claude Code's Edit matches an `old_string` written with straight quotes against a file's
# curly ones (models type straight quotes): the same here, one character for one.
_STRAIGHT = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                           "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"'})


def _replace(text: str, old: str, new: str, every: bool) -> str | None:
    if not old:
        # Creating a file (Claude Code's Edit with an empty `old_string`), or writing into an
        # empty one; on a file with text the client refuses, and taking it as an insertion
        # at the start judges the new text all the same.
        return new if not text.strip() else new + text
    if old in text:
        return text.replace(old, new) if every else text.replace(old, new, 1)
    plain, plain_old = text.translate(_STRAIGHT), old.translate(_STRAIGHT)
    if plain_old not in plain:
        return None
    out, at = [], 0
    while True:
        i = plain.find(plain_old, at)
        if i < 0:
            break
        out += [text[at:i], new]
        at = i + len(plain_old)
        if not every:
            break
    return "".join(out) + text[at:]


def resulting_text(write: ToolWrite, current: str | None) -> str | None:
    """The file's text after the write; None when it cannot be worked out (an `old_string`
    that is not in the file, a notebook): `added_text` is then judged on its own."""
    if write.tool == "Write":
        content = write.tool_input.get("content")
        if not isinstance(content, str):
            raise HookInputError("the Write call has no `tool_input.content` text")
        return content
    if write.tool == "NotebookEdit":
        return None
    text = current
    for old, new, every in _edits(write):
        if text is None:
            if old:
                return None
            text = ""
        text = _replace(text, old, new, every)
        if text is None:
            return None
    return text


def added_text(write: ToolWrite) -> str:
    """Every text the write brings in, one after the other (for a write whose result is not
    known: what it adds is all a secret could come from)."""
    if write.tool == "NotebookEdit":
        source = write.tool_input.get("new_source")
        if source is not None and not isinstance(source, str):
            raise HookInputError("the NotebookEdit call's `new_source` is not text")
        return source or ""
    if write.tool == "Write":
        return resulting_text(write, None) or ""
    return "\n".join(new for _old, new, _every in _edits(write))


_CHUNK = 1 << 16


def _shared(a: str, b: str, most: int, *, at_end: bool = False) -> int:
    """How many characters `a` and `b` share at the start (`at_end`: at the end), at most
    `most`: whole chunks compared first (each comparison in C), then the chunk that differs
    halved down: linear, never per character."""
    n = min(len(a), len(b), most)

    def cut(s: str, lo: int, hi: int) -> str:  # characters lo..hi counted from the chosen side
        return s[len(s) - hi:len(s) - lo] if at_end else s[lo:hi]

    at = 0
    while at < n and cut(a, at, min(at + _CHUNK, n)) == cut(b, at, min(at + _CHUNK, n)):
        at = min(at + _CHUNK, n)
    lo, hi = at, min(at + _CHUNK, n)
    while lo < hi:  # the first `lo` are shared; the first difference is before `hi`
        mid = (lo + hi + 1) // 2
        if cut(a, lo, mid) == cut(b, lo, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def edited_lines(before: str, after: str, around: int = 1) -> tuple[str, str, int]:
    """The whole lines a write changed, as (those lines before it, the same after it, the
    0-based line of `after` they start at), with `around` lines more on each side (a token
    broken over two lines is read as one). For a file too big to analyse whole (the 2 MiB
    cap): what the write adds is judged where it lands, with the lines it completes."""
    n = min(len(before), len(after))
    start = _shared(before, after, n)
    end = _shared(before, after, n - start, at_end=True)
    first = start
    for _ in range(around + 1):
        first = before.rfind("\n", 0, max(first - 1, 0)) + 1 if first > 0 else 0
    last_before, last_after = len(before) - end, len(after) - end
    for _ in range(around + 1):
        i = before.find("\n", last_before)
        j = after.find("\n", last_after)
        last_before = len(before) if i < 0 else i + 1
        last_after = len(after) if j < 0 else j + 1
    return before[first:last_before], after[first:last_after], after.count("\n", 0, first)


def written_lines(write: ToolWrite, after: str) -> set[int] | None:
    """The 0-based lines of `after` that the write put there (None: all of them, a Write)."""
    if write.tool == "Write":
        return None
    if write.tool == "NotebookEdit":
        return set()
    lines: set[int] = set()
    for _old, new, _every in _edits(write):
        start = after.find(new) if new else -1
        while start >= 0:
            first = after.count("\n", 0, start)
            lines.update(range(first, first + new.count("\n") + 1))
            start = after.find(new, start + max(len(new), 1))
    return lines


@dataclass(frozen=True)
class AddedSecret:
    line: int  # 0-based, in the text judged
    kind: str
    hint: str  # masked: never the value
    marked: bool  # the write puts an allow marker beside it


def _scan(text: str, allow: Sequence[re.Pattern[str]]) -> list[tuple[AddedSecret, str]]:
    """Every likely secret in `text`, the allow marker not honoured, with its value and
    whether the marker is on its line (or a PEM block's BEGIN line)."""
    from .line_index import split_lines
    from .secrets import ALLOW_MARKER, find_secrets

    lines = split_lines(text)
    out = []
    for m in find_secrets(lines, allow, in_sentences=False, honour_marker=False):
        if m.line == m.end_line:
            value = lines[m.line][m.start:m.end]
        else:
            value = "\n".join([lines[m.line][m.start:], *lines[m.line + 1:m.end_line], lines[m.end_line][:m.end]])
        near = lines[max(m.line - 1, 0):m.line + 1] if m.kind.startswith("PEM") else [lines[m.line]]
        marked = any(ALLOW_MARKER in line for line in near)
        out.append((AddedSecret(m.line, m.kind, m.hint, marked), "".join(value.split())))
    return out


def new_secrets(before: str | None, after: str, settings: Settings) -> list[AddedSecret]:
    """The likely secrets this write adds: a value `before` did not hold (allowed or not: an
    agent's allow marker decides nothing), or one `before` held unmarked and the write marks
    as allowed. The marker is a person's decision, taken in their editor."""
    if not settings.secrets.enabled:
        return []
    allow = settings.secrets.allow_patterns
    found = _scan(after, allow)
    if not found:
        return []
    old: dict[str, bool] = {}
    for secret, value in _scan(before, allow) if before else ():
        old[value] = old.get(value, False) or secret.marked
    out = []
    for secret, value in found:
        if value not in old:
            out.append(secret)
        elif secret.marked and not old[value]:
            out.append(secret)
    return out


def secret_in_name(rel: str) -> str | None:
    """The kind of a likely secret in a file's path (a token as a file name, a
    `password=…` segment), or None."""
    from .secrets import find_in_name

    found = find_in_name(rel)
    return found[0].kind if found else None


def removed_routes(before: str | None, after: str) -> list[str]:
    """The routes (paths) of `_index.md` that `before` had and `after` has not."""
    if not before:
        return []
    from .index_routes import parse_index
    from .memory_file import MemoryFile

    def paths(text: str) -> list[str]:
        return [r.path for r in parse_index(MemoryFile(text)).routes if r.path]

    kept = set(paths(after))
    return [p for p in dict.fromkeys(paths(before)) if p not in kept]


def routes_left(text: str) -> bool:
    """Does the index text still route any file?"""
    from .index_routes import parse_index
    from .memory_file import MemoryFile

    return bool(parse_index(MemoryFile(text)).routes)


def any_active_file(root: Path) -> bool:
    """Does the root hold an active Markdown file (one `_index.md` should route)? The walk
    stops at the first, and never enters hidden folders, `_core/` or `_archive/`."""
    from .folders import walk
    from .zones import Zone, is_markdown, zone_of

    base = os.fspath(root)
    for folder, dirs, files in walk(base):
        rel_folder = os.path.relpath(folder, base)
        rel_folder = "" if rel_folder == "." else rel_folder.replace(os.sep, "/") + "/"
        dirs[:] = [d for d in dirs if not d.startswith(".") and (rel_folder or d not in ("_core", "_archive"))]
        for name in files:
            rel = rel_folder + name
            if is_markdown(rel) and zone_of(rel) is Zone.ACTIVE:
                return True
    return False


def weakened_settings(before: str | None, after: str) -> list[str]:
    """What a new `.pmem.toml` text would stop pmem checking, compared with the current one
    (or the defaults): secrets switched off or allowed, rules deselected or ignored, paths
    excluded, severities lowered, limits raised. Empty when it checks as much as before.

    A new text that is not valid settings weakens (the hooks and the server would check with
    the defaults, whatever the file meant). A current text that is not valid is no baseline:
    what it meant to check cannot be known, so no write of it passes until the person mends it
    (docs/decisions.md, "Settings: an invalid file is no baseline")."""
    from .catalogue import RULES
    from .settings import Settings, settings_from_text

    try:
        new = settings_from_text(after)
    except ValueError as exc:
        return [f"the new text is not valid settings ({_one_line(str(exc))}), so pmem would check with "
                "the defaults instead"]
    try:
        old = settings_from_text(before) if before else Settings()
    except ValueError as exc:
        return [f"the current settings are not valid ({_one_line(str(exc))}), so pmem cannot tell what "
                "they meant to check, and only the person mends them"]
    out = []
    if old.secrets.enabled and not new.secrets.enabled:
        out.append("it turns the secrets check off")
    if set(new.secrets.allow) - set(old.secrets.allow):
        out.append("it allows more values as not secret")
    dropped = [c for c in RULES if old.enabled(c) and not new.enabled(c)]
    if dropped:
        out.append(f"it stops reporting {', '.join(dropped[:5])}{' …' if len(dropped) > 5 else ''}")
    if set(new.exclude) - set(old.exclude):
        out.append("it excludes more paths from checking")
    lowered = [c for c in RULES if old.enabled(c) and new.enabled(c)
               and new.severity.get(c, RULES[c].severity).rank < old.severity.get(c, RULES[c].severity).rank]
    if lowered:
        out.append(f"it lowers the severity of {', '.join(lowered[:5])}{' …' if len(lowered) > 5 else ''}")
    # Every number the settings hold is a limit under which a rule says nothing (a size, a
    # number of days, a similarity): raising one means fewer findings. Read from the model,
    # so that a limit added later is guarded without a line here.
    limits = list(_limits(old, new))
    if old.diagnostics.scope == "root" and new.diagnostics.scope != "root":
        out.append("it narrows what the language server reports")
    raised = [name for name, a, b in limits if b > a]
    if raised:
        out.append(f"it raises {', '.join(raised)}")
    return out


def _limits(old: Any, new: Any, prefix: str = "") -> Any:
    """(`section.name`, old value, new value) for every number of the settings models."""
    from pydantic import BaseModel

    for name, field in type(old).model_fields.items():
        a, b = getattr(old, name), getattr(new, name)
        shown = f"{prefix}{field.alias or name}"
        if isinstance(a, BaseModel):
            yield from _limits(a, b, shown + ".")
        elif isinstance(a, int | float) and not isinstance(a, bool):
            yield shown, a, b


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def written_file_findings(root: Path, settings: Settings, rel: str,
                          before: str | None = None) -> tuple[list[Finding], list[Finding] | None]:
    """The findings of the one file a write touched, and, when the text before the write is
    known, that text's findings at the same place (None otherwise), from a narrow look at the
    root: every path is listed (a route or a link to it is not dangling), but only that file,
    the index, the archive index and `_core/` are read (issue 25: a hook on a 10k-file root must
    answer well within the client's timeout). What needs every file's text (PM503,
    near-duplicates) is left to `pmem check` and the editor."""
    from .analysis import analyze
    from .root_state import RootState
    from .rules.vanished import without_history_findings
    from .zones import ARCHIVE_INDEX, CORE_DIR, INDEX

    core = CORE_DIR + "/"

    def read(path: str) -> bool:
        return path in (rel, INDEX, ARCHIVE_INDEX) or path.startswith(core)

    state = RootState.scan(root, settings, read=read)
    index = state.files.get(INDEX)
    if rel != INDEX and index is not None and index.text is not None:
        # Only the index lines that can route this file (it, or a folder holding it) decide
        # its PM202; the index's own findings are not this write's news. A 10k-route index
        # is then not parsed whole for one note.
        state.set_buffer(INDEX, _routing_lines(index.text, rel))
    # PM210/PM308 are the indexes' own findings against history, never one file's news; on the
    # narrowed index above they would parse every route history holds (10k on a 10k root).
    with without_history_findings():
        after = [f for f in analyze(state) if f.path == rel and f.code != "PM503"]
        if before is None or rel not in state.files:
            return after, None
        state.set_buffer(rel, before)
        return after, [f for f in analyze(state) if f.path == rel and f.code != "PM503"]


def brought_in(after: list[Finding], before: list[Finding] | None) -> list[Finding]:
    """The findings of `after` the text before did not have: each compared by its code and
    message, as many times as it occurs (a write that moves a problem down two lines did not
    cause it; a second copy of it did). All of `after` when `before` is unknown."""
    if before is None:
        return after
    from collections import Counter

    left = Counter((f.code, f.message) for f in before)
    out = []
    for f in after:
        key = (f.code, f.message)
        if left[key]:
            left[key] -= 1
        else:
            out.append(f)
    return out


def _routing_lines(index: str, rel: str) -> str:
    """The headings of `index` and the lines that name `rel` or one of its folders; the other
    lines left empty, so that line numbers stay those of the index."""
    parts = rel.split("/")[:-1]
    folders = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    wanted = [re.escape(rel), re.escape(rel.replace(" ", "%20")), r"^#",
              *(re.escape(f) + r"/?(?=[)`>\]\s|]|$)" for f in folders)]
    keep = set()
    line, at = 0, 0  # the line of position `at`: counted on from the last match, not from the start
    for m in re.finditer("|".join(wanted), index, re.MULTILINE):
        line += index.count("\n", at, m.start())
        at = m.start()
        keep.add(line)
    lines = index.split("\n")
    return "\n".join(line if i in keep else "" for i, line in enumerate(lines))


def original_text(data: dict[str, Any], write: ToolWrite, after: str) -> str | None:
    """What the file held before the write, as far as post-write can know it: the client's
    `tool_response.originalFile` (Claude Code sends it for Write and Edit), else the texts
    the edits replaced (enough to know which routes they took away); None when unknown."""
    response = data.get("tool_response")
    if isinstance(response, dict) and isinstance(response.get("originalFile"), str):
        return response["originalFile"]
    if write.tool not in ("Edit", "MultiEdit"):
        return None
    try:
        edits = _edits(write)
    except HookInputError:
        return None
    return "\n".join(old for old, _new, _every in edits)
