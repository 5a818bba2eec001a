"""The server's stderr holds warnings and errors only: clients show every stderr line as an
error (VS Code prints them as `[error]`). What the user may want to know goes through
`window/logMessage` (issue 15)."""

from __future__ import annotations

from pathlib import Path

from raw_lsp import RawServer

from roots import base_files, write_root


def test_a_normal_session_writes_nothing_to_stderr_and_logs_the_roots(tmp_path: Path):
    root = write_root(tmp_path / "memory", {**base_files(), "notes/x.md": "# X\n\nNo route, no summary.\n"})
    session = RawServer(tmp_path)
    try:
        session.initialize(root)
        session.wait(lambda m: m.get("method") == "window/logMessage"
                     and m["params"]["message"] == f"pmem: memory roots: {root}", what="the roots line")
        session.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics", what="a publication")
    finally:
        assert session.close() == 0
    assert "".join(session.stderr) == ""
