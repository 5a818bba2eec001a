"""The committed schemas in schemas/ are exactly what the code generates, and they describe the output."""

from __future__ import annotations

import json
from pathlib import Path

from pmem_lsp.engine.report_schema import CheckReport
from pmem_lsp.schemas import SCHEMA_FILES, schema_text

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_committed_schemas_match_the_code():
    for name, filename in SCHEMA_FILES.items():
        committed = (SCHEMAS / filename).read_text(encoding="utf-8")
        assert committed == schema_text(name), f"schemas/{filename} is stale: run `make schemas`"


def test_report_schema_requires_the_documented_fields():
    data = json.loads(schema_text("report"))
    assert set(data["required"]) == {"root", "files", "diagnostics", "counts"}
    diag = data["$defs"]["ReportDiagnostic"]
    assert set(diag["required"]) == {"path", "line", "column", "end_line", "end_column", "code", "name",
                                     "severity", "message"}
    assert CheckReport.model_json_schema()["additionalProperties"] is False


def test_settings_schema_documents_every_setting():
    data = json.loads(schema_text("settings"))
    props = data["properties"]
    for key in ("select", "ignore", "severity", "exclude", "root"):
        assert props[key].get("description"), key
    core = data["$defs"]["CoreSettings"]["properties"]["maxBytes"]
    assert core["default"] == 8192 and core["description"]


def test_docs_rules_md_matches_the_catalogue():
    from pmem_lsp.cli.rules import rules_markdown

    committed = (SCHEMAS.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == rules_markdown(), "docs/rules.md is stale: run `make docs`"
