"""Seconds from an environment variable (timeouts, waits, windows): one reading for every
`PMEM_*` duration, standard library only, so the early path can use it before anything else
is imported."""

from __future__ import annotations

import os


def env_seconds(name: str, default: float, minimum: float = 0.0) -> float:
    """`name`'s value as seconds, at least `minimum`; `default` when unset or not a number."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return max(minimum, value)
