"""The state of one memory root: which files exist, their text, and their parsed form.

Built by one scan, then kept current one file at a time (`refresh` from disk, `set_buffer`
from an editor). A file that cannot be read stays in the root state with its error: unreadable
is never the same as missing. `read_problems()` lists what could not be taken in whole (an
unreadable file or folder, a file analysed only up to the cap); `pmem check` and the server
both report from it.
"""

from __future__ import annotations

import errno
import os
import stat
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from .folders import walk
from .line_index import LineIndex
from .memory_file import MemoryFile
from .zones import Zone, inside_root, is_markdown, zone_of

if TYPE_CHECKING:  # the settings model (pydantic) is not needed to read a file: hooks start fast
    from .settings import Settings

# A huge file (or editor buffer) is analysed up to this many bytes of UTF-8, so one 50 MB
# paste cannot stall a check; the rest is not read. Its real size is still known (PM005).
MAX_ANALYSED_BYTES = 2 * 1024 * 1024

_T = TypeVar("_T")
_MISSING = object()


@dataclass(slots=True)
class FileEntry:
    rel: str
    zone: Zone
    size: int
    mtime: float | None  # None: unknown (unreadable, or a buffer not saved yet); 0 is 1970, a real time
    text: str | None = None  # Markdown files only, None when unreadable
    error: str | None = None  # why the file could not be read
    truncated: bool = False  # only the first MAX_ANALYSED_BYTES were analysed
    from_buffer: bool = False  # text comes from an editor buffer, not the disk
    # What the disk said when the file was read: (size, mtime_ns, ctime_ns, inode, mode, device);
    # None for a buffer or a file that could not be read. A per-file record is keyed on it.
    sig: bytes | None = field(default=None, repr=False)
    _doc: MemoryFile | None = field(default=None, repr=False)
    # Results that depend on this file's text alone, kept until the text changes (the
    # entry is replaced on every change, so nothing here can go stale).
    # A key holds values of one type; read and fill it through `cached`.
    cache: dict[Hashable, object] = field(default_factory=dict, repr=False)

    @property
    def markdown(self) -> bool:
        return is_markdown(self.rel)

    @property
    def readable(self) -> bool:
        """A Markdown file whose text the analysis has (a restored entry has it on disk, to be
        read when something asks for it: `entry_cache.py`)."""
        return self.text is not None

    @property
    def doc(self) -> MemoryFile | None:
        """The parsed file, built on first use and kept until the text changes — except, in
        the server (`keep_disk_docs(False)`), for a file read from disk other than the two
        indexes: its document goes to a small LRU shared by the process and is parsed again
        when asked after that."""
        if self._doc is None and self.text is not None:
            if not _keep["disk docs"] and not self.from_buffer and self.zone not in _ALWAYS_KEPT:
                return _recent_doc(self)
            self._doc = MemoryFile(self.text)
        return self._doc

    @property
    def line_index(self) -> LineIndex | None:
        """The text's lines, for positions, without parsing it when it is not parsed yet (a
        request right after an edit). None for a file with no text."""
        if self.text is None:
            return None
        if self._doc is not None:
            return self._doc.line_index
        text = self.text
        return self.cached("line-index", lambda: LineIndex(text))

    def position_lines(self) -> Sequence[str]:
        """The lines a client's positions are counted in (UTF-16 or UTF-8 units of a prefix of a
        line); a restored entry answers for the lines its findings are on without its text."""
        index = self.line_index
        return index.lines if index is not None else []

    def cached(self, key: Hashable, build: Callable[..., _T], *args: Any) -> _T:
        """`build(*args)` for this text: computed on first use and kept under `key` until the
        text changes (the entry is replaced then). The arguments are passed rather than bound
        in a closure: the answers asked once a finding or a check (a whole file's span, its
        link paths) would make a closure each time only to find the answer kept."""
        value = self.cache.get(key, _MISSING)
        if value is _MISSING:
            value = self.cache[key] = build(*args)
        return cast(_T, value)  # the key's one type: what its `build` returns


