"""Regular expressions compiled when first used, not when their module is imported.

Compiling is most of what importing the engine costs (a case-insensitive pattern with many
alternatives takes milliseconds), and a process that publishes one file's findings, or checks a
root whose index has no route descriptions, never uses some of them. `lazy(pattern, flags)`
stands for `re.compile(pattern, flags)`: its first `search`, `match`, `finditer`, … compiles the
pattern and puts the compiled pattern's own methods in its place, so every later call costs
what a call of the compiled pattern costs.
"""

from __future__ import annotations

import re
from typing import Any, cast

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class _Lazy:
    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for what the instance does not hold yet
        if name.startswith("_"):
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled on first use."""
    return cast("re.Pattern[str]", _Lazy(pattern, flags))
