"""What the server does with messages a client should not have sent.

pygls handles well-formed traffic; this layer makes the rest explicit, following JSON-RPC 2.0
and LSP 3.17: every request gets an answer (a result or an error with its id), notifications
the protocol says to drop are dropped, and each oddity is logged once as a warning rather
than shown to the user. Nothing here raises into pygls's read loop.

- body that is not JSON (or not UTF-8)         -> -32700 Parse error, id null
- JSON that is not a message object            -> -32600 Invalid request, id null
- a request with parameters of the wrong shape -> -32602 Invalid params, with its id
- a request before `initialize`                -> -32002 Server not initialized
- a second `initialize`, a request after `shutdown` -> -32600 Invalid request
- notifications before `initialize` (except `exit`) -> dropped
- `didChange` for a document that is not open, or older than the version held -> dropped
- a change whose range ends before it starts   -> applied with its ends in order
  (positions past a line's or the document's end are clamped by pygls, as LSP specifies)
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TypeGuard

import attrs
from cattrs.errors import ClassValidationError
from lsprotocol import types as lsp
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

from .convert import open_document, shown_to_client

if TYPE_CHECKING:
    from cattrs import Converter
    from pygls.lsp.server import LanguageServer

log = logging.getLogger("pmem_lsp.protocol")


@attrs.define
class Unreadable:
    """A message whose shape pygls could not turn into its LSP type."""

    id: Any  # the request id when there is a usable one, else None
    method: str | None
    reason: str


def _usable_id(value: Any) -> TypeGuard[int | str]:
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def _short(exc: BaseException) -> str:
    """The first line of what went wrong, without values from the message: a parameter may
    hold memory text, and this ends up in a log."""
    if isinstance(exc, ClassValidationError):
        return exc.message
    return type(exc).__name__


_PUBLISH = lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS


class PmemProtocol(LanguageServerProtocol):
    def __init__(self, server: LanguageServer, converter: Converter) -> None:
        super().__init__(server, converter)
        self._initialize_seen = False
        self._loop: asyncio.AbstractEventLoop | None = None  # the server's loop, once it runs
        # (id, result) of the `initialize` the early path answered (early.py): this server's own
        # answer to it is dropped, so the client gets one.
        self.answered_early: tuple[Any, Any] | None = None
        self.early_requests: set[Any] = set()  # ids of the early path's requests still unanswered
        # The `shutdown` request received (its id in a tuple; None: none yet) and, once it is
        # answered, set: `exit` right behind it waits for the answer (`exit_status`).
        self.shutdown_request: tuple[Any] | None = None
        self._shutdown_answered = False
        self._leave: Callable[[int], None] | None = None  # `exit` came before that answer
        # pygls's read loop logs a traceback for a body that is not JSON; `report_parse_error`
        # has already answered and logged it in one line.
        logging.getLogger("pygls.server").addFilter(_not_a_parse_error)
        # A JSON-RPC error answered to the client (bad command arguments, say) is the protocol
        # working: one line, not a traceback that reads like a crash.
        logging.getLogger("pygls.protocol.json_rpc").addFilter(_answered_errors_in_one_line)

    # -- turning JSON into messages ------------------------------------------------
    def structure_message(self, data: dict[str, Any]) -> Any:
        """Called by `json.loads` for every object, innermost first; only objects carrying
        `jsonrpc` are messages. One that does not fit its type becomes `Unreadable` instead of
        an exception, so the request id survives and the client gets an answer."""
        if "jsonrpc" not in data:
            return data
        method = data.get("method")
        try:
            if "id" in data:
                if "error" in data:
                    return self._converter.structure(data, lsp.ResponseErrorMessage)
                if "method" in data:
                    request_type = self.get_message_type(method) or JsonRPCRequestMessage
                    return self._converter.structure(data, request_type)
                response_type = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
                return self._converter.structure(data, response_type)
            notification_type = self.get_message_type(method or "") or JsonRPCNotification
            return self._converter.structure(data, notification_type)
        except Exception as exc:  # cattrs raises several types; each means "wrong shape"
            msg_id = data.get("id")
            if "method" not in data and _usable_id(msg_id):
                # A client's answer to our request in a shape we cannot read: take it as no
                # answer (a confirmation not given), so the waiting request still ends.
                log.warning("a response of the wrong shape was read as no answer (%s)", _short(exc))
                return JsonRPCResponseMessage(id=msg_id, jsonrpc=self.VERSION, result=None)
            return Unreadable(msg_id if _usable_id(msg_id) else None,
                              method if isinstance(method, str) else None, _short(exc))

    # -- dispatching ----------------------------------------------------------------
    def handle_message(self, message: Any) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        if isinstance(message, Unreadable):
            self._unreadable(message)
            return
        if not attrs.has(type(message)) or getattr(message, "jsonrpc", None) != self.VERSION:
            log.warning("ignored a message that is not a JSON-RPC 2.0 object (%s)", type(message).__name__)
            if isinstance(message, dict) and "method" not in message:
                return  # looks like a response: nothing may answer it
            msg_id = message.get("id") if isinstance(message, dict) else None
            self._error(msg_id if _usable_id(msg_id) else None, JsonRpcInvalidRequest)
            return
        method = getattr(message, "method", None)
        if method is None and getattr(message, "id", None) in self.early_requests:
            self.early_requests.discard(message.id)  # the early path asked it and no longer waits
            return
        is_request = method is not None and hasattr(message, "id")
        if method == lsp.INITIALIZE:
            if self._initialize_seen:
                log.warning("a second `initialize` was refused")
                self._error(message.id, JsonRpcInvalidRequest, "initialize may only be sent once")
                return
            self._initialize_seen = True
        elif method is not None and not self._initialize_seen and method != lsp.EXIT:
            if is_request:
                log.warning("request %r before initialize was refused", method)
                self._error(message.id, JsonRpcServerNotInitialized)
            else:
                log.warning("notification %r before initialize was dropped", method)
            return
        if (self._shutdown or self.shutdown_request is not None) and is_request:
            log.warning("request %r after shutdown was refused", method)
            self._error(message.id, JsonRpcInvalidRequest, "the server is shutting down")
            return
        if method == lsp.SHUTDOWN and is_request:
            self.shutdown_request = (message.id,)
        super().handle_message(message)

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls would leave through sys.exit, which waits for worker threads: a first scan of
        a large root would keep the process alive long after the client asked it to go. Every
        write pmem makes survives being cut short (docs/decisions.md, "Lifecycle"). A
        `shutdown` written just before is answered first (`exit_when_answered`)."""
        self.exit_when_answered(_leave)
        yield from ()

    def exit_when_answered(self, leave: Callable[[int], None], bound: float = 10.0) -> None:
        """`exit`: `leave` with 0 after a `shutdown` request, else 1 (the LSP). A client may
        write `exit` right behind `shutdown` (one write, no wait for the answer): then `leave`
        is called once that answer is out, or after `bound` seconds. (pygls sets `_shutdown`
        only when its handler is done, so exiting at once lost the answer and said 1; and
        pygls's shutdown cancels every pending handler, so the wait cannot be one.)"""
        if self.shutdown_request is None or self._shutdown_answered or self._loop is None:
            leave(0 if self.shutdown_request is not None or self._shutdown else 1)
            return
        self._leave = leave
        self._loop.call_later(bound, self._left_unanswered, bound)

    def _left_unanswered(self, bound: float) -> None:
        if self._leave is not None:
            log.warning("exit before shutdown was answered (%.0f s)", bound)
            self._leave(0)

    # -- bookkeeping -----------------------------------------------------------------
    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        """pygls keeps the future of every async or generator handler under an id, and only
        forgets those of requests: each notification (every didChange) and each step of a
        built-in handler leaked one future, ~2 KB, for the life of the session (found by the
        didChange flood test). Forget each one once it is done. The removal is deferred to
        the loop: pygls's shutdown iterates over the same dict."""
        loop = self._loop

        def finished(future):
            callback(future)
            if loop is not None and self._request_futures.get(msg_id) is future:
                loop.call_soon_threadsafe(self._forget, msg_id, future)

        super()._execute_handler(msg_id, handler, finished, args, kwargs)

    def _forget(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    def _unreadable(self, message: Unreadable) -> None:
        if message.id is not None and message.method is not None:
            log.warning("request %r had invalid parameters (%s)", message.method, message.reason)
            self._error(message.id, JsonRpcInvalidParams, message.reason)
        elif message.method is not None:
            log.warning("notification %r had invalid parameters and was dropped (%s)", message.method, message.reason)
        else:
            log.warning("ignored a malformed message (%s)", message.reason)
            self._error(message.id, JsonRpcInvalidRequest)

    def _error(self, msg_id: Any, kind: type[JsonRpcException], message: str | None = None) -> None:
        # A plain object: lsprotocol's ResponseErrorMessage would drop a null id, which
        # JSON-RPC 2.0 requires when the request's id could not be read.
        self._send_data({"jsonrpc": self.VERSION, "id": msg_id,
                         "error": {"code": kind.CODE, "message": message or kind.MESSAGE}})

    def _send_response(self, msg_id: Any, result: Any = None, error: lsp.ResponseError | None = None) -> None:
        """Error answers carry no memory text. pygls answers a failed handler with the
        exception's text and traceback, which can quote what the handler was reading: an
        internal error says its kind only (the traceback is in the redacted log), and any
        other error message goes through the secret redaction."""
        if self.answered_early is not None and msg_id == self.answered_early[0]:
            early, self.answered_early = self.answered_early[1], None
            if error is not None or self._converter.unstructure(result) != early:
                # The early path cannot judge every shape lsprotocol checks (docs/decisions.md).
                log.warning("the early path answered initialize otherwise than the server would")
            return
        if error is not None:
            from ..engine.redaction import redact_text

            if error.code == JsonRpcInternalError.CODE:
                kind = error.message.partition(":")[0].strip() or "error"
                error = lsp.ResponseError(code=error.code,
                                          message=f"internal error ({kind}); details are in the server log")
            else:
                error = lsp.ResponseError(code=error.code, message=redact_text(error.message), data=error.data)
        super()._send_response(msg_id, result=result, error=error)
        if self.shutdown_request == (msg_id,):
            self._shutdown_answered = True
            if self._leave is not None:
                self._leave(0)

    def _send_data(self, data: Any) -> None:
        """Every message leaves through here: its human-readable strings are masked
        (`convert.shown_to_client`), the edits, URIs and round-trip data kept exact. Published
        diagnostics are the exception: their findings are masked where they are made (PM401
        names the kind, names go through `names.shown`), and a first publish of a large root
        sends thousands — the walk would add about 70 us to each (docs/decisions.md, "One mask
        at the server's edge")."""
        if data and not isinstance(data, (str, bytes)) and getattr(data, "method", None) != _PUBLISH:
            data = shown_to_client(self._converter.unstructure(data))
        super()._send_data(data)

    def report_parse_error(self, exc: BaseException) -> None:
        log.warning("ignored a message that is not valid JSON (%s)", type(exc).__name__)
        self._error(None, JsonRpcParseError)

    # -- document sync ------------------------------------------------------------
    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        uri = params.text_document.uri
        doc = open_document(self.workspace, uri)
        if doc is None:
            log.warning("didChange for a document that is not open was dropped: %s", uri)
            return
        version = params.text_document.version
        if doc.version is not None and version is not None and version < doc.version:
            log.warning("didChange version %d older than %d was dropped: %s", version, doc.version, uri)
            return
        params.content_changes = [_ordered(change) for change in params.content_changes]
        yield from super().lsp_text_document__did_change(params)


def _leave(status: int) -> None:
    logging.shutdown()
    os._exit(status)


def _not_a_parse_error(record: logging.LogRecord) -> bool:
    return not (record.exc_info and isinstance(record.exc_info[1], ValueError))


def _answered_errors_in_one_line(record: logging.LogRecord) -> bool:
    if record.exc_info and isinstance(record.exc_info[1], JsonRpcException):
        record.msg, record.args = f"{record.getMessage()}: answered with {record.exc_info[1]}", ()
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
    return True


def _ordered(change: lsp.TextDocumentContentChangeEvent) -> lsp.TextDocumentContentChangeEvent:
    if not isinstance(change, lsp.TextDocumentContentChangePartial):
        return change
    start, end = change.range.start, change.range.end
    if (end.line, end.character) >= (start.line, start.character):
        return change
    log.warning("a change whose range ends before it starts was applied with its ends swapped")
    return lsp.TextDocumentContentChangePartial(range=lsp.Range(start=end, end=start), text=change.text,
                                                range_length=change.range_length)
