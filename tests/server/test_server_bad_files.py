"""Bad files through the real server (the engine and the CLI: tests/engine/test_bad_files.py):
unreadable, huge and late-appearing files are logged once, by name, and the rest is still
checked and published."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lsp_helpers import codes, open_doc, replace_all, start, wait_for, watching
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient
from test_bad_files import BAD, BAD_SUMMARY, MiB, _fifo, _huge, _loop, _outside, build_root


async def test_the_server_logs_bad_files_and_still_publishes(client: LanguageClient, tmp_path: Path):
    root = build_root(tmp_path)
    (root / BAD).unlink()
    reasons = {
        BAD: _fifo(root / BAD, tmp_path),
        "notes/loop.md": _loop(root / "notes/loop.md", tmp_path),
        "notes/leak.md": _outside(root / "notes/leak.md", tmp_path),
    }
    _huge(root / "notes/big.md", 50 * MiB)
    await start(client, root)
    two = root / "projects/two.md"
    await wait_for(client, lambda: "PM102" in codes(client, two))
    assert codes(client, root / "_index.md") == [] and codes(client, root / "notes/links.md") == []

    def logged() -> list[str]:
        return [m.message for m in client.log_messages if m.message.startswith("pmem: ")]

    expected = {f"pmem: {root / rel}: cannot be read ({reason}); it is not treated as missing"
                for rel, reason in reasons.items()}
    expected.add(f"pmem: {root / 'notes/big.md'}: 50 MiB, only the first 2 MiB analysed")
    await wait_for(client, lambda: expected <= set(logged()))
    assert "PM102" in codes(client, root / "notes/big.md")  # analysed up to the cap

    # A pipe appearing later is logged once the watcher sees it (watching starts after the scan).
    await watching(client, root)
    os.mkfifo(root / "notes/later.md")
    later = f"pmem: {root / 'notes/later.md'}: cannot be read (not a regular file (named pipe)); " \
            "it is not treated as missing"
    await wait_for(client, lambda: later in logged())

    # A buffer over the cap, edited twice: logged once.
    huge = root / "notes/huge.md"
    text = BAD_SUMMARY + "x" * (3 * MiB)
    huge.write_text(BAD_SUMMARY, encoding="utf-8")
    open_doc(client, huge, text)
    capped = f"pmem: {huge}: 3.0 MiB, only the first 2 MiB analysed"
    await wait_for(client, lambda: capped in logged() and "PM102" in codes(client, huge))
    replace_all(client, huge, text + "more", version=2)
    # The last edit also heals the summary, so its analysis shows: once PM102 is gone, the
    # analysis of both edits has run (each logs right after it publishes), and a round trip
    # after that has every message it sent before its answer.
    healed = BAD_SUMMARY.replace("- two\n", "- two\n- three\n")
    replace_all(client, huge, healed + "x" * (3 * MiB) + "more and more", version=3)
    await wait_for(client, lambda: "PM102" not in codes(client, huge), timeout=60)
    await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="x"))
    assert logged().count(capped) == 1
    assert all(logged().count(line) == 1 for line in expected)
    assert "OUTSIDE-THE-ROOT" not in json.dumps([m.message for m in client.log_messages])
