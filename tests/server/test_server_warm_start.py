"""A warm server start publishes what a cold one does (issue 28, engine/entry_cache.py).

The second server on the same root restores every unchanged file from the per-file records
(no file read: tests/engine/test_records.py counts that) and converts its findings' positions
from the shapes of their lines: every diagnostic, range included, in UTF-16 and in UTF-8, must
be the one the first server sent from the files themselves — on lines where CJK text and an
emoji come before the finding, where units and characters differ.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from raw_lsp import RawServer

from pmem_lsp.engine.analysis import Analysis
from pmem_lsp.engine.root_state import RootState
from pmem_lsp.engine.settings import resolve_settings

RACY = 0.02

FILES = {
    "_index.md": "# Index\n\n- [記憶 😀](notes/cjk.md) — 見て\n- [Alpha](notes/alpha.md) — alpha\n- [Gone](notes/gone.md) — gone\n",
    "_core/profile.md": "# Profile\n\nThe person.\n",
    "notes/cjk.md": "# 記憶 😀\n\n## Summary\n- 一つ\n\n見て 😀😀 [壊れた](无.md) and [gone](gone-too.md)\n",
    "notes/alpha.md": "# Alpha\n\n## Summary\n- one\n- two\n\nSee [nothing](missing.md) 😀.\n",
    "notes/unrouted.md": "# Unrouted ✓\n\nNo route.\n",
}


def _env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "PMEM_CACHE_DIR": str(tmp / "cache"), "PMEM_CACHE_RACY_SECONDS": str(RACY)}
    env.pop("PMEM_NO_CACHE", None)
    return env


def _published(root: Path, env: dict[str, str], encoding: str, expected: set[str]) -> dict[str, list[dict]]:
    """Every file's diagnostics from one server session, keyed by uri."""
    server = RawServer(cwd=root, env=env)
    try:
        server.initialize(root, {"general": {"positionEncodings": [encoding]}})
        for rel in sorted(expected):
            uri = (root / rel).as_uri()
            server.wait(lambda m, uri=uri: m.get("method") == "textDocument/publishDiagnostics"
                        and m["params"]["uri"] == uri and m["params"]["diagnostics"], 60, f"diagnostics of {uri}")
        return {(root / rel).as_uri(): server.diagnostics(root / rel) for rel in expected}
    finally:
        server.close()


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
def test_a_warm_start_publishes_what_a_cold_one_does(tmp_path, encoding):
    root = tmp_path / "memory"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    time.sleep(RACY * 3)  # past the racy window: the first server records every file
    expected = set(Analysis(RootState.scan(root, resolve_settings(root))).final) & set(FILES)
    assert {"notes/cjk.md", "notes/alpha.md", "_index.md"} <= expected
    env = _env(tmp_path)
    cold = _published(root, env, encoding, expected)
    assert list((tmp_path / "cache" / "records").glob("*.records")), "the first server recorded the root"
    warm = _published(root, env, encoding, expected)
    assert warm == cold
    cjk = cold[(root / "notes/cjk.md").as_uri()]
    assert any(d["code"] == "PM402" and d["range"]["start"]["character"] > 10 for d in cjk)
