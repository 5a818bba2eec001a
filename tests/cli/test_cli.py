"""`pmem check` and `pmem status` as a user runs them: real processes, real roots, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from roots import DEMO, base_files, demo_copy, summary_file, write_root

pytestmark = pytest.mark.e2e  # every test here runs `pmem` as a subprocess


def pmem(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True,
                          text=True, cwd=cwd, stdin=subprocess.DEVNULL, timeout=60)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    files = base_files()
    files["projects/two.md"] = summary_file("Two", bullets=2)
    files["_index.md"] += "- [Two](projects/two.md) — second\n"
    return write_root(tmp_path / "memory", files)


def test_text_format_lines_and_exit_code(root: Path):
    result = pmem("--root", str(root), "check")
    assert result.returncode == 0  # warnings only; default --fail-on is error
    assert result.stdout.splitlines() == [
        "projects/two.md:5:1: PM102 summary-bullet-count warning: the summary has 2 bullets; it needs 3 to 6",
        "0 errors and 1 warning in 6 Markdown files",
    ]


def test_fail_on_warning_exits_1(root: Path):
    assert pmem("--root", str(root), "check", "--fail-on", "warning").returncode == 1


def test_error_exits_1_and_clean_root_exits_0(root: Path):
    (root / "_index.md").write_text((root / "_index.md").read_text() + "- [X](x.md) — gone\n")
    assert pmem("--root", str(root), "check").returncode == 1
    (root / "projects/two.md").unlink()
    (root / "_index.md").write_text(base_files()["_index.md"])
    result = pmem("--root", str(root), "check")
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip() == "No problems in 5 Markdown files"


def test_missing_root_exits_2(tmp_path: Path):
    result = pmem("--root", str(tmp_path / "nope"), "check")
    assert result.returncode == 2
    assert "does not exist" in result.stderr


def test_bad_settings_exit_2_with_the_reason(root: Path):
    (root / ".pmem.toml").write_text("[core]\nmaxBites = 3\n")
    result = pmem("--root", str(root), "check")
    assert result.returncode == 2
    assert ".pmem.toml" in result.stderr and "maxBites" in result.stderr


def test_select_ignore_and_min_severity(root: Path):
    (root / "notes").mkdir()
    (root / "notes/plain.md").write_text("# Plain\n\nNo summary here.\n")
    out = pmem("--root", str(root), "check", "--format", "json").stdout
    assert sorted(d["code"] for d in json.loads(out)["diagnostics"]) == ["PM100", "PM102", "PM202"]
    out = pmem("--root", str(root), "check", "--format", "json", "--select", "PM1").stdout
    assert sorted(d["code"] for d in json.loads(out)["diagnostics"]) == ["PM100", "PM102"]
    out = pmem("--root", str(root), "check", "--format", "json", "--ignore", "pm102,PM202").stdout
    assert sorted(d["code"] for d in json.loads(out)["diagnostics"]) == ["PM100"]
    out = pmem("--root", str(root), "check", "--format", "json", "--min-severity", "warning").stdout
    assert sorted(d["code"] for d in json.loads(out)["diagnostics"]) == ["PM102", "PM202"]


@pytest.mark.parametrize("option, value, unknown", [
    ("--select", "PM9", "PM9"), ("--select", "PM1,PM99", "PM99"), ("--ignore", "PM404,PM8", "PM8"),
    ("--ignore", "PM108", "PM108")])
def test_a_code_no_rule_has_is_a_usage_error(root: Path, option: str, value: str, unknown: str):
    """`--select PM9` selected nothing, and the check said "No problems"."""
    result = pmem("--root", str(root), "check", option, value)
    assert result.returncode == 2 and result.stdout == ""
    assert f"no rule has the code or prefix {unknown} " in result.stderr
    assert "PM001–PM007" in result.stderr and "PM401–PM404" in result.stderr  # what there is
    (root / ".pmem.toml").write_text(f'{option[2:]} = ["{unknown}"]\n')  # the settings file too
    result = pmem("--root", str(root), "check")
    assert result.returncode == 2 and ".pmem.toml" in result.stderr and unknown in result.stderr
    (root / ".pmem.toml").write_text(f'[severity]\n{unknown.ljust(5, "0")} = "error"\n')
    result = pmem("--root", str(root), "check")
    assert result.returncode == 2 and f"no rule has the code {unknown.ljust(5, '0')} " in result.stderr


def test_json_report_shape(root: Path):
    report = json.loads(pmem("--root", str(root), "check", "--format", "json").stdout)
    assert report["root"] == str(root)
    assert report["files"] == 6
    assert report["counts"] == {"error": 0, "warning": 1, "information": 0, "hint": 0}
    assert report["diagnostics"] == [{
        "path": "projects/two.md", "line": 5, "column": 1, "end_line": 5, "end_column": 11,
        "code": "PM102", "name": "summary-bullet-count", "severity": "warning",
        "message": "the summary has 2 bullets; it needs 3 to 6",
    }]


def test_github_format_is_relative_to_cwd_and_escaped(root: Path):
    result = pmem("--root", str(root), "check", "--format", "github", cwd=root.parent)
    assert result.stdout.splitlines() == [
        "::warning file=memory/projects/two.md,line=5,col=1,endLine=5,endColumn=11,"
        "title=PM102 summary-bullet-count::the summary has 2 bullets; it needs 3 to 6",
    ]


def test_demo_shows_its_deliberate_problems():
    result = pmem("--root", str(DEMO), "check", "--format", "json")
    assert result.returncode == 1  # the demo's dangling route is an error
    found = sorted((d["path"], d["line"], d["code"]) for d in json.loads(result.stdout)["diagnostics"])
    assert found == [
        ("_index.md", 13, "PM201"),
        ("notes/meal-planning.md", 5, "PM106"),
        ("notes/reading-list.md", 1, "PM100"),
        ("notes/reading-list.md", 1, "PM202"),
        ("notes/travel-2026.md", 20, "PM402"),
        ("projects/garden-sensors.md", 6, "PM102"),
        ("projects/invoice-automation.md", 15, "PM101"),
        ("projects/sourdough-blog.md", 10, "PM104"),
    ]


def test_status_reads_core_and_index(tmp_path: Path):
    root = tmp_path / "demo"
    demo_copy(root)
    result = pmem("--root", str(root), "status")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"Memory root: {root}"
    assert lines[1].startswith("Core: 2 files, ")
    assert lines[2].startswith("Active: 11 routed files, ")
    assert "  projects/website-redesign.md — new layout and typography for the cooking blog  (missing)" in lines
    assert "  notes/sichuan-cooking.md — 四川家常菜笔记 for the blog series (in Chinese)" in lines


def test_cli_ignore_adds_to_the_roots_ignore(root: Path):
    (root / ".pmem.toml").write_text('ignore = ["PM102"]\n')
    (root / "notes").mkdir()
    (root / "notes/plain.md").write_text("# Plain\n\nNo summary here.\n")
    out = pmem("--root", str(root), "check", "--format", "json", "--ignore", "PM100").stdout
    assert sorted(d["code"] for d in json.loads(out)["diagnostics"]) == ["PM202"]


def test_status_counts_each_active_file_once(tmp_path: Path):
    files = base_files()
    files["_index.md"] += ("- [Alpha again](projects/alpha.md#part) — same file\n"
                           "- [Profile](_core/profile.md) — not on demand\n")
    root = write_root(tmp_path / "memory", files)
    lines = pmem("--root", str(root), "status").stdout.splitlines()
    assert lines[2].startswith("Active: 1 routed files, ")
    assert "  _core/profile.md — not on demand  (not an active memory file)" in lines
    assert sum(1 for line in lines if line.startswith("  projects/alpha.md")) == 1


@pytest.mark.parametrize("name", ["new\nline", "red\x1b[31mtext", "tab\there"])
def test_control_characters_in_file_names_reach_the_terminal_escaped(tmp_path: Path, name: str):
    """A line break in a name would forge a `path:line:col` line; an escape sequence would be
    obeyed by the terminal."""
    root = tmp_path / "mem"
    (root / "notes").mkdir(parents=True)
    (root / "_index.md").write_text("# Index\n")
    (root / "notes" / f"{name}.md").write_text("# Note\n")
    out = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check"],
                         capture_output=True, text=True, timeout=60).stdout
    github = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check", "--format",
                             "github"], capture_output=True, text=True, timeout=60).stdout
    assert not any(c in github for c in "\x1b\t"), github
    assert all(line.startswith("::") for line in github.splitlines()), github
    assert "\x1b" not in out and "\t" not in out
    located = [line for line in out.splitlines() if line.startswith("notes/")]
    assert located and all(":1:1: PM" in line for line in located), out
    assert any("\\x" in line for line in located)


# -- output for roots never written to this format (issue 13) -------------------------------


@pytest.fixture
def legacy_root(tmp_path: Path) -> Path:
    """A vault of 25 notes with no summaries and 12 unrouted: many findings of two codes."""
    files = base_files()
    for i in range(25):
        files[f"notes/n{i:02}.md"] = f"# Note {i}\n\nPlain prose, no summary.\n"
        if i < 13:
            files["_index.md"] += f"- [N{i}](notes/n{i:02}.md) — note {i}\n"
    return write_root(tmp_path / "memory", files)


def test_text_output_shows_ten_findings_of_a_code_and_counts_the_rest(legacy_root: Path):
    lines = pmem("--root", str(legacy_root), "check").stdout.splitlines()
    shown = [line for line in lines if line.startswith("notes/")]
    assert sum(" PM100 " in line for line in shown) == 10 and sum(" PM202 " in line for line in shown) == 10
    assert lines[-3:] == [
        "… 15 more PM100 summary-missing (25 in all; `pmem check --select PM100 --max-per-code 0` lists them)",
        "… 2 more PM202 route-missing (12 in all; `pmem check --select PM202 --max-per-code 0` lists them)",
        "0 errors and 12 warnings in 30 Markdown files; also 25 hints",
    ]
    everything = pmem("--root", str(legacy_root), "check", "--max-per-code", "0").stdout.splitlines()
    assert len(everything) == 38 and not any(line.startswith("…") for line in everything)


def test_headline_counts_hints_and_information_apart_from_what_needs_fixing(legacy_root: Path):
    hints = pmem("--root", str(legacy_root), "check", "--select", "PM100").stdout.splitlines()
    assert hints[-1] == "No errors or warnings in 30 Markdown files; 25 hints"
    (legacy_root / "_index.md").write_text((legacy_root / "_index.md").read_text() + "- [X](x.md) — gone\n")
    (legacy_root / "_core/profile.md").unlink(missing_ok=True)
    (legacy_root / "_core/preferences.md").unlink(missing_ok=True)
    mixed = pmem("--root", str(legacy_root), "check", "--select", "PM100,PM201,PM003").stdout.splitlines()
    assert mixed[-1] == f"1 error and 0 warnings in {mixed[-1].split(' in ')[1].split(' ')[0]} Markdown files; " \
        "also 2 information and 25 hints"


def test_sort_severity_puts_errors_first(legacy_root: Path):
    (legacy_root / "_index.md").write_text((legacy_root / "_index.md").read_text() + "- [X](zz/x.md) — gone\n")
    by_file = pmem("--root", str(legacy_root), "check", "--max-per-code", "0").stdout.splitlines()[:-1]
    by_severity = pmem("--root", str(legacy_root), "check", "--max-per-code", "0", "--sort", "severity")
    lines = by_severity.stdout.splitlines()[:-1]
    assert by_severity.returncode == 1
    assert sorted(lines) == sorted(by_file) and lines != by_file
    ranks = {"error": 0, "warning": 1, "information": 2, "hint": 3}
    found = [ranks[line.split(": ")[1].split()[-1]] for line in lines]
    assert found == sorted(found) and found[0] == 0 and " PM201 " in lines[0]
    # Within a severity, by file and position.
    warnings = [line for line in lines if line.split(": ")[1].endswith("warning")]
    assert warnings == [line for line in by_file if line.split(": ")[1].endswith("warning")]


def test_json_keeps_every_finding(legacy_root: Path):
    report = json.loads(pmem("--root", str(legacy_root), "check", "--format", "json").stdout)
    assert len(report["diagnostics"]) == 37


def test_statistics_counts_each_code(legacy_root: Path):
    result = pmem("--root", str(legacy_root), "check", "--statistics")
    assert result.stdout.splitlines() == [
        "25  PM100  summary-missing  hint",
        "12  PM202  route-missing  warning",
        "0 errors and 12 warnings in 30 Markdown files; also 25 hints",
    ]
    assert result.returncode == 0


def test_sarif_is_valid_sarif_2_1_0_with_rules_and_regions(root: Path):
    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[1] / "data" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
    (root / "notes").mkdir()
    (root / "notes/a b#c.md").write_text("# A\n\nNo summary.\n")
    result = pmem("--root", str(root), "check", "--format", "sarif")
    assert result.returncode == 0
    log = json.loads(result.stdout)
    jsonschema.validate(log, schema)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(r["id"] for r in rules) and len(rules) >= 30
    pm102 = next(r for r in rules if r["id"] == "PM102")
    assert pm102["name"] == "summary-bullet-count" and pm102["defaultConfiguration"] == {"level": "warning"}
    assert "three to six" in pm102["help"]["text"]
    assert next(r for r in rules if r["id"] == "PM100")["defaultConfiguration"] == {"level": "note"}
    by_rule = {res["ruleId"]: res for res in run["results"]}
    assert set(by_rule) == {"PM100", "PM102", "PM202"}
    location = by_rule["PM102"]["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "projects/two.md", "uriBaseId": "ROOT"},
                        "region": {"startLine": 5, "startColumn": 1, "endLine": 5, "endColumn": 11}}
    assert rules[by_rule["PM102"]["ruleIndex"]]["id"] == "PM102"
    assert by_rule["PM100"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "notes/a%20b%23c.md"
    assert run["originalUriBaseIds"]["ROOT"]["uri"] == root.as_uri() + "/"


@pytest.mark.parametrize("unbuffered", ["1", None])
def test_a_reader_that_goes_away_gets_no_traceback(tmp_path: Path, unbuffered: str | None):
    """`pmem check | head -0`: the reader is gone before pmem writes; pmem stops quietly, whether
    its output fails at a write (unbuffered) or at the last flush (`run`, buffered)."""
    root = demo_copy(tmp_path / "root")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    proc = subprocess.Popen([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check", "--no-cache"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone: every write pmem makes fails with EPIPE
    err = proc.stderr.read().decode("utf-8")
    assert proc.wait(timeout=60) == 2
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_stream_that_cannot_show_cjk_gets_escapes_not_a_crash(tmp_path: Path):
    root = demo_copy(tmp_path / "root")
    # A Chinese note with a near-miss heading: PM106 names the Chinese heading (issue 44: the
    # note's own language), which an ASCII stream shows escaped.
    (root / "notes" / "笔记.md").write_text("# 四川菜笔记\n\n## 总结\n\n- 一。\n- 二。\n- 三。\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check", "--no-cache"],
                          capture_output=True, env={**os.environ, "PYTHONIOENCODING": "ascii"}, timeout=60)
    assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr
    assert b"\\u6458\\u8981" in done.stdout  # PM106 names the Chinese heading, escaped


@pytest.mark.parametrize("notes", [0, 400])
def test_the_pmem_process_ends_with_its_whole_output_and_its_exit_handlers(tmp_path: Path, notes: int):
    """`run` ends a check's process without freeing what it built (docs/decisions.md, "The
    process ends without freeing"): the output, within a pipe's buffer or larger than it, is all
    there, the exit status is the check's, and the exit handlers ran as at any exit."""
    files = base_files()
    for i in range(notes):  # unrouted notes without a summary: several findings each
        files[f"notes/n{i:03}.md"] = f"# Note {i}\n\nSome text about thing {i}.\n"
    files["_index.md"] += "- [Gone](projects/gone.md) — a route to nothing (an error: exit status 1)\n"
    root = write_root(tmp_path / "memory", files)
    script = ("import atexit, sys\n"
              "atexit.register(lambda: sys.stderr.write('exit handler ran\\n'))\n"
              "from pmem_lsp.cli.main import run\n"
              f"sys.argv = ['pmem', '--root', {str(root)!r}, 'check', '--format', 'json', '--no-cache']\n"
              "run()\n")
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as a user's shell has it
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env=buffered)
    assert done.stdout.endswith("}\n") and (len(done.stdout) > 65536) == (notes > 0), done.stdout[-200:]
    report = json.loads(done.stdout)
    assert sum(1 for f in report["diagnostics"] if f["path"].startswith("notes/")) >= notes
    assert any(f["code"] == "PM201" for f in report["diagnostics"])
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith("exit handler ran\n"), done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_output_that_cannot_be_written_is_said_not_a_traceback(tmp_path: Path):
    """`pmem check > /dev/full`: the last flush fails with ENOSPC; pmem says so and exits 2."""
    root = demo_copy(tmp_path / "root")
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check", "--no-cache",
                               "--format", "json"], stdout=full, stderr=subprocess.PIPE, text=True, env=buffered,
                              timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "could not be written" in done.stderr, done.stderr
