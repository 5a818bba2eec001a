"""The publisher (server/publisher.py, issue 28), in process: a real server object and its real
protocol writing to a buffer, a real root on disk, a real analysis. Queries change nothing;
publications come in version order; nothing is sent twice for the same version and content
unless a step asks for it; the early path's publications are taken over without a repeat."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.io_ import StdoutWriter

from pmem_lsp.engine.analysis import Analysis
from pmem_lsp.engine.root_state import RootState
from pmem_lsp.engine.settings import Settings
from pmem_lsp.server.app import PmemServer, create_server
from pmem_lsp.server.convert import path_to_uri
from roots import make_root

PUBLISH = "textDocument/publishDiagnostics"
THREE = "# Beta note\n\n## Summary\n- one\n- two\n- three\n"


def bullets(n: int) -> str:
    """Beta's text with an `n`-bullet summary (PM102 below 3 and above 6)."""
    return "# Beta note\n\n## Summary\n" + "".join(f"- fact {i}\n" for i in range(n))


class Session:
    """One in-process server over a root, its output parsed back into messages."""

    def __init__(self, root_path: Path, scope: str = "root") -> None:
        self.root_path = root_path
        self.server: PmemServer = create_server()
        self.out = io.BytesIO()
        self.server.protocol.set_writer(StdoutWriter(self.out))
        self.deliver({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        self.settings = Settings.model_validate({"diagnostics": {"scope": scope}})
        self.root = self.server.host.add_root(root_path, self.settings)

    def deliver(self, message: dict) -> None:
        protocol = self.server.protocol
        protocol.handle_message(json.loads(json.dumps(message), object_hook=protocol.structure_message))

    def scan(self) -> None:
        state = RootState.scan(self.root_path, self.settings)
        installed = self.server.host.install(self.root, state, Analysis(state))
        self.server.publisher.scanned(self.root, installed)

    def uri(self, rel: str) -> str:
        return path_to_uri(self.root_path / rel)

    def open(self, rel: str, text: str, version: int) -> None:
        self.deliver({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": self.uri(rel), "languageId": "markdown", "version": version, "text": text}}})

    def change(self, rel: str, text: str, version: int) -> None:
        self.deliver({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": self.uri(rel), "version": version}, "contentChanges": [{"text": text}]}})

    def messages(self) -> list[dict[str, Any]]:
        data, out = self.out.getvalue(), []
        while data:
            head, _, rest = data.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length"))
            out.append(json.loads(rest[:length]))
            data = rest[length:]
        return out

    def publications(self, rel: str | None = None) -> list[tuple[int | None, list]]:
        """(version, diagnostics) of every publication, of `rel` only when given."""
        return [(m["params"].get("version"), m["params"]["diagnostics"]) for m in self.messages()
                if m.get("method") == PUBLISH and (rel is None or m["params"]["uri"] == self.uri(rel))]

    def codes(self, rel: str) -> list[str]:
        pubs = self.publications(rel)
        return [d["code"] for d in pubs[-1][1]] if pubs else []


async def until(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait for `condition` (a generous bound, which only says how long a failing test waits)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.01)


async def test_a_query_asked_twice_answers_the_same_and_changes_nothing(tmp_path: Path):
    session = Session(make_root(tmp_path))
    session.scan()
    publisher, host, root = session.server.publisher, session.server.host, session.root
    session.open("notes/beta.md", bullets(2), version=1)
    assert session.codes("notes/beta.md") == ["PM102"]
    # An edit the host took in but nobody analysed yet (the debounce window).
    host.change_buffer(tmp_path / "memory/notes/beta.md", THREE)
    written = len(session.out.getvalue())
    pending = set(root.pending)
    assert pending == {"notes/beta.md"}
    first = (publisher.view(root), publisher.publications(), host.findings(root),
             host.unsaved(tmp_path / "memory/notes/beta.md"))
    second = (publisher.view(root), publisher.publications(), host.findings(root),
              host.unsaved(tmp_path / "memory/notes/beta.md"))
    assert first == second
    assert first[0] is second[0]  # the same frozen view: nothing was rebuilt
    assert root.pending == pending and len(session.out.getvalue()) == written  # nothing analysed, nothing sent
    assert [f.code for f in first[0].of("notes/beta.md")] == ["PM102"]  # as last analysed
    with pytest.raises(TypeError):
        first[0].current["notes/beta.md"] = ()  # type: ignore[index]
    # The step catches up and publishes; the view asked for before is untouched by it.
    view = publisher.catch_up(root)
    assert view.of("notes/beta.md") == () and session.codes("notes/beta.md") == []
    assert [f.code for f in first[0].of("notes/beta.md")] == ["PM102"]
    assert publisher.view(root) is view and publisher.view(root) is view


async def test_publications_come_in_version_order_and_never_go_back(tmp_path: Path):
    session = Session(make_root(tmp_path))
    session.scan()
    session.open("notes/beta.md", bullets(1), version=1)
    # Bullet counts that flip PM102 on and off: every other version has new findings.
    for version in range(2, 40):
        session.change("notes/beta.md", bullets(version % 9), version=version)
    final = bullets(39 % 9)
    await until(lambda: (session.publications("notes/beta.md") or [(0, [])])[-1][0] == 39, "version 39's diagnostics")
    versions = [v for v, _ in session.publications("notes/beta.md")]
    assert None not in versions and versions == sorted(versions) and len(set(versions)) == len(versions)
    assert session.server.publisher.view(session.root).shown.get("notes/beta.md", ()) == ()
    assert final.count("- fact") == 3
    # The client had diagnostics of version 39 handed over (say the early path saw more
    # changes than this server did): diagnostics of an older text are never sent after them.
    later = Session(make_root(tmp_path / "later"))
    later.server.publisher.handed_over({later.uri("notes/beta.md"): (39, [])})
    later.open("notes/beta.md", bullets(2), version=38)
    later.scan()
    later.server.publisher.opened(later.root, "notes/beta.md")  # even when asked
    assert later.publications("notes/beta.md") == []
    later.change("notes/beta.md", bullets(2), version=40)  # the same text: what was held back is due
    await until(lambda: later.publications("notes/beta.md") != [], "version 40's diagnostics")
    assert [(v, [d["code"] for d in ds]) for v, ds in later.publications("notes/beta.md")] == [(40, ["PM102"])]


async def test_nothing_is_sent_twice_for_the_same_version_and_content_unless_asked(tmp_path: Path):
    session = Session(make_root(tmp_path, {"notes/gamma.md": bullets(2)}))
    session.scan()
    publisher, root = session.server.publisher, session.root
    assert [[d["code"] for d in ds] for _, ds in session.publications("notes/gamma.md")] == [["PM102"]]
    count = len(session.publications())
    publisher.refresh(root)
    publisher.refresh(root, settle=True)
    publisher.scanned(root, set(publisher.view(root).current))  # the same scan, installed again
    assert len(session.publications()) == count  # nothing new: nothing sent
    # Opening a file sends its findings even if unchanged (eglot drops what came before it
    # was open): once, although the step both analysed and was asked.
    session.open("notes/gamma.md", bullets(2), version=1)
    assert len(session.publications()) == count + 1
    assert session.publications("notes/gamma.md")[-1][0] is None  # the disk's text: no version
    # Asked again for a document whose client has exactly these of this version: held back.
    session.change("notes/gamma.md", bullets(7), version=2)
    await until(lambda: session.publications("notes/gamma.md")[-1][0] == 2, "version 2's diagnostics")
    count = len(session.publications())
    publisher.opened(root, "notes/gamma.md")
    publisher.refresh(root)
    assert len(session.publications()) == count
    pubs = session.publications("notes/gamma.md")
    assert [v for v, _ in pubs] == [None, None, 2] and pubs[0] == pubs[1]  # the one repeat was asked for
    # Asked for a document whose diagnostics carry no version (not from the buffer): sent.
    publisher.opened(root, "notes/beta.md")
    assert session.publications("notes/beta.md")[-1] == (None, [])


async def test_the_early_path_hands_over_without_a_repeat_and_its_leftovers_are_cleared(tmp_path: Path):
    """The early path published the opened file's diagnostics: the full server sends nothing
    again for it when they agree, and clears a file it published that the analysis finds clean."""
    first = Session(make_root(tmp_path / "a", {"notes/gamma.md": bullets(2)}))
    first.scan()
    first.open("notes/gamma.md", bullets(7), version=4)  # unsaved edits: diagnostics of version 4
    (version, diagnostics), = first.publications("notes/gamma.md")[-1:]

    later = Session(make_root(tmp_path / "b", {"notes/gamma.md": bullets(2)}))
    gamma, beta = later.uri("notes/gamma.md"), later.uri("notes/beta.md")
    assert gamma.replace("/b/", "/a/") == first.uri("notes/gamma.md")
    stray = lsp.Diagnostic(range=lsp.Range(start=lsp.Position(line=0, character=0),
                                           end=lsp.Position(line=0, character=1)),
                           message="an early guess", code="PM100", source="pmem")
    later.server.publisher.handed_over({gamma: (version, diagnostics), beta: (None, [stray])})
    later.open("notes/gamma.md", bullets(7), version=4)  # the replayed didOpen, before the scan lands
    later.scan()
    assert later.publications("notes/gamma.md") == []  # the client has them already
    assert later.publications("notes/beta.md") == [(None, [])]  # cleared: the analysis finds none
    publication = later.server.publisher.publication(gamma)
    assert publication is not None and publication.version == 4
    assert [f.code for f in later.server.publisher.view(later.root).shown["notes/gamma.md"]] == ["PM102"]


async def test_typing_before_the_scan_lands_replaces_the_early_path_s_diagnostics(tmp_path: Path):
    """What the early path handed over holds for the text it was made from only: an edit before
    the first scan lands gets the buffer's own findings at once."""
    session = Session(make_root(tmp_path, {"notes/gamma.md": bullets(3)}))
    gamma = session.uri("notes/gamma.md")
    session.server.publisher.handed_over({gamma: (4, [])})
    session.open("notes/gamma.md", bullets(3), version=4)
    assert session.publications("notes/gamma.md") == []
    session.change("notes/gamma.md", bullets(8), version=5)
    assert [[d["code"] for d in ds] for _, ds in session.publications("notes/gamma.md")] == [["PM102"]]
    session.scan()
    assert [(v, [d["code"] for d in ds]) for v, ds in session.publications("notes/gamma.md")][-1] == (5, ["PM102"])


async def test_coalesced_edits_that_end_on_unchanged_findings_still_publish_their_version(tmp_path: Path):
    """Edits queued behind an analysis are analysed once, with the latest text; when that text's
    findings equal what the client holds (a burst that came back to an earlier text), the
    client is still sent the latest version, so it knows its diagnostics reflect its last edit."""
    session = Session(make_root(tmp_path))
    session.scan()
    session.open("notes/beta.md", bullets(2), version=1)
    session.change("notes/beta.md", bullets(3), version=2)  # after a quiet spell: analysed at once
    assert [v for v, _ in session.publications("notes/beta.md")][-1] == 2
    # As if an analysis had just ended: the next edits queued behind it and are coalesced.
    feed = session.server.publisher._feed(session.root)
    feed.analysed_at = asyncio.get_running_loop().time() + 0.2
    session.change("notes/beta.md", bullets(2), version=3)
    session.change("notes/beta.md", bullets(3), version=4)  # the findings of version 2 again
    await until(lambda: session.publications("notes/beta.md")[-1][0] == 4, "version 4's diagnostics")
    assert [(v, [d["code"] for d in ds]) for v, ds in session.publications("notes/beta.md")] == [
        (1, ["PM102"]), (2, []), (4, [])]
