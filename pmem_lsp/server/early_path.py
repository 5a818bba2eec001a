"""The early path: a session's first messages answered before pygls and lsprotocol are imported.

Importing the full server (pygls, lsprotocol, every feature module) costs about half a second
of CPU, and an editor shows nothing until it is done. So `pmem-lsp` first runs this loop, which
needs only the engine's summary rules:

1. read `initialize` (our own framing reader over fd 0) and answer it with exactly the
   capabilities the full server would send (`capabilities`; a test holds them equal);
2. read `initialized`, and when the client can answer it, ask `workspace/configuration` for the
   `pmem` section and wait for the answer (up to `CONFIGURATION_WAIT`, however quiet the client
   is meanwhile): the first diagnostics already use the editor's settings (docs/decisions.md,
   "The early path");
3. publish each opened document's summary findings (`textDocument/didOpen`), the same findings
   and the same JSON the full server publishes for it before its first scan lands
   (`engine/first_findings.py`, `diagnostic_json`);
4. hand over: import the full server (in a thread, while this one goes on reading and notes
   the disk's text of each document opened meanwhile) and give it every byte read
   (`Handover.replay`), except the client's answer to our own configuration request. pygls
   reads the session from its first byte; its answer to the replayed `initialize` is dropped
   (`PmemProtocol`), so the client gets exactly one. The full server asks for the
   configuration again and publishes again.

Anything this loop does not expect — a request other than `initialize`, a notification other
than `initialized` and `didOpen`, odd framing, a body that is not a JSON object, an
`initialize` of an unusual shape, settings that need a warning, a quiet client — makes it hand
over at once, and the full server handles it as if there had been no early path. Off with
`PMEM_NO_EARLY=1`.
"""

from __future__ import annotations

import json
import os
import re
import select
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeGuard

from .. import __version__
from ..engine.env_seconds import env_seconds
from .session import candidate_roots, editor_settings, folder_paths, path_to_uri, uri_to_path, valid_unicode

OFF = "PMEM_NO_EARLY"
# Seconds the loop waits for the client's next message before it hands over (a client that
# opens no document, or answers slowly, gets the full server rather than a wait).
WAIT = env_seconds("PMEM_EARLY_WAIT", 0.5)
# Seconds the loop waits for the answer to its configuration request, however quiet the client
# is meanwhile (an editor busy starting answers late; the first diagnostics need the answer).
CONFIGURATION_WAIT = env_seconds("PMEM_EARLY_CONFIGURATION_WAIT", 5.0)
MAX_BODY = 4 * 1024 * 1024  # a bigger message (a huge buffer) is left to the full server
CONFIGURATION_ID = "pmem-early-configuration"
QUIET = "the client said nothing more"

# What the full server answers `initialize` with, as JSON (tests/server/test_server_early_answer.py
# compares it with the full server's answer for many clients). Only these parts depend on the
# client: the position encoding, `willSave`/`willSaveWaitUntil` (false, where the client says
# anything) and the `willRename` filters.
SERVER_INFO = {"name": "pmem-lsp", "version": __version__}
BASE_CAPABILITIES: dict[str, Any] = {
    "textDocumentSync": {"openClose": True, "change": 2, "save": {"includeText": False}},
    "completionProvider": {"triggerCharacters": ["(", "/", "["]},
    "hoverProvider": True,
    "definitionProvider": True,
    "referencesProvider": True,
    "documentSymbolProvider": True,
    "codeActionProvider": {"codeActionKinds": ["quickfix", "refactor.pmem"]},
    "codeLensProvider": {"resolveProvider": True},
    "documentLinkProvider": {"resolveProvider": False},
    "workspaceSymbolProvider": {"resolveProvider": False},
    "executeCommandProvider": {"commands": ["pmem.upgrade", "pmem.archive", "pmem.delete", "pmem.recover",
                                            "pmem.purge", "pmem.status", "pmem.health", "pmem.addRoute",
                                            "pmem.history", "pmem.diff", "pmem.historyText", "pmem.undo",
                                            "pmem.review.accept"]},
}
WILL_RENAME = {"filters": [{"pattern": {"glob": "**/*.md", "matches": "file"}, "scheme": "file"},
                           {"pattern": {"glob": "**", "matches": "folder"}, "scheme": "file"}]}
