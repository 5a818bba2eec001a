"""Text for a terminal: memory supplies paths and messages, and a file name may hold a line
break (which would forge a `path:line:col` line), an escape sequence (which the terminal
would obey) or bytes that are not UTF-8. The rules are the engine's (`engine/names.py`):
paths through `shown`, other text through `one_line` or `lines`."""

from __future__ import annotations

from ..engine.names import lines, one_line, shown

__all__ = ["lines", "one_line", "shown"]
