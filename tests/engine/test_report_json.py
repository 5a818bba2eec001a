"""`pmem check --format json` is written without the pydantic model (engine/report.py), byte for
byte as the model writes it (engine/report_schema.py): any text in names, messages and reasons."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from engine_helpers import findings
from pmem_lsp.engine.findings import Finding, Severity
from pmem_lsp.engine.report import _PLACE, check_report_json, report_data, report_json
from pmem_lsp.engine.report_schema import CheckReport
from pmem_lsp.engine.root_state import MAX_ANALYSED_BYTES, ReadProblem
from roots import demo_copy

CODES = ["PM102", "PM201", "PM401", "PM503", "PM004"]
# Escapes are where two JSON writers differ: quotes, backslashes, control characters, DEL,
# line and paragraph separators, CJK, emoji, lone surrogates are left out (no file name or
# decoded text holds one).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40) | st.sampled_from(
    ["\"quoted\" \\ back", "\x00\x01\x1b\x7f", "\u2028\u2029", "日本語 📝", "tab\tnew\nline\r", "/slash/",
     "100% %s %% %(x)s"])


def by_model(data: dict) -> str:
    return CheckReport.model_validate(data).model_dump_json(indent=2)


@settings(max_examples=200, deadline=None)
@given(root=TEXT, files=st.integers(0, 10**9),
       found=st.lists(st.tuples(TEXT, st.integers(0, 10**6), st.integers(0, 500), st.sampled_from(CODES), TEXT),
                      max_size=6),
       problems=st.lists(st.tuples(TEXT, st.none() | TEXT, st.integers(0, 10**12)), max_size=4))
def test_the_same_bytes_as_the_model(root, files, found, problems):
    finds = [Finding(path or "x", line, col, line, col + 3, code, message) for path, line, col, code, message in found]
    probs = [ReadProblem(path or "y", reason, size) for path, reason, size in problems]
    data = report_data(root, files, finds, probs)
    assert report_json(data) == by_model(data)


def test_a_real_report(tmp_path):
    root = demo_copy(tmp_path / "memory")
    (root / "notes" / "big.md").write_bytes(b"# Big\n" + b"x" * (MAX_ANALYSED_BYTES + 10))
    found = findings(root)
    data = report_data(str(root), 12, found, [ReadProblem("notes/big.md", None, MAX_ANALYSED_BYTES + 16),
                                              ReadProblem("notes/locked.md", "Permission denied")])
    assert data["diagnostics"] and data["unreadable"] and data["truncated"]
    assert report_json(data) == by_model(data)


def test_a_check_imports_no_pydantic(tmp_path):
    """The report's model is not imported by `pmem check` (the settings' is a separate matter:
    engine/settings.py)."""
    code = ("import sys; import pmem_lsp.cli.check, pmem_lsp.engine.report; "
            "print(sorted(m for m in sys.modules if m.startswith('pmem_lsp.engine.report')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['pmem_lsp.engine.report']"


# `pmem check --format json` writes its report with `check_report_json`, from the findings
# themselves (engine/report.py): the same bytes as the report's data written by `report_json`
# (`json.dumps`, held to the model above), with repeated values, `%` signs, the findings' place
# text in the root, and every severity.
SEVERITIES = st.sampled_from([None, *Severity])


@settings(max_examples=300, deadline=None)
@given(root=TEXT, files=st.integers(0, 10**9),
       found=st.lists(st.tuples(TEXT | st.sampled_from(["a.md", "b %s.md", "c\udc80.md"]), st.integers(0, 10**6),
                                st.integers(0, 500), st.integers(0, 3), st.sampled_from(CODES), SEVERITIES,
                                TEXT | st.sampled_from(["m", "100%", "n\udcff"])),
                      max_size=12),
       problems=st.lists(st.tuples(TEXT, st.none() | TEXT, st.integers(0, 10**12)), max_size=3))
def test_the_check_report_is_the_report_of_its_data(root, files, found, problems):
    finds = [Finding(path or "x", line, col, line + more, col + 3, code, message, severity)
             for path, line, col, more, code, severity, message in found]
    probs = [ReadProblem(path or "y", reason, size) for path, reason, size in problems]
    assert check_report_json(root, files, finds, probs) == report_json(report_data(root, files, finds, probs))


def test_a_real_check_report(tmp_path):
    root = demo_copy(tmp_path / "memory")
    found = findings(root)
    assert len({f.severity for f in found}) > 1 and len({f.path for f in found}) > 1
    problems = [ReadProblem("notes/big.md", None, MAX_ANALYSED_BYTES + 16), ReadProblem("notes/x.md", "Denied")]
    for root_text in (str(root), _PLACE, "100%s"):
        assert check_report_json(root_text, 12, found, problems) == by_model(report_data(root_text, 12, found, problems))