ENCODINGS = ("utf-8", "utf-16", "utf-32")

_SEVERITY = {"error": 1, "warning": 2, "information": 3, "hint": 4}
_LENGTH = re.compile(rb"content-length: *(\d{1,9}) *", re.IGNORECASE)
_TYPE = re.compile(rb"content-type:.*", re.IGNORECASE)


class HandOver(Exception):
    """Stop the early loop here; the full server takes the session from its first byte."""


@dataclass
class Handover:
    """What the full server needs from the early loop."""

    replay: bytes = b""  # every byte read, minus our own configuration answer
    initialize_id: Any = None  # the `initialize` already answered (None: not answered)
    initialize_result: dict[str, Any] | None = None
    reason: str = ""
    # (uri, version) of each `didOpen` read → the file's text on disk when it came (None: no
    # such file). The full server handles it later; the disk may have changed meanwhile.
    opened_disk: dict[tuple[str, Any], str | None] = field(default_factory=dict)
    unanswered: set[str] = field(default_factory=set)  # ids of our requests not answered yet
    # What the loop published: URI → (the version it was made from, None: as the full server's
    # own publication before a scan; the diagnostics as JSON).
    published: dict[str, tuple[int | None, list[dict[str, Any]]]] = field(default_factory=dict)


# -- the answer to initialize ------------------------------------------------------------
def position_encoding(client: dict[str, Any]) -> str:
    """The client's first encoding that the server supports, else UTF-16 (as pygls chooses)."""
    general = client.get("general") or {}
    for encoding in general.get("positionEncodings") or ():
        if encoding in ENCODINGS:
            return encoding
    return "utf-16"


def capabilities(client: dict[str, Any]) -> dict[str, Any]:
    caps: dict[str, Any] = {"positionEncoding": position_encoding(client), **json.loads(json.dumps(BASE_CAPABILITIES))}
    sync = (client.get("textDocument") or {}).get("synchronization") or {}
    for key in ("willSave", "willSaveWaitUntil"):  # pygls: the client's flag `and` a handler we lack
        if sync.get(key) is not None:
            caps["textDocumentSync"][key] = False
    operations = ((client.get("workspace") or {}).get("fileOperations") or {})
    caps["workspace"] = {"workspaceFolders": {"supported": True, "changeNotifications": True},
                         "fileOperations": {"willRename": WILL_RENAME} if operations.get("willRename") else {}}
    return caps


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    return {"capabilities": capabilities(params.get("capabilities") or {}), "serverInfo": dict(SERVER_INFO)}


def _optional(value: Any, kind: type | tuple[type, ...]) -> bool:
    return value is None or (isinstance(value, kind) and not isinstance(value, bool)) or (
        kind is bool and isinstance(value, bool))


def plain_initialize(params: Any) -> TypeGuard[dict[str, Any]]:
    """`initialize` parameters of the usual shape, in every part the answer or the settings
    depend on. Anything else is the full server's to judge (it may answer invalid params)."""
    if not isinstance(params, dict) or "processId" not in params or not _optional(params["processId"], int):
        return False
    caps = params.get("capabilities")
    if not isinstance(caps, dict):
        return False
    if not all(_optional(params.get(key), str) for key in ("rootUri", "rootPath", "locale")):
        return False
    if params.get("trace") not in (None, "off", "messages", "verbose"):
        return False
    folders = params.get("workspaceFolders")
    if folders is not None and not (isinstance(folders, list) and all(
            isinstance(f, dict) and isinstance(f.get("uri"), str) and isinstance(f.get("name"), str)
            for f in folders)):
        return False
    info = params.get("clientInfo")
    if info is not None and not (isinstance(info, dict) and isinstance(info.get("name"), str)
                                 and _optional(info.get("version"), str)):
        return False
    general, workspace, document = caps.get("general"), caps.get("workspace"), caps.get("textDocument")
    if not (_optional(general, dict) and _optional(workspace, dict) and _optional(document, dict)):
        return False
    sync = (document or {}).get("synchronization")
    flags = ("willSave", "willSaveWaitUntil")
    if not (_optional(sync, dict) and all(_optional((sync or {}).get(k), bool) for k in flags)):
        return False
    encodings = (general or {}).get("positionEncodings")
    if encodings is not None and not (isinstance(encodings, list) and all(isinstance(e, str) for e in encodings)):
        return False
    workspace = workspace or {}
    operations = workspace.get("fileOperations")
    return (_optional(workspace.get("configuration"), bool) and _optional(operations, dict)
            and _optional((operations or {}).get("willRename"), bool))


