"""The root's kept files as blob ids: the Markdown files and `.pmem.toml`, not hidden paths, not
raw material over `largeFile.kb`. Only files whose lstat changed since the last snapshot are
hashed (one `git hash-object` for all of them): a 10k root's next entry costs a walk."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from .git import Git

SETTINGS_FILE = ".pmem.toml"
DEFAULT_LARGE_KB = 256
StatKey = tuple[int, int, int, int]  # mtime_ns, ctime_ns, size, inode
# Kept whatever their size: a 10k root's `_index.md` is about 1 MB, far over `largeFile.kb`, and
# it is what a wipe destroys and what undo and PM210/PM308 read back.
INDEXES = ("_index.md", "_archive/_index.md")


def kept_size(rel: str, size: int, limit: int) -> bool:
    """Whether a file of `size` bytes at `rel` is kept (raw material over the limit is not)."""
    return size <= limit or rel in INDEXES


def large_limit(root: Path) -> int:
    """`largeFile.kb` in bytes, read without the settings model (recording must stay cheap and
    must not fail on a settings file pmem cannot use)."""
    try:
        with open(root / SETTINGS_FILE, "rb") as fh:  # most roots have none: no TOML parser then (~15 ms)
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover
                import tomli as tomllib
            kb = tomllib.load(fh).get("largeFile", {}).get("kb", DEFAULT_LARGE_KB)
        return int(kb) * 1024 if isinstance(kb, int) and kb > 0 else DEFAULT_LARGE_KB * 1024
    except (OSError, ValueError, AttributeError, ImportError):
        return DEFAULT_LARGE_KB * 1024


def kept_files(root: Path) -> dict[str, os.stat_result]:
    """Root-relative path → lstat of every file history keeps."""
    limit = large_limit(root)
    found: dict[str, os.stat_result] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        rel_folder = os.path.relpath(folder, root)
        for name in files:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}".replace(os.sep, "/")
            if "\n" in name or (name.startswith(".") and rel != SETTINGS_FILE):  # one path a line to git
                continue
            if not (name.lower().endswith(".md") or rel == SETTINGS_FILE):
                continue
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and kept_size(rel, st.st_size, limit):
                found[rel] = st
    return found


def _key(st: os.stat_result) -> StatKey:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


class StatCache:
    """path → (lstat key, blob id) of the last snapshot, in the store (`stat.json`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, tuple[StatKey, str]] = {}
        self.head: str | None = None  # the entry whose tree is exactly these blobs
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            self.entries = {p: (tuple(v[0]), v[1]) for p, v in raw["files"].items()}
            self.head = raw["head"] if isinstance(raw["head"], str) else None
        except (OSError, ValueError, TypeError, IndexError, AttributeError, KeyError):
            self.entries, self.head = {}, None  # lost or damaged: everything is hashed again

    def blobs(self) -> dict[str, str]:
        return {rel: blob for rel, (_, blob) in self.entries.items()}

    def save(self, head: str | None) -> None:
        tmp = self.path.with_suffix(".tmp")
        files = {p: [list(k), b] for p, (k, b) in self.entries.items()}
        tmp.write_text(json.dumps({"head": head, "files": files}), encoding="utf-8")
        os.replace(tmp, self.path)

    def forget(self, rel: str) -> None:
        self.entries.pop(rel, None)
        self.head = None


def snapshot(root: Path, git: Git, cache: StatCache) -> dict[str, str]:
    """Root-relative path → blob id of every kept file, the changed ones written to the store."""
    files = kept_files(root)
    blobs: dict[str, str] = {}
    to_hash: list[str] = []
    for rel, st in files.items():
        known = cache.entries.get(rel)
        if known is not None and known[0] == _key(st):
            blobs[rel] = known[1]
        else:
            to_hash.append(rel)
    if to_hash:
        # Absolute paths on stdin: names with spaces or newlines are not a problem (no shell);
        # --no-filters: the bytes as they are, whatever attributes say.
        listing = "".join(f"{root / rel}\n" for rel in to_hash).encode("utf-8", "surrogateescape")
        ids = git.run("hash-object", "-w", "--no-filters", "--stdin-paths", input=listing).decode().split()
        for rel, blob in zip(to_hash, ids, strict=True):
            blobs[rel] = blob
    cache.entries = {rel: (_key(files[rel]), blobs[rel]) for rel in blobs}
    return blobs
