"""The server object, its feature modules registered in one place, and how it starts."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..engine.host import MemoryHost, MemoryRoot
from ..engine.redaction import redact_text
from . import (
    add_route,
    code_actions,
    code_lens,
    completion,
    configuration,
    documents,
    history_commands,
    hover,
    lifecycle_commands,
    links,
    references,
    rename,
    reports,
    symbols,
    watcher,
)
from .early_path import Handover, Replayed
from .framing import read_messages
from .protocol import PmemProtocol
from .publisher import Publisher
from .roots import configure_roots, editor_settings, fetch_configuration, scan_all, workspace_folders

log = logging.getLogger("pmem_lsp")


class PmemServer(LanguageServer):
    protocol: PmemProtocol  # made by pygls from `protocol_cls`

    def __init__(self) -> None:
        super().__init__("pmem-lsp", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=PmemProtocol)
        self.host = MemoryHost()
        self.folders: list[Path] = []
        self.editor_settings: dict[str, Any] = {}
        self.init_settings: dict[str, Any] = {}  # from initializationOptions, the base layer
        # The one owner of published findings: the debounce, what each document was sent and
        # from which version, and the frozen view handlers read (publisher.py).
        self.publisher = Publisher(self)
        self._tasks: set[asyncio.Task] = set()
        # Moves this server asked the client to make (lifecycle), so that the client's
        # rename notifications for them are recognised as ours.
        self.own_moves: set[tuple[Path, Path]] = set()
        # Set once the roots are known (after `initialized`); requests that need them wait.
        self.roots_ready = asyncio.Event()
        # Per root: set once its first scan has landed (`scanned`); requests that need it wait.
        self.scan_done: dict[Path, asyncio.Event] = {}
        # One watchfiles task per root: (stop event, task).
        self.watchers: dict[Path, tuple[asyncio.Event, asyncio.Task]] = {}
        self.progress_tokens: set[str] = set()  # work-done progress begun and not yet ended
        # From the early path: (uri, version) of a `didOpen` it read → the disk's text then.
        self.opened_disk: dict[tuple[str, Any], str | None] = {}
        # Per root: the settings warning last shown (roots.configure_roots says it once).
        self.settings_warned: dict[Path, str] = {}

    async def roots_known(self, timeout: float) -> bool:
        """Wait (up to `timeout` seconds) until the session's roots are known."""
        try:
            await asyncio.wait_for(self.roots_ready.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def scan_event(self, root: MemoryRoot) -> asyncio.Event:
        event = self.scan_done.get(root.path)
        if event is None:
            event = self.scan_done[root.path] = asyncio.Event()
        if root.state is not None and root.analysis is not None:
            event.set()
        return event

    async def scanned(self, root: MemoryRoot, timeout: float) -> bool:
        """Wait (up to `timeout` seconds) until `root` has been scanned once."""
        try:
            await asyncio.wait_for(self.scan_event(root).wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def background(self, coro: Coroutine) -> None:
        """Run `coro` on the loop without blocking the handler; keep a reference until done."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())
            # The exception's text can quote memory (a UnicodeError carries the whole string):
            # the user sees its kind, the log has the rest.
            self.warn(f"pmem: internal error ({type(task.exception()).__name__}); details are in the server log")

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors outside a request's answer end here. A body that is not JSON gets a parse
        error instead of a pop-up per bad message; anything else is a failure of ours, shown
        by kind only (its text can quote memory; pygls has logged the traceback)."""
        if source is FeatureRequestError:
            return  # the request's own error response says it
        if isinstance(error, ValueError) and source is JsonRpcException:  # JSONDecodeError, UnicodeDecodeError
            self.protocol.report_parse_error(error)
            return
        self.warn(f"pmem: internal error ({type(error).__name__}); details are in the server log")

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls's stdio loop with a reader that recovers from broken framing (framing.py)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        try:
            asyncio.run(read_messages(self._stop_event, reader, self.protocol, self.report_server_error))
        except BrokenPipeError:
            log.error("the client closed the connection; stopping")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    # What reaches the user's screen or log goes through the secret redaction: these
    # messages name files and settings, never memory text, but a file name can be a secret.
    def log(self, message: str) -> None:
        self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Info, message=redact_text(message)))

    def warn(self, message: str) -> None:
        message = redact_text(message)
        log.warning(message)
        self.show(lsp.MessageType.Warning, message)

    def show(self, kind: lsp.MessageType, message: str) -> None:
        """window/showMessage, redacted: the only way the server shows the user a message."""
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=redact_text(message)))


def create_server() -> PmemServer:
    server = PmemServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: PmemServer, params: lsp.InitializeParams) -> None:
        ls.init_settings = ls.editor_settings = editor_settings(params.initialization_options)
        ls.folders = workspace_folders(params)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: PmemServer, params: lsp.InitializedParams) -> None:
        await fetch_configuration(ls)
        configure_roots(ls, ls.folders)
        ls.roots_ready.set()
        # Documents opened while the roots were unknown get their own findings at once.
        for path in list(ls.host.buffers):
            ls.publisher.early(path)
        ls.background(scan_all(ls))

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(ls: PmemServer, *args: Any) -> None:
        ls.publisher.stop()
        await watcher.stop_all(ls)

    for feature in FEATURES:
        feature.register(server)
    return server


# Every feature module, each registering its handlers: one list to read what the server does.
FEATURES = (
    documents,  # didOpen, didChange, didSave, didClose: buffers and their diagnostics
    configuration,  # settings and workspace folders
    code_actions,  # quick fixes and lifecycle actions
    lifecycle_commands,  # pmem.upgrade|archive|delete|recover|purge
    reports,  # pmem.status, pmem.health
    add_route,  # pmem.addRoute
    history_commands,  # pmem.history, pmem.diff, pmem.historyText, pmem.undo, pmem.review.accept
    hover, links, references, completion, symbols, rename, code_lens,  # navigation
)


def start(handover: Handover | None = None) -> int:
    """Serve over stdin/stdout, the only transport: a TCP listener would let any local user
    read the memory through hover and pmem.status (docs/SECURITY.md). `handover`: what the
    early path (early.py) read and answered before this server was imported."""
    from ..engine.redaction import install
    from ..engine.root_state import keep_disk_docs

    # stderr is for warnings and errors: clients show every stderr line as an error (VS Code
    # writes them as `[error]`). What the user may want to know goes to window/logMessage
    # (`PmemServer.log`); pygls's own INFO lines (one per registered feature) are noise.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    install()  # after basicConfig: every record on stderr goes through the secret redaction
    # Parsed documents of files not open in the editor are not kept (RSS on a 10k-file root:
    # docs/performance.md); the open ones are, and a small LRU holds the last ones parsed.
    keep_disk_docs(False)
    from ..engine.secrets import _gate

    _gate.staying()  # the compiled secrets gate for large texts only: its memory stays with the server
    server = create_server()
    if handover is None:
        server.start_io()
        return 0
    if handover.initialize_id is not None:
        server.protocol.answered_early = (handover.initialize_id, handover.initialize_result)
    server.protocol.early_requests = set(handover.unanswered)
    server.opened_disk = handover.opened_disk
    # What the early path published counts as sent: the replayed didOpen sends nothing again
    # unless the full server finds something else (publisher.py, docs/architecture.md).
    server.publisher.handed_over(handover.published)
    server.start_io(stdin=Replayed(handover.replay, sys.stdin.buffer))  # type: ignore[arg-type]
    return 0
