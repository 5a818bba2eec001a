"""Issue 40: a name that is not UTF-8 in the root when the server starts. watchfiles fails a
whole batch of events when it meets such a name — also when the file or its folder is merely
opened, as the server's own scan and re-reads do — so a watcher that re-read that folder after
each failure failed again at once, restarting in a loop, and changes elsewhere were lost. The
server must keep publishing for the whole root, and restart its watcher a bounded number of
times (no loop)."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_helpers import codes, start, wait_for, watching
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root

RESTARTED = "pmem: watching again after a file name that is not UTF-8"


def restarts(client: LanguageClient) -> int:
    return sum(1 for m in client.log_messages if m.message.startswith(RESTARTED))


def make_by_bytes(root: Path, name: bytes, text: bytes = b"") -> None:
    """A file (and its folders) named by raw bytes, as a non-UTF-8 name must be made."""
    path = os.path.join(os.fsencode(root), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    try:
        os.write(fd, text)
    finally:
        os.close(fd)


async def test_a_non_utf8_name_at_start_leaves_the_whole_root_published(client: LanguageClient, tmp_path: Path):
    root = write_root(tmp_path / "memory", base_files())
    make_by_bytes(root, b"notes/\xff\xfe.md")  # an undecodable file, as issue 40 made it
    make_by_bytes(root, b"odd\xff/inside.md", summary_file("Inside").encode())  # and a folder
    await start(client, root)
    await watching(client, root)

    elsewhere = root / "projects" / "beta.md"  # a new unrouted file outside the odd names' folders
    elsewhere.write_text(summary_file("Beta"), encoding="utf-8")
    await wait_for(client, lambda: codes(client, elsewhere) == ["PM202"])
    second = root / "areas" / "gamma.md"  # and the watcher still follows the root afterwards
    second.parent.mkdir(parents=True, exist_ok=True)
    second.write_text(summary_file("Gamma"), encoding="utf-8")
    await wait_for(client, lambda: codes(client, second) == ["PM202"])
    # The watcher restarts once per failed batch (the scan opening the odd file and folder, the
    # catch-up walk listing the odd folder once); a loop would have logged hundreds by now.
    assert restarts(client) <= 6, [m.message for m in client.log_messages]
