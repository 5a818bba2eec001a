"""The machine-readable report of `pmem check --format json`; its JSON Schema is in schemas/."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .catalogue import RULES, severity_of
from .findings import Finding, Severity


class ReportDiagnostic(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="Path relative to the root, with `/` separators.")
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


class CheckReport(BaseModel):
    """Result of `pmem check --format json`."""

    model_config = ConfigDict(extra="forbid", title="pmem check report")
    root: str = Field(description="Absolute path of the memory root.")
    files: int = Field(ge=0, description="Markdown files analysed (oversized ones included, analysed up to a cap).")
    diagnostics: list[ReportDiagnostic]
    counts: Counts
    unreadable: list[Unreadable] = Field(default_factory=list,
                                         description="Files or folders that exist but could not be read.")


def build_report(root: str, files: int, findings: list[Finding],
                 unreadable: list[tuple[str, str]]) -> CheckReport:
    counts = Counts()
    diagnostics = []
    for f in findings:
        severity = severity_of(f)
        setattr(counts, severity.value, getattr(counts, severity.value) + 1)
        diagnostics.append(ReportDiagnostic(
            path=f.path, line=f.line + 1, column=f.col + 1, end_line=f.end_line + 1,
            end_column=f.end_col + 1, code=f.code, name=RULES[f.code].name,
            severity=severity, message=f.message,
        ))
    return CheckReport(root=root, files=files, diagnostics=diagnostics, counts=counts,
                       unreadable=[Unreadable(path=p, reason=r) for p, r in unreadable])