# The parsed documents are most of a root's memory (the 10k-file root: ~219 MB RSS with them,
# ~120 MB without). The CLI, which exits, keeps them; the server keeps the documents of editor
# buffers (every keystroke reads them) and the `RECENT_DOCS` last parsed of the others.
RECENT_DOCS = 256
# The indexes are read by the cross-file rules on every change (a 10k-route index takes tens of
# milliseconds to parse): their documents are always kept.
_ALWAYS_KEPT = frozenset({Zone.INDEX, Zone.ARCHIVE_INDEX})
_keep = {"disk docs": True}
_recent: OrderedDict[int, tuple[FileEntry, MemoryFile]] = OrderedDict()
_recent_lock = threading.Lock()


def keep_disk_docs(keep: bool) -> None:
    """Whether the parsed documents of files read from disk stay with their entries (the
    default) or only in the process's LRU of `RECENT_DOCS` (the server)."""
    _keep["disk docs"] = keep
    if keep:
        with _recent_lock:
            _recent.clear()


def _recent_doc(entry: FileEntry) -> MemoryFile:
    key = id(entry)
    with _recent_lock:
        hit = _recent.get(key)
        if hit is not None and hit[0] is entry:  # the same entry, not one at a reused id
            _recent.move_to_end(key)
            return hit[1]
    doc = MemoryFile(entry.text or "")
    with _recent_lock:
        _recent[key] = (entry, doc)
        _recent.move_to_end(key)
        while len(_recent) > RECENT_DOCS:
            _recent.popitem(last=False)
    return doc


class ReadCount:
    """How many memory files this process has read (opened for their text): the warm start's
    figure in `make bench`, and what the records' tests hold to zero for unchanged files."""

    files = 0


def _mib(size: int) -> str:
    mib = size / (1024 * 1024)
    return f"{mib:.0f} MiB" if mib == int(mib) else f"{mib:.1f} MiB"


@dataclass(frozen=True, slots=True)
class ReadProblem:
    """A file or folder the analysis could not take in whole."""

    path: str  # relative to the root; "." for the root itself
    reason: str | None  # why it could not be read; None: read, but only up to the cap
    size: int = 0  # a capped file's whole size, in bytes

    @property
    def unreadable(self) -> bool:
        return self.reason is not None

    def message(self) -> str:
        """What to tell the user after the path: `pmem: warning: notes/x.md: <message>`."""
        if self.reason is not None:
            return f"cannot be read ({self.reason}); it is not treated as missing"
        return f"{_mib(self.size)}, only the first {_mib(MAX_ANALYSED_BYTES)} analysed"


def decode(data: bytes) -> str:
    """UTF-8 with or without BOM; invalid bytes become U+FFFD rather than an error."""
    # The same as `data.decode("utf-8-sig", "replace")`, without that codec's Python-level
    # decoder; the NUL replacement only when there is a NUL (it copies the text).
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    text = data.decode("utf-8", "replace")
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def _cut(data: bytes, limit: int) -> int:
    """Where to cut UTF-8 `data` to at most `limit` bytes without splitting a character."""
    if len(data) <= limit:
        return len(data)
    cut = limit
    while cut > limit - 3 and (data[cut] & 0xC0) == 0x80:  # a continuation byte
        cut -= 1
    return cut if (data[cut] & 0xC0) != 0x80 else limit


def cap_text(text: str) -> tuple[str, int, bool]:
    """An editor buffer as the analysis takes it: (text up to the cap, size in UTF-8 bytes,
    truncated). A lone surrogate (JSON can carry "\\ud800") counts as its 3 bytes."""
    if text.isascii():  # constant time for an ASCII string
        size = len(text)
        return (text, size, False) if size <= MAX_ANALYSED_BYTES else (text[:MAX_ANALYSED_BYTES], size, True)
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_ANALYSED_BYTES:
        return text, len(data), False
    return data[:_cut(data, MAX_ANALYSED_BYTES)].decode("utf-8", "surrogatepass"), len(data), True


