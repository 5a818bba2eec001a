"""The analysis host: the memory roots a session knows, their states and the open buffers.

Surfaces (the language server today) tell the host what changed — a buffer opened, edited,
saved or closed, a file changed on disk, a scan finished — and ask it for findings. The host
knows nothing of the editor protocol; paths are absolute `Path`s in, root-relative strings out.

Changes and queries are apart: the methods under "changes" (and the explicit steps `analyse`,
`settle`, `sync_buffer`) change state; `locate`, `unsaved`, `stale_buffers`, `findings` and
`early_findings` only read, and asked twice answer the same. When the analysis catches up
with the changes, and what is published, is the surface's business (the server's publisher).

The disk is the truth (docs/design.md §5.1): an editor's buffer wins over the disk only while it holds
the user's unsaved edits. A buffer whose text is what was last read from disk is not an edit:
when the disk changes under it (an agent wrote), the analysis and every plan use the disk, and
the buffer is stale until the editor reloads it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import Analysis
from .findings import Finding
from .first_findings import buffer_findings
from .line_index import strip_bom
from .root_state import RootState
from .root_state import read_regular_text as read_disk_text
from .settings import Settings
from .zones import is_markdown


@dataclass(slots=True)
class Buffer:
    """An editor's open document, and how it stands to the disk."""

    text: str
    disk: str | None  # what the file held on disk when last read (None: no file)
    # The disk text the buffer was last in sync with (opened unchanged, reloaded, saved);
    # None: never (opened with other text than the disk's: unsaved edits from before).
    base: str | None
    # The editor's text began with a BOM, which `text` lacks (`strip_bom`): the client counts
    # line 0 one character further than the engine does.
    bom: bool = False

    @property
    def modified(self) -> bool:
        """Holds the user's unsaved edits: then, and only then, it wins over the disk."""
        return self.base is None or self.text != self.base

    @property
    def stale(self) -> bool:
        """Unmodified, and the disk changed under it: the editor should reload it."""
        return not self.modified and self.disk != self.text

    def disk_read(self, disk: str | None) -> None:
        self.disk = disk
        if disk is not None and self.text == disk:
            self.base = disk  # in sync again: reloaded, or saved

    @classmethod
    def opened(cls, text: str, disk: str | None, bom: bool = False) -> Buffer:
        # An empty buffer of a file that does not exist is no file yet (`:edit new.md`; Neovim
        # sends its one empty line as "\n").
        in_sync = text == disk or (disk is None and not text.strip())
        return cls(text, disk, text if in_sync else None, bom)


@dataclass(eq=False)
class MemoryRoot:
    path: Path  # as the editor names it (absolute, not resolved)
    settings: Settings
    state: RootState | None = None  # None until the first scan lands
    analysis: Analysis | None = None  # kept current with the root state
    # Paths changed in the root state and not analysed yet: the analysis is behind the state
    # there until `analyse` (the server's publisher decides when: it debounces typing).
    pending: set[str] = field(default_factory=set)
    # Written by `install` only, whose answer (the same set) is what the publisher publishes;
    # nothing reads it (what is due to be published is the publisher's, server/publisher.py).
    unpublished: set[str] = field(default_factory=set)
    # While a scan runs: the paths that changed on disk meanwhile. The scan may have read them
    # before the change, so the state it makes refreshes them when it is installed.
    changed_while_scanning: set[str] | None = None
    resolved: Path = field(init=False)

    def __post_init__(self) -> None:
        self.resolved = Path(os.path.realpath(self.path))

    def rel(self, path: Path) -> str | None:
        """`path` relative to this root (POSIX), or None when it is outside."""
        for base in (self.path, self.resolved):
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            return "" if rel == "." else rel
        return None


