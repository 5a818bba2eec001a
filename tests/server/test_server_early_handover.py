"""The early path end to end (server/early_path.py): real `pmem-lsp` processes over stdio. The early
loop answers `initialize` and publishes the opened file before the full server is imported;
then the full server reads the whole session from its first byte. Nothing is lost or answered
twice, the first diagnostics are the full server's own, and the editor's settings decide them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer, frame

from roots import base_files, summary_file, write_root

CAPS = {"general": {"positionEncodings": ["utf-8", "utf-16"]},
        "workspace": {"configuration": True, "fileOperations": {"willRename": True}},
        "textDocument": {"synchronization": {"willSave": True}, "hover": {"contentFormat": ["markdown"]}}}
NOTE = "notes/two 😀 notes.md"
EARLY_LOG = "early path: 1 document(s) published"


class Client(RawServer):
    """A raw client whose `workspace/configuration` answer is `settings`."""

    def __init__(self, root: Path, settings: dict | None = None, early: bool = True,
                 env_extra: dict[str, str] | None = None) -> None:
        env = {**os.environ, "PMEM_EARLY_WAIT": "60", **(env_extra or {})}  # a loaded machine never makes it give up
        env.pop("PMEM_NO_EARLY", None)
        if env["PMEM_EARLY_WAIT"] == "":
            del env["PMEM_EARLY_WAIT"]  # the default silence
        if not early:
            env["PMEM_NO_EARLY"] = "1"
        self.settings = settings
        self.configured = threading.Event()  # the first configuration is answered once this is set
        self.configured.set()
        super().__init__(root, env=env)

    def _answer(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            if not self.configured.wait(60):
                raise AssertionError("the test never let the configuration be answered")
            return [self.settings] * len(params["items"])
        return super()._answer(method, params)

    def publications(self, path: Path) -> list[list[dict]]:
        return [m["params"]["diagnostics"] for m in list(self.received)
                if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == path.as_uri()]

    def logs(self) -> list[str]:
        return [m["params"]["message"] for m in list(self.received) if m.get("method") == "window/logMessage"]

    def configuration_requests(self) -> int:
        return sum(1 for r in list(self.server_requests) if r["method"] == "workspace/configuration")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    # A two-bullet summary (PM102) under a title of non-ASCII characters (positions differ by
    # encoding), unrouted (PM202: only the scan finds it).
    return write_root(tmp_path / "memory", {**base_files(), NOTE: summary_file("Ünïcode 中文 😀 title", bullets=2)})


def session(client: Client, root: Path, when: str = "at once") -> tuple[dict, list[int]]:
    """initialize, initialized, open the note, and three requests, sent: `at once`; `held`, while
    the early loop waits for the configuration (it leaves them to the full server, in the
    replay); `after` the first diagnostics (they come while the full server is imported)."""
    if when == "held":
        client.configured.clear()
    init_id = client.new_id()
    client.send({"jsonrpc": "2.0", "id": init_id, "method": "initialize", "params": {
        "processId": None, "rootUri": root.as_uri(), "capabilities": CAPS,
        "workspaceFolders": [{"uri": root.as_uri(), "name": "memory"}]}})
    init = client.response(init_id)
    client.notify("initialized", {})
    note = root / NOTE
    client.open(note)
    if when == "after":
        client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == note.as_uri(), what="the first diagnostics")
    ids = []
    for method, params in (
            ("textDocument/hover", {"textDocument": {"uri": (root / "_index.md").as_uri()},
                                    "position": {"line": 3, "character": 4}}),
            ("textDocument/documentSymbol", {"textDocument": {"uri": note.as_uri()}}),
            ("workspace/executeCommand", {"command": "pmem.status", "arguments": []})):
        ids.append(client.new_id())
        client.send({"jsonrpc": "2.0", "id": ids[-1], "method": method, "params": params})
    client.configured.set()
    client.wait_for_code(note, "PM202")  # the full server's scan landed
    for msg_id in ids:
        client.response(msg_id)
    return init, [init_id, *ids]


@pytest.mark.parametrize("when", ["at once", "held", "after"])
def test_nothing_is_lost_or_answered_twice_in_the_hand_over(root: Path, when: str):
    early, full = Client(root), Client(root, early=False)
    try:
        early_init, early_ids = session(early, root, when)
        full_init, _ = session(full, root)
        note = root / NOTE

        # The early loop published the note; the full server has the whole session.
        assert any(EARLY_LOG in line for line in early.logs()), early.logs()
        assert not any("early path" in line for line in full.logs())
        if when == "held":
            assert any("a request came while the configuration was asked for" in line for line in early.logs())
        responses = early.responses()
        for msg_id in early_ids:
            assert len(responses[msg_id]) == 1, (msg_id, responses[msg_id])
            assert "error" not in responses[msg_id][0], responses[msg_id]
        assert early_init["result"] == full_init["result"]
        symbols = responses[early_ids[2]][0]["result"]
        assert symbols and any("Ünïcode" in s["name"] for s in symbols)  # the replayed didOpen's buffer

        # The first diagnostics are the full server's first diagnostics, JSON for JSON; after
        # them the note gets only those again (the full server's own, before its scan) and then
        # the scan's, which keep them and add PM202: nothing in between, nothing else.
        published = early.publications(note)
        first, last = published[0], published[-1]
        assert [d["code"] for d in first] == ["PM102"]
        # The full server's own first diagnostics, JSON for JSON. Its scan of this small root may
        # land before it first publishes the note (a loaded machine: seen once in a whole run),
        # and then that publication holds the scan's PM202 too: the note's own are the same.
        assert first == [d for d in full.publications(note)[0] if d["code"] != "PM202"]
        assert first[0] in last and sorted(d["code"] for d in last) == ["PM102", "PM202"]
        assert all(p in (first, last) for p in published), published

        # The early loop's configuration request was its own: the full server asked again and
        # heard nothing it did not ask for.
        assert early.configuration_requests() == 2 and full.configuration_requests() == 1
        hover = early.request("textDocument/hover", {"textDocument": {"uri": (root / "_index.md").as_uri()},
                                                     "position": {"line": 3, "character": 4}})
        assert "Alpha" in json.dumps(hover["result"])
        assert early.close() == 0
        assert not [line for line in early.stderr if "WARNING" in line or "ERROR" in line], early.stderr
    finally:
        early.close()
        full.close()


@pytest.mark.parametrize(("settings", "toml", "expected"), [
    ({"severity": {"PM102": "error"}}, None, [("PM102", 1)]),
    ({"ignore": ["PM1"]}, None, []),
    (None, 'ignore = ["PM102"]\n', []),
    (None, '[severity]\nPM102 = "hint"\n', [("PM102", 4)]),
    ({"severity": {"PM102": "information"}}, '[severity]\nPM102 = "hint"\n', [("PM102", 3)]),  # the editor wins
])
def test_the_editors_settings_decide_the_first_diagnostics(root: Path, settings: dict | None, toml: str | None,
                                                           expected: list):
    if toml is not None:
        (root / ".pmem.toml").write_text(toml, encoding="utf-8")
    client = Client(root, settings=settings)
    try:
        session(client, root)
        first = client.publications(root / NOTE)[0]
        assert [(d["code"], d["severity"]) for d in first] == expected
        assert any(EARLY_LOG in line for line in client.logs()), client.logs()
    finally:
        client.close()


def test_a_request_before_initialized_hands_over_at_once(root: Path):
    client = Client(root)
    try:
        client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": CAPS})
        symbols = client.request("workspace/symbol", {"query": "alpha"})
        assert "error" not in symbols
        assert any("early path: 0 document(s) published" in line for line in client.logs())
        client.notify("initialized", {})
        client.open(root / NOTE)
        client.wait_for_code(root / NOTE, "PM202")
        assert all(len(answers) == 1 for answers in client.responses().values())
    finally:
        client.close()


def test_an_unusual_initialize_is_answered_by_the_full_server(root: Path):
    client = Client(root)
    try:
        bad = client.request("initialize", {"processId": None, "rootUri": root.as_uri()})  # no capabilities
        assert bad["error"]["code"] == -32602
        good = client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        assert "capabilities" in good["result"]
        assert all(len(answers) == 1 for answers in client.responses().values())
        assert not any("early path" in line for line in client.logs())
    finally:
        client.close()


def test_broken_framing_in_the_early_loop_is_the_full_servers_to_recover_from(root: Path):
    client = Client(root)
    try:
        client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": CAPS})
        client.proc.stdin.write(b"X-Odd: 1\r\n" + frame(json.dumps({"jsonrpc": "2.0", "method": "initialized",
                                                                    "params": {}}).encode()))
        client.proc.stdin.flush()
        client.open(root / NOTE)
        client.wait_for_code(root / NOTE, "PM202")
        assert any("early path: 0 document(s) published (framing" in line or "handing over (framing" in line
                   for line in client.logs()), client.logs()
    finally:
        client.close()


def test_the_early_loop_imports_no_protocol_library_and_no_settings_model(root: Path, tmp_path: Path):
    note = root / NOTE
    stream = b"".join(frame(json.dumps(m).encode()) for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": root.as_uri(), "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": note.as_uri(), "languageId": "markdown", "version": 1, "text": note.read_text(encoding="utf-8")}}}))
    (tmp_path / "session.bin").write_bytes(stream)
    script = (
        "import io, os, sys\n"
        "from pmem_lsp.server.early_path import EarlyLoop, _Stream\n"
        f"fd = os.open({str(tmp_path / 'session.bin')!r}, os.O_RDONLY)\n"
        "out = io.BytesIO()\n"
        "handover = EarlyLoop(_Stream(fd), out).run()\n"
        "print(handover.reason, out.getvalue().count(b'publishDiagnostics'), len(handover.replay),\n"
        "      [(u.rsplit('/', 1)[1], v, [d['code'] for d in ds]) for u, (v, ds) in handover.published.items()])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'lsprotocol', 'pydantic', 'cattrs', 'attrs'}))\n"
        "print([m for m in sys.modules if m.startswith('pygls') and m != 'pygls.uris' and m != 'pygls'])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    lines = done.stdout.splitlines()
    assert lines[0] == f"the client closed stdin 1 {len(stream)} [('two%20%F0%9F%98%80%20notes.md', None, ['PM102'])]", \
        done.stdout
    assert lines[1:] == ["[]", "[]"], done.stdout


def test_an_answer_to_the_early_request_after_the_hand_over_is_nobodys_warning(root: Path):
    client = Client(root)
    client.configured.clear()  # the early loop's configuration request waits for the test
    try:
        client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": CAPS})
        client.notify("initialized", {})
        # A notification it does not expect: the loop hands over while its request is unanswered.
        # The pipe keeps the order: the answer, released after, comes behind it.
        client.notify("$/setTrace", {"value": "off"})
        client.configured.set()
        client.open(root / NOTE)
        client.wait_for_code(root / NOTE, "PM202")
        assert any("handing over (a message the early loop does not answer ($/setTrace))" in line
                   for line in client.logs()), client.logs()
        assert client.configuration_requests() == 2
        assert client.close() == 0
        assert not [line for line in client.stderr if "WARNING" in line], client.stderr
    finally:
        client.close()


@pytest.mark.parametrize(("answer", "pushed", "published", "codes"), [
    (None, {"pmem": {}}, 1, [("PM102", 2)]),  # Neovim's client with no settings pushes an empty object
    ({"severity": {"PM102": "error"}}, {"pmem": {"ignore": ["PM1"]}}, 1, [("PM102", 1)]),  # the answer wins
    (None, {"pmem": {"ignore": ["PM1"]}}, 0, None),  # the full server's order decides: it is left to it
])
def test_settings_pushed_after_initialized(root: Path, answer: dict | None, pushed: dict, published: int,
                                           codes: list | None):
    sessions = {}
    for early in (True, False):
        client = sessions[early] = Client(root, settings=answer, early=early)
        client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": CAPS,
                                      "workspaceFolders": [{"uri": root.as_uri(), "name": "memory"}]})
        client.notify("initialized", {})
        client.notify("workspace/didChangeConfiguration", {"settings": pushed})
        client.open(root / NOTE)
        client.wait_for_code(root / NOTE, "PM202")
    try:
        early_first = sessions[True].publications(root / NOTE)[0]
        assert any(f"early path: {published} document(s) published" in line for line in sessions[True].logs())
        if codes is not None:
            assert [(d["code"], d["severity"]) for d in early_first] == codes
            assert early_first == sessions[False].publications(root / NOTE)[0]
        assert all(len(answers) == 1 for answers in sessions[True].responses().values())
    finally:
        for client in sessions.values():
            client.close()


def test_a_late_configuration_answer_is_waited_for(root: Path):
    """A client that answers `workspace/configuration` well after the loop's usual half second of
    silence (an editor busy starting) still gets its first diagnostics from the early path,
    made with the settings it answered. Before, the silence handed over and nothing was
    published early."""
    client = Client(root, settings={"severity": {"PM102": "error"}},
                    env_extra={"PMEM_EARLY_WAIT": "", "PMEM_EARLY_CONFIGURATION_WAIT": "60"})
    client.configured.clear()
    try:
        client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": CAPS,
                                      "workspaceFolders": [{"uri": root.as_uri(), "name": "memory"}]})
        client.notify("initialized", {})
        client.open(root / NOTE)
        client.wait(lambda m: m.get("method") == "workspace/configuration", what="the configuration request")
        late = threading.Timer(2.0, client.configured.set)  # four times the usual silence
        late.start()
        client.wait_for_code(root / NOTE, "PM202")  # the full server's scan landed
        late.join()
        assert any(EARLY_LOG in line and "handing over (published)" in line for line in client.logs()), client.logs()
        first = client.publications(root / NOTE)[0]
        assert [(d["code"], d["severity"]) for d in first] == [("PM102", 1)]  # the answer's settings
        assert client.close() == 0
    finally:
        client.close()


class Silent(Client):
    """A client that advertises `workspace/configuration` and never answers it."""

    def send(self, message: dict) -> None:
        asked = {r["id"] for r in list(self.server_requests) if r["method"] == "workspace/configuration"}
        if "method" not in message and message.get("id") in asked:
            return
        super().send(message)


@pytest.mark.parametrize("early", [True, False], ids=["early", "no-early"])
def test_a_client_that_never_answers_the_configuration_still_gets_diagnostics(root: Path, early: bool):
    """The full server waited for the answer for ever: no root was configured or scanned for
    the whole session. Now it waits `PMEM_CONFIGURATION_WAIT` and goes on with `.pmem.toml`."""
    client = Silent(root, early=early, env_extra={"PMEM_EARLY_WAIT": "", "PMEM_EARLY_CONFIGURATION_WAIT": "0.2",
                                                  "PMEM_CONFIGURATION_WAIT": "0.5"})
    try:
        client.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": CAPS,
                                      "workspaceFolders": [{"uri": root.as_uri(), "name": "memory"}]})
        client.notify("initialized", {})
        client.open(root / NOTE)
        found = client.wait_for_code(root / NOTE, "PM202")  # the scan ran
        assert ("PM102", 2) in [(d["code"], d["severity"]) for d in found]  # the default settings
        assert client.logged("workspace/configuration was not answered")
        assert client.close() == 0
    finally:
        client.close()
