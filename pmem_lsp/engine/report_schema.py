"""The model of `pmem check --format json` (pydantic), from which `schemas/check-report.schema.json`
is generated. `report.report_data` builds the same data without it, so that a check does not
import pydantic; `build_report` is that data validated by the model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .findings import Finding, Severity
from .report import report_data
from .root_state import ReadProblem


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
    return CheckReport.model_validate(report_data(root, files, findings, problems))
