"""`pmem check`: findings as text, JSON or GitHub annotations, with CI-friendly exit codes."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from .. import __version__
from ..engine.analysis import analyze
from ..engine.catalogue import RULES, severity_of
from ..engine.checking import check_files, root_relative
from ..engine.findings import Finding, Severity
from ..engine.report import check_report_json, sarif_report
from ..engine.report import shown_path as _report_path
from ..engine.root_state import ReadProblem, RootState
from . import exit_codes
from .terminal import lines, one_line, shown, visible

if TYPE_CHECKING:  # the settings model only types them: a root without settings loads none
    from ..engine.entry_cache import Records
    from ..engine.settings import Settings


def _count(n: int, severity: Severity) -> str:
    word = severity.value
    return f"{n} {word}" if n == 1 or severity is Severity.INFORMATION else f"{n} {word}s"


MAX_PER_CODE = 10  # text output: findings shown per rule before the rest are counted


def _unread(problems: Sequence[ReadProblem]) -> str:
    """What the headline adds when part of the root was not taken in whole: "No problems"
    must not read as "all checked" (unreadable is not missing, and not clean either)."""
    unread = sum(1 for p in problems if p.reason is not None)
    partial = len(problems) - unread
    out = ""
    if unread:
        out += "; 1 path could not be read and is not checked" if unread == 1 else \
            f"; {unread} paths could not be read and are not checked"
    if partial:
        out += f"; {partial} {'file' if partial == 1 else 'files'} checked only in part"
    return f"{out} (see the warnings)" if out else ""


def _summary(findings: list[Finding], files: int, problems: Sequence[ReadProblem] = ()) -> str:
    """The headline: errors and warnings (what needs fixing) counted first, hints and
    information (suggestions) apart, so that a root full of hints does not read as broken;
    then what could not be read (`_unread`)."""
    return _counts(findings, files) + _unread(problems) + "\n"


def _counts(findings: list[Finding], files: int) -> str:
    counts = Counter(severity_of(f) for f in findings)
    where = f"{files} Markdown file" + ("" if files == 1 else "s")
    if not findings:
        return f"No problems in {where}"
    errors, warnings = counts[Severity.ERROR], counts[Severity.WARNING]
    if errors or warnings:
        head = f"{_count(errors, Severity.ERROR)} and {_count(warnings, Severity.WARNING)} in {where}"
    else:
        head = f"No errors or warnings in {where}"
    notes = [_count(counts[s], s) for s in (Severity.INFORMATION, Severity.HINT) if counts[s]]
    if notes:
        head += f"; {'also ' if errors or warnings else ''}{' and '.join(notes)}"
    return head


SORTS = ("file", "severity")


def sorted_findings(findings: list[Finding], sort: str) -> list[Finding]:
    """`file`: by path and position (the analysis' order); `severity`: errors first, then
    warnings, information and hints, each by path and position."""
    if sort == "severity":
        return sorted(findings, key=lambda f: (-severity_of(f).rank, f.sort_key()))
    return findings


def shown_path(rel: str) -> str:
    """A path as the text and GitHub outputs print it: the report's form (escaped, a secret
    masked), its invisible formatting characters escaped for the terminal."""
    return visible(_report_path(rel))


def _line(f: Finding) -> str:
    return (f"{shown_path(f.path)}:{f.line + 1}:{f.col + 1}: {f.code} {RULES[f.code].name} {severity_of(f).value}: "
            f"{one_line(f.message)}\n")


def _text(findings: list[Finding], files: int, out: TextIO, max_per_code: int = MAX_PER_CODE,
          problems: Sequence[ReadProblem] = ()) -> None:
    """One line per finding, at most `max_per_code` of each rule (0: all); the rest of a rule
    are counted on one line, so a root never written to this format (a hint on every file)
    does not bury the few findings that matter."""
    shown: Counter[str] = Counter()
    for f in findings:
        shown[f.code] += 1
        if not max_per_code or shown[f.code] <= max_per_code:
            out.write(_line(f))
    for code, n in sorted(shown.items()):
        hidden = n - max_per_code if max_per_code else 0
        if hidden > 0:
            out.write(f"… {hidden} more {code} {RULES[code].name} ({n} in all; "
                      f"`pmem check --select {code} --max-per-code 0` lists them)\n")
    out.write(_summary(findings, files, problems))


def _statistics(findings: list[Finding], files: int, out: TextIO, problems: Sequence[ReadProblem] = ()) -> None:
    """How many findings of each rule, most first (as `ruff check --statistics`)."""
    counts = Counter(f.code for f in findings)
    severities = {f.code: severity_of(f).value for f in findings}
    width = len(str(max(counts.values(), default=0)))
    for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        out.write(f"{n:>{width}}  {code}  {RULES[code].name}  {severities[code]}\n")
    out.write(_summary(findings, files, problems))


def _gh_escape(text: str, prop: bool = False) -> str:
    # GitHub's escapes cover `%`, CR and LF; any other control character (ESC, BEL) from a
    # file name would reach the terminal or the log viewer raw, so it is shown as \xNN.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    text = lines(text)
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


_GH_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning",
             Severity.INFORMATION: "notice", Severity.HINT: "notice"}


def _github(findings: list[Finding], root: Path, out: TextIO) -> None:
    try:
        prefix = os.path.relpath(root, Path.cwd())
    except ValueError:
        prefix = str(root)
    for f in findings:
        sev = severity_of(f)
        path = shown_path(f.path) if prefix == "." else f"{shown(prefix)}/{shown_path(f.path)}"
        props = (f"file={_gh_escape(path, True)},line={f.line + 1},col={f.col + 1},"
                 f"endLine={f.end_line + 1},endColumn={f.end_col + 1},"
                 f"title={_gh_escape(f'{f.code} {RULES[f.code].name}', True)}")
        out.write(f"::{_GH_LEVEL[sev]} {props}::{_gh_escape(f.message)}\n")


def run_check(state: RootState, fmt: str, min_severity: Severity, fail_on: Severity,
              out: TextIO = sys.stdout, err: TextIO = sys.stderr, *, statistics: bool = False,
              max_per_code: int = MAX_PER_CODE, findings: list[Finding] | None = None,
              paths: list[str] | None = None, sort: str = "file") -> int:
    """Report `findings` (default: the whole root's) of `state`; `paths`: the files they were
    narrowed to, which the counts and the unreadable list are about; `sort`: see SORTS."""
    found = analyze(state) if findings is None else findings
    # Every finding is at least a hint: the default `--min-severity` filters none out (a real-shaped
    # root's 4,000 findings: ~1.5 ms of asking each its severity).
    kept = list(found) if min_severity.rank == 0 else [f for f in found if severity_of(f).rank >= min_severity.rank]
    findings = sorted_findings(kept, sort)
    problems = state.read_problems(paths)
    files = state.markdown_count() if paths is None else len(paths)
    if fmt == "json":
        out.write(check_report_json(str(state.root), files, findings, problems))
        out.write("\n")  # apart: the report of a real-shaped root is megabytes, not copied for it
    elif fmt == "sarif":
        out.write(json.dumps(sarif_report(str(state.root), findings, __version__), indent=2, ensure_ascii=False) + "\n")
    else:
        # Unreadable files and folders, and files analysed only up to the cap: one line each.
        for problem in problems:
            err.write(f"pmem: warning: {shown_path(problem.path)}: {one_line(problem.message())}\n")
        if fmt == "github":
            _github(findings, state.root, out)
        elif statistics:
            _statistics(findings, files, out, problems)
        else:
            _text(findings, files, out, max_per_code, problems)
    failing = any((severity_of(f)).rank >= fail_on.rank for f in findings)
    return exit_codes.FINDINGS if failing else exit_codes.OK


def run_check_command(root: Path, settings: Settings, raw_paths: list[str], stdin_filename: str | None, fmt: str,
                      min_severity: Severity, fail_on: Severity, *, statistics: bool = False,
                      max_per_code: int = MAX_PER_CODE, stdin: BinaryIO | None = None,
                      out: TextIO = sys.stdout, err: TextIO = sys.stderr, states: list | None = None,
                      sort: str = "file", records: Records | None = None) -> int:
    """`pmem check [PATH…] [--stdin-filename PATH]`: the whole root, some files of it, or a
    proposed text checked as if it were at PATH (nothing written). `states` receives the
    root state checked (the check cache asks it which outside paths PM403 looked at)."""
    paths: list[str] = []
    for raw in raw_paths + ([stdin_filename] if stdin_filename else []):
        rel = root_relative(root, raw)
        if rel is None:
            err.write(f"pmem: error: {one_line(raw)} is not inside the memory root {root}\n")
            return exit_codes.ERROR
        if rel not in paths:
            paths.append(rel)
    proposed = None
    if stdin_filename:
        data = (stdin or sys.stdin.buffer).read()
        try:
            proposed = (paths[-1], data.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            err.write(f"pmem: error: the text on stdin is not valid UTF-8 (byte {exc.start})\n")
            return exit_codes.ERROR
    if records is not None:
        # The `pmem` process ends right after its answer: the records are written by a child
        # after it, so a first run that fills them costs no more than a cold one (issue 44).
        records.write_after_answer = True
    result = check_files(root, settings, paths or None, proposed, records=records, parallel=True)
    if states is not None:
        states.append(result.state)
    missing = [p for p in paths if not result.state.is_file(p)]
    if missing:
        err.write(f"pmem: error: {shown_path(missing[0])} is not a file in the memory root\n")
        return exit_codes.ERROR
    return run_check(result.state, fmt, min_severity, fail_on, out, err, statistics=statistics,
                     max_per_code=max_per_code, findings=result.findings, paths=paths or None, sort=sort)
