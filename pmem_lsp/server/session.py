"""What a session's first messages say, without protocol types: URIs ↔ paths, the editor's
`pmem` settings, the workspace folders and the memory roots they make.

The full server (`roots.py`, `convert.py`, `documents.py`) and the early path (`early.py`),
which answers before lsprotocol is imported, both read the client through these functions, so
the two cannot disagree on which file a URI names, which roots a session has or which settings
apply.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

from pygls.uris import from_fs_path, to_fs_path  # stdlib only: no lsprotocol behind it

from ..engine.names import uri_quote, uri_unquote
from ..engine.zones import discover_root, enclosing_root, looks_like_root


# -- files ------------------------------------------------------------------------------
def uri_to_path(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    parsed = urlsplit(uri)
    try:
        unquote_to_bytes(parsed.path).decode("utf-8")
    except UnicodeDecodeError:
        # Escapes of bytes that are not UTF-8 (a name the file system holds as bytes): the
        # exact bytes, as `path_to_uri` wrote them (pygls would read them as U+FFFD).
        if not parsed.netloc or parsed.netloc == "localhost":
            return Path(uri_unquote(parsed.path))
    fs = to_fs_path(uri)
    return Path(fs) if fs else None


def path_to_uri(path: Path) -> str:
    text = str(path)
    if not text.isascii() and any("\ud800" <= c <= "\udfff" for c in text):
        # A name that is not UTF-8 (held as lone surrogates): its exact bytes, percent-escaped.
        return "file://" + uri_quote(text)
    return from_fs_path(text) or path.as_uri()


# JSON can carry lone UTF-16 surrogates ("\ud800") that no file can hold; the engine only
# ever sees valid Unicode. One replacement character per surrogate keeps every position.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", text)


# -- settings and roots -------------------------------------------------------------------
def editor_settings(raw: Any) -> dict[str, Any]:
    """The `pmem` settings object, whether sent nested (`{"pmem": {…}}`) or bare; nulls dropped."""
    if not isinstance(raw, dict):
        return {}
    if isinstance(raw.get("pmem"), dict):
        raw = raw["pmem"]
    return _drop_nulls(raw)


def _drop_nulls(value: dict[str, Any]) -> dict[str, Any]:
    return {k: _drop_nulls(v) if isinstance(v, dict) else v for k, v in value.items() if v is not None}


def folder_paths(folder_uris: list[str], root_uri: str | None, root_path: str | None) -> list[Path]:
    """The workspace folders of `initialize`: its `workspaceFolders`, else `rootUri`, else `rootPath`."""
    uris = list(folder_uris)
    if not uris and root_uri:
        uris = [root_uri]
    paths = [uri_to_path(u) for u in uris]
    if not uris and root_path:
        paths = [Path(root_path)]
    return [p for p in paths if p is not None]


def candidate_roots(folders: list[Path], configured: str | None) -> list[Path]:
    """Workspace folders that look like memory roots, plus `pmem.root` when it does too; else
    the default root. A setting can come from a workspace's own files, so `pmem.root: "/"`
    must not make the server read the whole disk."""
    # A folder of a root that looks like one itself (`_archive/` holds an `_index.md`; Neovim's
    # root markers pick it for a file opened there) is served as the root it belongs to: the
    # format has no root inside a root, and writes made as if it were one would land in the
    # archive past its rules.
    roots = [enclosing_root(f) or f for f in folders if looks_like_root(f)]
    if configured:
        wanted = discover_root(configured)
        if looks_like_root(wanted):
            roots.append(enclosing_root(wanted) or wanted)
    if not roots:
        default = discover_root(None)
        if default.is_dir():
            roots.append(default)
    unique: list[Path] = []
    for r in roots:
        if r not in unique:
            unique.append(r)
    return unique
