"""A few hundred random messages against one live server: every request it receives gets
exactly one answer, the process never dies, and afterwards it still hovers and publishes
diagnostics (issue 9). The seed is fixed, so a failure replays."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from raw_lsp import RawServer

from roots import base_files, summary_file, write_root

MESSAGES = 400

# Never `shutdown` or `exit`: they end the session by design.


def _uris(root: Path) -> st.SearchStrategy[str]:
    inside = [(root / rel).as_uri() for rel in ("_index.md", "projects/alpha.md", "notes/new.md",
                                                  "_archive/_index.md", "_core/profile.md")]
    return st.sampled_from(inside * 3 + ["file:///etc/passwd", "untitled:Untitled-1", "file:///",
                                     "file:///%00.md", "http://example.com/x.md", "", "file://host/share/x.md"])


def _ints() -> st.SearchStrategy[int]:
    return st.one_of(st.integers(0, 40), st.integers(-5, 2**31), st.just(2**31 - 1))


def _position():
    return st.fixed_dictionaries({"line": _ints(), "character": _ints()})


def _range():
    return st.fixed_dictionaries({"start": _position(), "end": _position()})


_text = st.lists(st.text(max_size=20) | st.sampled_from(
    ["\n", "\r\n", "# T\n", "## Summary\n", "- ", "[x](projects/alpha.md)", "\x00", "\ufeff", "\ud800"]),
    max_size=12).map("".join)
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                     max_leaves=12)


def _shapes(root: Path) -> dict[str, st.SearchStrategy]:
    """Each method with parameters of its own shape, holding hostile values."""
    uri = _uris(root)
    doc = st.fixed_dictionaries({"uri": uri})
    at = st.fixed_dictionaries({"textDocument": doc, "position": _position()})
    change = st.one_of(st.fixed_dictionaries({"text": _text}),
                       st.fixed_dictionaries({"range": _range(), "text": _text}))
    return {
        "textDocument/hover": at, "textDocument/definition": at, "textDocument/completion": at,
        "textDocument/prepareRename": at,
        "textDocument/references": at.map(lambda p: {**p, "context": {"includeDeclaration": True}}),
        "textDocument/documentSymbol": st.fixed_dictionaries({"textDocument": doc}),
        "textDocument/documentLink": st.fixed_dictionaries({"textDocument": doc}),
        "textDocument/codeLens": st.fixed_dictionaries({"textDocument": doc}),
        "textDocument/codeAction": st.fixed_dictionaries({
            "textDocument": doc, "range": _range(),
            "context": st.fixed_dictionaries({"diagnostics": st.lists(st.fixed_dictionaries({
                "range": _range(), "message": st.text(max_size=10),
                "code": st.sampled_from(["PM100", "PM102", "PM201", "PM202", "PM401", "PM999"])}), max_size=2)})}),
        "codeLens/resolve": st.fixed_dictionaries({"range": _range(), "data": _json}),
        "workspace/symbol": st.fixed_dictionaries({"query": st.text(max_size=10)}),
        "workspace/willRenameFiles": st.fixed_dictionaries({
            "files": st.lists(st.fixed_dictionaries({"oldUri": uri, "newUri": uri}), max_size=2)}),
        "workspace/executeCommand": st.fixed_dictionaries({
            "command": st.sampled_from(["pmem.archive", "pmem.delete", "pmem.recover", "pmem.purge",
                                        "pmem.upgrade", "pmem.status", "pmem.health", "pmem.addRoute", "nope"]),
            "arguments": st.lists(st.one_of(_text, _json, st.just("projects/alpha.md"),
                                            st.fixed_dictionaries({"path": _text})), max_size=2)}),
        "pmem/unknown": _json, "$/unknown": _json,
        "textDocument/didOpen": st.fixed_dictionaries({"textDocument": st.fixed_dictionaries(
            {"uri": uri, "languageId": st.just("markdown"), "version": _ints(), "text": _text})}),
        "textDocument/didChange": st.fixed_dictionaries({
            "textDocument": st.fixed_dictionaries({"uri": uri, "version": _ints()}),
            "contentChanges": st.lists(change, max_size=3)}),
        "textDocument/didClose": st.fixed_dictionaries({"textDocument": doc}),
        "textDocument/didSave": st.fixed_dictionaries({"textDocument": doc}),
        "workspace/didChangeConfiguration": st.fixed_dictionaries({"settings": _json | st.fixed_dictionaries(
            {"pmem": st.dictionaries(st.sampled_from(["secrets", "exclude", "rules", "stale", "index"]), _json)})}),
        "workspace/didChangeWatchedFiles": st.fixed_dictionaries({
            "changes": st.lists(st.fixed_dictionaries({"uri": uri, "type": _ints()}), max_size=3)}),
        "workspace/didRenameFiles": st.fixed_dictionaries({
            "files": st.lists(st.fixed_dictionaries({"oldUri": uri, "newUri": uri}), max_size=2)}),
        "$/cancelRequest": st.fixed_dictionaries({"id": _ints()}),
        "$/setTrace": st.fixed_dictionaries({"value": st.sampled_from(["off", "messages", "verbose", "loud"])}),
    }
    # Never `shutdown` or `exit`, and no folder changes: they end or empty the session by design.


def _messages(root: Path):
    """(kind, method or body, params): mostly well-framed messages of the right shape with
    hostile values, some with the wrong shape, some not JSON at all."""
    shapes = _shapes(root)
    # Buffers are where hostile text enters: open and change documents most often.
    methods = sorted(shapes) + ["textDocument/didOpen", "textDocument/didChange"] * 6
    own_shape = st.sampled_from(methods).flatmap(lambda m: shapes[m].map(lambda p: (m, p)))
    wrong_shape = st.tuples(st.sampled_from(methods), st.sampled_from(methods).flatmap(lambda m: shapes[m]) | _json)
    framed = st.one_of(own_shape, own_shape, own_shape, wrong_shape).map(
        lambda mp: ("notify" if mp[0].startswith(("textDocument/did", "workspace/did", "$/c", "$/s")) else "request",
                    mp[0], mp[1]))
    garbage = st.binary(max_size=60).map(lambda b: ("raw", b, None))
    odd_json = _json.map(lambda j: ("raw", json.dumps(j).encode(), None))
    return st.one_of(framed, framed, framed, framed, garbage, odd_json)


def test_random_messages_never_stop_the_server(tmp_path: Path):
    root = write_root(tmp_path / "mem", base_files())
    server = RawServer(cwd=root)
    try:
        server.initialize(root)
        sent_ids: list[int] = []

        @seed(9)
        @settings(max_examples=MESSAGES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(_messages(root))
        def send_one(message):
            kind, what, params = message
            if kind == "raw":
                server.send_raw(what)
            elif kind == "request":
                msg_id = server.new_id()
                sent_ids.append(msg_id)
                server.send({"jsonrpc": "2.0", "id": msg_id, "method": what, "params": params})
            else:
                server.send({"jsonrpc": "2.0", "method": what, "params": params})
            assert server.proc.poll() is None, "".join(server.stderr)[-3000:]

        send_one()
        assert len(sent_ids) > 50  # the mix really sent requests

        # No handler failed on what it was given: a crash inside a notification handler shows
        # nowhere else (the process lives on, pygls pops up an error).
        errors = [m["params"]["message"] for m in server.received
                  if m.get("method") == "window/showMessage"
                  and ("Error in server" in m["params"]["message"] or "internal error" in m["params"]["message"])]
        assert not errors, errors[:3]
        log = "".join(server.stderr)
        crashes = [log[max(0, i - 300):i + 1500] for i in range(len(log)) if log.startswith("Traceback", i)]
        assert not crashes, "\n----\n".join(crashes[:3])

        # Every request got exactly one answer, even the ones with nonsense parameters.
        for msg_id in sent_ids:
            server.response(msg_id, timeout=60)
        answers = server.responses()
        assert all(len(answers[msg_id]) == 1 for msg_id in sent_ids)

        # And it still works. The fuzz may have opened the index with random text: close
        # every in-root document so the disk is the truth again, then hover over a route...
        for rel in ("_index.md", "projects/alpha.md", "notes/new.md", "_archive/_index.md", "_core/profile.md"):
            server.notify("textDocument/didClose", {"textDocument": {"uri": (root / rel).as_uri()}})
        hover = server.request("textDocument/hover", {"textDocument": {"uri": (root / "_index.md").as_uri()},
                                                      "position": {"line": 3, "character": 5}})
        assert "Alpha" in json.dumps(hover["result"]), hover
        # ...and expect diagnostics for a freshly opened file.
        fresh = root / "projects" / "fresh.md"
        fresh.write_text(summary_file("Fresh", bullets=1))
        uri = fresh.as_uri()
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": summary_file("Fresh", bullets=1)}})
        server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                    and {"PM102", "PM202"} <= {d["code"] for d in m["params"]["diagnostics"]},
                    timeout=60, what="PM102 and PM202 for the fresh file")
        # Nothing the fuzz sent was ever confirmed, so no memory file moved.
        assert (root / "projects" / "alpha.md").is_file()
    finally:
        server.close()
