"""The language server's default root: `PMEM_ROOT`, else `PERSISTENT_MEMORY_HOME` (the format's
own variable since v0.10), else `~/.persistent-memory` (docs/design.md §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pmem_lsp.server.roots import candidate_roots
from roots import write_root


def test_the_default_root_honours_persistent_memory_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home_root = write_root(tmp_path / "pm-home", {"_index.md": "# Memory Index\n"})
    pmem_root = write_root(tmp_path / "pmem-root", {"_index.md": "# Memory Index\n"})
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PMEM_ROOT", raising=False)
    monkeypatch.setenv("PERSISTENT_MEMORY_HOME", str(home_root))
    assert candidate_roots([], None) == [home_root]
    monkeypatch.setenv("PMEM_ROOT", str(pmem_root))
    assert candidate_roots([], None) == [pmem_root]
    monkeypatch.delenv("PMEM_ROOT")
    monkeypatch.delenv("PERSISTENT_MEMORY_HOME")
    assert candidate_roots([], None) == []  # ~/.persistent-memory does not exist here
