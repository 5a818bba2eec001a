"""Push diagnostics: publish every file whose findings changed, and clear the ones that healed.

Push, not pull: Neovim cannot be asked to re-pull, and a change in one file (the index)
changes diagnostics in others (docs/design.md §8), so the server decides what to send.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from lsprotocol import types as lsp

from ..engine.findings import Finding
from ..engine.host import MemoryRoot
from ..engine.line_index import LineIndex
from .convert import Positions, analysed_version, path_to_uri, positions, to_diagnostic

if TYPE_CHECKING:
    from .app import PmemServer


def publish_findings(server: PmemServer, root: MemoryRoot, grouped: dict[str, list[Finding]],
                     only: set[str] | None = None, force: bool = False, index: LineIndex | None = None) -> None:
    """Send what changed since the last publication for this root.

    `only` limits publication to those paths (early findings before the scan lands); `index`:
    the lines the findings were made from when the root state does not hold them yet.
    """
    published = server.published.setdefault(root.path, {})
    paths = set(grouped) | set(published) if only is None else only
    for rel in sorted(paths):
        findings = _in_scope(server, root, rel, tuple(grouped.get(rel, ())))
        if published.get(rel, ()) == findings and not force:
            continue
        at = positions(server, root.state, rel) if index is None else Positions(server, index)
        uri = path_to_uri(root.path / rel)
        server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, diagnostics=[to_diagnostic(at, f) for f in findings],
            version=analysed_version(server, root.state, rel, uri)))
        if findings:
            published[rel] = findings
        else:
            published.pop(rel, None)


# `diagnostics.scope = "changes"` (an agent's client, issue 25): per root, the findings each
# file had when the server first analysed it, and the files this client opened or changed.
_baseline: WeakKeyDictionary[MemoryRoot, dict[str, Counter[tuple[str, str]]]] = WeakKeyDictionary()
_touched: WeakKeyDictionary[MemoryRoot, set[str]] = WeakKeyDictionary()


def record_baseline(root: MemoryRoot) -> None:
    """The root's findings as first analysed: old problems, not news to an agent's client."""
    if root in _baseline or root.analysis is None:
        return
    _baseline[root] = {rel: Counter((f.code, f.message) for f in found)
                       for rel, found in root.analysis.final.items() if found}


def _in_scope(server: PmemServer, root: MemoryRoot, rel: str, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Everything, for an editor; for an agent's client (`changes`) all of a file it opened or
    changed, and elsewhere only what was not there when the server first analysed the root."""
    if root.settings.diagnostics.scope != "changes":
        return findings
    touched = _touched.setdefault(root, set())
    if rel not in touched and (root.path / rel in server.host.buffers or root.resolved / rel in server.host.buffers):
        touched.add(rel)
    if rel in touched:
        return findings
    base = _baseline.get(root)
    if base is None:
        return ()  # before the first analysis lands every finding is an old one
    left = Counter(base.get(rel, Counter()))
    out = []
    for f in findings:
        key = (f.code, f.message)
        if left[key] > 0:
            left[key] -= 1
        else:
            out.append(f)
    return tuple(out)


def publish_paths(server: PmemServer, root: MemoryRoot, paths: set[str]) -> None:
    """Publish the current findings of `paths` (those whose findings may have changed)."""
    if root.analysis is None or not paths:
        return
    final = root.analysis.final
    publish_findings(server, root, {rel: final.get(rel, []) for rel in paths}, only=paths)


def refresh_root(server: PmemServer, root: MemoryRoot, keystroke: bool = False, settle: bool = False) -> None:
    """Analyse what changed in a scanned root and publish the differences — work bounded by
    the change, not by the root (engine/analysis.py). The one place that publishes what the
    analysis changed. `keystroke`: leave the near-duplicate search for later; `settle`: do it."""
    changed = set(root.pending)
    if settle:
        server.host.settle(root)
    else:
        server.host.analyse(root, defer_duplicates=keystroke)
    publish_paths(server, root, server.host.take_unpublished(root))
    if changed:
        log_read_problems(server, root, changed)


def publish_early(server: PmemServer, path: Path) -> None:
    """Before the scan lands, show what the open buffer reveals on its own."""
    found = server.host.locate(path)
    if found is None:
        return
    root, rel = found
    # Sent even when empty: the editor learns at once that the file was checked. Positions in
    # the client's units, counted in the buffer's lines (the root state has none yet).
    buffer = server.host.buffers.get(path)
    index = LineIndex(buffer.text) if buffer is not None else None
    publish_findings(server, root, {rel: server.host.early_findings(path)}, only={rel}, force=True, index=index)


# Per root: the read problem last logged for each path ("" for a file capped at the size
# limit, else the reason it cannot be read). Weak, so a dropped root takes its state along.
_logged: WeakKeyDictionary[MemoryRoot, dict[str, str]] = WeakKeyDictionary()


def log_read_problems(server: PmemServer, root: MemoryRoot, paths: Iterable[str] | None = None) -> None:
    """Log (window/logMessage) each file or folder that cannot be read, or is analysed only up
    to the cap, naming it and the reason — once per change of its state, not on every
    keystroke. `paths`: the files that changed (None after a scan: all of them)."""
    state = root.state
    if state is None:
        return
    logged = _logged.setdefault(root, {})
    paths = None if paths is None else set(paths)
    problems = state.read_problems(paths)  # with `paths`: those files, and every unlisted folder
    if paths is None:
        looked_at = set(logged)
    else:
        # The changed files, and what is logged but is no file (folders, whose problems are
        # always in the list).
        looked_at = paths | {rel for rel in logged if rel not in state.files}
    for rel in looked_at - {p.path for p in problems}:
        logged.pop(rel, None)  # healed or gone: a later problem is logged again
    for problem in problems:
        reason = problem.reason or ""
        if logged.get(problem.path) != reason:
            logged[problem.path] = reason
            server.log(f"pmem: {root.path / problem.path}: {problem.message()}")
