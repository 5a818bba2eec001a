"""Per-file records: what the analysis learnt of each file, kept in the user's cache folder so
that the next `pmem check`, `pmem health` or language-server start neither reads nor checks a
file that did not change (docs/decisions.md, "Per-file records").

A record is one file's entry as the scan made it (size, mtime, whether it had text, cut at
the cap) and the entry's cache (`FileEntry.cache`): the findings of its text checks, its
links, source pointers, duplicate sketch and similarities, the parsed routes or archive
records, and each file check's findings with the facts of the root the check read for them
(`FileCheck.depends`). The text of a memory file is not kept: a restored entry reads it from
disk when something asks (a hover, a fix), and that read is counted (`root_state.ReadCount`).
The two indexes' texts are kept (the cross-file rules read their lines on every run; parsing
a 10k-route index again costs 40 ms, unpickling its parsed form 350 ms).

**Keys.** One record file per (format, pmem's version and the size and mtime of every module
of the package and of the optional compiled core, the Python version, the `PMEM_` environment
that may change a finding, the root's real path, the settings that change findings,
`HOME`, the folders at `/`, the local time zone): two roots, two pmem versions, two sets of
settings never share one. Inside it, each file's record is used only while `lstat` of the
file gives the same `stat_sig` (size, mtime_ns, ctime_ns, inode, mode, device): an edit
moves the mtime, one that puts the mtime back moves the ctime, a file replaced by another of
the same size and times has another inode.

**What is never kept**: a file that changed less than `racy_seconds()` before the scan
began (`PMEM_CACHE_RACY_SECONDS`, as for the check cache: a change in the same clock tick
could not be told apart), an editor buffer, an unreadable file, a symbolic link, a restored
entry whose file turned out to be another when read. A record file that cannot be read or
is not what this module writes is ignored: never an error, never a finding.

**When it is written**: `pmem check` writes the record file from a forked child once its
answer is out (`cache_writer.py`: the caller does not wait for the pickling), and a reader
waits for such a child before it opens the file; the server and `host.scan` write in place.

Off with `--no-cache` or `PMEM_NO_CACHE=1`, like the check cache.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import os
import pickle
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from .cache_writer import no_writer_busy, write_after_answer
from .findings import Finding
from .root_state import LINE_SHAPES, FileEntry, RestoredEntry, RootState, line_shape, sig_times, stat_sig
from .user_cache import own_folder, package_stamp, pmem_cache_dir, racy_seconds, time_zone, top_folders
from .zones import Zone

if TYPE_CHECKING:
    from .settings import Settings

FORMAT = 2  # 2: the stat signature packed in bytes
MIN_NEW = 16  # files: fewer new records than this (or 1% of the root) are not worth a write
SUFFIX = ".records"
# Entry cache keys never kept: the line index is the text again; the shingles' hashes change
# from process to process (`hash`), so they are not comparable across runs.
_NOT_KEPT = frozenset({"line-index", "dup-shingles"})
_TEXT_ZONES = frozenset({Zone.INDEX, Zone.ARCHIVE_INDEX})


def native_stamp() -> tuple | None:
    """The optional compiled core (`pmem_native`), where one is installed: its file's path, size
    and mtime (a rebuilt core is another pmem); found without importing it."""
    try:
        spec = importlib.util.find_spec("pmem_native")
        origin = spec.origin if spec is not None else None
        if not origin:
            return None
        st = os.stat(origin)
    except (ImportError, ValueError, OSError):
        return None
    return origin, st.st_size, st.st_mtime_ns


# The environment that cannot change a finding (where the caches live, which root, MCP's
# confirmations); any other PMEM_ variable is in the key.
_ENV_NOT_IN_KEY = ("PMEM_NO_CACHE", "PMEM_CACHE_DIR", "PMEM_CACHE_RACY_SECONDS", "PMEM_CACHE_WRITE", "PMEM_ROOT",
                   "PMEM_MCP_ELICITATION")


def settings_key(settings: Settings) -> str:
    """The settings as they change findings (what the server publishes, `diagnostics`, does not)."""
    from .settings_defaults import settings_data

    data = settings_data(settings)
    data.pop("diagnostics", None)
    return repr(sorted(data.items()))


def _own_file(fd: int) -> bool:
    st = os.fstat(fd)
    getuid = getattr(os, "getuid", None)
    return stat.S_ISREG(st.st_mode) and (getuid is None or st.st_uid == getuid()) and not st.st_mode & 0o022


# rel → (sig, size, mtime, had_text, truncated, cache items, the text of an index or None)
_Record = tuple[bytes, int, "float | None", bool, bool, dict[Hashable, object], Any]


class Records:
    """The per-file records of one root under one set of settings: `restore` during the scan,
    `store` after the analysis."""

    def __init__(self, root: Path, settings: Settings, folder: str | None = None) -> None:
        self.started = time.time()
        self.root = Path(os.path.realpath(root))
        env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("PMEM_") and k not in _ENV_NOT_IN_KEY))
        self.key = (FORMAT, __version__, package_stamp(), native_stamp(), tuple(sys.version_info[:3]), str(self.root),
                    settings_key(settings), os.environ.get("HOME"), top_folders(), time_zone(), env)
        name = hashlib.sha256(repr(self.key).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        self.folder = os.path.join(folder or pmem_cache_dir(), "records")
        self.file = os.path.join(self.folder, name + SUFFIX)
        self.hits = 0  # entries restored
        self.misses = 0  # files with no usable record (new, changed, or never stored)
        # `pmem check` sets it: the records are written by a forked child after the answer is
        # out (`cache_writer.write_after_answer`); the server and `host.scan` write in place.
        self.write_after_answer = False
        self._entries = self._load()

    def _load(self) -> dict[str, _Record]:
        if not own_folder(self.folder):
            return {}
        with no_writer_busy(self.file):  # a child of the last run may still be writing it
            try:
                fd = os.open(self.file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except (OSError, ValueError):
                return {}
        try:
            if not _own_file(fd):
                return {}
            with os.fdopen(fd, "rb", closefd=False) as fh:
                blob = fh.read()
            # Hundreds of thousands of small objects, none garbage: the collector would walk
            # them again and again while they are made (0.69 → 0.28 s on the 10k root).
            collecting = gc.isenabled()
            gc.disable()
            try:
                data = pickle.loads(blob)  # the user's own 0700 folder and 0600 file: see `user_cache.own_folder`
            finally:
                if collecting:
                    gc.enable()
        except Exception:  # a corrupt or foreign record is no record: never an error
            return {}
        finally:
            os.close(fd)
        if not (isinstance(data, tuple) and len(data) == 2 and data[0] == self.key and isinstance(data[1], dict)):
            return {}
        return data[1]

    def restorer(self) -> Callable[[str, Zone, os.stat_result], FileEntry | None] | None:
        """What the scan asks for each file's record (`restore`): None when no record was
        found, so that the first run after `--no-cache` scans as a cold one does, with no
        `lstat` of each Markdown file (issue 44: it was 1.08× a cold check on the 10k root)."""
        return self.restore if self._entries else None

    def restore(self, rel: str, zone: Zone, st: os.stat_result) -> FileEntry | None:
        """The entry of `rel` from its record when the file's `lstat` is the recorded one."""
        record = self._entries.get(rel)
        try:
            if record is None or record[0] != stat_sig(st):
                self.misses += 1
                return None
            sig, size, mtime, had_text, truncated, cache, text = record
            entry = RestoredEntry(self.root, rel, zone, size, mtime, had_text=had_text, truncated=truncated,
                                  sig=sig, cache=dict(cache), text=text if zone in _TEXT_ZONES else None)
        except (TypeError, ValueError):  # a record of another shape: read the file
            self.misses += 1
            return None
        self.hits += 1
        return entry

    def store(self, state: RootState, findings: dict[str, list[Finding]] | None = None) -> None:
        """Keep what the analysis of `state` learnt of each file that may be kept (nothing is
        written when every file was restored and nothing new was learnt). `findings` (path →
        findings, the server's): their lines' shapes are kept too, so the next start can
        publish them in the client's units without reading the files (`line_shape`)."""
        if findings:
            _keep_shapes(state, findings)
        learnt = self._learnt(state)
        if not learnt or (self._entries and learnt < max(MIN_NEW, len(state.files) // 100)):
            # A few files changed: reading them again next time costs less than writing every
            # record again now (0.2-0.4 s on the 10k root). Nothing kept is wrong meanwhile.
            return
        if self.write_after_answer:
            write_after_answer(self.file, lambda: self._write(state))
        else:
            self._write(state)

    def _write(self, state: RootState) -> None:
        """Every record that may be kept, pickled into one file put in place by a rename."""
        newest_safe = (self.started - racy_seconds()) * 1e9
        entries: dict[str, _Record] = {}
        for rel, entry in state.files.items():
            record = _record_of(entry, newest_safe)
            if record is not None:
                entries[rel] = record
        try:
            blob = pickle.dumps((self.key, entries), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            blob = pickle.dumps((self.key, _picklable(entries)), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            if not own_folder(self.folder):
                return
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(blob)
                os.replace(tmp, self.file)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            pass  # no cache folder: the check ran, which is all that matters

    def _learnt(self, state: RootState) -> int:
        """How many files' records would change: new or changed files, files whose checks ran
        again, files gone."""
        learnt = sum(1 for rel in self._entries if rel not in state.files)
        for rel, entry in state.files.items():
            record = self._entries.get(rel)
            if record is None or not isinstance(entry, RestoredEntry) or entry.stale:
                learnt += 1
                continue
            kept = record[5]
            items = [(k, v) for k, v in entry.cache.items() if k not in _NOT_KEPT]
            if len(items) != len(kept) or any(kept.get(k) is not v for k, v in items):
                learnt += 1
        return learnt


def _keep_shapes(state: RootState, findings: dict[str, list[Finding]]) -> None:
    for rel, found in findings.items():
        entry = state.files.get(rel)
        if entry is None or entry.from_buffer or (isinstance(entry, RestoredEntry) and not entry.loaded):
            continue  # a restored entry keeps the shapes it came with
        lines = entry.position_lines()
        wanted = {n for f in found for n in (f.line, f.end_line) if 0 <= n < len(lines)}
        shapes = (len(lines), {n: line_shape(lines[n]) for n in sorted(wanted)})
        if entry.cache.get(LINE_SHAPES) != shapes:  # the same kept: nothing new to write
            entry.cache[LINE_SHAPES] = shapes


def _record_of(entry: FileEntry, newest_safe: float) -> _Record | None:
    sig = entry.sig
    if sig is None or entry.from_buffer or entry.error or (isinstance(entry, RestoredEntry) and entry.stale):
        return None
    times = sig_times(sig)
    if times is None or max(times) > newest_safe:
        return None  # changed too recently before the scan to trust its times (or at a time out of range)
    cache = {k: v for k, v in entry.cache.items() if k not in _NOT_KEPT}
    text = entry.text if entry.zone in _TEXT_ZONES else None
    return sig, entry.size, entry.mtime, entry.readable, entry.truncated, cache, text


def _picklable(entries: dict[str, _Record]) -> dict[str, _Record]:
    """The records whose every part pickles (a value of a new kind must not lose them all)."""
    out = {}
    for rel, record in entries.items():
        try:
            pickle.dumps(record)
        except Exception:
            continue
        out[rel] = record
    return out


def scan(root: Path, settings: Settings, records: Records | None) -> RootState:
    """`RootState.scan`, restoring from `records` every file whose record still holds."""
    return RootState.scan(root, settings, restore=records.restorer() if records is not None else None)