class MemoryHost:
    def __init__(self) -> None:
        self.roots: list[MemoryRoot] = []
        self.buffers: dict[Path, Buffer] = {}

    def add_root(self, path: Path, settings: Settings) -> MemoryRoot:
        for root in self.roots:
            if root.path == path:
                root.settings = settings
                return root
        root = MemoryRoot(path, settings)
        self.roots.append(root)
        return root

    def remove_root(self, path: Path) -> MemoryRoot | None:
        for root in self.roots:
            if root.path == path:
                self.roots.remove(root)
                return root
        return None

    def locate(self, path: Path) -> tuple[MemoryRoot, str] | None:
        """The innermost root holding `path`, and the path relative to it."""
        best: tuple[MemoryRoot, str] | None = None
        for root in self.roots:
            rel = root.rel(path)
            if rel is None or not rel:
                continue
            if best is None or len(rel) < len(best[1]):
                best = (root, rel)
        return best

    # -- changes ------------------------------------------------------------
    def open_buffer(self, path: Path, text: str) -> MemoryRoot | None:
        """An editor opened `path` with `text`."""
        if not is_markdown(path.name):
            return None
        return self.opened_with_disk(path, text, read_disk_text(path))

    def opened_with_disk(self, path: Path, text: str, disk: str | None) -> MemoryRoot | None:
        """`open_buffer`, with the file's text on disk as the surface read it when the editor's
        message came (the server's early path), not as it is now."""
        if not is_markdown(path.name):
            return None
        text, bom = strip_bom(text)  # analysed as the disk is (`root_state.decode`)
        self.buffers[path] = Buffer.opened(text, disk, bom)
        return self._apply_buffer(path)

    def change_buffer(self, path: Path, text: str) -> MemoryRoot | None:
        """The editor's buffer for `path` now holds `text` (an edit, or a reload from disk)."""
        buffer = self.buffers.get(path)
        if buffer is None:
            return self.open_buffer(path, text)
        text, buffer.bom = strip_bom(text)
        buffer.text = text
        if buffer.disk is not None and text == buffer.disk:
            buffer.base = text  # back in sync with the disk
        return self._apply_buffer(path)

    def saved_buffer(self, path: Path) -> MemoryRoot | None:
        """The editor wrote the buffer to disk: what it holds is the disk's text now."""
        buffer = self.buffers.get(path)
        if buffer is None:
            return None
        buffer.disk_read(read_disk_text(path))
        if buffer.disk is None:  # not written after all (a failed save)
            buffer.base = None
        return self._apply_buffer(path)

    def close_buffer(self, path: Path) -> MemoryRoot | None:
        self.buffers.pop(path, None)
        found = self.locate(path)
        if found is None:
            return None
        root, rel = found
        if root.state is not None:
            root.pending |= root.state.drop_buffer(rel)
        return root

    def disk_changed(self, path: Path) -> MemoryRoot | None:
        """`path` changed on disk (created, edited, deleted, a folder moved…)."""
        buffer = self.buffers.get(path)
        if buffer is not None:
            buffer.disk_read(read_disk_text(path))
        found = self.locate(path)
        if found is None:
            return None
        root, rel = found
        if root.changed_while_scanning is not None:
            root.changed_while_scanning.add(rel)
        if root.state is not None:
            if buffer is not None:
                self._apply_buffer(path)
            root.pending |= root.state.refresh(rel)
        return root

    def _apply_buffer(self, path: Path) -> MemoryRoot | None:
        """Give the root state the buffer's text while it holds unsaved edits, else the disk's.
        Kept even before any root is known: a scan installed later applies it."""
        found = self.locate(path)
        if found is None:
            return None
        root, rel = found
        if root.state is not None:
            buffer = self.buffers[path]
            if buffer.modified:
                root.pending |= root.state.set_buffer(rel, buffer.text)
            else:
                root.pending |= root.state.drop_buffer(rel)
        return root

    # -- what the disk and the editor hold -----------------------------------------------
    def sync_buffer(self, path: Path) -> MemoryRoot | None:
        """Read the disk under the open buffer of `path` again when it holds unsaved edits: a
        buffer the editor just reloaded (or saved) may be ahead of the watcher's news of the
        change. A step, for whoever is about to ask `unsaved`; the root state follows."""
        buffer = self.buffers.get(path)
        if buffer is None or not buffer.modified:
            return None
        buffer.disk_read(read_disk_text(path))
        return self._apply_buffer(path)

    def unsaved(self, path: Path) -> bool:
        """The editor holds unsaved edits of `path`, as the host last heard (`sync_buffer`
        first for the disk of this moment). A query: it reads nothing and changes nothing."""
        buffer = self.buffers.get(path)
        return buffer is not None and buffer.modified

    def client_bom(self, path: Path) -> bool:
        """The editor's buffer of `path` begins with a BOM the engine's text lacks: positions on
        its line 0 are shifted by it (`line_index.client_column`). A query."""
        buffer = self.buffers.get(path)
        if buffer is not None:
            return buffer.bom
        if not any(b.bom for b in self.buffers.values()):
            return False
        real = os.path.realpath(path)  # the editor may name the file through another path
        return any(b.bom and os.path.realpath(p) == real for p, b in self.buffers.items())

    def stale_buffers(self, root: MemoryRoot) -> list[Path]:
        """Open documents of `root` that are unmodified and older than the disk."""
        return [p for p, b in self.buffers.items() if b.stale and root.rel(p)]

    def scan_started(self, root: MemoryRoot) -> None:
        """A scan of `root` begins (the watcher runs already): remember what changes meanwhile."""
        root.changed_while_scanning = set()

    def install(self, root: MemoryRoot, state: RootState, analysis: Analysis) -> set[str]:
        """A scan (and its first analysis) finished: what changed on disk while it ran is read
        again, and open buffers with unsaved edits win over what the scan read from disk.
        Returns every path that has findings, or had them before."""
        before = set(root.analysis.final) if root.analysis is not None else set()
        changed: set[str] = set()
        for changed_rel in sorted(root.changed_while_scanning or ()):
            changed |= state.refresh(changed_rel)
        root.changed_while_scanning = None
        for path, buffer in self.buffers.items():
            rel = root.rel(path)
            if rel and is_markdown(rel) and buffer.modified:
                changed |= state.set_buffer(rel, buffer.text)
        analysis.update(changed)
        root.state, root.analysis, root.pending = state, analysis, set()
        root.unpublished = before | set(analysis.final)
        return set(root.unpublished)

    def analyse(self, root: MemoryRoot, defer_duplicates: bool = False) -> set[str]:
        """A step: bring the analysis up to date with the root state (the near-duplicate search
        may be left for `settle`). Returns the paths whose findings changed."""
        if root.analysis is None or not root.pending:
            return set()
        pending, root.pending = root.pending, set()
        return root.analysis.update(pending, defer_duplicates=defer_duplicates)

    def settle(self, root: MemoryRoot) -> set[str]:
        """A step: `analyse`, and finish what it left for later (the near-duplicate search).
        Returns the paths whose findings changed."""
        changed = self.analyse(root)
        if root.analysis is not None:
            changed |= root.analysis.settle()
        return changed

    # -- results ------------------------------------------------------------
    def findings(self, root: MemoryRoot) -> dict[str, list[Finding]]:
        """The findings as last analysed, by path (`pending` says where the analysis is behind
        the state; `analyse` catches up). A query: it changes nothing."""
        if root.analysis is None:
            return {}
        return root.analysis.by_path()

    def early_findings(self, path: Path) -> list[Finding]:
        """Before the root is scanned: what one open buffer shows on its own (its summary)."""
        found = self.locate(path)
        buffer = self.buffers.get(path)
        if found is None or buffer is None:
            return []
        root, rel = found
        return buffer_findings(rel, buffer.text, root.settings)


def scan(path: Path, settings: Settings, use_records: bool = True) -> tuple[RootState, Analysis]:
    """A root's scan and first analysis (the server runs it in a worker thread, then `install`s
    the result). Files whose `lstat` matches their per-file record come back from it unread
    (`entry_cache.py`: a warm start reads no unchanged file), and what this analysis learnt is
    recorded for the next start, with the shapes of its findings' lines so that they are
    published without reading the files. `use_records` False, or `PMEM_NO_CACHE=1`: read all."""
    from .entry_cache import Records
    from .user_cache import disabled_by_env

    records = None
    if use_records and not disabled_by_env():
        try:
            records = Records(path, settings)
        except OSError:
            records = None  # the package's files cannot be listed: no key, no records
    state = RootState.scan(path, settings, restore=records.restorer() if records is not None else None)
    analysis = Analysis(state)
    if records is not None:
        records.store(state, analysis.final)
    return state, analysis
