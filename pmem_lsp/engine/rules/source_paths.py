"""PM403: pointers to source material outside the root that do not exist on this machine.

The format keeps raw material in its project workspace and stores "a short description and a
path" in memory. A pointer is a `~/…` or absolute path written as a whole code span
(`` `~/code/shop/README.md` ``) or as a link target (`[notes](~/notes/x.md)`), outside
fenced code, in active and core files. Each is looked at with `stat` only: nothing outside
the root is ever read.

What is not a pointer: a code span with white space in it (a command), patterns and
placeholders (`*`, `?`, `$`, `<…>`, `…`), protocol-relative `//…`, and an absolute path whose
first folder is neither on this machine nor a usual place for files (`/api/v1/orders` is a
URL path). Absolute route targets in `_index.md` are PM204's business.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote

from ..findings import Finding
from ..markdown import HEADING, PARAGRAPH
from ..memory_file import MemoryFile
from ..paths import strip_fragment

# First folders that hold files on some machine, even when this one lacks them.
FILE_ROOTS = {"Users", "home", "Volumes", "mnt", "media", "opt", "srv", "data", "tmp", "var", "private",
              "root", "etc", "usr", "workspace", "work", "projects", "Library", "Applications", "nix", "run"}
# A code span that may start with `/` or `~` (one search over the text; most files have none).
_SPAN_HINT = re.compile(r"`[ ]?[~/]")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_NOT_A_PATH = re.compile(r"[\s*?$<>{}\[\]|…]|\.\.\.")
_LINE_SUFFIX = re.compile(r"(?::\d+){1,2}$")  # `~/app/main.py:42` points at a line


@dataclass(frozen=True, slots=True)
class SourcePointer:
    line: int
    start: int
    end: int
    written: str
    path: str  # expanded and absolute


def _pointer(written: str) -> str | None:
    """The absolute path `written` points at, or None when it is not a pointer."""
    text = written.strip()
    if text.startswith("~/"):
        expanded = os.path.expanduser(text)
        if expanded.startswith("~"):
            return None  # no home folder known
    elif text.startswith("/") and not text.startswith("//"):
        expanded = text
        first = text.lstrip("/").split("/", 1)[0]
        if not first or (first not in FILE_ROOTS and not os.path.isdir("/" + first)):
            return None
    else:
        return None
    if _NOT_A_PATH.search(text):
        return None
    return _LINE_SUFFIX.sub("", expanded)


def source_pointers(doc: MemoryFile) -> list[SourcePointer]:
    """Every pointer to source material outside fenced code (text only; no file is touched)."""
    out: list[SourcePointer] = []
    for link in doc.links:  # parsed once, shared with PM402; outside code already
        written = link.target.strip()
        if written.startswith(("/", "~")):
            path = _pointer(unquote(strip_fragment(written)))
            if path is not None:
                out.append(SourcePointer(link.line, link.start, link.end, written, path))
    if _SPAN_HINT.search(doc.text):
        start = doc.front_matter_end
        for offset, kind in enumerate(doc.blocks.line_kinds):
            if kind is not PARAGRAPH and kind is not HEADING:
                continue
            n = start + offset
            line = doc.lines[n]
            if "`" not in line:
                continue
            for m in _CODE_SPAN.finditer(line):
                path = _pointer(m.group(2))
                if path is not None:
                    s, e = m.span(2)
                    out.append(SourcePointer(n, s, e, m.group(2).strip(), path))
    out.sort(key=lambda p: (p.line, p.start))
    return out


def _missing(path: str) -> bool:
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        return False  # cannot tell (permissions, a bad name): unknown is not missing
    return False


def check_source_paths(path: str, pointers: list[SourcePointer]) -> list[Finding]:
    return [
        Finding(path, p.line, p.start, p.line, p.end, "PM403",
                f"`{p.written}` does not exist on this machine: the source it points to moved, "
                "was removed, or lives on another computer")
        for p in pointers if _missing(p.path)
    ]
