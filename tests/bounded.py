"""Work that must finish, checked without a speed threshold (speed lives in `make bench`).

A test of "this input does not take exponential time" must not fail because the machine is
busy. `finishes` runs the work in a thread and waits for it up to a generous bound (a minute:
hundreds of times what the work takes on a loaded 2-core machine, and far below what a
backtracking blow-up takes on the inputs these tests give). Exceeding it fails and says how
long the work had run; the figure itself is never asserted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

GENEROUS_SECONDS = 60.0


def finishes(work: Callable[[], T], what: str, bound: float = GENEROUS_SECONDS) -> T:
    """`work()`'s result, or a test failure if it has not finished after `bound` seconds."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:  # re-raised in the test's thread
            box["error"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True, name=f"bounded: {what}")
    thread.start()
    thread.join(bound)
    if thread.is_alive():
        raise AssertionError(f"{what}: still running after {time.monotonic() - started:.0f} s "
                             f"(a generous bound, not a speed goal: it looks like super-linear work)")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]