# -- diagnostics as JSON -----------------------------------------------------------------
def _units(text: str, encoding: str) -> int:
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _position(lines: Sequence[str], line: int, col: int, encoding: str, bom: bool) -> dict[str, int]:
    from ..engine.line_index import client_column

    character = client_column(line, max(0, col), bom)
    if 0 <= line < len(lines):  # past the text: as it is (convert.Positions)
        character = _units(lines[line][:character], encoding)
    return {"line": max(0, line), "character": character}


def diagnostic_json(finding: Any, lines: list[str], encoding: str, bom: bool = False) -> dict[str, Any]:
    """`convert.to_diagnostic` for the early rules, as the JSON pygls would write. `lines`: the
    lines of the text analysed, `bom`: the client's buffer began with a BOM that text lacks."""
    from ..engine.first_findings import EARLY_RULES
    from ..engine.line_index import client_lines
    from ..engine.names import clean

    rule = EARLY_RULES[finding.code]
    severity = finding.severity or rule.severity
    shown = client_lines(lines, bom)
    return {"range": {"start": _position(shown, finding.line, finding.col, encoding, bom),
                      "end": _position(shown, finding.end_line, finding.end_col, encoding, bom)},
            "message": clean(finding.message), "severity": _SEVERITY[severity.value], "code": finding.code,
            "source": "pmem", "data": {"name": rule.name, **(finding.data or {})}}


# -- reading and writing -----------------------------------------------------------------
class _Stream:
    """Content-Length framed messages from a file descriptor, every byte kept for the replay."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()  # read and not yet taken as a message
        self.taken: list[bytes] = []  # each message taken, exactly as it came
        self.opened_disk: dict[tuple[str, Any], str | None] = {}

    def _fill(self, timeout: float | None) -> None:
        if timeout is not None:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                raise HandOver(QUIET)
        data = os.read(self.fd, 1 << 16)
        if not data:
            raise HandOver("the client closed stdin")
        self.buffer += data

    def ready(self) -> bool:
        """A whole message is read already, or the client has written more."""
        return self._frame() is not None or bool(select.select([self.fd], [], [], 0)[0])

    def _frame(self) -> tuple[int, int] | None:
        """(end of headers, body length) of the next message when it is all in the buffer."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > 1024:
                raise HandOver("framing the early loop does not read")
            return None
        length = None
        for header in bytes(self.buffer[:end]).split(b"\r\n"):
            match = _LENGTH.fullmatch(header)
            if match:
                length = int(match.group(1))
            elif not _TYPE.fullmatch(header):
                raise HandOver("framing the early loop does not read")
        if length is None or length > MAX_BODY:
            raise HandOver("framing the early loop does not read")
        return (end + 4, length) if len(self.buffer) >= end + 4 + length else None

    def next(self, timeout: float | None) -> dict[str, Any]:
        while True:
            frame = self._frame()
            if frame is not None:
                break
            self._fill(timeout)
        start, length = frame
        try:
            message = json.loads(bytes(self.buffer[start:start + length]))
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deep
            raise HandOver("a body that is not JSON") from None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise HandOver("a body that is not a JSON-RPC message")
        self.taken.append(bytes(self.buffer[:start + length]))
        del self.buffer[:start + length]
        opened = _opened(message)
        if opened is not None:
            self._disk_when_opened(opened, message["params"]["textDocument"].get("version"))
        return message

    def _disk_when_opened(self, opened: _Opened, version: Any) -> None:
        """Whether a buffer holds unsaved edits is judged against the disk when it was opened
        (`Buffer.opened`); the full server reads this message later, maybe after an agent wrote."""
        from ..engine.root_state import read_regular_text
        from ..engine.zones import is_markdown

        path = uri_to_path(opened.uri)
        if path is not None and is_markdown(path.name):
            self.opened_disk[(opened.uri, version)] = read_regular_text(path)

    def drop_last(self) -> None:
        """The last message taken is ours only (the answer to our own request): not replayed."""
        self.taken.pop()

    def replay(self) -> bytes:
        return b"".join(self.taken) + bytes(self.buffer)


