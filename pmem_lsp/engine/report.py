"""The machine-readable reports of `pmem check`: `--format json` (its model and JSON Schema are
in report_schema.py and schemas/) and `--format sarif` (SARIF 2.1.0, for code scanning)."""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Any

from .catalogue import RULES, severity_of
from .findings import Finding, Severity
from .names import clean, shown, uri_quote
from .native import core_for
from .root_state import MAX_ANALYSED_BYTES, ReadProblem
from .secrets import mask_text

_NATIVE = core_for("secrets")  # only where the build was written for this Python code (docs/native.md)


@lru_cache(maxsize=4096)
def shown_path(rel: str) -> str:
    """A root-relative path as a report shows it: any name made writable (`shown`), and a
    likely secret in it masked the way status, health and the MCP replies mask their text
    (`mask_text`): a token as a file's name is not printed by the report that finds it. Where
    the core's PM401 verdict holds for the name as a one-line text, `mask_text` finds nothing
    there (tests/engine/test_native_secrets.py holds it): it is not run."""
    text = shown(rel)
    if _NATIVE is not None and _NATIVE.secrets_clear([text]):
        return text
    return mask_text(text)

# Each severity's word: an enum member's `.value` is a descriptor call, twice a finding.
_WORD = {s: s.value for s in Severity}


def report_data(root: str, files: int, findings: list[Finding], problems: list[ReadProblem]) -> dict[str, Any]:
    """`pmem check --format json` as data: the shape of `report_schema.CheckReport` (its JSON
    Schema is in schemas/), built without the model, which `pmem check` need not import.
    A root's findings repeat a few paths, rules and messages: each distinct one is shown
    (`shown_path`, the rule's name and severity, `clean`) once here, not once per finding."""
    counts = dict.fromkeys(("error", "warning", "information", "hint"), 0)
    diagnostics: list[dict[str, Any]] = []
    append = diagnostics.append
    paths: dict[str, str] = {}
    messages: dict[str, str] = {}
    rules: dict[tuple[str, Severity | None], tuple[str, str]] = {}  # (code, own severity) → (name, word)
    for f in findings:
        code = f.code
        rule = rules.get((code, f.severity))
        if rule is None:
            rule = rules[code, f.severity] = (RULES[code].name, _WORD[severity_of(f)])
        path = paths.get(f.path)
        if path is None:
            path = paths[f.path] = shown_path(f.path)
        message = messages.get(f.message)
        if message is None:
            message = messages[f.message] = clean(f.message)
        name, severity = rule
        counts[severity] += 1
        append({"path": path, "line": f.line + 1, "column": f.col + 1, "end_line": f.end_line + 1,
                "end_column": f.end_col + 1, "code": code, "name": name, "severity": severity, "message": message})
    return {"root": shown(root), "files": files, "diagnostics": diagnostics, "counts": counts,
            "unreadable": [{"path": shown_path(p.path), "reason": clean(p.reason or "")}
                           for p in problems if p.unreadable],
            "truncated": [{"path": shown_path(p.path), "size": p.size, "analysed": MAX_ANALYSED_BYTES}
                          for p in problems if not p.unreadable]}


def report_json(data: dict[str, Any]) -> str:
    """The report's data as JSON text: the same bytes as the model's `model_dump_json(indent=2)`
    (tests/engine/test_report_json.py holds them equal). `pmem check` writes its report from the
    findings instead (`check_report_json`, the same bytes); this is that one's reference."""
    return json.dumps(data, indent=2, ensure_ascii=False)


_PLACE = "\x00pmem: the findings go here\x00"
_encode_str = json.encoder.encode_basestring  # `json.dumps(ensure_ascii=False)`'s (C where built)
_PLACE_JSON = _encode_str(_PLACE)
_FIELD = "\n      "  # a finding's field: the third level of the report's indent


def check_report_json(root: str, files: int, findings: list[Finding], problems: list[ReadProblem]) -> str:
    """`report_json(report_data(root, files, findings, problems))` (`pmem check --format json`)
    without a dict for each finding nor taking those dicts apart again. A finding is three
    texts: its path, its position (four numbers) and its rule with its message, each written
    once for each distinct one (a root's findings repeat a few hundred rules-with-messages and
    positions); the findings' keys are taken out of all of them at once (`attrgetter`, `map`:
    no Python code for each finding), and the report is one `%` of a template repeated for
    each finding. A real-shaped root's 4,000 findings: ~14 ms through the report's data, ~6 ms
    here (docs/performance.md, issue 44). tests/engine/test_report_json.py holds the two ways
    to the same bytes."""
    if not findings:
        return report_json(report_data(root, files, findings, problems))
    counts = dict.fromkeys(("error", "warning", "information", "hint"), 0)
    said = list(map(_SAID, findings))
    one_of = dict(zip(said, findings, strict=True))  # a finding of each (code, severity, message)
    said_text: dict[tuple[str, Severity | None, str], str] = {}
    for key, n in Counter(said).items():
        code, _own, message = key
        word = _WORD[severity_of(one_of[key])]
        counts[word] += n
        said_text[key] = _SAID_FIELDS % (_encode_str(code), _encode_str(RULES[code].name), _encode_str(word),
                                         _encode_str(clean(message)))
    where = list(map(_WHERE, findings))
    where_text = {w: _WHERE_FIELDS % (w[0] + 1, w[1] + 1, w[2] + 1, w[3] + 1) for w in set(where)}
    paths = list(map(_PATH, findings))
    path_text = {p: _encode_str(shown_path(p)) for p in set(paths)}
    data = report_data(root, files, [], problems)
    text = json.dumps({**data, "diagnostics": _PLACE, "counts": counts}, indent=2, ensure_ascii=False)
    around = text.split(_PLACE_JSON)
    if len(around) != 2:  # the root or a reason holds the place's text: the plain way
        return report_json(report_data(root, files, findings, problems))
    before, after = around
    template = (before.replace("%", "%%") + "[\n    " + ",\n    ".join([_FINDING] * len(findings)) + "\n  ]"
                + after.replace("%", "%%"))
    return template % tuple(chain.from_iterable(zip(map(path_text.__getitem__, paths),
                                                    map(where_text.__getitem__, where),
                                                    map(said_text.__getitem__, said), strict=True)))


_PATH = attrgetter("path")
_WHERE = attrgetter("line", "col", "end_line", "end_col")
_SAID = attrgetter("code", "severity", "message")
# One finding as `json.dumps(indent=2)` writes it in the report, its three texts left to fill in.
# An int's JSON text is its `%d` (a finding's numbers are ints).
_FINDING = "{" + _FIELD + '"path": %s,' + _FIELD + "%s," + _FIELD + "%s\n    }"
_WHERE_FIELDS = ('"line": %d,' + _FIELD + '"column": %d,' + _FIELD + '"end_line": %d,' + _FIELD
                 + '"end_column": %d')
_SAID_FIELDS = '"code": %s,' + _FIELD + '"name": %s,' + _FIELD + '"severity": %s,' + _FIELD + '"message": %s'


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
    return report_data("", 0, findings, [])["diagnostics"]
