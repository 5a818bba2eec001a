"""Shared by the request handlers that read a root: find the root of a document, and wait for
its first scan before answering (until then nothing is known, and an empty answer would read
as "nothing here")."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engine.host import MemoryRoot
from ..engine.root_state import RootState
from .convert import uri_to_path

if TYPE_CHECKING:
    from .app import PmemServer

FIRST_SCAN_WAIT = 30.0  # seconds a request waits for its root's first scan (10k files: ~5 s)


def locate(ls: PmemServer, uri: str) -> tuple[MemoryRoot, RootState, str] | None:
    """The scanned root holding the document at `uri`, its state and the relative path."""
    path = uri_to_path(uri)
    found = ls.host.locate(path) if path is not None else None
    if found is None:
        return None
    root, rel = found
    if root.state is None:
        return None
    return root, root.state, rel


async def first_scan(ls: PmemServer, uri: str | None) -> None:
    """Wait until the root holding `uri` (every root, without a uri) has been scanned once."""
    if not await ls.roots_known(FIRST_SCAN_WAIT):
        return
    path = uri_to_path(uri) if uri else None
    if path is not None:
        found = ls.host.locate(path)
        waiting = [found[0]] if found is not None else []
    else:
        waiting = list(ls.host.roots)
    for root in waiting:
        await ls.scanned(root, FIRST_SCAN_WAIT)


def after_first_scan(handler: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """A request handler that answers once the document's root has been scanned."""
    @functools.wraps(handler)
    async def wrapped(ls, params):
        document = getattr(params, "text_document", None)
        await first_scan(ls, getattr(document, "uri", None))
        return handler(ls, params)
    return wrapped

