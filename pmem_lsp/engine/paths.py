"""Turning a path as written in Markdown into a root-relative POSIX path, or saying why not."""

from __future__ import annotations

import os
import posixpath
import re
from urllib.parse import unquote_to_bytes

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")
_DRIVE = re.compile(r"^[A-Za-z]:")

# Why a written path is not a root-relative path.
URL, ABSOLUTE, OUTSIDE, EMPTY = "url", "absolute", "outside-root", "empty"


def strip_fragment(target: str) -> str:
    for sep in ("#", "?"):
        cut = target.find(sep)
        if cut >= 0:
            target = target[:cut]
    return target


def unescape_bytes(written: str) -> str:
    """A link target's `%` escapes read as bytes, then as the file system reads a name: `%C3%A9`
    is `é`, and `%FF` (a byte that is not UTF-8) the lone surrogate `\\udcff` that names the file
    `bad\\xff.md` — where `urllib.parse.unquote` would give U+FFFD, a name no file has (issue 40)."""
    if "%" not in written:
        return written
    # surrogateescape: a target read from a name (not from UTF-8 text) may already hold such bytes.
    return os.fsdecode(unquote_to_bytes(written.encode("utf-8", "surrogateescape")))


def normalize_target(target: str, base_dir: str = "") -> tuple[str | None, str | None]:
    """(root-relative path, None) or (None, reason). `base_dir` is the linking file's folder."""
    raw = target.strip()
    if not raw:
        return None, EMPTY
    if _SCHEME.match(raw):
        return None, URL
    path = unescape_bytes(strip_fragment(raw))
    if not path:
        return None, EMPTY
    if path.startswith(("/", "~", "\\")) or _DRIVE.match(path) or path.startswith("$"):
        return None, ABSOLUTE
    joined = posixpath.join(base_dir, path) if base_dir else path
    if _normal(joined):
        return joined, None
    norm = posixpath.normpath(joined)
    if norm == ".." or norm.startswith("../"):
        return None, OUTSIDE
    if norm == ".":
        return "", None
    return norm, None


def _normal(path: str) -> bool:
    """Whether `posixpath.normpath` gives `path` (relative, not empty) back unchanged: no part of
    it is empty, `.` or `..` (a part that starts with a dot starts the path or follows a `/`).
    In Python 3.11 `normpath` is a loop in Python; most targets need none of it."""
    return not (path.startswith(".") or "/." in path or "//" in path or path.endswith("/"))


def record_path(written: str) -> tuple[str | None, str | None]:
    """(root-relative path, None) or (None, reason) for a path a record holds (`location`,
    `original`, `original_path`, the `## path` / `### path` heading). A record is not a link:
    its path is plain text, every character its own, as pmem and the format's reference CLI
    both write it — `?`, `#` and `%` are part of the name (`notes/Rust ?.md`), never a query,
    a fragment or an escape (issue 40), and no scheme makes it a URL (`a:b.md` is a name)."""
    raw = written.strip()
    if not raw:
        return None, EMPTY
    if raw.startswith(("/", "~", "\\")) or _DRIVE.match(raw) or raw.startswith("$"):
        return None, ABSOLUTE
    norm = posixpath.normpath(raw)
    if norm == ".." or norm.startswith("../"):
        return None, OUTSIDE
    if norm == ".":
        return None, EMPTY
    return norm, None
