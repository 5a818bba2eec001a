"""The early path (server/early_path.py) says what the full server says: the same answer to
`initialize` for every client, the same diagnostic JSON for every finding and encoding, the
same root for every file. In process: the full server's own code computes the other side."""

from __future__ import annotations

import io
import json
import os
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from pmem_lsp.engine.first_findings import buffer_findings
from pmem_lsp.engine.host import MemoryHost
from pmem_lsp.engine.line_index import LineIndex
from pmem_lsp.engine.settings import Settings
from pmem_lsp.server.app import create_server
from pmem_lsp.server.convert import Positions, to_diagnostic
from pmem_lsp.server.early_path import (
    Replayed,
    capabilities,
    diagnostic_json,
    initialize_result,
    locate,
    plain_initialize,
)

PROFILES = sorted(p.name for p in files("pytest_lsp.clients").iterdir() if p.name.endswith(".json"))


def full_server_answer(params: dict[str, Any]) -> Any:
    """What the full server answers `initialize` with: pygls's own handler over our features."""
    server = create_server()
    protocol = server.protocol
    steps = protocol.lsp_initialize(protocol._converter.structure(params, lsp.InitializeParams))
    try:
        handler, args, kwargs = next(steps)
        while True:
            handler, args, kwargs = steps.send(handler(*args, **(kwargs or {})))
    except StopIteration as done:
        return json.loads(json.dumps(protocol._converter.unstructure(done.value)))


def params_of(caps: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"processId": None, "rootUri": None, "capabilities": caps, **more}


@pytest.mark.parametrize("profile", PROFILES)
def test_every_known_client_gets_the_full_servers_answer(profile: str):
    spec = json.loads(files("pytest_lsp.clients").joinpath(profile).read_text(encoding="utf-8"))
    params = params_of(spec["capabilities"], clientInfo=spec.get("clientInfo"))
    assert plain_initialize(params)
    assert initialize_result(params) == full_server_answer(params)


FLAGS = st.one_of(st.none(), st.booleans())
client_caps = st.fixed_dictionaries({}, optional={
    "general": st.fixed_dictionaries({}, optional={"positionEncodings": st.lists(
        st.sampled_from(["utf-8", "utf-16", "utf-32", "utf-7", "ascii"]), max_size=4)}),
    "workspace": st.fixed_dictionaries({}, optional={
        "configuration": st.booleans(),
        "fileOperations": st.fixed_dictionaries({}, optional={
            k: st.booleans() for k in ("willRename", "didRename", "willCreate", "didCreate", "willDelete")}),
        "workspaceFolders": st.booleans()}),
    "textDocument": st.fixed_dictionaries({}, optional={
        "rename": st.fixed_dictionaries({}, optional={"prepareSupport": st.booleans()}),
        "synchronization": st.fixed_dictionaries({}, optional={"willSave": st.booleans(),
                                                              "willSaveWaitUntil": st.booleans()}),
        "diagnostic": st.fixed_dictionaries({}, optional={"dynamicRegistration": st.booleans()})}),
    "notebookDocument": st.just({"synchronization": {}}),
    "window": st.fixed_dictionaries({}, optional={"workDoneProgress": st.booleans()}),
})


@settings(max_examples=60, deadline=None)
@given(caps=client_caps)
def test_any_client_gets_the_full_servers_answer(caps: dict[str, Any]):
    params = params_of(caps)
    assert initialize_result(params) == full_server_answer(params)


def test_the_answer_follows_the_client():
    # The parts that depend on the client do (the property above would pass on a constant).
    assert capabilities({})["positionEncoding"] == "utf-16"
    assert capabilities({"general": {"positionEncodings": ["utf-7", "utf-8"]}})["positionEncoding"] == "utf-8"
    assert capabilities({"workspace": {"fileOperations": {"willRename": True}}})["workspace"]["fileOperations"]
    assert not capabilities({"workspace": {"fileOperations": {"willRename": False}}})["workspace"]["fileOperations"]


@pytest.mark.parametrize("params", [
    None, [], {"capabilities": {}}, {"processId": "1", "capabilities": {}}, {"processId": None},
    {"processId": None, "capabilities": []}, {"processId": None, "capabilities": {}, "rootUri": 5},
    {"processId": None, "capabilities": {}, "workspaceFolders": [{"uri": "file:///x"}]},
    {"processId": None, "capabilities": {"general": {"positionEncodings": "utf-8"}}},
    {"processId": None, "capabilities": {"workspace": {"configuration": "yes"}}},
    {"processId": None, "capabilities": {}, "trace": "loud"},
    {"processId": True, "capabilities": {}},
    {"processId": None, "capabilities": {"textDocument": {"synchronization": {"willSave": 1}}}},
])
def test_an_unusual_initialize_is_left_to_the_full_server(params: Any):
    assert not plain_initialize(params)


