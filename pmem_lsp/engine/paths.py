"""Turning a path as written in Markdown into a root-relative POSIX path, or saying why not."""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

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


def normalize_target(target: str, base_dir: str = "") -> tuple[str | None, str | None]:
    """(root-relative path, None) or (None, reason). `base_dir` is the linking file's folder."""
    raw = target.strip()
    if not raw:
        return None, EMPTY
    if _SCHEME.match(raw):
        return None, URL
    path = unquote(strip_fragment(raw))
    if not path:
        return None, EMPTY
    if path.startswith(("/", "~", "\\")) or _DRIVE.match(path) or path.startswith("$"):
        return None, ABSOLUTE
    joined = posixpath.join(base_dir, path) if base_dir else path
    norm = posixpath.normpath(joined)
    if norm == ".." or norm.startswith("../"):
        return None, OUTSIDE
    if norm == ".":
        return "", None
    return norm, None
