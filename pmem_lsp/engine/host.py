"""The analysis host: the memory roots a session knows, their snapshots and the open buffers.

Surfaces (the language server today) tell the host what changed — a buffer opened, edited
or closed, a file changed on disk, a scan finished — and ask it for findings. The host
knows nothing of the editor protocol; paths are absolute `Path`s in, root-relative strings out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import Analysis, apply_settings
from .findings import Finding
from .memory_file import MemoryFile
from .rules.summary import check_summary
from .settings import Settings
from .snapshot import RootSnapshot
from .zones import is_markdown, zone_of


@dataclass(eq=False)
class MemoryRoot:
    path: Path  # as the editor names it (absolute, not resolved)
    settings: Settings
    snapshot: RootSnapshot | None = None  # None until the first scan lands
    analysis: Analysis | None = None  # kept current with the snapshot
    # Paths changed in the snapshot and not analysed yet (analysis is debounced by the server).
    pending: set[str] = field(default_factory=set)
    # Paths whose findings changed since they were last published. Queries may bring the
    # analysis up to date; only the publisher takes these (`take_unpublished`).
    unpublished: set[str] = field(default_factory=set)
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
        self.buffers: dict[Path, str] = {}

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
        """An editor buffer for `path` now holds `text` (opened or edited)."""
        if not is_markdown(path.name):
            return None
        # Kept even before any root is known: a scan installed later applies it.
        self.buffers[path] = text
        found = self.locate(path)
        if found is None:
            return None
        root, rel = found
        if root.snapshot is not None:
            root.pending |= root.snapshot.set_buffer(rel, text)
        return root

    def close_buffer(self, path: Path) -> MemoryRoot | None:
        self.buffers.pop(path, None)
        found = self.locate(path)
        if found is None:
            return None
        root, rel = found
        if root.snapshot is not None:
            root.pending |= root.snapshot.drop_buffer(rel)
        return root

    def disk_changed(self, path: Path) -> MemoryRoot | None:
        """`path` changed on disk (created, edited, deleted, a folder moved…)."""
        found = self.locate(path)
        if found is None:
            return None
        root, rel = found
        if root.snapshot is not None:
            root.pending |= root.snapshot.refresh(rel)
        return root

    def install(self, root: MemoryRoot, snapshot: RootSnapshot, analysis: Analysis) -> set[str]:
        """A scan (and its first analysis) finished: open buffers win over what the scan read
        from disk. Returns every path that has findings, or had them before."""
        before = set(root.analysis.final) if root.analysis is not None else set()
        changed: set[str] = set()
        for path, text in self.buffers.items():
            rel = root.rel(path)
            if rel and is_markdown(rel):
                changed |= snapshot.set_buffer(rel, text)
        analysis.update(changed)
        root.snapshot, root.analysis, root.pending = snapshot, analysis, set()
        root.unpublished = before | set(analysis.final)
        return set(root.unpublished)

    def analyse(self, root: MemoryRoot, defer_duplicates: bool = False) -> None:
        """Bring the analysis up to date with the snapshot (the near-duplicate search may be
        left for `settle`). What changed is kept for the publisher."""
        if root.analysis is None or not root.pending:
            return
        pending, root.pending = root.pending, set()
        root.unpublished |= root.analysis.update(pending, defer_duplicates=defer_duplicates)

    def settle(self, root: MemoryRoot) -> None:
        """Finish what `analyse` left for later (the near-duplicate search)."""
        self.analyse(root)
        if root.analysis is not None:
            root.unpublished |= root.analysis.settle()

    def take_unpublished(self, root: MemoryRoot) -> set[str]:
        """The paths whose findings changed since the last call: for the publisher only."""
        paths, root.unpublished = root.unpublished, set()
        return paths

    # -- results ------------------------------------------------------------
    def findings(self, root: MemoryRoot) -> dict[str, list[Finding]]:
        """The current findings, by path. A query: it may bring the analysis up to date, and
        never changes what is due to be published."""
        if root.analysis is None:
            return {}
        self.analyse(root)
        return root.analysis.by_path()

    def early_findings(self, path: Path) -> list[Finding]:
        """Before the root is scanned: what one open buffer shows on its own (its summary)."""
        found = self.locate(path)
        text = self.buffers.get(path)
        if found is None or text is None:
            return []
        root, rel = found
        return apply_settings(check_summary(rel, zone_of(rel), MemoryFile(text)), root.settings)
