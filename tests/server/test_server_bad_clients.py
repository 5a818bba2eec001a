"""A client that breaks the protocol gets JSON-RPC errors or is ignored as LSP says, the
oddity is logged, and the server keeps serving (docs/design.md §7, issue 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from raw_lsp import RawServer, frame

from roots import base_files, summary_file, write_root

HOVER = "textDocument/hover"
SYMBOLS = "textDocument/documentSymbol"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_root(tmp_path / "mem", base_files())


@pytest.fixture
def server(root: Path):
    srv = RawServer(cwd=root)
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def initialized(tmp_path_factory):
    """One initialized server for the module's tests that send one bad request each and check
    the answer, the log line it caused and that the server still serves."""
    root = write_root(tmp_path_factory.mktemp("shared") / "mem", base_files())
    srv = RawServer(cwd=root)
    srv.initialize(root)
    yield srv, root
    srv.close()


def _hover_index(server: RawServer, root: Path) -> dict:
    """A hover over the index's only route: the proof that the server still serves."""
    return server.request(HOVER, {"textDocument": {"uri": (root / "_index.md").as_uri()},
                                  "position": {"line": 3, "character": 5}})


def _still_serving(server: RawServer, root: Path) -> None:
    answer = _hover_index(server, root)
    assert "Alpha" in json.dumps(answer["result"]), answer


def _error_code(message: dict) -> int:
    assert "error" in message, message
    return message["error"]["code"]


def _symbol_names(server: RawServer, uri: str) -> list[str]:
    result = server.request(SYMBOLS, {"textDocument": {"uri": uri}})["result"]
    names: list[str] = []

    def walk(symbols):
        for s in symbols or []:
            names.append(s["name"])
            walk(s.get("children"))
    walk(result)
    return names


def _logged(server: RawServer, text: str) -> bool:
    return server.logged(text)


def test_bodies_that_are_not_json_get_a_parse_error_with_a_null_id(server: RawServer, root: Path):
    server.initialize(root)
    deep = b"[" * 200_000 + b"]" * 200_000  # deeper than the JSON decoder goes (it crashed the server)
    for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": "x"', b"\xff\xfe\x00garbage", deep):
        server.send_raw(body)
    _still_serving(server, root)
    errors = [m for m in server.received if "error" in m and "id" in m and m["id"] is None]
    assert [e["error"]["code"] for e in errors] == [-32700, -32700, -32700, -32700]
    assert _logged(server, "not valid JSON")
    # No pop-up per bad message: the user is not the one who sent it.
    assert not [m for m in server.received if m.get("method") == "window/showMessage"]


def test_json_that_is_not_a_message_is_an_invalid_request(server: RawServer, root: Path):
    server.initialize(root)
    for body in ("[1, 2, 3]", "null", "42", '"hello"', '{"id": 7, "method": "textDocument/hover"}'):
        server.send_raw(body.encode())
    _still_serving(server, root)
    invalid = [m for m in server.received if "error" in m and m["error"]["code"] == -32600]
    assert [m["id"] for m in invalid] == [None, None, None, None, 7]


def test_unknown_methods(server: RawServer, root: Path):
    server.initialize(root)
    assert _error_code(server.request("pmem/noSuchThing", {})) == -32601
    assert _error_code(server.request("$/noSuchThing", {})) == -32601
    server.notify("pmem/noSuchNotification", {"x": 1})
    server.notify("$/alsoUnknown")
    _still_serving(server, root)
    assert _logged(server, "unknown method")


@pytest.mark.parametrize("params", [
    {"textDocument": {"uri": 5}, "position": "x"},
    {"textDocument": {"uri": "file:///x.md"}, "position": {"line": -1, "character": 0}},
    {"textDocument": {"uri": "file:///x.md"}, "position": {"line": "3", "character": None}},
    [1, 2],
    "params",
    None,
])
def test_wrong_parameter_types_get_invalid_params_with_their_id(initialized: tuple[RawServer, Path], params):
    server, root = initialized
    logged_before = len(server.stderr)
    answer = server.request(HOVER, params)
    assert _error_code(answer) == -32602
    _still_serving(server, root)
    assert server.logged("invalid parameters", since=logged_before)


