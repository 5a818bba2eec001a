"""`pmem check`: findings as text, JSON or GitHub annotations, with CI-friendly exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from ..engine.analysis import analyze
from ..engine.catalogue import RULES, severity_of
from ..engine.findings import Finding, Severity
from ..engine.report import build_report
from ..engine.snapshot import RootSnapshot
from .terminal import lines, one_line

EXIT_CLEAN, EXIT_FINDINGS = 0, 1


def _count(n: int, severity: Severity) -> str:
    word = severity.value
    return f"{n} {word}" if n == 1 or severity is Severity.INFORMATION else f"{n} {word}s"


def _text(findings: list[Finding], files: int, out: TextIO) -> None:
    counts = {s: 0 for s in Severity}
    for f in findings:
        sev = severity_of(f)
        counts[sev] += 1
        out.write(f"{one_line(f.path)}:{f.line + 1}:{f.col + 1}: {f.code} {RULES[f.code].name} {sev.value}: "
                  f"{one_line(f.message)}\n")
    total = len(findings)
    detail = ", ".join(_count(counts[s], s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFORMATION, Severity.HINT))
    noun = "problem" if total == 1 else "problems"
    where = f"{files} Markdown file" + ("" if files == 1 else "s")
    out.write(f"{total} {noun} ({detail}) in {where}\n" if total else f"No problems in {where}\n")


def _gh_escape(text: str, prop: bool = False) -> str:
    # GitHub's escapes cover `%`, CR and LF; any other control character (ESC, BEL) from a
    # file name would reach the terminal or the log viewer raw, so it is shown as \xNN.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    text = lines(text)
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


_GH_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice", Severity.HINT: "notice"}


def _github(findings: list[Finding], root: Path, out: TextIO) -> None:
    try:
        prefix = os.path.relpath(root, Path.cwd())
    except ValueError:
        prefix = str(root)
    for f in findings:
        sev = severity_of(f)
        path = f.path if prefix == "." else f"{prefix}/{f.path}"
        props = (f"file={_gh_escape(path, True)},line={f.line + 1},col={f.col + 1},"
                 f"endLine={f.end_line + 1},endColumn={f.end_col + 1},"
                 f"title={_gh_escape(f'{f.code} {RULES[f.code].name}', True)}")
        out.write(f"::{_GH_LEVEL[sev]} {props}::{_gh_escape(f.message)}\n")


def run_check(snap: RootSnapshot, fmt: str, min_severity: Severity, fail_on: Severity,
              out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    findings = [f for f in analyze(snap) if (severity_of(f)).rank >= min_severity.rank]
    problems = snap.read_problems()
    files = snap.markdown_count()
    if fmt == "json":
        report = build_report(str(snap.root), files, findings, problems)
        out.write(report.model_dump_json(indent=2) + "\n")
    else:
        # Unreadable files and folders, and files analysed only up to the cap: one line each.
        for problem in problems:
            err.write(f"pmem: warning: {one_line(problem.path)}: {one_line(problem.message())}\n")
        if fmt == "github":
            _github(findings, snap.root, out)
        else:
            _text(findings, files, out)
    failing = any((severity_of(f)).rank >= fail_on.rank for f in findings)
    return EXIT_FINDINGS if failing else EXIT_CLEAN
