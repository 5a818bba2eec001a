"""The state of one memory root: which files exist, their text, and their parsed form.

Built by one scan, then kept current one file at a time (`refresh` from disk, `set_buffer`
from an editor). A file that cannot be read stays in the snapshot with its error: unreadable
is never the same as missing.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .memory_file import MemoryFile
from .settings import Settings
from .zones import Zone, is_markdown, zone_of

# A huge file is analysed up to this many bytes, so one 50 MB paste cannot stall a check.
MAX_ANALYSED_BYTES = 2 * 1024 * 1024


@dataclass(slots=True)
class FileEntry:
    rel: str
    zone: Zone
    size: int
    mtime: float
    text: str | None = None  # Markdown files only, None when unreadable
    error: str | None = None  # why the file could not be read
    truncated: bool = False
    from_buffer: bool = False  # text comes from an editor buffer, not the disk
    _doc: MemoryFile | None = field(default=None, repr=False)
    # Results that depend on this file's text alone, kept until the text changes (the
    # entry is replaced on every change, so nothing here can go stale).
    cache: dict[str, object] = field(default_factory=dict, repr=False)

    @property
    def markdown(self) -> bool:
        return is_markdown(self.rel)

    @property
    def doc(self) -> MemoryFile | None:
        """The parsed file, built on first use and kept until the text changes."""
        if self._doc is None and self.text is not None:
            self._doc = MemoryFile(self.text)
        return self._doc


def decode(data: bytes) -> str:
    """UTF-8 with or without BOM; invalid bytes become U+FFFD rather than an error."""
    return data.decode("utf-8-sig", errors="replace").replace("\x00", "\ufffd")


def _read_entry(root: Path, rel: str, zone: Zone, st: os.stat_result) -> FileEntry:
    entry = FileEntry(rel, zone, st.st_size, st.st_mtime)
    if not is_markdown(rel):
        return entry
    try:
        with open(root / rel, "rb") as fh:
            data = fh.read(MAX_ANALYSED_BYTES + 1)
    except OSError as exc:
        entry.error = exc.strerror or type(exc).__name__
        return entry
    if len(data) > MAX_ANALYSED_BYTES:
        data = data[:MAX_ANALYSED_BYTES]
        entry.truncated = True
    entry.text = decode(data)
    return entry


class FileTable(dict):
    """`rel → FileEntry`, with the set of paths in each zone kept alongside, so rules that
    look at one zone (`_core/` sizes, "is there any active file") do not walk every file."""

    def __init__(self) -> None:
        super().__init__()
        self.by_zone: dict[Zone, set[str]] = {zone: set() for zone in Zone}

    def __setitem__(self, rel: str, entry: FileEntry) -> None:
        old = super().get(rel)
        if old is not None:
            self.by_zone[old.zone].discard(rel)
        super().__setitem__(rel, entry)
        self.by_zone[entry.zone].add(rel)

    def __delitem__(self, rel: str) -> None:
        self.by_zone[super().__getitem__(rel).zone].discard(rel)
        super().__delitem__(rel)

    def pop(self, rel: str, *default):  # type: ignore[override]
        if rel in self:
            entry = super().pop(rel)
            self.by_zone[entry.zone].discard(rel)
            return entry
        return default[0] if default else super().pop(rel)


def _same(a: FileEntry | None, b: FileEntry | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.text, a.size, a.error, a.truncated, a.from_buffer) == (b.text, b.size, b.error, b.truncated, b.from_buffer)


class RootSnapshot:
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

    # -- building -----------------------------------------------------------
    @classmethod
    def scan(cls, root: Path, settings: Settings) -> RootSnapshot:
        snap = cls(root, settings)
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                with os.scandir(root / rel_dir if rel_dir else root) as it:
                    entries = list(it)
            except OSError as exc:
                snap.scan_errors.append((rel_dir or ".", exc.strerror or type(exc).__name__))
                continue
            for de in entries:
                if de.name.startswith("."):
                    continue  # hidden: never read, never touched
                rel = f"{rel_dir}/{de.name}" if rel_dir else de.name
                try:
                    if de.is_dir(follow_symlinks=False):
                        snap.dirs.add(rel)
                        if not settings.excluded(rel):
                            stack.append(rel)
                        continue
                    if settings.excluded(rel):
                        snap.excluded.add(rel)
                        continue
                    if de.is_symlink():
                        try:
                            st = os.stat(root / rel)
                        except FileNotFoundError:
                            snap.files[rel] = FileEntry(rel, zone_of(rel), 0, 0.0, error="broken symbolic link")
                            continue
                        if stat.S_ISDIR(st.st_mode):
                            snap.linked_dirs.add(rel)
                            continue
                        if not snap._inside(rel):
                            snap.files[rel] = FileEntry(rel, zone_of(rel), 0, 0.0,
                                                        error="symbolic link pointing outside the root")
                            continue
                    else:
                        st = de.stat()
                except OSError as exc:
                    snap.files[rel] = FileEntry(rel, zone_of(rel), 0, 0.0, error=exc.strerror or type(exc).__name__)
                    continue
                if not _is_regular(st):
                    continue
                snap.files[rel] = _read_entry(root, rel, zone_of(rel), st)
        return snap

    def _inside(self, rel: str) -> bool:
        real_root = os.path.realpath(self.root)
        target = os.path.realpath(self.root / rel)
        return target == real_root or target.startswith(real_root + os.sep)

    # -- one file at a time -------------------------------------------------
    def refresh(self, rel: str) -> set[str]:
        """Re-read one path from disk (it changed, appeared or vanished), a folder with all it
        holds. Returns the file paths whose entry really changed (a touch changes nothing)."""
        path = self.root / rel
        if zone_of(rel) is Zone.HIDDEN:
            return set()
        if os.path.isdir(path) and not os.path.islink(path):
            return self._refresh_folder(rel)
        was_folder = rel in self.dirs
        changed = self._refresh_file(rel)
        if was_folder and not os.path.lexists(path):
            changed |= self._forget_folder(rel)
        return changed

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
        for dirpath, dirnames, filenames in os.walk(self.root / rel):
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
        for gone in [r for r in self.files if r.startswith(rel + "/") and r not in seen]:
            if not self.files[gone].from_buffer:
                self.files.pop(gone)
                changed.add(gone)
        return changed

    def _forget_folder(self, rel: str) -> set[str]:
        """A folder vanished (deleted or moved away): so did everything in it."""
        prefix = rel + "/"
        gone = [r for r in self.files if r.startswith(prefix) and not self.files[r].from_buffer]
        for r in gone:
            self.files.pop(r)
        self.dirs -= {d for d in self.dirs if d == rel or d.startswith(prefix)}
        self.excluded -= {e for e in self.excluded if e.startswith(prefix)}
        return set(gone)

    def _reload(self, rel: str) -> None:
        path = self.root / rel
        self.files.pop(rel, None)
        self.excluded.discard(rel)
        zone = zone_of(rel)
        if zone is Zone.HIDDEN:
            return
        try:
            st = path.stat()
        except FileNotFoundError:
            if not path.is_symlink():
                self.dirs.discard(rel)
                return
            self.files[rel] = FileEntry(rel, zone, 0, 0.0, error="broken symbolic link")
            return
        except OSError as exc:
            self.files[rel] = FileEntry(rel, zone, 0, 0.0, error=exc.strerror or type(exc).__name__)
            return
        self._add_parents(rel)
        if os.path.isdir(path):
            self.dirs.add(rel)
            return
        if self.settings.excluded(rel):
            self.excluded.add(rel)
            return
        if _is_regular(st):
            self.files[rel] = _read_entry(self.root, rel, zone, st)

    def set_buffer(self, rel: str, text: str) -> set[str]:
        """The editor's unsaved text for `rel` replaces the disk's. Returns {rel} if it changed."""
        if zone_of(rel) is Zone.HIDDEN:
            return set()
        old = self.files.get(rel)
        if old is not None and old.from_buffer and old.text == text:
            return set()
        entry = FileEntry(rel, zone_of(rel), len(text.encode("utf-8")), old.mtime if old else 0.0,
                          text=text, from_buffer=True)
        self._add_parents(rel)
        self.files[rel] = entry
        return {rel}

    def drop_buffer(self, rel: str) -> set[str]:
        """The editor closed `rel`: the disk is the truth again."""
        old = self.files.get(rel)
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
        could not be listed. Such a path is unknown, never missing (DESIGN §7)."""
        if self.settings.excluded(rel):
            return True
        hidden_from_scan = [folder for folder, _reason in self.scan_errors] + list(self.linked_dirs)
        return any(folder == "." or rel == folder or rel.startswith(folder + "/") for folder in hidden_from_scan)

    def missing(self, rel: str) -> bool:
        """Known to be absent: not there, and not hidden from the scan."""
        return not self.exists(rel) and not self.unseen(rel)

    def doc(self, rel: str) -> MemoryFile | None:
        entry = self.files.get(rel)
        return entry.doc if entry is not None else None

    def markdown_count(self) -> int:
        """Markdown files analysed: read (perhaps only up to the cap), not the unreadable ones."""
        return sum(1 for e in self.files.values() if e.markdown and e.text is not None)

    def unreadable(self) -> list[tuple[str, str]]:
        found = [(e.rel, e.error) for e in self.files.values() if e.error]
        return sorted(found + self.scan_errors)  # type: ignore[arg-type]


def _is_regular(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode)
