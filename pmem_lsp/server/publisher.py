"""The one owner of published findings (issue 28): when a root's analysis catches up with the
changes the host took in (the debounce), what the client was sent for each document and from
which version of its text, and the frozen view every handler reads.

Steps and queries are apart. A *step* — `changed`, `refresh`, `catch_up`, `scanned`, `early`,
`opened`, `closed`, `dropped`, `handed_over`, `stop` — may analyse (through the host's explicit
`analyse` and `settle`) and publish. A *query* — `view`, `publication`, `publications` — reads
what the last step left and changes nothing: asked twice, it answers the same.

A publication is sent only when it says something new: a document gets diagnostics again when
they, or the version of the text they were made from, differ from what it was last sent, or
when a step asks for it (`always`: an opened document, whose client may have dropped what came
before it was open). Versions only go forward: diagnostics made from an older text than the
client was already sent for that document are never sent (`convert.analysed_version`,
docs/decisions.md "Language server").

The early path (a first publication before the full server starts) hands what it sent over
with `handed_over`, before the first step: its publications then count as sent, so nothing is
sent twice, and a document it published that the full analysis finds clean is cleared.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from lsprotocol import converters
from lsprotocol import types as lsp

from ..engine.findings import Finding
from ..engine.host import MemoryRoot
from ..engine.line_index import LineIndex
from .convert import Positions, analysed_version, open_document, path_to_uri, positions, to_diagnostic, uri_to_path
from .diagnostics import ChangesScope, ReadProblemLog

if TYPE_CHECKING:
    from .app import PmemServer

# Seconds after an analysis ended during which a change is taken to have queued up while it
# ran: the time the server needs to read the messages waiting behind it (a few event-loop
# turns through pygls' reader thread), far below what a person notices.
QUEUED_GRACE = 0.002
SETTLE_DELAY = 0.75  # seconds of quiet typing before the near-duplicate search (PM503) runs

Findings = tuple[Finding, ...]
_EMPTY: Mapping[str, Findings] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Publication:
    """What the client holds for one document: the diagnostics last sent, the version of the
    text they were made from (None: not exactly an open document's text), and the findings
    they show (None: handed over by the early path, which sent diagnostics only)."""

    version: int | None
    diagnostics: tuple[lsp.Diagnostic, ...]
    findings: Findings | None


@dataclass(frozen=True, slots=True)
class FindingsView:
    """One root's findings as handlers read them, frozen at the publisher's last step.

    `current`: the analysis' findings by root-relative path (what fixes and actions are made
    from). `shown`: what the client was last sent for each path, after `diagnostics.scope`
    (what the user sees; hover lists it)."""

    current: Mapping[str, Findings] = field(default_factory=lambda: _EMPTY)
    shown: Mapping[str, Findings] = field(default_factory=lambda: _EMPTY)

    def of(self, rel: str) -> Findings:
        return self.current.get(rel, ())


EMPTY_VIEW = FindingsView()


@dataclass(eq=False)
class _Feed:
    """The publisher's state for one root."""

    current: dict[str, Findings] = field(default_factory=dict)
    shown: dict[str, Findings] = field(default_factory=dict)
    # Paths whose diagnostics are due and were held back (made from an older text than the
    # client has): tried again at every step until sent.
    due: set[str] = field(default_factory=set)
    view: FindingsView = EMPTY_VIEW
    dirty: bool = False  # `current` or `shown` changed since `view` was frozen
    scope: ChangesScope = field(default_factory=ChangesScope)
    problems: ReadProblemLog | None = None
    analysis_timer: asyncio.TimerHandle | None = None  # an analysis of queued changes is due
    analysed_at: float = float("-inf")  # loop time when the last keystroke analysis ended
    settle_timer: asyncio.TimerHandle | None = None


def _json(diagnostics: Sequence[lsp.Diagnostic]) -> Any:
    """Diagnostics as the client reads them (tuples and lists alike), to compare a handed-over
    publication with one of ours."""
    return json.loads(json.dumps(converters.get_converter().unstructure(list(diagnostics))))


