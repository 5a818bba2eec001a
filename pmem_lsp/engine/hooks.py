"""Agent hooks (docs/design.md §10): what a coding agent's file write would do to the memory,
judged before it happens (`pre-write`) and reported after (`post-write`).

The input is the agent's tool call as JSON (Claude Code's `PreToolUse`/`PostToolUse` shape):
`{"tool_name": "Write"|"Edit"|"MultiEdit", "tool_input": {"file_path", "content" |
"old_string"/"new_string"/"replace_all" | "edits": [...]}, "cwd"}`. Unknown fields are
ignored; other tools are not ours to judge.

Before a write, the resulting text is computed and refused when it would put a new likely
secret into memory (the format's "never store secrets") or when it writes into `_archive/`
directly (archive, delete, recover and purge keep the records; a direct write breaks them).
After a write, the agent is told what its write left broken in that file: the findings of the
rules, and for `_index.md` the route problems on the lines it wrote.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported in the functions that need them: a hook starts fast
    from .findings import Finding
    from .settings import Settings

WRITE_TOOLS = ("Write", "Edit", "MultiEdit")


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
    raw = tool_input.get("file_path")
    if not isinstance(raw, str) or not raw:
        raise HookInputError(f"the {tool} call has no `tool_input.file_path`")
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


def resulting_text(write: ToolWrite, current: str | None) -> str | None:
    """The file's text after the write; None when the write cannot apply (the file is missing
    or an `old_string` is not in it): the agent's tool refuses such a call itself."""
    if write.tool == "Write":
        content = write.tool_input.get("content")
        if not isinstance(content, str):
            raise HookInputError("the Write call has no `tool_input.content` text")
        return content
    text = current
    for old, new, every in _edits(write):
        if text is None or (old and old not in text):
            return None
        text = text.replace(old, new) if every else text.replace(old, new, 1) if old else new + text
    return text


def written_lines(write: ToolWrite, after: str) -> set[int] | None:
    """The 0-based lines of `after` that the write put there (None: all of them, a Write)."""
    if write.tool == "Write":
        return None
    lines: set[int] = set()
    for _old, new, _every in _edits(write):
        start = after.find(new) if new else -1
        while start >= 0:
            first = after.count("\n", 0, start)
            lines.update(range(first, first + new.count("\n") + 1))
            start = after.find(new, start + max(len(new), 1))
    return lines


def new_secrets(rel: str, before: str | None, after: str, settings: Settings) -> list[Finding]:
    """PM401 findings in `after` whose value `before` did not hold: the secrets this write adds."""
    from .memory_file import MemoryFile
    from .rules.secrets import check_secrets
    from .zones import zone_of

    zone = zone_of(rel)
    found = check_secrets(rel, zone, MemoryFile(after), settings)
    if not found:
        return []
    old = {_value(before, f) for f in check_secrets(rel, zone, MemoryFile(before), settings)} if before else set()
    return [f for f in found if _value(after, f) not in old]


def _value(text: str, finding: Finding) -> str:
    from .line_index import split_lines

    lines = split_lines(text)
    if finding.line == finding.end_line:
        return lines[finding.line][finding.col:finding.end_col] if finding.line < len(lines) else ""
    return "\n".join(lines[finding.line:finding.end_line + 1])
