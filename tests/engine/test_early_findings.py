"""`engine/first_findings.py`: a buffer's first findings without the settings model equal the findings
with the default settings, and the host's early findings are that function's."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.first_findings import EARLY_RULES, buffer_findings
from pmem_lsp.engine.host import MemoryHost
from pmem_lsp.engine.settings import Settings, resolve_settings

PATHS = ["notes/a.md", "projects/x/b.md", "_core/profile.md", "_index.md", "_archive/notes/old.md"]
PIECES = ["# Title\n", "## Summary\n", "## 摘要\n", "### Summary\n", "## TL;DR\n", "- a bullet\n", "- TODO\n",
          "- \n", "* star bullet 😀\n", "prose paragraph\n", "\n", "Status: done\n", "```\n## Summary\n```\n",
          "## Details\n", "  continued\n", "\r\n", "- 中文の要点\n"]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


@settings(max_examples=150, deadline=None)
@given(rel=st.sampled_from(PATHS), text=texts)
def test_the_defaults_without_the_model_equal_the_default_settings(rel: str, text: str):
    assert buffer_findings(rel, text, None) == buffer_findings(rel, text, Settings())


def test_the_shortcut_has_findings_to_agree_on():
    # A two-bullet summary, a placeholder, a misplaced heading: the property above compares
    # real findings, each with its final severity.
    found = buffer_findings("notes/a.md", "# T\n\nprose\n\n## Summary\n- one\n", None)
    found += buffer_findings("notes/b.md", "# T\n\n## Summary\n- one\n- TODO\n- three\n", None)
    assert {f.code for f in found} >= {"PM101", "PM104"}
    assert all(f.severity is not None and f.code in EARLY_RULES for f in found)


def test_settings_change_what_the_buffer_shows(tmp_path: Path):
    text = "# T\n\n## Summary\n- one\n- two\n"
    ignored = resolve_settings(tmp_path, {"ignore": ["PM102"]})
    raised = resolve_settings(tmp_path, {"severity": {"PM102": "error"}})
    assert [f.code for f in buffer_findings("notes/a.md", text, None)] == ["PM102"]
    assert buffer_findings("notes/a.md", text, ignored) == []
    assert [f.severity.value for f in buffer_findings("notes/a.md", text, raised) if f.severity] == ["error"]


def test_the_host_publishes_the_same_findings(tmp_path: Path):
    host = MemoryHost()
    host.add_root(tmp_path, resolve_settings(tmp_path, {"severity": {"PM104": "error"}}))
    text = "# T\n\n## Summary\n- one\n- TODO\n"
    path = tmp_path / "notes" / "a.md"
    host.open_buffer(path, text)
    assert host.early_findings(path) == buffer_findings("notes/a.md", text, host.roots[0].settings)
    assert any(f.code == "PM104" and f.severity and f.severity.value == "error" for f in host.early_findings(path))
