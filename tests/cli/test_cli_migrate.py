"""`pmem migrate` (a previewed, confirmed whole-root conversion, never automatic) and the root
found through `PERSISTENT_MEMORY_HOME`, as a subprocess (docs/decisions.md, "Dialects")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from roots import write_root

pytestmark = pytest.mark.e2e
AI = "_archive/_index.md"
MIXED = ("# Archive Index\n\n### projects/new.md\n- original_path: projects/new.md\n- state: archived\n"
         "- archived_at: 2026-11-01\n- reason: x\n- active_index_line: - projects/new.md — n\n\n"
         "## projects/old.md\n- status: archived\n- original: projects/old.md\n- location: _archive/projects/old.md\n"
         "- index-line: - projects/old.md — old\n- archived: 2026-10-01\n- reason: y\n")


def pmem(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PMEM_ROOT", "PERSISTENT_MEMORY_HOME")}
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, env={**base, **(env or {})})


def mixed_root(tmp_path: Path) -> Path:
    return write_root(tmp_path / "memory", {
        "_core/profile.md": "# Profile\n", "_core/preferences.md": "# Preferences\n",
        "_index.md": "# Memory Index\n\n- projects/a.md — a\n", "projects/a.md": "# A\n",
        AI: MIXED, "_archive/_trash/": "", "_archive/projects/new.md": "# N\n", "_archive/projects/old.md": "# O\n",
    })


def test_migrate_previews_and_changes_nothing_without_a_yes(tmp_path: Path) -> None:
    root = mixed_root(tmp_path)
    result = pmem("--root", str(root), "migrate")
    assert result.returncode == 3, result.stderr
    assert "rewrite 1 record(s) in the v0.10 dialect" in result.stdout and "projects/old.md" in result.stdout
    assert (root / AI).read_text(encoding="utf-8") == MIXED


def test_migrate_with_a_token_applies_exactly_the_preview(tmp_path: Path) -> None:
    root = mixed_root(tmp_path)
    shown = json.loads(pmem("--root", str(root), "migrate", "--to", "v0.10", "--format", "json").stdout)
    assert shown["applied"] is False and shown["operation"] == "migrate"
    done = pmem("--root", str(root), "migrate", "--to", "v0.10", "--format", "json", "--token", shown["token"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "### projects/old.md\n- original_path: projects/old.md\n" in (root / AI).read_text(encoding="utf-8")
    check = json.loads(pmem("--root", str(root), "check", "--format", "json", "--select", "PM3").stdout)
    assert check["diagnostics"] == []


def test_persistent_memory_home_is_the_root_after_pmem_root(tmp_path: Path) -> None:
    root = mixed_root(tmp_path)
    other = write_root(tmp_path / "other", {"_index.md": "# Memory Index\n"})
    home = {"HOME": str(tmp_path / "home")}
    status = pmem("status", env={**home, "PERSISTENT_MEMORY_HOME": str(root)})
    assert status.returncode == 0 and f"Memory root: {root}" in status.stdout
    status = pmem("status", env={**home, "PERSISTENT_MEMORY_HOME": str(root), "PMEM_ROOT": str(other)})
    assert f"Memory root: {other}" in status.stdout
    status = pmem("--root", str(root), "status", env={**home, "PMEM_ROOT": str(other)})
    assert f"Memory root: {root}" in status.stdout


def test_hooks_guard_the_root_persistent_memory_home_names(tmp_path: Path) -> None:
    root = mixed_root(tmp_path)
    call = json.dumps({"tool_name": "Write", "tool_input": {"file_path": str(root / AI), "content": "x\n"}})
    env = {"HOME": str(tmp_path / "home"), "PERSISTENT_MEMORY_HOME": str(root)}
    blocked = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "hook", "pre-write"], input=call,
                             capture_output=True, text=True, timeout=60,
                             env={**{k: v for k, v in os.environ.items() if k != "PMEM_ROOT"}, **env})
    assert blocked.returncode == 2 and "_archive" in blocked.stderr


# -- what the reference CLI finds after a migrate (issue 40) --------------------------------
def pmem_dialect_root(tmp_path: Path, settings: str | None = None) -> Path:
    """A root pmem wrote before v0.10: link routes, and a file archived with pmem's record."""
    files: dict[str, str | None] = {
        "_core/profile.md": "# Profile\n", "_core/preferences.md": "# Preferences\n",
        "_index.md": "# Memory Index\n\n- [A](projects/a.md) — a\n- [Old](projects/old.md) — the old one\n",
        "projects/a.md": "# A\n", "projects/old.md": "# Old\n", AI: "# Archive Index\n", "_archive/_trash/": "",
    }
    if settings is not None:
        files[".pmem.toml"] = settings
    root = write_root(tmp_path / "memory", files)
    done = pmem("--root", str(root), "archive", "projects/old.md", "--reason", "done", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "- index-line: - [Old](projects/old.md) — the old one\n" in (root / AI).read_text(encoding="utf-8")
    return root


def test_after_migrate_the_reference_cli_restores_a_route_its_status_reads(tmp_path: Path) -> None:
    import reference_cli

    root = pmem_dialect_root(tmp_path)
    done = pmem("--root", str(root), "migrate", "--to", "v0.10", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "was: - [Old](projects/old.md) — the old one" in done.stdout
    records = reference_cli.records((root / AI).read_text(encoding="utf-8"))
    assert records["projects/old.md"]["active_index_line"] == "- projects/old.md — the old one"
    reference_cli.recover(root, "projects/old.md")
    assert reference_cli.status_routes(root) == [("projects/a.md", True), ("projects/old.md", True)]
    # pmem reads the root as v0.10 from then on: its next archive writes the format's block.
    done = pmem("--root", str(root), "archive", "projects/a.md", "--reason", "later", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    records = reference_cli.records((root / AI).read_text(encoding="utf-8"))
    assert records["projects/a.md"]["active_index_line"] == "- projects/a.md — a"


def test_migrate_refuses_while_pmem_toml_pins_the_other_dialect(tmp_path: Path) -> None:
    root = pmem_dialect_root(tmp_path, settings='dialect = "pmem"\n')
    before = {rel: (root / rel).read_bytes() for rel in ("_index.md", AI, ".pmem.toml")}
    done = pmem("--root", str(root), "migrate", "--to", "v0.10", "--yes")
    assert done.returncode != 0
    assert 'pins `dialect = "pmem"`' in done.stdout + done.stderr
    assert 'Set `dialect = "v0.10"`' in done.stdout + done.stderr
    assert {rel: (root / rel).read_bytes() for rel in before} == before