_SPECIAL = ((stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
            (stat.S_ISBLK, "block device"))


def _not_regular(st: os.stat_result) -> str | None:
    """Why a path that is not a folder cannot be read as a file; None for a regular file."""
    if stat.S_ISREG(st.st_mode):
        return None
    for test, name in _SPECIAL:
        if test(st.st_mode):
            return f"not a regular file ({name})"
    return "not a regular file"


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def read_regular_text(path: Path, limit: int | None = MAX_ANALYSED_BYTES, larger_than: int = -1) -> str | None:
    """What a regular file holds, decoded as the root state decodes it and up to `limit` bytes
    (the analysis cap; None: the whole file); None when there is no such file, or it is no
    regular file (a named pipe is never read: it would block), or it cannot be read, or it is
    no larger than `larger_than` bytes (the pre-write hook wants a big file's whole text only)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size <= larger_than:
            return None
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read() if limit is None else fh.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return decode(data if limit is None else data[:_cut(data, limit)])


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_READ_FLAGS_NOFOLLOW = _READ_FLAGS | getattr(os, "O_NOFOLLOW", 0)


def _os_open(path: str, flags: int) -> int:
    """The open of a scanned file (tests replace it to fail or swap files; it looks `os.open`
    up on each call, so a test's patch of `os.open` sees the scan too)."""
    return os.open(path, flags)


def _read_fd(fd: int, limit: int, size_hint: int) -> bytes:
    """Up to `limit` bytes of an open file, with `os.read` (no buffered file object): one
    call for a file whose size is known, more while reads come back full."""
    want = min(limit, size_hint + 1) if size_hint >= 0 else limit
    data = os.read(fd, max(want, 1))
    if len(data) < want or len(data) >= limit:
        return data
    chunks = [data]
    got = len(data)
    while got < limit:
        more = os.read(fd, min(limit - got, 1 << 20))
        if not more:
            break
        chunks.append(more)
        got += len(more)
    return b"".join(chunks)


def stat_sig(st: os.stat_result) -> bytes:
    """What tells a file's content changed without reading it: an edit moves the mtime, one
    that puts the mtime back still moves the ctime, and a file replaced by another of the same
    size and times has another inode. The size, mtime_ns, ctime_ns, inode, mode and device
    packed in 48 bytes: one object where six numbers and their tuple were (the server keeps
    one per file); a time past what 64 bits hold (before 1678, after 2262) in a longer form."""
    fields = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode, st.st_dev)
    try:
        return _SIG.pack(*fields)
    except struct.error:
        long = b"~" + repr(fields).encode()
        return long + b"~" if len(long) == _SIG.size else long  # never the packed form's length


_SIG = struct.Struct("<QqqQQQ")


def sig_times(sig: bytes) -> tuple[int, int] | None:
    """The mtime_ns and ctime_ns of a `stat_sig` (None: one of them past what 64 bits hold)."""
    if len(sig) != _SIG.size:
        return None
    _size, mtime_ns, ctime_ns, *_rest = _SIG.unpack(sig)
    return mtime_ns, ctime_ns


class _BecameLink(Exception):
    """The path was replaced by a symbolic link between its stat and its open."""


def _read_entry(root: Path, rel: str, zone: Zone, st: os.stat_result | None, follow: bool) -> FileEntry | None:
    """The entry for one file that is not a folder; `st` is its stat (through the link when
    `follow`), or None for a Markdown file its folder's listing calls a regular file (no link):
    the open file's `fstat` stands for it, and the path's `lstat` is taken only where the open
    fails (a cold scan saves one system call a file). None when the file vanished between
    listing and reading: it is gone, not unreadable.

    Opened without blocking and checked again on the open file, so a named pipe (which would
    block a reader forever), a socket or a device is never read, even one swapped in after
    the stat. A path that was no link is opened without following links, so a link swapped
    in cannot lead the read outside the root."""
    if st is None:
        entry = FileEntry(rel, zone, 0, None)  # (its size and time: the open file's, below)
    else:
        problem = _not_regular(st)
        if problem is not None:
            return FileEntry(rel, zone, 0, None, error=problem)
        entry = FileEntry(rel, zone, st.st_size, st.st_mtime)
        if not is_markdown(rel):
            entry.sig = stat_sig(st)
            return entry
    try:
        # os.open/os.read and a string path: no buffered file object, no Path join per file.
        fd = _os_open(f"{root}/{rel}", _READ_FLAGS if follow else _READ_FLAGS_NOFOLLOW)
        try:
            fst = os.fstat(fd)
            problem = _not_regular(fst)
            if problem is not None:
                return FileEntry(rel, zone, 0, None, error=problem)
            data = _read_fd(fd, MAX_ANALYSED_BYTES + 1, fst.st_size)
        finally:
            os.close(fd)
    except (FileNotFoundError, NotADirectoryError):  # (gone, or a folder of its path is now a file)
        if follow and os.path.islink(root / rel):
            return FileEntry(rel, zone, 0, None, error="broken symbolic link")
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow and os.path.islink(root / rel):
            raise _BecameLink from exc
        if st is None:  # the entry as the path's stat gives it, as when the scan took that stat
            try:
                st = os.lstat(root / rel)
            except (FileNotFoundError, NotADirectoryError):
                return None
            except OSError:
                pass
            else:
                return _read_entry(root, rel, zone, st, follow)
        entry.error = _reason(exc)
        return entry
    ReadCount.files += 1
    entry.size, entry.mtime = fst.st_size, fst.st_mtime
    entry.sig = stat_sig(fst)
    if len(data) > MAX_ANALYSED_BYTES:
        data = data[:_cut(data, MAX_ANALYSED_BYTES)]
        entry.truncated = True
        entry.size = max(entry.size, MAX_ANALYSED_BYTES + 1)
    entry.text = decode(data)
    return entry


_TEXT = cast(Any, FileEntry.__dict__["text"])  # the slot under RestoredEntry's `text`


class RestoredEntry(FileEntry):
    """An entry made from a per-file record (`entry_cache.py`) for a file whose `lstat` matches
    the record's: its findings and parsed facts come from the record, and its text is read
    from disk only when something asks for it (a hover, a fix, a check the record could not
    answer). Read then, the file must still be the one recorded (same `stat_sig`); if it is
    not, what was restored is dropped and everything is computed again from what is there."""

    __slots__ = ("_root", "_had_text", "_loaded", "stale")

    def __init__(self, root: Path, rel: str, zone: Zone, size: int, mtime: float | None, *, had_text: bool,
                 truncated: bool, sig: bytes, cache: dict[Hashable, object],
                 text: str | None = None) -> None:
        self._root = root
        self._had_text = had_text
        self._loaded = not had_text or text is not None  # the record may hold the text (the indexes)
        self.stale = False  # read back as another file than the record's: never stored again
        super().__init__(rel, zone, size, mtime, text=text, truncated=truncated, sig=sig, cache=cache)

    @property
    def text(self) -> str | None:
        if not self._loaded:
            self._load()
        return cast("str | None", _TEXT.__get__(self))

    @text.setter
    def text(self, value: str | None) -> None:
        _TEXT.__set__(self, value)

    @property
    def readable(self) -> bool:
        return self._had_text if not self._loaded else _TEXT.__get__(self) is not None

    @property
    def loaded(self) -> bool:
        return self._loaded

    def position_lines(self) -> Sequence[str]:
        shapes = self.cache.get(LINE_SHAPES)
        if self._loaded or not isinstance(shapes, tuple):
            return super().position_lines()
        return _ShapedLines(self, *shapes)

    def _load(self) -> None:
        self._loaded = True
        fresh: FileEntry | None
        try:
            st = os.lstat(self._root / self.rel)
            fresh = None if stat.S_ISLNK(st.st_mode) else _read_entry(self._root, self.rel, self.zone, st, follow=False)
        except (OSError, _BecameLink) as exc:
            fresh = FileEntry(self.rel, self.zone, 0, None, error=_reason(exc) if isinstance(exc, OSError) else None)
        if fresh is not None and fresh.sig == self.sig and fresh.text is not None:
            _TEXT.__set__(self, fresh.text)
            return
        # Not the recorded file any more: take what is there, and nothing the record said.
        self.stale = True
        self.cache.clear()
        self._doc = None
        if fresh is None:
            self.error = "vanished since it was listed"
            return
        _TEXT.__set__(self, fresh.text)
        self.error, self.truncated, self.size, self.mtime, self.sig = (
            fresh.error, fresh.truncated, fresh.size, fresh.mtime, fresh.sig)


LINE_SHAPES = "line-shapes"  # the entry cache's key of (line count, {line: shape}), `line_shape`


def line_shape(line: str) -> str:
    """A line with each character replaced by one that takes as many UTF-8 bytes and UTF-16
    units: enough to count any prefix in a client's units, and nothing of what it says (a
    finding's line may hold a secret)."""
    if line.isascii():
        return "a" * len(line)
    return "".join("a" if c < "\x80" else "\u00e9" if c < "\u0800" else "\u4e2d" if c < "\U00010000" else "\U0001f600"
                   for c in line)


class _ShapedLines(Sequence[str]):
    """The lines of a restored entry for positions: the shapes of the lines its findings are
    on (kept in its record), and the real line, read from disk, for any other."""

    def __init__(self, entry: FileEntry, count: int, shapes: dict[int, str]) -> None:
        self.entry, self.n, self.shapes = entry, count, shapes

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...

    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, int):
            shape = self.shapes.get(i if i >= 0 else i + self.n)
            if shape is not None:
                return shape
        index = self.entry.line_index
        return (index.lines if index is not None else [])[i]


