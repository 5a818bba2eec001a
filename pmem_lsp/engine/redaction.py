"""Defence in depth: no likely secret in a log line, an error message or a traceback.

Everything that shows memory text on purpose (diagnostics, hover, status, previews) masks
secrets where it is built. This module is the net under it, for text that was never meant
to carry memory text but can: a log record that quotes a malformed request, an exception
whose message repeats a value, a traceback. `redact_text` replaces every likely secret the
PM401 detector finds with `[REDACTED]`; `install` puts it in front of the process's log
output and uncaught-exception printing. The server's `start()` and the CLI's `main()` call
`install()`.

The detector reads lines. Log text often holds memory text in escaped form (a repr or JSON
of a request: `'password: x\\nnext'`), so escaped line breaks count as line breaks, and
escaped quotes and tabs are read as a space and the character: the positions stay the same,
so the spans found map straight back to the original text. The allow marker
(`<!-- pmem: allow-secret -->`) and the `secrets.allow` settings are not honoured here: a
log can afford to hide a value the user allowed.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import traceback
from types import TracebackType

__all__ = ["RedactingFilter", "install", "redact_text"]

# Line breaks, real or escaped (repr/JSON): the detector sees each piece as a line.
_BREAKS = re.compile(r"\r\n|[\n\r]|\\r\\n|\\[nr]")
# Same-length rewrites, for detection only: `\"` → ` "`, `\'` → ` '`, `\t` → two spaces.
_ESCAPES = re.compile(r"\\([\"'])|\\t")


def _unescape(m: re.Match[str]) -> str:
    return " " + m.group(1) if m.group(1) else "  "


def redact_text(text: str) -> str:
    """`text` with every likely secret value replaced by `[REDACTED]` (a PEM block, line
    breaks included, by one `[REDACTED]`). Text without a likely secret is returned as is."""
    if not text:
        return text
    # Imported here: installing the filter costs nothing until a record is written.
    from .secrets import ALLOW_MARKER, REDACTED, find_secrets

    probe = text
    if "\\" in probe:
        probe = _ESCAPES.sub(_unescape, probe)
    if ALLOW_MARKER in probe:
        probe = probe.replace(ALLOW_MARKER, " " * len(ALLOW_MARKER))
    starts = [0]
    ends = []
    for m in _BREAKS.finditer(probe):
        ends.append(m.start())
        starts.append(m.end())
    ends.append(len(probe))
    matches = find_secrets([probe[a:b] for a, b in zip(starts, ends, strict=True)])
    if not matches:
        return text
    spans: list[list[int]] = []
    for match in sorted(matches, key=lambda s: (s.line, s.start)):
        a, b = starts[match.line] + match.start, starts[match.end_line] + match.end
        if spans and a <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    out = []
    last = 0
    for a, b in spans:
        out += [text[last:a], REDACTED]
        last = b
    out.append(text[last:])
    return "".join(out)


_FORMATTER = logging.Formatter()


class RedactingFilter(logging.Filter):
    """A handler filter that rewrites each record before it is formatted: its message (with
    the arguments merged in), its exception text and its stack, each through `redact_text`.
    It never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: logging would print msg and args raw
            message = f"unformattable log message from {record.name}"
        record.msg, record.args = redact_text(message), None
        if record.exc_info:
            if not record.exc_text:
                record.exc_text = _FORMATTER.formatException(record.exc_info)
            record.exc_info = None  # formatters fall back to exc_text, which is redacted below
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
        return True


def _filter_handler(handler: logging.Handler | None) -> None:
    if handler is not None and not any(isinstance(f, RedactingFilter) for f in handler.filters):
        handler.addFilter(RedactingFilter())


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    sys.stderr.write(redact_text("".join(traceback.format_exception(exc_type, exc, tb))))


def _thread_excepthook(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    text = "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
    sys.stderr.write(redact_text(f"Exception in thread {name}:\n{text}"))


def install() -> None:
    """Redact every log record that reaches a handler of the root logger (configure the
    handlers first: one added later is not covered) or the last-resort handler (used when no
    handler is configured), and uncaught exceptions printed by `sys.excepthook` and
    `threading.excepthook`. Safe to call more than once."""
    for handler in logging.getLogger().handlers:
        _filter_handler(handler)
    _filter_handler(logging.lastResort)
    sys.excepthook = _excepthook
    threading.excepthook = _thread_excepthook
