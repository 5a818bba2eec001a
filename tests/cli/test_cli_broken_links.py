"""`pmem archive` names the links the archive breaks: in its text preview and in the JSON
`findings` an agent reads (issue 27)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from roots import demo_copy

pytestmark = pytest.mark.e2e  # the real `pmem` process


def pmem(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args],
                          input="", capture_output=True, text=True, timeout=120)


def test_archive_json_findings_and_text_preview_list_the_broken_links(tmp_path: Path):
    root = demo_copy(tmp_path / "memory")
    shown = pmem(root, "archive", "notes/airflow-tips.md", "--format", "json")
    assert shown.returncode == 3, shown.stderr
    data = json.loads(shown.stdout)
    assert [(f["path"], f["line"], f["code"], f["severity"]) for f in data["findings"]] == [
        ("projects/conference-talk.md", 20, "PM402", "warning"), ("projects/retail-pipeline.md", 17, "PM402", "warning")]
    assert "links that will break: 2 in 2 active files" in data["preview"]
    text = pmem(root, "archive", "notes/airflow-tips.md")
    assert "    projects/retail-pipeline.md:17 → notes/airflow-tips.md\n" in text.stdout
    assert "Findings on the proposed text" not in text.stdout  # listed once, in the preview
    # What the preview promised is what `pmem check` adds once it is applied.
    def broken() -> set[tuple[str, int]]:
        check = json.loads(pmem(root, "check", "--format", "json", "--select", "PM402").stdout)
        return {(d["path"], d["line"]) for d in check["diagnostics"]}

    before = broken()
    done = pmem(root, "archive", "notes/airflow-tips.md", "--token", data["token"], "--format", "json")
    assert json.loads(done.stdout)["applied"] is True, done.stdout
    assert broken() - before == {("projects/conference-talk.md", 20), ("projects/retail-pipeline.md", 17)}