class FileTable(dict[str, FileEntry]):
    """`rel → FileEntry`, with the set of paths in each zone kept alongside, so rules that
    look at one zone (`_core/` sizes, "is there any active file") do not walk every file."""

    def __init__(self) -> None:
        super().__init__()
        self.by_zone: dict[Zone, set[str]] = {zone: set() for zone in Zone}
        # File name → paths, made at the first `named` (a stale link's "did it move?", most
        # roots never ask) and kept up to date from then on.
        self._by_name: dict[str, set[str]] | None = None

    def __setitem__(self, rel: str, entry: FileEntry) -> None:
        old = super().get(rel)
        if old is not None:
            self.by_zone[old.zone].discard(rel)
        super().__setitem__(rel, entry)
        self.by_zone[entry.zone].add(rel)
        if self._by_name is not None:
            self._by_name.setdefault(rel.rpartition("/")[2], set()).add(rel)

    def __delitem__(self, rel: str) -> None:
        self.by_zone[super().__getitem__(rel).zone].discard(rel)
        super().__delitem__(rel)
        self._forget_name(rel)

    def _forget_name(self, rel: str) -> None:
        if self._by_name is not None:
            same = self._by_name.get(rel.rpartition("/")[2])
            if same is not None:
                same.discard(rel)

    def named(self, name: str) -> set[str]:
        """The paths of the files called `name` (a file name, no folder), in any zone."""
        if self._by_name is None:
            self._by_name = {}
            for rel in self:
                self._by_name.setdefault(rel.rpartition("/")[2], set()).add(rel)
        return self._by_name.get(name, set())

    @overload
    def pop(self, rel: str, /) -> FileEntry: ...
    @overload
    def pop(self, rel: str, default: FileEntry, /) -> FileEntry: ...
    @overload
    def pop(self, rel: str, default: _T, /) -> FileEntry | _T: ...

    def pop(self, rel: str, /, *default: Any) -> Any:
        if rel in self:
            entry = super().pop(rel)
            self.by_zone[entry.zone].discard(rel)
            self._forget_name(rel)
            return entry
        return default[0] if default else super().pop(rel)