class Publisher:
    def __init__(self, server: PmemServer) -> None:
        self.server = server
        self._feeds: dict[MemoryRoot, _Feed] = {}
        self._sent: dict[str, Publication] = {}  # per document URI

    # -- queries: they change nothing ------------------------------------------------------
    def view(self, root: MemoryRoot) -> FindingsView:
        """The root's findings as the last step left them."""
        feed = self._feeds.get(root)
        return feed.view if feed is not None else EMPTY_VIEW

    def publication(self, uri: str) -> Publication | None:
        """What the client was last sent for `uri` (None: nothing, or an empty list long ago)."""
        return self._sent.get(uri)

    def publications(self) -> Mapping[str, Publication]:
        """Every document's last publication, by URI (a copy)."""
        return MappingProxyType(dict(self._sent))

    # -- steps ----------------------------------------------------------------------------
    def handed_over(self, published: Mapping[str, tuple[int | None, Sequence[lsp.Diagnostic | Mapping[str, Any]]]]
                    ) -> None:
        """The early path published these before this server took over: URI → (the version
        the diagnostics were made from, the diagnostics, as LSP objects or their JSON). They
        count as sent: the same diagnostics of the same version are not sent again, a later
        version replaces them, and a document the full analysis finds clean is cleared when
        its root's first scan lands. Call it before the first step."""
        converter = converters.get_converter()
        for uri, (version, diagnostics) in published.items():
            diags = tuple(d if isinstance(d, lsp.Diagnostic) else converter.structure(d, lsp.Diagnostic)
                          for d in diagnostics)
            self._sent[uri] = Publication(version, diags, None)

    def changed(self, root: MemoryRoot, grace: float = QUEUED_GRACE) -> None:
        """A buffer of `root` changed. When the analysis has been idle (no analysis ended in
        the last `grace` seconds) the change is analysed and published at once, whatever the
        pace of typing: a keystroke's diagnostics come back immediately. A change handled
        right after an analysis ended most likely waited in the pipe while it ran (a paste, key
        repeat, a client sending edits back to back): its analysis waits out what is left of
        `grace`, so that the changes queued behind it are read first and analysed once, with
        the latest text. The near-duplicate search waits for a longer pause."""
        loop = asyncio.get_running_loop()
        feed = self._feed(root)
        if feed.settle_timer is not None:
            feed.settle_timer.cancel()
        feed.settle_timer = loop.call_later(SETTLE_DELAY, self._settle, root)
        if feed.analysis_timer is not None:
            return  # an analysis is already due and will see this change
        since_last = loop.time() - feed.analysed_at
        if since_last >= grace:
            self._analyse_keystroke(root, feed)
            return

        def queued() -> None:
            feed.analysis_timer = None
            self._analyse_keystroke(root, feed)

        feed.analysis_timer = loop.call_later(grace - since_last, queued)

    def _analyse_keystroke(self, root: MemoryRoot, feed: _Feed) -> None:
        if root.pending:  # nothing pending (an edit that changed nothing): no analysis ran
            self.refresh(root, keystroke=True)
            feed.analysed_at = asyncio.get_running_loop().time()

    def _settle(self, root: MemoryRoot) -> None:
        feed = self._feeds.get(root)
        if feed is None:
            return
        feed.settle_timer = None
        self.refresh(root, settle=True)

    def refresh(self, root: MemoryRoot, keystroke: bool = False, settle: bool = False,
                always: Iterable[str] = ()) -> FindingsView:
        """Bring the root's analysis up to date with what the host took in and publish what
        changed — work bounded by the change (engine/analysis.py). `keystroke`: leave the
        near-duplicate search for later; `settle`: do it now. `always`: paths published even
        when nothing changed (once). Returns the view this step leaves."""
        if root.analysis is None:
            return self.view(root)
        feed = self._feed(root)
        read = set(root.pending)
        host = self.server.host
        changed = host.settle(root) if settle else host.analyse(root, defer_duplicates=keystroke)
        final = root.analysis.final
        for rel in changed:
            found = final.get(rel)
            if found:
                feed.current[rel] = tuple(found)
            else:
                feed.current.pop(rel, None)
        feed.dirty |= bool(changed)
        forced = set(always)
        # An open document whose text changed gets the version it now holds even when its
        # findings did not change (coalesced edits that came back to an earlier text): the
        # client learns the diagnostics reflect its latest edit. `_send` holds what it has.
        edited = {rel for rel in read if self._is_open(root, rel)}
        self._publish(root, feed, changed | forced | edited, forced)
        self._freeze(feed)
        if read:
            self._problems(root, feed).update(root, read)
        return feed.view

    def catch_up(self, root: MemoryRoot, settle: bool = False) -> FindingsView:
        """The view of a root brought up to date first: for a handler that acts on findings
        (a fix is made against the text the root holds now, not the one last published)."""
        return self.refresh(root, settle=settle)

    def disk_analysed(self, root: MemoryRoot, final: Mapping[str, Sequence[Finding]]) -> None:
        """The first scan's analysis of the disk alone, before `host.install` puts the open
        buffers' edits on it: where `diagnostics.scope = "changes"` starts from."""
        self._feed(root).scope.record_baseline(final)

    def scanned(self, root: MemoryRoot, paths: Iterable[str]) -> None:
        """A scan of `root` was installed (`host.install`, whose answer `paths` is every path
        that has findings or had them). Publish them, and clear what was shown before the scan
        that the analysis no longer finds (the early findings, the early path's)."""
        feed = self._feed(root)
        assert root.analysis is not None
        feed.current = {rel: tuple(found) for rel, found in root.analysis.final.items() if found}
        feed.dirty = True
        wanted = set(paths) | set(feed.shown) | self._handed_over_in(root)
        self._publish(root, feed, wanted, set())
        self._freeze(feed)
        self._problems(root, feed).update(root, None)  # unreadable and capped files, each named with the reason

    def opened(self, root: MemoryRoot, rel: str) -> None:
        """`rel` was opened in the editor: analyse and publish, sending the file's findings even
        if they did not change (some clients, eglot, drop diagnostics of files that were not
        open when they arrived)."""
        self.refresh(root, always={rel})

    def early(self, path: Path) -> None:
        """Before the root's scan lands, what the open buffer at `path` shows on its own (its
        summary), sent even when empty: the editor learns at once that the file was checked."""
        found = self.server.host.locate(path)
        if found is None:
            return
        root, rel = found
        uri = path_to_uri(path)
        last = self._sent.get(uri)
        if last is not None and last.findings is None and self._made_from_buffer(path, uri, last):
            return  # the early path published this very text already, and knew more
        feed = self._feed(root)
        doc = open_document(self.server.workspace, uri)
        if last is not None and last.version is not None and doc is not None and doc.version < last.version:
            feed.due.add(rel)  # the client has diagnostics of a later text: after the scan
            return
        # Positions counted in the lines of the buffer they were made from (the root state may
        # hold none yet, or another text).
        buffer = self.server.host.buffers.get(path)
        at = Positions(self.server, LineIndex(buffer.text), buffer.bom) if buffer is not None else None
        self._send(root, feed, rel, tuple(self.server.host.early_findings(path)), force=True, at=at)
        self._freeze(feed)

    def closed(self, path: Path) -> None:
        """The document at `path` was closed: a document opened there again starts its versions
        afresh (what it was last sent stays, for the comparison)."""
        uri = path_to_uri(path)
        last = self._sent.get(uri)
        if last is not None and last.version is not None:
            self._sent[uri] = Publication(None, last.diagnostics, last.findings)

    def dropped(self, root: MemoryRoot) -> None:
        """`root` is no longer served: clear everything it published and forget it."""
        feed = self._feeds.pop(root, None)
        shown = set(feed.shown) if feed is not None else set()
        if feed is not None:
            self._cancel(feed)
        for uri, pub in list(self._sent.items()):  # what the early path sent there too
            path = uri_to_path(uri) if pub.findings is None else None
            rel = root.rel(path) if path is not None else None
            if rel:
                shown.add(rel)
        for rel in sorted(shown):
            uri = path_to_uri(root.path / rel)
            self.server.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[], version=None))
            self._sent.pop(uri, None)

    def stop(self) -> None:
        """Shutdown: no timer fires any more."""
        for feed in self._feeds.values():
            self._cancel(feed)

    # -- inside -----------------------------------------------------------------------------
    def _feed(self, root: MemoryRoot) -> _Feed:
        feed = self._feeds.get(root)
        if feed is None:
            feed = self._feeds[root] = _Feed()
        return feed

    def _problems(self, root: MemoryRoot, feed: _Feed) -> ReadProblemLog:
        if feed.problems is None:
            feed.problems = ReadProblemLog(self.server.log)
        return feed.problems

    @staticmethod
    def _cancel(feed: _Feed) -> None:
        for timer in (feed.analysis_timer, feed.settle_timer):
            if timer is not None:
                timer.cancel()
        feed.analysis_timer = feed.settle_timer = None

    @staticmethod
    def _freeze(feed: _Feed) -> None:
        """A new view when the last step changed what it holds (else the same one stays)."""
        if feed.dirty:
            feed.view = FindingsView(MappingProxyType(dict(feed.current)), MappingProxyType(dict(feed.shown)))
            feed.dirty = False

    def _made_from_buffer(self, path: Path, uri: str, publication: Publication) -> bool:
        """`publication` was made from the text the editor's buffer holds now: the document's
        version, or (no version) a buffer still equal to the disk."""
        if publication.version is None:
            return not self.server.host.unsaved(path)
        doc = open_document(self.server.workspace, uri)
        return doc is not None and doc.version == publication.version

    def _handed_over_in(self, root: MemoryRoot) -> set[str]:
        """The paths of `root` whose last publication came from the early path."""
        out = set()
        for uri, pub in self._sent.items():
            if pub.findings is None:
                path = uri_to_path(uri)
                found = self.server.host.locate(path) if path is not None else None
                if found is not None and found[0] is root:
                    out.add(found[1])
        return out

    def _publish(self, root: MemoryRoot, feed: _Feed, rels: set[str], forced: set[str]) -> bool:
        sent = False
        rels, feed.due = rels | feed.due, set()
        for rel in sorted(rels):
            sent |= self._send(root, feed, rel, feed.current.get(rel, ()), force=rel in forced)
        return sent

    def _send(self, root: MemoryRoot, feed: _Feed, rel: str, findings: Findings, force: bool,
              at: Positions | None = None) -> bool:
        """Publish `findings` of `rel` unless the client holds them already; True when sent.

        The same diagnostics of the same version are not sent again; with `force` (an opened
        document) they are, unless the client provably got them while the document was open.
        `at`: the positions of the lines the findings were made from, when the root state does
        not hold them (an open buffer before the scan: positions in the client's units need its
        lines)."""
        server = self.server
        shown = feed.scope.filter(root, rel, findings, self._is_open(root, rel))
        uri = path_to_uri(root.path / rel)
        version = analysed_version(server, root.state, rel, uri)
        last = self._sent.get(uri)
        last_version = last.version if last is not None else None
        if version is not None and last_version is not None and version < last_version:
            feed.due.add(rel)  # made from an older text than the client has diagnostics of: later
            return False
        if at is None:
            at = positions(server, root.state, rel)
        diagnostics = tuple(to_diagnostic(at, f) for f in shown)
        if last is None:
            same = not diagnostics
        elif last.findings is None:
            same = _json(last.diagnostics) == _json(diagnostics)
        else:
            same = last.diagnostics == diagnostics
        # Asked (`force`), they are sent again unless the client got them while the document
        # was open: with this very version, or from the early path (which publishes only
        # documents the client opened).
        held = same and version == last_version and (
            not force or version is not None or (last is not None and last.findings is None))
        publication = Publication(version, diagnostics, shown)
        if not held:
            server.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=list(diagnostics), version=version))
        self._record(feed, uri, rel, publication)
        return not held

    def _record(self, feed: _Feed, uri: str, rel: str, publication: Publication) -> None:
        if publication.diagnostics or publication.version is not None:
            self._sent[uri] = publication
        else:
            self._sent.pop(uri, None)  # nothing to remember: as if never published
        if publication.findings:
            if feed.shown.get(rel) != publication.findings:
                feed.shown[rel] = publication.findings
                feed.dirty = True
        elif feed.shown.pop(rel, None) is not None:
            feed.dirty = True

    def _is_open(self, root: MemoryRoot, rel: str) -> bool:
        buffers = self.server.host.buffers
        return root.path / rel in buffers or root.resolved / rel in buffers