def _write(out: BinaryIO, message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")).encode("utf-8")
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


# -- the loop ----------------------------------------------------------------------------
@dataclass
class _Opened:
    uri: str
    text: str


@dataclass
class EarlyLoop:
    stream: _Stream
    out: BinaryIO
    wait: float = WAIT
    configuration_wait: float = CONFIGURATION_WAIT
    handover: Handover = field(default_factory=Handover)
    params: dict[str, Any] = field(default_factory=dict)
    opened: list[_Opened] = field(default_factory=list)
    published: int = 0
    pushed: bool = False  # settings came with `didChangeConfiguration` before the configuration answer
    answered: bool = False  # the configuration answer held the `pmem` settings

    def run(self) -> Handover:
        try:
            self._session()
            self.handover.reason = "published"
        except HandOver as stop:
            self.handover.reason = str(stop)
        except Exception as exc:  # a failure of ours: the full server takes over as if we had not run
            self.handover.reason = f"an internal error ({type(exc).__name__})"
            sys.stderr.write(f"WARNING pmem_lsp.early: {self.handover.reason}; the server reads the session itself\n")
        self.handover.replay = self.stream.replay()
        self.handover.opened_disk = self.stream.opened_disk
        if self.handover.initialize_id is not None:
            _write(self.out, {"method": "window/logMessage", "params": {"type": 4, "message": (
                f"pmem: early path: {self.published} document(s) published before the server started; "
                f"handing over ({self.handover.reason})")}})
        return self.handover

    def read_while(self, busy: threading.Thread) -> Handover:
        """Keep reading while the full server is imported (`busy`): the client has had its
        answer to `initialize` and goes on. Each `didOpen` has its disk text noted as it comes,
        and a late answer to our configuration request is taken out of the replay."""
        while busy.is_alive():
            try:
                message = self.stream.next(0.05)
            except HandOver as stop:
                if str(stop) == QUIET:
                    continue
                break  # odd framing, or the end of stdin: the full server's to read
            except Exception:  # a failure of ours (a URI urllib cannot split): the rest is pygls's
                break
            if "method" not in message and message.get("id") in self.handover.unanswered:
                self.handover.unanswered.discard(message["id"])
                self.stream.drop_last()
        busy.join()
        self.handover.replay = self.stream.replay()
        self.handover.opened_disk = self.stream.opened_disk
        return self.handover

    def _session(self) -> None:
        first = self.stream.next(timeout=None)  # nothing to do before the client speaks
        if first.get("method") != "initialize" or not _usable_id(first.get("id")):
            raise HandOver("the session did not start with initialize")
        params = first.get("params")
        if not plain_initialize(params):
            raise HandOver("an initialize of an unusual shape")
        self.params = params
        result = initialize_result(params)
        _write(self.out, {"id": first["id"], "result": result})
        self.handover.initialize_id, self.handover.initialize_result = first["id"], result
        second = self.stream.next(self.wait)
        if second.get("method") != "initialized" or "id" in second:
            raise HandOver("initialize was not followed by initialized")
        settings = editor_settings(params.get("initializationOptions"))
        held = False
        if (params["capabilities"].get("workspace") or {}).get("configuration"):
            settings, held = self._configuration(settings)
        if held:  # the full server answers what came meanwhile; what was opened before it is published
            self._publish_all(settings)
            raise HandOver("a request came while the configuration was asked for")
        while not self.opened:
            self._expect_open(self.stream.next(self.wait))
        self._publish_all(settings)
        while self.stream.ready():  # documents opened together are published together
            self._expect_open(self.stream.next(self.wait))
            self._publish_all(settings)

    def _configuration(self, base: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Ask for the `pmem` section as the full server does (`roots.fetch_configuration`) and
        wait for the answer. Documents opened meanwhile are kept. A request that comes meanwhile
        (an editor asks for symbols or code lenses right after opening) is left for the full
        server, which reads it from the replay; the wait for the answer already asked for goes
        on, and then the loop hands over (True). Any other notification changes what was opened
        or how: the loop hands over at once."""
        _write(self.out, {"id": CONFIGURATION_ID, "method": "workspace/configuration",
                          "params": {"items": [{"section": "pmem"}]}})
        self.handover.unanswered.add(CONFIGURATION_ID)
        held = False
        # The answer is waited for up to its own deadline, not the usual silence: a client that
        # answers late would otherwise get nothing published early.
        deadline = time.monotonic() + max(self.wait, self.configuration_wait)
        while True:
            try:
                message = self.stream.next(max(0.0, deadline - time.monotonic()))
            except HandOver as stop:
                if str(stop) == QUIET:
                    raise HandOver("the configuration was not answered in time") from None
                raise
            if "method" not in message and message.get("id") == CONFIGURATION_ID:
                break
            if isinstance(message.get("method"), str) and _usable_id(message.get("id")):
                held = True
            elif not held:
                self._expect_open(message)
            elif _opened(message) is None:  # after a request, a document opened is the full server's
                raise HandOver(f"a message the early loop does not answer ({_name(message)})")
        self.stream.drop_last()
        self.handover.unanswered.discard(CONFIGURATION_ID)
        result = message.get("result")
        if "error" in message or not isinstance(result, list):
            raise HandOver("the configuration was not answered with a list")
        if result and isinstance(result[0], dict):
            # What the full server ends with, whatever `didChangeConfiguration` pushed meanwhile:
            # it asks again and rebuilds its settings from the answer.
            self.answered = True
            return {**base, **editor_settings(result[0])}, held
        if self.pushed:
            raise HandOver("settings pushed by didChangeConfiguration")
        return base, held

    def _expect_open(self, message: dict[str, Any]) -> None:
        """A document opened, or settings pushed (Neovim sends `didChangeConfiguration` right
        after `initialized` when its client has `settings`); anything else hands over."""
        params = message.get("params")
        if (message.get("method") == "workspace/didChangeConfiguration" and "id" not in message
                and isinstance(params, dict) and "settings" in params):
            if editor_settings(params["settings"]) and not self.answered:
                if CONFIGURATION_ID not in self.handover.unanswered:
                    raise HandOver("settings pushed by didChangeConfiguration")
                self.pushed = True  # the configuration answer, when it holds settings, wins
            return
        opened = _opened(message)
        if opened is None:
            raise HandOver(f"a message the early loop does not answer ({_name(message)})")
        self.opened.append(opened)

    def _publish_all(self, settings: dict[str, Any]) -> None:
        opened, self.opened = self.opened, []
        for doc in opened:
            self._publish(doc, settings)

    def _publish(self, doc: _Opened, editor: dict[str, Any]) -> None:
        """The full server's `publish_early` for one opened document, from the engine alone."""
        from ..engine.zones import is_markdown

        path = uri_to_path(doc.uri)
        if path is None or not is_markdown(path.name):
            return
        found = locate(self._roots(editor), path)
        if found is None:
            return
        root, rel = found
        settings = _settings(root, editor)
        from ..engine.first_findings import buffer_findings
        from ..engine.line_index import split_lines, strip_bom

        text, bom = strip_bom(valid_unicode(doc.text))  # as the host takes a buffer
        encoding = position_encoding(self.params["capabilities"])
        lines = split_lines(text)
        diagnostics = [diagnostic_json(f, lines, encoding, bom) for f in buffer_findings(rel, text, settings)]
        uri = path_to_uri(root / rel)
        _write(self.out, {"method": "textDocument/publishDiagnostics",
                          "params": {"uri": uri, "diagnostics": diagnostics}})
        self.handover.published[uri] = (None, diagnostics)
        self.published += 1

    def _roots(self, editor: dict[str, Any]) -> list[Path]:
        """`roots.configure_roots`'s roots, or a hand-over where it would warn."""
        from ..engine.zones import discover_root, looks_like_root

        configured = editor.get("root")
        configured = configured if isinstance(configured, str) else None
        if configured and not looks_like_root(discover_root(configured)):
            raise HandOver("pmem.root is not a memory root (the full server says so)")
        folders = folder_paths([f["uri"] for f in self.params.get("workspaceFolders") or []],
                               self.params.get("rootUri"), self.params.get("rootPath"))
        return candidate_roots(folders, configured)


def locate(roots: list[Path], path: Path) -> tuple[Path, str] | None:
    """`MemoryHost.locate` over plain paths: the innermost root holding `path`, and the path
    relative to it (a test holds the two equal)."""
    best: tuple[Path, str] | None = None
    for root in roots:
        rel = None
        for base in (root, Path(os.path.realpath(root))):
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            break
        if not rel or rel == ".":
            continue
        if best is None or len(rel) < len(best[1]):
            best = (root, rel)
    return best


def _settings(root: Path, editor: dict[str, Any]) -> Any:
    """The root's settings as `roots.configure_roots` resolves them; None for the defaults
    (no `.pmem.toml`, no editor settings: nothing to validate, so no pydantic import)."""
    overrides = {k: v for k, v in editor.items() if k != "root"}
    try:
        os.stat(root / ".pmem.toml")
    except FileNotFoundError:
        if not overrides:
            return None
    except OSError:
        pass  # unreadable: resolve_settings says why, and the full server warns
    from ..engine.settings import SettingsError, resolve_settings

    try:
        return resolve_settings(root, overrides)
    except SettingsError:
        raise HandOver("settings the full server warns about") from None


def _opened(message: dict[str, Any]) -> _Opened | None:
    """The document a well-formed `didOpen` notification opens, else None."""
    params = message.get("params")
    document = params.get("textDocument") if isinstance(params, dict) else None
    if (message.get("method") != "textDocument/didOpen" or "id" in message or not isinstance(document, dict)
            or not isinstance(document.get("uri"), str) or not isinstance(document.get("text"), str)
            or not _optional(document.get("version"), int)):
        return None
    return _Opened(document["uri"], document["text"])


def _usable_id(value: Any) -> bool:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _name(message: dict[str, Any]) -> str:
    method = message.get("method")
    return method if isinstance(method, str) else "a response"


# -- the entry point ---------------------------------------------------------------------
class Replayed:
    """pygls's stdin: the bytes the early loop read, then the rest of the stream."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        import io

        self._head = io.BytesIO(head)
        self._rest = rest

    def readline(self) -> bytes:
        line = self._head.readline()
        if line.endswith(b"\n"):
            return line
        return line + self._rest.readline()

    def read(self, n: int) -> bytes:
        data = self._head.read(n)
        if len(data) < n:
            data += self._rest.read(n - len(data))
        return data


def enabled() -> bool:
    """On unless `PMEM_NO_EARLY` is set; off on Windows, where `select` cannot wait on a pipe."""
    return os.environ.get(OFF, "") in ("", "0") and os.name != "nt"


def serve() -> int:
    """`pmem-lsp`: the early loop, then the full server with what the loop read. The full
    server is imported in a thread while this one goes on reading (the import holds the
    interpreter most of the time; reading waits on the pipe)."""
    handover = None
    if enabled():
        loop = EarlyLoop(_Stream(sys.stdin.fileno()), sys.stdout.buffer)
        loop.run()
        # What reading a `didOpen` needs, imported here first: two threads importing the same
        # modules at once can trip the import lock's deadlock detection.
        from ..engine import root_state, zones  # noqa: F401

        importing = threading.Thread(target=_import_full_server, name="pmem-import", daemon=True)
        importing.start()
        handover = loop.read_while(importing)
    from .app import start

    return start(handover)


def _import_full_server() -> None:
    import importlib

    importlib.import_module("pmem_lsp.server.app")