def _same(a: FileEntry | None, b: FileEntry | None) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, RestoredEntry) or isinstance(b, RestoredEntry):
        # Its text is not read to compare: the same file on disk is the same text.
        stale = (isinstance(a, RestoredEntry) and a.stale) or (isinstance(b, RestoredEntry) and b.stale)
        return not stale and a.sig is not None and a.sig == b.sig and a.from_buffer == b.from_buffer
    return ((a.text, a.size, a.error, a.truncated, a.from_buffer)
            == (b.text, b.size, b.error, b.truncated, b.from_buffer))


class RootState:
    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.files: FileTable = FileTable()
        self.dirs: set[str] = {""}
        self.excluded: set[str] = set()  # exist, but are never read
        self.scan_errors: list[tuple[str, str]] = []  # (rel, reason) for folders we could not list
        # Symbolic links to folders are not followed (no loops, no escaping the root); what
        # lies behind them is unknown, never missing.
        self.linked_dirs: set[str] = set()
        # pmem's own hidden temporary files a killed write left (PM007); never read.
        self.leftovers: set[str] = set()
        self._restore: Callable[[str, Zone, os.stat_result], FileEntry | None] | None = None

    # -- building -----------------------------------------------------------
    @classmethod
    def scan(cls, root: Path, settings: Settings, read: Callable[[str], bool] | None = None,
             restore: Callable[[str, Zone, os.stat_result], FileEntry | None] | None = None) -> RootState:
        """`read`: when given, only the files it accepts are read; the others are known to be
        there, as excluded files are (the hooks' narrow check of one write, engine/hooks.py).
        `restore`: an entry from the per-file records for a file whose `lstat` matches the
        record (`records.Records.restore`), else None and the file is read."""
        state = cls(root, settings)
        state._restore = restore
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                with os.scandir(root / rel_dir if rel_dir else root) as it:
                    entries = list(it)
            except OSError as exc:
                state.scan_errors.append((rel_dir or ".", _reason(exc)))
                continue
            for de in entries:
                rel = f"{rel_dir}/{de.name}" if rel_dir else de.name
                if de.name.startswith("."):
                    if de.name.endswith(".pmem-tmp"):
                        state.leftovers.add(rel)  # named only (PM007), never read
                    continue  # hidden: never read, never touched
                try:
                    if de.is_dir(follow_symlinks=False):
                        state.dirs.add(rel)
                        if not settings.excluded(rel):
                            stack.append(rel)
                        continue
                    if settings.excluded(rel) or (read is not None and not read(rel)):
                        state.excluded.add(rel)
                        continue
                    is_link = de.is_symlink()
                    # A Markdown file the listing calls regular is read without its `lstat` when
                    # no record may stand for it (`_read_entry`: the open file's `fstat`).
                    regular = (not is_link and state._restore is None and is_markdown(rel)
                               and de.is_file(follow_symlinks=False))
                    st = None if is_link or regular else de.stat(follow_symlinks=False)
                except (FileNotFoundError, NotADirectoryError):
                    continue  # gone since it was listed
                except OSError as exc:
                    state.files[rel] = FileEntry(rel, zone_of(rel), 0, None, error=_reason(exc))
                    continue
                state._add_file(rel, is_link, st, regular)
        state._restore = None  # later changes (refresh, buffers) always read
        return state

    def _add_file(self, rel: str, is_link: bool, st: os.stat_result | None = None, regular: bool = False) -> None:
        """Record `rel`, which is no folder (nor hidden, nor excluded): read it, or keep why it
        cannot be read. A link to a folder is not followed; a link out of the root is not read.
        A path that vanished since it was listed is left out: it is gone, not unreadable.
        `regular`: a Markdown file the listing calls regular, read without a stat (`_read_entry`)
        while no record may stand for it."""
        zone = zone_of(rel)
        for _attempt in range(2):
            if is_link or (st is None and not regular):
                path = self.root / rel  # (only here: a Path join per file is 10% of a warm scan)
                try:
                    st = os.stat(path)
                except (FileNotFoundError, NotADirectoryError):
                    if is_link and os.path.islink(path):
                        self.files[rel] = FileEntry(rel, zone, 0, None, error="broken symbolic link")
                    return
                except OSError as exc:
                    self.files[rel] = FileEntry(rel, zone, 0, None, error=_reason(exc))
                    return
            if not is_link and st is not None and self._restore is not None:
                restored = self._restore(rel, zone, st)
                if restored is not None:
                    self.files[rel] = restored
                    return
            if is_link and st is not None:
                if stat.S_ISDIR(st.st_mode):
                    self.linked_dirs.add(rel)
                    return
                if not self._inside(rel):
                    self.files[rel] = FileEntry(rel, zone, 0, None, error="symbolic link pointing outside the root")
                    return
            try:
                entry = _read_entry(self.root, rel, zone, st, follow=is_link)
            except _BecameLink:
                is_link, st = True, None  # judged again as the link it now is
                continue
            if entry is not None:
                self.files[rel] = entry
            return

    def _inside(self, rel: str) -> bool:
        return inside_root(self.root, rel)

    # -- one file at a time -------------------------------------------------
    def refresh(self, rel: str) -> set[str]:
        """Re-read one path from disk (it changed, appeared or vanished), a folder with all it
        holds. Returns the paths whose entry really changed (a touch changes nothing), and the
        path itself when a folder appeared or vanished there."""
        path = self.root / rel
        if zone_of(rel) is Zone.HIDDEN:
            return set()
        shape = (rel in self.dirs, rel in self.linked_dirs)
        if self._under_link(rel):  # not in the root, and never read through the link
            changed = self._drop_file(rel) | self._forget_folder(rel)
        elif os.path.isdir(path) and not os.path.islink(path):
            changed = self._drop_file(rel)  # a file replaced by a folder of its name
            self.linked_dirs.discard(rel)  # (a link to a folder replaced by a folder)
            changed |= self._refresh_folder(rel)
        else:
            was_folder = rel in self.dirs
            changed = self._refresh_file(rel)
            if was_folder:  # gone, or a file or a link now: what it held went with it
                changed |= self._forget_folder(rel)
        if (rel in self.dirs, rel in self.linked_dirs) != shape:
            changed.add(rel)  # a folder appeared or vanished here: a route to this path changed meaning
        return changed

    def _drop_file(self, rel: str) -> set[str]:
        """`rel`'s entry goes, unless it is an editor's buffer (the truth while it is open)."""
        old = self.files.get(rel)
        if old is None or old.from_buffer:
            return set()
        del self.files[rel]
        return {rel}

    def _refresh_file(self, rel: str) -> set[str]:
        old = self.files.get(rel)
        if old is not None and old.from_buffer:
            return set()  # the editor's buffer is the truth while the file is open
        self._reload(rel)
        return set() if _same(old, self.files.get(rel)) else {rel}

    def _refresh_folder(self, rel: str) -> set[str]:
        """A folder appeared, moved in or changed: read what it holds, forget what it lost."""
        changed: set[str] = set()
        self.dirs.add(rel)
        self._add_parents(rel)
        seen: set[str] = set()
        # Folders that cannot be listed now are unknown, never emptied (docs/design.md §7).
        prefix = rel + "/"
        self.scan_errors = [(d, r) for d, r in self.scan_errors if d != rel and not d.startswith(prefix)]

        def unlisted(exc: OSError) -> None:
            try:
                failed = Path(exc.filename).relative_to(self.root).as_posix()
            except (TypeError, ValueError):
                failed = rel
            self.scan_errors.append((failed, _reason(exc)))

        for dirpath, dirnames, filenames in walk(self.root / rel, onerror=unlisted):
            base = Path(dirpath).relative_to(self.root).as_posix()
            keep = []
            for d in dirnames:
                sub = f"{base}/{d}"
                if d.startswith("."):
                    continue
                if os.path.islink(self.root / sub):
                    self.linked_dirs.add(sub)
                    continue
                self.dirs.add(sub)
                if not self.settings.excluded(sub):
                    keep.append(d)
            dirnames[:] = keep
            for name in filenames:
                if not name.startswith("."):
                    seen.add(f"{base}/{name}")
                    changed |= self._refresh_file(f"{base}/{name}")
        for gone in [r for r in self.files if r.startswith(prefix) and r not in seen]:
            if not self.files[gone].from_buffer and not self.unseen(gone):
                self.files.pop(gone)
                changed.add(gone)
        return changed

    def _forget_folder(self, rel: str) -> set[str]:
        """A folder vanished (deleted, moved away, replaced by a file or a link): so did
        everything in it, its links to folders and its folders that could not be listed too."""
        prefix = rel + "/"
        gone = [r for r in self.files if r.startswith(prefix) and not self.files[r].from_buffer]
        for r in gone:
            self.files.pop(r)
        self.dirs -= {d for d in self.dirs if d == rel or d.startswith(prefix)}
        self.excluded -= {e for e in self.excluded if e.startswith(prefix)}
        self.linked_dirs -= {d for d in self.linked_dirs if d.startswith(prefix)}
        self.scan_errors = [(d, r) for d, r in self.scan_errors if not d.startswith(prefix)]
        return set(gone)

    def _under_link(self, rel: str) -> bool:
        """A folder of `rel`'s path is a symbolic link: the scan follows none to a folder, so
        nothing under it is in the root (a refresh must not read through it, out of the root
        perhaps). One `lstat` per folder of the path: asked of a path a watcher or an editor
        names (`refresh`, `drop_buffer`), not of each file of a folder `refresh` walks."""
        parent = rel.rpartition("/")[0]
        while parent:
            if parent in self.linked_dirs or os.path.islink(self.root / parent):
                return True
            parent = parent.rpartition("/")[0]
        return False

    def _reload(self, rel: str) -> None:
        path = self.root / rel
        self.files.pop(rel, None)
        self.excluded.discard(rel)
        self.linked_dirs.discard(rel)
        zone = zone_of(rel)
        if zone is Zone.HIDDEN:
            return
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):  # (a folder of the path is now a file)
            self.dirs.discard(rel)
            return
        except OSError as exc:
            self.files[rel] = FileEntry(rel, zone, 0, None, error=_reason(exc))
            return
        self._add_parents(rel)
        if stat.S_ISDIR(st.st_mode):
            self.dirs.add(rel)
            return
        if self.settings.excluded(rel):
            self.excluded.add(rel)
            return
        is_link = stat.S_ISLNK(st.st_mode)
        self._add_file(rel, is_link, None if is_link else st)

    def set_buffer(self, rel: str, text: str) -> set[str]:
        """The editor's unsaved text for `rel` replaces the disk's. Returns {rel} if it changed."""
        if zone_of(rel) is Zone.HIDDEN:
            return set()
        text, size, truncated = cap_text(text)
        old = self.files.get(rel)
        if old is not None and old.from_buffer and old.size == size and old.text == text:
            return set()  # nothing the analysis sees has changed (an edit past the cap)
        entry = FileEntry(rel, zone_of(rel), size, old.mtime if old else None,
                          text=text, truncated=truncated, from_buffer=True)
        self._add_parents(rel)
        self.files[rel] = entry
        return {rel}

    def drop_buffer(self, rel: str) -> set[str]:
        """The editor's buffer for `rel` no longer wins (closed, saved, or in sync with the
        disk): the disk is the truth again."""
        old = self.files.get(rel)
        if old is not None and not old.from_buffer:
            return set()  # the entry is the disk's already, kept current by `refresh`
        if self._under_link(rel):  # a buffer under a link to a folder: no disk of the root's there
            self.files.pop(rel, None)
            return set() if old is None else {rel}
        self._reload(rel)
        return set() if _same(old, self.files.get(rel)) else {rel}

    def _add_parents(self, rel: str) -> None:
        parent = rel.rpartition("/")[0]
        while parent and parent not in self.dirs:
            self.dirs.add(parent)
            parent = parent.rpartition("/")[0]

    # -- queries ------------------------------------------------------------
    def exists(self, rel: str) -> bool:
        """A file or folder is there (readable or not, excluded or not)."""
        return rel in self.files or rel in self.dirs or rel in self.excluded

    def is_file(self, rel: str) -> bool:
        return rel in self.files or rel in self.excluded

    def unseen(self, rel: str) -> bool:
        """The scan could not look at `rel`: excluded by the settings, or under a folder that
        could not be listed. Such a path is unknown, never missing (docs/design.md §7)."""
        if self.settings.excluded(rel):
            return True
        hidden_from_scan = [folder for folder, _reason in self.scan_errors] + list(self.linked_dirs)
        return any(folder == "." or rel == folder or rel.startswith(folder + "/") for folder in hidden_from_scan)

    def missing(self, rel: str) -> bool:
        """Known to be absent: not there, and not hidden from the scan."""
        return not self.exists(rel) and not self.unseen(rel)

    def missing_among(self, paths: Sequence[str]) -> list[int]:
        """The indexes of `paths` that are `missing`, in one pass (a file's link targets, most
        of which are there: `unseen`, the slow half of `missing`, is asked only of the others)."""
        exists = self.exists
        return [i for i, rel in enumerate(paths) if not exists(rel) and not self.unseen(rel)]

    def doc(self, rel: str) -> MemoryFile | None:
        entry = self.files.get(rel)
        return entry.doc if entry is not None else None

    def markdown_count(self) -> int:
        """Markdown files analysed: read (perhaps only up to the cap), not the unreadable ones."""
        return sum(1 for e in self.files.values() if e.markdown and e.readable)

    def read_problems(self, paths: Iterable[str] | None = None) -> list[ReadProblem]:
        """What could not be taken in whole, sorted by path: files and folders that could not
        be read, and files analysed only up to MAX_ANALYSED_BYTES. With `paths`, only those
        files (and every folder that could not be listed). The one list `pmem check` and the
        server report."""
        entries = self.files.values() if paths is None else [self.files[p] for p in paths if p in self.files]
        found = [ReadProblem(folder, reason) for folder, reason in self.scan_errors]
        for e in entries:
            if e.error:
                found.append(ReadProblem(e.rel, e.error))
            elif e.truncated:
                found.append(ReadProblem(e.rel, None, e.size))
        return sorted(found, key=lambda p: p.path)

