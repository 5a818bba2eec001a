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


def test_a_workspace_folder_inside_a_root_is_served_as_that_root(tmp_path: Path) -> None:
    """Neovim's root markers pick `_archive/` (it holds an `_index.md`) for a file opened there:
    the server serves the root it belongs to, not the archive as a root of its own."""
    root = write_root(tmp_path / "memory", {"_index.md": "# Memory Index\n", "_core/profile.md": "# P\n",
                                            "_archive/_index.md": "# Archive Index\n"})
    assert candidate_roots([root / "_archive"], None) == [root]
    assert candidate_roots([root / "_archive", root], None) == [root]
    assert candidate_roots([], str(root / "_archive")) == [root]
    # A synced drive's `_archive/` folder above a real root does not make the root nested.
    drive = tmp_path / "drive"
    (drive / "_archive").mkdir(parents=True)
    real = write_root(drive / "memory", {"_index.md": "# Memory Index\n"})
    assert candidate_roots([real], None) == [real]