def test_notifications_with_wrong_parameters_are_dropped(server: RawServer, root: Path):
    server.initialize(root)
    note = root / "projects" / "alpha.md"
    server.notify("textDocument/didOpen", {"textDocument": {"uri": note.as_uri(), "version": "one"}})
    server.notify("textDocument/didChange", {"textDocument": 3, "contentChanges": "all"})
    server.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": None, "type": 99}]})
    _still_serving(server, root)
    assert not [m for m in server.received if "id" in m and m.get("id") is None]  # nothing to answer


def test_requests_before_initialize_are_refused_and_notifications_dropped(server: RawServer, root: Path):
    note = root / "projects" / "alpha.md"
    assert _error_code(_hover_index(server, root)) == -32002
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": note.as_uri(), "languageId": "markdown", "version": 1, "text": "# Before init\n"}})
    server.initialize(root)
    _still_serving(server, root)
    # The didOpen sent before initialize was dropped: the server holds no buffer for it, so
    # a change to it is dropped too and the disk's text stays the truth.
    assert _symbol_names(server, note.as_uri())[0] == "Alpha"
    assert server.diagnostics(note) == []
    assert _logged(server, "before initialize")


def test_a_second_initialize_and_requests_after_shutdown_are_invalid(server: RawServer, root: Path):
    server.initialize(root)
    again = server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    assert _error_code(again) == -32600
    _still_serving(server, root)
    assert server.request("shutdown")["result"] is None
    assert _error_code(_hover_index(server, root)) == -32600
    server.notify("exit")
    assert server.proc.wait(timeout=60) == 0


def _open(server: RawServer, path: Path, text: str, version: int) -> str:
    uri = path.as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "markdown", "version": version, "text": text}})
    return uri


def _change(server: RawServer, uri: str, version: int, *changes: dict) -> None:
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                             "contentChanges": list(changes)})


def test_a_change_older_than_the_buffer_is_dropped(server: RawServer, root: Path):
    server.initialize(root)
    uri = _open(server, root / "projects" / "alpha.md", summary_file("Alpha"), 5)
    _change(server, uri, 6, {"text": summary_file("Bee", bullets=1)})
    _change(server, uri, 3, {"text": summary_file("Sea")})  # late and stale
    assert _symbol_names(server, uri)[0] == "Bee"
    server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                and any(d["code"] == "PM102" for d in m["params"]["diagnostics"]), what="PM102 for Bee")
    assert _logged(server, "older than 6 was dropped")


def test_changes_to_a_document_that_is_not_open_are_dropped(server: RawServer, root: Path):
    server.initialize(root)
    uri = (root / "projects" / "alpha.md").as_uri()
    _change(server, uri, 2, {"text": "# Changed\n"})
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    _still_serving(server, root)
    assert _symbol_names(server, uri)[0] == "Alpha"  # the disk's text
    assert _logged(server, "not open was dropped")


def test_ranges_outside_the_document_are_clamped_and_reversed_ranges_ordered(server: RawServer, root: Path):
    server.initialize(root)
    uri = _open(server, root / "projects" / "alpha.md", "# Alpha\n\nBody.\n", 1)

    def at(line, ch):
        return {"line": line, "character": ch}
    # Past the last line: LSP clamps to the end of the document.
    _change(server, uri, 2, {"range": {"start": at(999, 0), "end": at(999, 5)}, "text": "\n## Tail\n"})
    # Past the end of a line: clamped to the line's end.
    _change(server, uri, 3, {"range": {"start": at(0, 500), "end": at(0, 900)}, "text": " Prime"})
    # Ends swapped: the same range, in order ("Body" -> a link to a missing note).
    _change(server, uri, 4, {"range": {"start": at(2, 4), "end": at(2, 0)}, "text": "[gone](gone.md)"})
    # The server now holds "# Alpha Prime\n\n[gone](gone.md).\n\n## Tail\n".
    symbols = server.request(SYMBOLS, {"textDocument": {"uri": uri}})["result"]
    assert symbols[0]["name"] == "Alpha Prime"
    assert [(c["name"], c["selectionRange"]["start"]["line"]) for c in symbols[0].get("children", [])] \
        == [("Tail", 4)]
    broken = server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                         and any(d["code"] == "PM402" for d in m["params"]["diagnostics"]), what="PM402")
    link = next(d for d in broken["params"]["diagnostics"] if d["code"] == "PM402")
    assert link["range"]["start"] == at(2, 7)  # the target; swapped ends would leave "Body" in front
    assert _logged(server, "ends swapped")


