"""The persistent cache of `pmem check` and `pmem health`: when nothing they read has changed
since the last run of the same command, the stored output is replayed (docs/performance.md,
"Cache"). Health reads what check reads (the same scan and analysis), so the same key holds.

Agents' hooks and CI run `pmem check` on roots that rarely change. Whether anything changed
is decided by one walk of the root taking each entry's `lstat` — no file is read, nothing is
parsed and the engine is not imported — against a record in the user's cache folder, never
in the memory root (agents read the root): `$PMEM_CACHE_DIR`, else `$XDG_CACHE_HOME/pmem`,
else `~/.cache/pmem`. The record holds the stdout, stderr and exit status of the run.

The key — any difference is a miss, and the check runs:

- this record format, pmem's version and the size and mtime of every module of the installed
  package (a development checkout changes without a new version), the Python version;
- the root's real path, the working folder (`--format github` prints paths relative to it),
  the command line, whether stdout and stderr are terminals, and the `PMEM_*` environment;
- today's date and the local time zone (PM501 counts days from mtimes in local time);
- `HOME` and the names of the folders at `/` (PM403 expands `~/` and takes `/x/…` as a path
  only where `/x` is a folder);
- the bytes of `.pmem.toml` (the settings; the command line's are in the command line);
- every entry the scan could read: each file's path, size, mtime_ns, ctime_ns, inode and mode,
  each folder's path (hidden entries are never read, so they do not count);
- the answer of `stat` for each path outside the root that a source pointer (PM403) names.

A change that keeps a file's size and puts its mtime back (`os.utime`) still moves its ctime;
a file replaced by another of the same size and times has another inode. So that a change in
the same clock tick as the stored run cannot hide, nothing is stored when any file changed
less than `RACY_SECONDS` before the run began, or when the root changed while it was checked.
No replay at all when the root holds a symbolic link (its target can change without the link
changing), a `.git` (PM501 then reads commit dates), or a folder that cannot be listed.

The record is written by a forked child once the answer is out (`engine/cache_writer.py`:
the second walk and the write are nobody's wait), and read only when no such child is busy.
When there is no record yet, the walk before the check is left out (it would be compared with
nothing) and the child stores the record only if no file or folder of the walk after the answer
changed since `RACY_SECONDS` before the run began: a file made, removed or renamed moves its
folder's times, and an edit the file's, so the tree it saw is the tree the check read.

Off with `--no-cache` (on both commands) or `PMEM_NO_CACHE=1` (a setting of the process, not
of the root: not in `.pmem.toml`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import marshal
import os
import sys
import tempfile
import time

from .. import __version__
from ..engine.cache_writer import no_writer_busy, write_after_answer
from ..engine.user_cache import (
    own_folder,
    package_stamp,
    pmem_cache_dir,
    racy_seconds,
    time_zone,
    top_folders,
)

FORMAT = 1
_NOT_IN_KEY = ("PMEM_NO_CACHE", "PMEM_CACHE_DIR", "PMEM_CACHE_RACY_SECONDS", "PMEM_CACHE_WRITE")


def cache_dir() -> str:
    """Where the records live (`engine/user_cache.py`)."""
    return pmem_cache_dir()


def walk(root: str) -> tuple[bytes, int] | None:
    """(digest of every readable entry's path and lstat, newest mtime or ctime in ns of any
    file or folder, the root's own included), or None when the root holds something that makes
    a replay unsafe. A file made, removed or renamed moves its folder's times, so a newest time
    before some moment says the whole tree is as it was then."""
    if os.path.lexists(os.path.join(root, ".git")):
        return None
    rows: list[tuple] = []
    try:
        st = os.stat(root)
    except OSError:
        return None
    newest = max(st.st_mtime_ns, st.st_ctime_ns)
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
                entries = list(it)
        except OSError:
            return None
        for de in entries:
            name = de.name
            if name[0] == ".":
                continue  # hidden: the scan never reads it (.pmem.toml is in the key by its bytes)
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                if de.is_symlink():
                    return None
                if de.is_dir(follow_symlinks=False):
                    stack.append(rel)
                    rows.append((rel,))
                    folder = de.stat(follow_symlinks=False)
                    newest = max(newest, folder.st_mtime_ns, folder.st_ctime_ns)
                    continue
                st = de.stat(follow_symlinks=False)
            except OSError:
                return None
            rows.append((rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode))
            newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    rows.sort()
    return hashlib.sha256(marshal.dumps(rows)).digest(), newest


def _outside_state(paths: list[str]) -> list[int]:
    out = []
    for path in paths:
        try:
            os.stat(path)
            out.append(0)
        except (FileNotFoundError, NotADirectoryError):
            out.append(1)
        except (OSError, ValueError):
            out.append(2)
    return out


def _read_toml(root: str) -> bytes | None:
    try:
        with open(os.path.join(root, ".pmem.toml"), "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except OSError:
        return b"\0unreadable"


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


class CheckCache:
    """The record of one command line on one root, looked up before the check and stored after."""

    def __init__(self, root: str, argv: list[str]) -> None:
        self.started = time.time()
        self.root = os.path.realpath(root)
        toml = _read_toml(self.root)
        self.toml = toml
        env = sorted((k, v) for k, v in os.environ.items() if k.startswith("PMEM_") and k not in _NOT_IN_KEY)
        self.head = (FORMAT, __version__, package_stamp(), tuple(sys.version_info[:3]), self.root, os.getcwd(),
                     tuple(argv), _isatty(sys.stdout), _isatty(sys.stderr), tuple(env), dt.date.today().isoformat(),
                     time_zone(), os.environ.get("HOME"), top_folders(),
                     hashlib.sha256(toml).hexdigest() if toml is not None else None)
        name = hashlib.sha256(repr((self.root, os.getcwd(), tuple(argv))).encode("utf-8", "surrogatepass"))
        self.file = os.path.join(cache_dir(), name.hexdigest()[:32] + ".check")
        # With no record to compare with, the walk before the check would only be the base of
        # the record to store; the child's walk after the answer serves instead, when it shows
        # nothing changed since before this run began (`_write`). So the first run after
        # `--no-cache` costs what a cold check costs (issue 44).
        self.first = not os.path.lexists(self.file)
        self.tree = None if self.first else walk(self.root)

    def lookup(self) -> tuple[str, str, int] | None:
        """(stdout, stderr, exit status) of the last run, if nothing it read has changed."""
        if self.tree is None or not own_folder(os.path.dirname(self.file)):
            return None
        try:
            with no_writer_busy(self.file), open(self.file, "rb") as fh:  # the last run's child may be writing it
                head, tree, outside, state, out, err, status = marshal.load(fh)
        except (OSError, EOFError, ValueError, TypeError):
            return None
        if head != self.head or tree != self.tree[0] or _outside_state(outside) != state:
            return None
        return out, err, status

    def store(self, out: str, err: str, status: int, outside: list[str]) -> None:
        """Keep this run's answer, written by a forked child once the answer is out (the walk
        that proves the root did not change meanwhile is most of the cost: `cache_writer`)."""
        if self.first:
            write_after_answer(self.file, lambda: self._write(None, out, err, status, outside))
            return
        if self.tree is None or self.tree[1] / 1e9 > self.started - racy_seconds():
            return  # a file changed too recently before the run to trust its times
        tree = self.tree[0]
        write_after_answer(self.file, lambda: self._write(tree, out, err, status, outside))

    def _write(self, tree: bytes | None, out: str, err: str, status: int, outside: list[str]) -> None:
        """`tree`: the walk before the check (None on a first run: then every time the walk
        after shows must be older than the run's start less `RACY_SECONDS`)."""
        after = walk(self.root)
        if after is None or _read_toml(self.root) != self.toml:
            return
        if tree is not None:
            changed = after[0] != tree  # the root changed while it was checked
        else:
            changed = after[1] / 1e9 > self.started - racy_seconds()  # or perhaps just before
        if changed:
            return
        outside = sorted(set(outside))
        record = (self.head, after[0], outside, _outside_state(outside), out, err, status)
        folder = os.path.dirname(self.file)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            if not own_folder(folder):
                return
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    marshal.dump(record, fh)
                os.replace(tmp, self.file)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass  # no cache folder: the check ran, which is all that matters
