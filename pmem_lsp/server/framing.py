"""Reading `Content-Length` framed messages from stdin, recovering from broken framing.

pygls's own loop needs `Content-Length: N\\r\\n` exactly and trusts N. One bad header
(`content-length`, a non-number, a length longer than the body) then glues every later
message's body to the next header line, and the server goes deaf for the rest of the
session. Here a length header is recognised anywhere on a line and in any case, so the
stream falls back into step at the next well-framed message; at most the broken message and
the one it swallowed are lost, and each loss is answered or logged by the protocol.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException

log = logging.getLogger("pmem_lsp.framing")

# The longest message read. A 50 MB buffer sent by didOpen is about that size once JSON-escaped
# (more with many escapes); a length beyond this is a broken header, not a message, and
# waiting for that many bytes would leave the server deaf for the rest of the session.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024

_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r?\n?$", re.IGNORECASE)


async def read_messages(stop_event: Any, reader: Any, protocol: Any,
                        error_handler: Callable[[Exception, type], Any]) -> None:
    length: int | None = None
    while not stop_event.is_set():
        line = await reader.readline()
        if not line:
            break  # the client closed stdin
        match = _LENGTH.search(line)
        if match:
            if match.start() > 0:
                log.warning("skipped %d bytes that were not part of a message", match.start())
            length = int(match.group(1))
            if length > MAX_MESSAGE_BYTES:
                log.warning("ignored a header announcing %d bytes (more than %d)", length, MAX_MESSAGE_BYTES)
                length = None
            continue
        if line.strip():
            continue  # another header (Content-Type), or stray bytes between messages
        if length is None:
            continue  # a blank line with no length before it: nothing to read
        body = await reader.readexactly(length)
        if len(body) < length:
            break  # the client closed stdin mid-message
        length = None
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except ValueError as exc:  # not JSON, or not UTF-8: the protocol answers -32700
            error_handler(exc, JsonRpcException)
            continue
        except RecursionError:  # JSON nested deeper than the decoder goes: unreadable too
            error_handler(ValueError("JSON nested too deep"), JsonRpcException)
            continue
        try:
            protocol.handle_message(message)
        except Exception as exc:  # a failure of ours, not the client's: never a parse error
            error_handler(exc, RuntimeError)