def test_text_with_lone_surrogates_and_nul_is_analysed(server: RawServer, root: Path):
    server.initialize(root)
    text = "# Alpha \ud800 \x00\n\nStatus: active\n\n## Summary\n- one \udfff\n"
    uri = _open(server, root / "projects" / "alpha.md", text, 1)
    server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                and any(d["code"] == "PM102" for d in m["params"]["diagnostics"]), what="PM102")
    _still_serving(server, root)


def test_a_confirmation_answered_with_the_wrong_shape_confirms_nothing(server: RawServer, root: Path):
    server.answers["window/showMessageRequest"] = {"title": 5, "unexpected": [1]}
    server.initialize(root)
    _still_serving(server, root)
    answer = server.request("workspace/executeCommand",
                            {"command": "pmem.archive", "arguments": [{"path": "projects/alpha.md"}]})
    assert any(m.get("method") == "window/showMessageRequest" for m in server.received)  # it was asked
    assert answer["result"]["applied"] is False
    assert (root / "projects" / "alpha.md").is_file()
    assert not (root / "_archive" / "projects" / "alpha.md").exists()
    _still_serving(server, root)


@pytest.mark.parametrize("broken, lost", [
    (b"Content-Length: abc\r\n\r\n{}", 0),     # a length that is not a number
    (b"content-length: 2\r\n\r\n{}", 0),       # header names are case-insensitive
    (b"Content-Length: 2\n\n{}", 0),           # bare newlines
    (b"X-Unknown: 1\r\n\r\n", 0),              # no length at all
    (b"garbage without a newline", 0),        # stray bytes glued to the next header
    (b"Content-Length: 5\r\n\r\n{}", 1),       # longer than the body: it eats the next message
    (b"Content-Length: 0\r\n\r\n", 0),         # an empty body is a parse error, not the end
    (b"Content-Length: 999999999999\r\n\r\n{}", 0),  # absurd: ignored, not awaited for ever
])
def test_broken_framing_loses_at_most_the_next_message(server: RawServer, root: Path, broken: bytes, lost: int):
    server.initialize(root)
    _still_serving(server, root)
    server.proc.stdin.write(broken)
    server.proc.stdin.flush()
    ids = []
    for _ in range(3):
        msg_id = server.new_id()
        ids.append(msg_id)
        server.send({"jsonrpc": "2.0", "id": msg_id, "method": HOVER, "params": {
            "textDocument": {"uri": (root / "_index.md").as_uri()}, "position": {"line": 3, "character": 5}}})
    for msg_id in ids[lost:]:
        assert "Alpha" in json.dumps(server.response(msg_id)["result"])


def test_a_root_setting_that_is_not_a_memory_root_is_ignored(server: RawServer, root: Path, tmp_path: Path):
    """Settings can come from a workspace's own files: `pmem.root: "/"` must not make the
    server read the whole disk."""
    server.initialize(root)
    _still_serving(server, root)
    server.notify("workspace/didChangeConfiguration", {"settings": {"pmem": {"root": "/"}}})
    server.wait(lambda m: m.get("method") == "window/showMessage" and "does not look like a memory root"
                in m["params"]["message"], what="the warning about pmem.root")
    # "/" did not become a root: a command that takes the only open root still finds one, and
    # a command naming "/" is refused (both would differ if "/" were being scanned as a root).
    status = server.request("workspace/executeCommand", {"command": "pmem.status", "arguments": [{}]}, timeout=60)
    assert status["result"]["root"] == str(root), status
    named = server.request("workspace/executeCommand",
                           {"command": "pmem.status", "arguments": [{"root": "/"}]}, timeout=60)
    assert "is not one of the memory roots" in named["error"]["message"], named
    symbols = server.request("workspace/symbol", {"query": "Alpha"}, timeout=60)
    assert symbols["result"] and all(str(root) in s["location"]["uri"] for s in symbols["result"]), symbols