# -- diagnostics --------------------------------------------------------------------------
PIECES = ["# Título 😀\n", "## Summary\n", "## 摘要\n", "### Summary\n", "- 要点 one\n", "- TODO\n", "- \n",
          "prose with 𝔘𝔫𝔦𝔠𝔬𝔡𝔢\n", "\n", "Status: done\n", "## Details\n", "\r\n", "\r", "- café ☕\n"]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


@settings(max_examples=150, deadline=None)
@given(text=texts, rel=st.sampled_from(["notes/a.md", "_core/profile.md", "_index.md"]),
       encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]), bom=st.booleans())
def test_the_diagnostic_json_is_the_full_servers(text: str, rel: str, encoding: str, bom: bool):
    # `bom`: the client's buffer began with a BOM, which neither analysed (both shift line 0).
    server = SimpleNamespace(workspace=SimpleNamespace(position_codec=PositionCodec(encoding)))
    index = LineIndex(text)
    at = Positions(server, index, bom)  # type: ignore[arg-type]
    converter = create_server().protocol._converter
    for finding in buffer_findings(rel, text, Settings()):
        full = json.loads(json.dumps(converter.unstructure(to_diagnostic(at, finding))))
        assert diagnostic_json(finding, index.lines, encoding, bom) == full


def test_positions_are_counted_in_the_clients_units():
    text = "# 😀 é title\n\nno summary here\n"
    finding = buffer_findings("notes/a.md", text, None)[0]  # PM100, on the title
    assert finding.code == "PM100"
    lines = LineIndex(text).lines
    ends = {enc: diagnostic_json(finding, lines, enc)["range"]["end"]["character"]
            for enc in ("utf-8", "utf-16", "utf-32")}
    assert len(set(ends.values())) == 3, ends


# -- roots and the replayed stream ----------------------------------------------------------
def test_locate_is_the_hosts(tmp_path: Path):
    outer = tmp_path / "outer"
    inner = outer / "nested"
    for root in (outer, inner):
        (root / "_core").mkdir(parents=True)
    link = tmp_path / "link"
    os.symlink(inner, link)
    host = MemoryHost()
    for root in (outer, inner, link):
        host.add_root(root, Settings())
    roots = [outer, inner, link]
    for path in (outer / "a.md", inner / "notes/b.md", link / "c.md", tmp_path / "d.md", outer, inner / "x" / "y.md"):
        found = host.locate(path)
        expected = None if found is None else (found[0].path, found[1])
        assert locate(roots, path) == expected, path


def test_the_full_server_reads_the_replay_then_the_stream():
    reader = Replayed(b"Content-Length: 2\r\n\r\n{}Conte", io.BytesIO(b"nt-Length: 3\r\n\r\n[1]rest\n"))
    assert reader.readline() == b"Content-Length: 2\r\n"
    assert reader.readline() == b"\r\n"
    assert reader.read(2) == b"{}"
    assert reader.readline() == b"Content-Length: 3\r\n"  # a line split between the two
    assert reader.readline() == b"\r\n"
    assert reader.read(3) == b"[1]"
    assert reader.read(10) == b"rest\n"
    assert reader.readline() == b""


def test_an_unanswered_configuration_hands_over_at_its_deadline(tmp_path: Path):
    """The loop waits for its configuration answer longer than for a quiet client, but not for
    ever: unanswered, it hands over (the full server asks again), having published nothing."""
    from pmem_lsp.server.early_path import EarlyLoop, _Stream

    def message(body: dict) -> bytes:
        data = json.dumps({"jsonrpc": "2.0", **body}).encode()
        return b"Content-Length: %d\r\n\r\n" % len(data) + data

    root = tmp_path / "memory"
    (root / "_core").mkdir(parents=True)
    read, write = os.pipe()
    try:
        os.write(write, message({"id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {"workspace": {"configuration": True}}}})
            + message({"method": "initialized", "params": {}})
            + message({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": (root / "a.md").as_uri(), "languageId": "markdown", "version": 1, "text": "# A\n"}}}))
        out = io.BytesIO()
        handover = EarlyLoop(_Stream(read), out, wait=0.01, configuration_wait=0.2).run()  # the writer stays open
    finally:
        os.close(read)
        os.close(write)
    assert handover.reason == "the configuration was not answered in time"
    assert handover.published == {} and handover.unanswered == {"pmem-early-configuration"}
    assert b"workspace/configuration" in out.getvalue()
