"""The machine-readable reports of `pmem check`: `--format json` (its JSON Schema is in
schemas/) and `--format sarif` (SARIF 2.1.0, for code scanning)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .catalogue import RULES, severity_of
from .findings import Finding, Severity
from .names import clean, shown, uri_quote
from .root_state import MAX_ANALYSED_BYTES, ReadProblem
from .secrets import mask_text


@lru_cache(maxsize=4096)
def shown_path(rel: str) -> str:
    """A root-relative path as a report shows it: any name made writable (`shown`), and a
    likely secret in it masked the way status, health and the MCP replies mask their text
    (`mask_text`): a token as a file's name is not printed by the report that finds it."""
    return mask_text(shown(rel))


class ReportDiagnostic(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="Path relative to the root, with `/` separators; a name that is not "
                                  "printable UTF-8 is escaped (`\\xNN`, `\\uNNNN`, `\\\\`).")
    line: int = Field(ge=1, description="1-based line.")
    column: int = Field(ge=1, description="1-based column, in characters.")
    end_line: int = Field(ge=1)
    end_column: int = Field(ge=1)
    code: str = Field(pattern=r"^PM\d{3}$")
    name: str
    severity: Severity
    message: str


class Counts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    error: int = 0
    warning: int = 0
    information: int = 0
    hint: int = 0


class Unreadable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    reason: str


class Truncated(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    size: int = Field(ge=0, description="The whole file's size, in bytes.")
    analysed: int = Field(ge=0, description="Bytes analysed: the first ones, up to the documented cap (2 MiB).")


class CheckReport(BaseModel):
    """Result of `pmem check --format json`."""

    model_config = ConfigDict(extra="forbid", title="pmem check report")
    root: str = Field(description="Absolute path of the memory root.")
    files: int = Field(ge=0, description="Markdown files analysed (oversized ones included, analysed up to a cap).")
    diagnostics: list[ReportDiagnostic]
    counts: Counts
    unreadable: list[Unreadable] = Field(default_factory=list,
                                         description="Files or folders that exist but could not be read; "
                                                     "they are never treated as missing.")
    truncated: list[Truncated] = Field(default_factory=list,
                                       description="Files larger than the cap, analysed only up to it.")


def build_report(root: str, files: int, findings: list[Finding], problems: list[ReadProblem]) -> CheckReport:
    counts = Counts()
    diagnostics = []
    for f in findings:
        severity = severity_of(f)
        setattr(counts, severity.value, getattr(counts, severity.value) + 1)
        diagnostics.append(ReportDiagnostic(
            path=shown_path(f.path), line=f.line + 1, column=f.col + 1, end_line=f.end_line + 1,
            end_column=f.end_col + 1, code=f.code, name=RULES[f.code].name,
            severity=severity, message=clean(f.message),
        ))
    return CheckReport(root=shown(root), files=files, diagnostics=diagnostics, counts=counts,
                       unreadable=[Unreadable(path=shown_path(p.path), reason=clean(p.reason or ""))
                                   for p in problems if p.unreadable],
                       truncated=[Truncated(path=shown_path(p.path), size=p.size, analysed=MAX_ANALYSED_BYTES)
                                  for p in problems if not p.unreadable])


# -- SARIF 2.1.0 (code scanning) ------------------------------------------------------------
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note",
                Severity.HINT: "note"}


def sarif_report(root: str, findings: list[Finding], version: str) -> dict[str, Any]:
    """The findings as one SARIF 2.1.0 run: every rule with its name, explanation and default
    level; one result per finding, its region 1-based, paths relative to the root (`ROOT`)."""
    codes = sorted(RULES)
    index = {code: i for i, code in enumerate(codes)}
    rules = []
    for code in codes:
        rule = RULES[code]
        rules.append({
            "id": code,
            "name": rule.name,
            "shortDescription": {"text": rule.name.replace("-", " ")},
            "fullDescription": {"text": rule.explanation},
            "help": {"text": rule.explanation, "markdown": rule.explanation},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        })
    results = []
    for f in findings:
        results.append({
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _SARIF_LEVEL[severity_of(f)],
            "message": {"text": clean(f.message)},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri_path(mask_text(f.path)), "uriBaseId": "ROOT"},
                "region": {"startLine": f.line + 1, "startColumn": f.col + 1,
                           "endLine": f.end_line + 1, "endColumn": f.end_col + 1},
            }}],
        })
    root_uri = "file://" + uri_quote(str(Path(root).absolute())).rstrip("/") + "/"
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "pmem", "version": version, "rules": rules}},
            "originalUriBaseIds": {"ROOT": {"uri": root_uri}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def _uri_path(rel: str) -> str:
    """A root-relative path as a relative URI reference: its bytes percent-escaped (spaces, `#`,
    and bytes that are not UTF-8)."""
    return uri_quote(rel)


def diagnostics_data(findings: list[Finding]) -> list[dict[str, Any]]:
    """Findings in the JSON report's shape (1-based lines and columns): for the previews and
    the agent surface, which show findings the same way `pmem check --format json` does."""
    return [d.model_dump(mode="json") for d in build_report("", 0, findings, []).diagnostics]