def test_exit_ends_the_process_at_once_even_during_a_long_scan(tmp_path: Path):
    big = write_root(tmp_path / "big", base_files())
    for i in range(3000):
        (big / "notes" / f"n{i}.md").parent.mkdir(exist_ok=True)
        (big / "notes" / f"n{i}.md").write_text(summary_file(f"Note {i}") * 20)
    server = RawServer(cwd=big)
    try:
        capabilities = {"window": {"workDoneProgress": True}}
        server.answers["window/workDoneProgress/create"] = None
        server.initialize(big, capabilities)
        # The first scan is under way: it shows work-done progress (it takes over half a second).
        server.wait(lambda m: m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "begin",
                    timeout=60, what="the scan's progress")
        server.request("shutdown", timeout=60)
        server.notify("exit")
        assert server.proc.wait(timeout=60) == 0  # generous: a busy machine; the point is what follows
        # It left during the scan, not after it: the scan never ended and nothing was published.
        methods = [m.get("method") for m in server.received]
        ends = [m for m in server.received if m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end"]
        assert ends == [] and "textDocument/publishDiagnostics" not in methods, methods
    finally:
        server.close()


def test_with_two_roots_a_command_goes_to_the_only_root_where_it_makes_sense(tmp_path: Path):
    one = write_root(tmp_path / "one", base_files())
    two = write_root(tmp_path / "two", {**base_files(), "notes/only-here.md": summary_file("Only here")})
    server = RawServer(cwd=tmp_path)
    try:
        server.request("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                      "workspaceFolders": [{"uri": one.as_uri(), "name": "one"},
                                                           {"uri": two.as_uri(), "name": "two"}]})
        server.notify("initialized", {})
        server.wait_for_code(two / "notes/only-here.md", "PM202")
        # Only `two` holds the file: the archive is planned there (and not confirmed here).
        answer = server.request("workspace/executeCommand", {"command": "pmem.archive",
                                                             "arguments": [{"path": "notes/only-here.md"}]})
        asked = [m for m in server.received if m.get("method") == "window/showMessageRequest"]
        assert asked and "notes/only-here.md" in asked[-1]["params"]["message"], answer
        # Both hold projects/alpha.md: the command must name its root.
        refused = server.request("workspace/executeCommand", {"command": "pmem.archive",
                                                              "arguments": [{"path": "projects/alpha.md"}]})
        assert refused["error"]["code"] == -32803 and "several memory roots" in refused["error"]["message"]
        status = server.request("workspace/executeCommand", {"command": "pmem.status",
                                                             "arguments": [{"root": str(two)}]})
        assert status["result"]["root"] == str(two)
    finally:
        server.close()


@pytest.mark.parametrize("early", [True, False])
def test_shutdown_and_exit_in_one_write_answer_shutdown_and_exit_0(root: Path, early: bool):
    """Clients (Neovim on `:qa`) write `shutdown` and `exit` back to back, without waiting for
    the answer: shutdown is still answered, and the exit after it is a clean one (status 0).
    `exit` without `shutdown` stays status 1 (the LSP says so)."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PMEM_NO_EARLY"}
    if not early:
        env["PMEM_NO_EARLY"] = "1"
    for shut in (True, False):
        server = RawServer(cwd=root, env=env)
        try:
            server.initialize(root)
            _still_serving(server, root)  # the full server is up, its first scan landed
            body = b""
            if shut:
                body += frame(json.dumps({"jsonrpc": "2.0", "id": 77, "method": "shutdown"}).encode())
            body += frame(json.dumps({"jsonrpc": "2.0", "method": "exit"}).encode())
            with server._send_lock:
                server.proc.stdin.write(body)  # one write: the server reads both at once
                server.proc.stdin.flush()
            assert server.proc.wait(timeout=60) == (0 if shut else 1)
            for thread in server._threads:
                thread.join(timeout=60)
            if shut:
                assert server.responses().get(77) == [{"jsonrpc": "2.0", "id": 77, "result": None}]
        finally:
            server.close()
