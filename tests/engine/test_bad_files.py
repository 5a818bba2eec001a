"""Bad files (issue 9): invalid UTF-8, NUL bytes, CRLF and BOM, a 50 MB file, very long lines,
deeply nested folders, symbolic link loops, links out of the root, named pipes, unreadable
files, and files that vanish between listing and reading.

For each, `pmem check` (text and JSON) and the server name the file and the reason, the
rest of the root is still checked (a planted finding in a normal file is reported), and
nothing that exists is treated as missing: a route, a link and an archive record point at
the bad file, so a PM201, PM402 or PM302 would give it away. The server's part, end to end:
tests/server/test_server_bad_files.py.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pmem_lsp.engine.root_state as root_state_module
from bounded import GENEROUS_SECONDS
from pmem_lsp.cli.check import run_check
from pmem_lsp.engine.analysis import analyze
from pmem_lsp.engine.findings import Severity
from pmem_lsp.engine.host import MemoryHost, MemoryRoot
from pmem_lsp.engine.index_routes import parse_index
from pmem_lsp.engine.markdown import scan_blocks
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.root_state import MAX_ANALYSED_BYTES, RootState
from pmem_lsp.engine.secrets import find_secrets
from pmem_lsp.engine.settings import Settings, resolve_settings
from roots import active_file, index_text, make_root, summary_block

MiB = 1024 * 1024
BAD = "notes/bad.md"  # the bad file; the index routes it and notes/links.md links to it
ARCHIVED = "_archive/projects/old.md"  # an archived file, bad the same way; a record points at it
MISSING = {"PM201", "PM302", "PM402"}  # what a bad file taken for a missing one would cause
PLANTED = "projects/two.md:5:1: PM102 summary-bullet-count warning: the summary has 2 bullets; it needs 3 to 6"
ARCHIVE_INDEX = """# Archive index

## projects/old.md
- status: archived
- original: projects/old.md
- location: _archive/projects/old.md
- index-line: - [Old](projects/old.md) — shipped in March
- archived: 2026-09-14
- reason: project finished
"""


def build_root(tmp_path: Path) -> Path:
    """A well-formed root with one planted finding (PM102 in projects/two.md), a route, a
    link and an archive record pointing at the bad paths (regular files, until a test spoils
    them)."""
    return make_root(tmp_path, {
        "projects/two.md": active_file("Two", summary=summary_block(2)),
        "notes/links.md": active_file("Links", body="## Context\nSee [the bad one](bad.md).\n"),
        BAD: active_file("Bad"),
        ARCHIVED: active_file("Old"),
        "_archive/_index.md": ARCHIVE_INDEX,
        "_index.md": index_text(["projects/alpha.md", "notes/beta.md", "projects/two.md", "notes/links.md", BAD]),
    })


def pmem(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process: a read that blocks (a named pipe) fails the test by
    the timeout instead of hanging it."""
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check", *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)


def check_text_and_json(root: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    text = pmem(root)
    report = json.loads(pmem(root, "--format", "json").stdout)
    return text, report


def assert_rest_checked(stdout: str, report: dict) -> None:
    """The planted finding is there, and nothing is called missing."""
    assert PLANTED in stdout.splitlines()
    assert ("projects/two.md", "PM102") in {(d["path"], d["code"]) for d in report["diagnostics"]}
    assert [d for d in report["diagnostics"] if d["code"] in MISSING] == []
    assert not any(code in stdout for code in MISSING), stdout


def warning(rel: str, reason: str) -> str:
    return f"pmem: warning: {rel}: cannot be read ({reason}); it is not treated as missing"


# -- files that cannot be read --------------------------------------------------------------


def _fifo(path: Path, tmp_path: Path) -> str:
    os.mkfifo(path)  # opening it for reading would block until a writer comes: never opened
    return "not a regular file (named pipe)"


def _loop(path: Path, tmp_path: Path) -> str:
    os.symlink(path.name, path)
    return "Too many levels of symbolic links"


def _outside(path: Path, tmp_path: Path) -> str:
    secret = tmp_path / f"outside-{path.name}"
    secret.write_text("# Outside\n\nOUTSIDE-THE-ROOT\n", encoding="utf-8")
    os.symlink(secret, path)
    return "symbolic link pointing outside the root"


def _broken(path: Path, tmp_path: Path) -> str:
    os.symlink(path.name + ".nowhere", path)
    return "broken symbolic link"


@pytest.mark.e2e
@pytest.mark.parametrize("spoil", [_fifo, _loop, _outside, _broken], ids=["fifo", "symlink-loop", "outside", "broken"])
def test_unreadable_files_are_reported_by_name_and_never_missing(tmp_path: Path, spoil):
    root = build_root(tmp_path)
    reasons = {}
    for rel in (BAD, ARCHIVED):
        (root / rel).unlink()
        reasons[rel] = spoil(root / rel, tmp_path)
    text, report = check_text_and_json(root)
    assert text.stderr.splitlines() == [warning(ARCHIVED, reasons[ARCHIVED]), warning(BAD, reasons[BAD])]
    assert report["unreadable"] == [{"path": ARCHIVED, "reason": reasons[ARCHIVED]},
                                    {"path": BAD, "reason": reasons[BAD]}]
    assert report["truncated"] == []
    assert_rest_checked(text.stdout, report)
    assert "OUTSIDE-THE-ROOT" not in text.stdout + text.stderr + json.dumps(report)


def _in_process(root: Path, fmt: str = "text") -> tuple[str, str]:
    """`pmem check` in this process (what `main` runs after parsing), so that a test can
    make reads fail: (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    state = RootState.scan(root, resolve_settings(root))
    run_check(state, fmt, Severity.HINT, Severity.ERROR, out=out, err=err)
    return out.getvalue(), err.getvalue()


def test_an_unreadable_file_is_reported_and_never_missing(tmp_path: Path, monkeypatch):
    """Tests run as root, where chmod 000 does not stop a read: the open itself fails."""
    root = build_root(tmp_path)
    real_open = os.open

    def failing_open(path, *args, **kwargs):
        if str(path).endswith((BAD, ARCHIVED)):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(root_state_module, "_os_open", failing_open)
    out, err = _in_process(root)
    assert err.splitlines() == [warning(ARCHIVED, "Permission denied"), warning(BAD, "Permission denied")]
    # The headline says the check was not whole: "No problems" must not read as "all checked".
    assert out.splitlines()[-1].endswith("; 2 paths could not be read and are not checked (see the warnings)")
    out_json, _err = _in_process(root, "json")
    report = json.loads(out_json)
    assert report["unreadable"] == [{"path": ARCHIVED, "reason": "Permission denied"},
                                    {"path": BAD, "reason": "Permission denied"}]
    assert_rest_checked(out, report)


def test_a_file_that_vanishes_between_listing_and_reading_is_gone_not_unreadable(tmp_path: Path, monkeypatch):
    """Listed by the scan, deleted before it is opened: it is really gone, so it is left out
    of the root state (and the route and the link to it are dangling), not kept as unreadable."""
    root = build_root(tmp_path)
    real_open = os.open

    def vanishing_open(path, *args, **kwargs):
        if str(path).endswith(BAD):
            Path(path).unlink(missing_ok=True)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(root_state_module, "_os_open", vanishing_open)
    state = RootState.scan(root, Settings())
    assert BAD not in state.files and state.read_problems() == [] and state.missing(BAD)
    out, err = _in_process(root)
    assert err == ""
    assert out.splitlines()[:2] == [
        "_index.md:4:9: PM201 route-dangling error: `notes/bad.md` does not exist",
        "notes/links.md:11:19: PM402 broken-link warning: link target `bad.md` (resolves to `notes/bad.md`) does not "
        "exist in the memory root",
    ]
    assert PLANTED in out.splitlines()


def _child(script: str) -> dict:
    """Run `script` (which prints JSON) in its own process, so that a read which blocks
    fails by the timeout instead of hanging the suite."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                            timeout=30, cwd=Path(__file__).resolve().parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_file_swapped_for_a_named_pipe_after_the_listing_is_not_read(tmp_path: Path):
    """Regular when listed, a named pipe when opened: the open does not block and the pipe
    is reported, never read."""
    root = build_root(tmp_path)
    report = _child(f"""
        import os, io, json, contextlib
        from pathlib import Path
        import pmem_lsp.engine.root_state as root_state_module
        from pmem_lsp.cli.main import main
        real_open = os.open
        def swapping_open(path, *args, **kwargs):
            if str(path).endswith({BAD!r}) and not os.path.exists(str(path) + ".swapped"):
                os.unlink(path); os.mkfifo(path); Path(str(path) + ".swapped").touch()
            return real_open(path, *args, **kwargs)
        root_state_module._os_open = swapping_open
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["--root", {str(root)!r}, "check", "--format", "json"])
        print(out.getvalue())
    """)
    assert report["unreadable"] == [{"path": BAD, "reason": "not a regular file (named pipe)"}]
    assert ("projects/two.md", "PM102") in {(d["path"], d["code"]) for d in report["diagnostics"]}
    assert [d for d in report["diagnostics"] if d["code"] in MISSING] == []


def test_a_file_swapped_for_a_link_out_of_the_root_after_the_listing_is_not_followed(tmp_path: Path,
                                                                                      monkeypatch):
    root = build_root(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nOUTSIDE-THE-ROOT\n", encoding="utf-8")
    real_open = os.open
    swapped = []

    def swapping_open(path, *args, **kwargs):
        if str(path).endswith(BAD) and not swapped:
            os.unlink(path)
            os.symlink(secret, path)
            swapped.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(root_state_module, "_os_open", swapping_open)
    entry = RootState.scan(root, Settings()).files[BAD]
    assert swapped and entry.text is None and entry.error == "symbolic link pointing outside the root"


# -- files that are read, oddly encoded -----------------------------------------------------

BAD_SUMMARY = "# Bad\n\nStatus: active\n\n## Summary\n- one\n- two\n\n## Context\nText.\n"  # PM102 on line 5


@pytest.mark.e2e
@pytest.mark.parametrize("data", [
    BAD_SUMMARY.replace("one", "one BROKEN").encode("utf-8").replace(b"BROKEN", b"\xff\xfe\xc3( broken"),
    BAD_SUMMARY.replace("- two", "- two \x00 with a NUL").encode("utf-8"),
    b"\xef\xbb\xbf" + BAD_SUMMARY.replace("\n", "\r\n").encode("utf-8"),
    BAD_SUMMARY.replace("\n", "\r").encode("utf-8"),
    b"\xef\xbb\xbf" + BAD_SUMMARY.encode("utf-8") + b"\x80\x81\xc3",
], ids=["invalid-utf8", "nul", "bom-crlf", "lone-cr", "bom-and-truncated-utf8"])
def test_oddly_encoded_files_are_read_and_checked(tmp_path: Path, data: bytes):
    root = build_root(tmp_path)
    (root / BAD).write_bytes(data)
    text, report = check_text_and_json(root)
    assert text.stderr == "" and report["unreadable"] == [] and report["truncated"] == []
    assert f"{BAD}:5:1: PM102 summary-bullet-count warning: the summary has 2 bullets; it needs 3 to 6" \
        in text.stdout.splitlines()
    assert_rest_checked(text.stdout, report)


# -- a huge file, very long lines -----------------------------------------------------------


def _huge(path: Path, size: int) -> None:
    """A `size`-byte Markdown file: a summary with 2 bullets, prose past the cap, then a
    sparse tail (the file really is that large; only the first 2 MiB are ever read)."""
    filler = "Some prose that goes on and on about the work. " * 40 + "\n"
    head = BAD_SUMMARY + filler * (3 * MiB // len(filler))
    with open(path, "wb") as fh:
        fh.write(head.encode("utf-8"))
        fh.truncate(size)


@pytest.mark.e2e
def test_a_50_mb_file_is_analysed_up_to_the_cap_and_reported(tmp_path: Path):
    root = build_root(tmp_path)
    _huge(root / BAD, 50 * MiB)
    text, report = check_text_and_json(root)
    assert text.stderr.splitlines() == [f"pmem: warning: {BAD}: 50 MiB, only the first 2 MiB analysed"]
    assert report["truncated"] == [{"path": BAD, "size": 50 * MiB, "analysed": MAX_ANALYSED_BYTES}]
    assert report["unreadable"] == []
    found = {(d["path"], d["code"]) for d in report["diagnostics"]}
    assert {(BAD, "PM102"), (BAD, "PM005")} <= found  # analysed (its head), and its real size reported
    assert_rest_checked(text.stdout, report)
    assert text.stdout.splitlines()[-1].endswith("; 1 file checked only in part (see the warnings)")


def _token(i: int, length: int = 36) -> str:
    """A random-looking base62 body, the same on every run."""
    raw = base64.b64encode(hashlib.sha256(str(i).encode()).digest() * 2).decode()
    return raw.replace("+", "x").replace("/", "y")[:length]


# Single lines (or line patterns) that made the Markdown scanner or the secrets detector
# quadratic, or crashed it; each sized so the old code ran for minutes (or hit a
# RecursionError), while it now takes a fraction of a second.
LONG_LINES = {
    "nested-quotes": ">" * 200_000 + "a\n" + "b\n" * 50_000,
    "nested-lists-and-blank-lines": "- " * 100_000 + "a\n" + "\n" * 100_000,
    "nested-ordered-items": "1. " * 300_000,
    "backtick-run-then-backtick": "`" * 400_000 + "a`",
    "password-repeated": "password=" * 25_000,
    "token-words-after-a-key": "password: " + "token " * 50_000,
    "closing-brackets-after-a-value": "password=a" + ")" * 400_000,
    "table-headers-in-one-table": "| password |\n| --- |\n" * 10_000,
    "pem-begin-repeated": "-----BEGIN PRIVATE KEY-----" * 40_000,
    "pem-begin-with-body-repeated": "-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEA1234567890abcdefghijkl " * 20_000
                                    + "-----END RSA PRIVATE KEY-----",
    "many-tokens-on-one-line": " ".join("ghp_" + _token(i) for i in range(30_000)),
    # Shapes that made the link and route parsers quadratic (found in review: 40-120 KB of
    # these stalled `pmem check` for a minute or more).
    "escaped-brackets-in-a-list-item": "- [" + "x\\[" * 300_000,
    "one-long-word-in-a-list-item": "- " + "a" * 1_000_000,
    "wiki-openers-in-a-table-row": "| " + "[[" * 400_000 + " | d |",
    "wiki-aliases-in-a-list-item": "- " + "[[a|" * 200_000,
    "unclosed-links-in-a-list-item": "- " + "[x](a" * 200_000,
    "unclosed-anchor-links": "- [x](#" * 150_000,
}


@contextlib.contextmanager
def _deadline(seconds: float = GENEROUS_SECONDS):
    """Fail (instead of running for hours) when the block takes longer than `seconds` — a
    generous bound, not a speed goal (that is `make bench`'s): quadratic work on these lines
    takes hours."""
    def expired(_signum, _frame):
        raise TimeoutError(f"still running after {seconds:.0f} s: quadratic again?")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name", list(LONG_LINES))
def test_long_lines_take_linear_time(name: str):
    lines = ("# Long\n\n" + LONG_LINES[name] + "\n").split("\n")
    with _deadline():
        scan_blocks(lines)
        find_secrets(lines)
        doc = MemoryFile("\n".join(lines))
        doc.links  # noqa: B018  (the link parser, as PM402 runs it)
        parse_index(doc)  # the route parser, as if the file were `_index.md`


@pytest.mark.e2e
def test_a_root_with_very_long_lines_is_checked_in_seconds(tmp_path: Path):
    """One file of 2 MiB made of the worst lines above, through the real CLI."""
    root = build_root(tmp_path)
    body = "\n".join(LONG_LINES.values())
    data = (BAD_SUMMARY + body).encode("utf-8")[:MAX_ANALYSED_BYTES]
    (root / BAD).write_bytes(data)
    text = pmem(root, timeout=GENEROUS_SECONDS * 2)  # a generous bound; quadratic would take hours
    assert text.stderr == ""
    assert f"{BAD}:5:1: PM102 summary-bullet-count warning: the summary has 2 bullets; it needs 3 to 6" \
        in text.stdout.splitlines()
    assert PLANTED in text.stdout.splitlines()


# -- deeply nested folders ------------------------------------------------------------------


@pytest.mark.e2e
def test_deeply_nested_folders_are_checked_and_too_deep_ones_reported(tmp_path: Path):
    root = build_root(tmp_path)
    # 150 levels, well within PATH_MAX: read and checked like any other file.
    deep = root / "deep" / Path(*["d"] * 150)
    deep.mkdir(parents=True)
    (deep / "x.md").write_text(active_file("Deep"), encoding="utf-8")
    # Past PATH_MAX (4096 bytes): built one level at a time relative to the parent.
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(25):
            os.mkdir("e" * 200, dir_fd=fd)
            child = os.open("e" * 200, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("y.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    text, report = check_text_and_json(root)
    deep_rel = "deep/" + "/".join(["d"] * 150) + "/x.md"
    assert f"{deep_rel}:1:1: PM202 route-missing warning" in text.stdout
    [too_deep] = report["unreadable"]
    assert too_deep["path"].startswith("e" * 200 + "/") and too_deep["reason"] == "File name too long"
    assert text.stderr.splitlines() == [warning(too_deep["path"], "File name too long")]
    assert_rest_checked(text.stdout, report)


# -- the root state kept current: refresh and editor buffers ----------------------------------


def test_refresh_reports_a_pipe_or_a_link_out_that_appears_later(tmp_path: Path):
    root = build_root(tmp_path)
    state = RootState.scan(root, Settings())
    os.mkfifo(root / "notes/pipe.md")
    assert state.refresh("notes/pipe.md") == {"notes/pipe.md"}
    assert state.files["notes/pipe.md"].error == "not a regular file (named pipe)"
    # A regular file replaced by a link out of the root is not read on refresh either.
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nOUTSIDE-THE-ROOT\n", encoding="utf-8")
    (root / BAD).unlink()
    os.symlink(secret, root / BAD)
    assert state.refresh(BAD) == {BAD}
    assert state.files[BAD].text is None and state.files[BAD].error == "symbolic link pointing outside the root"
    # A folder moved in with a pipe and a loop in it.
    moved = tmp_path / "incoming"
    moved.mkdir()
    os.mkfifo(moved / "p.md")
    os.symlink("l.md", moved / "l.md")
    (moved / "ok.md").write_text(active_file("Ok"), encoding="utf-8")
    os.rename(moved, root / "notes/incoming")
    state.refresh("notes/incoming")
    assert [(p.path, p.reason) for p in state.read_problems()] == [
        ("notes/bad.md", "symbolic link pointing outside the root"),
        ("notes/incoming/l.md", "Too many levels of symbolic links"),
        ("notes/incoming/p.md", "not a regular file (named pipe)"),
        ("notes/pipe.md", "not a regular file (named pipe)"),
    ]
    assert state.files["notes/incoming/ok.md"].text is not None
    # Deleted: gone, not unreadable.
    os.unlink(root / "notes/pipe.md")
    assert state.refresh("notes/pipe.md") == {"notes/pipe.md"}
    assert "notes/pipe.md" not in state.files and state.missing("notes/pipe.md")


def _notes_unlistable(monkeypatch) -> None:
    """`notes/` cannot be listed from now on (as root, chmod does not stop a listing)."""
    real_scandir = os.scandir

    def failing_scandir(path):
        if str(path).endswith("/notes"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing_scandir)


def test_a_folder_that_cannot_be_listed_is_named_in_the_headline(tmp_path: Path, monkeypatch):
    """A clean root with one folder the scan could not list: its files are unknown, so the
    check does not say "No problems" alone."""
    root = build_root(tmp_path)
    _notes_unlistable(monkeypatch)
    out, err = _in_process(root)
    assert "pmem: warning: notes: cannot be read (Permission denied); it is not treated as missing" in err.splitlines()
    assert out.splitlines()[-1].endswith("; 1 path could not be read and is not checked (see the warnings)")


def test_a_folder_that_cannot_be_listed_on_refresh_keeps_its_files(tmp_path: Path, monkeypatch):
    root = build_root(tmp_path)
    state = RootState.scan(root, Settings())
    _notes_unlistable(monkeypatch)
    state.refresh("notes")
    assert BAD in state.files and not state.missing("notes/links.md")
    assert [(p.path, p.reason) for p in state.read_problems()] == [("notes", "Permission denied")]
    monkeypatch.undo()
    state.refresh("notes")
    assert state.read_problems() == []


def test_editor_buffers_are_capped_like_files(tmp_path: Path):
    root = build_root(tmp_path)
    state = RootState.scan(root, Settings())
    big = BAD_SUMMARY + "x" * (3 * MiB)
    assert state.set_buffer(BAD, big) == {BAD}
    entry = state.files[BAD]
    assert entry.truncated and entry.size == len(big) and len(entry.text) == MAX_ANALYSED_BYTES
    # An edit past the cap that keeps the size changes nothing the analysis sees.
    assert state.set_buffer(BAD, big[:-1] + "y") == set()
    # Non-ASCII: cut by UTF-8 bytes on a character boundary.
    wide = BAD_SUMMARY + "é" * (2 * MiB)
    state.set_buffer(BAD, wide)
    entry = state.files[BAD]
    assert entry.truncated and entry.size == len(wide.encode("utf-8"))
    assert len(entry.text.encode("utf-8")) in (MAX_ANALYSED_BYTES, MAX_ANALYSED_BYTES - 1)
    assert entry.text.endswith("é")
    assert [(p.path, p.size) for p in state.read_problems([BAD])] == [(BAD, len(wide.encode("utf-8")))]
    # A lone surrogate (JSON can carry "\ud800") neither crashes the size nor the analysis.
    assert state.set_buffer(BAD, BAD_SUMMARY + "\ud800 lone\n") == {BAD}
    assert state.files[BAD].size == len(BAD_SUMMARY) + 3 + 6 and not state.files[BAD].truncated
    assert (BAD, "PM102") in {(f.path, f.code) for f in analyze(state)}


def test_the_server_logs_each_read_problem_once_per_change(tmp_path: Path):
    from pmem_lsp.server.diagnostics import ReadProblemLog

    root_path = build_root(tmp_path)
    os.mkfifo(root_path / "notes/pipe.md")
    lines: list[str] = []
    problems = ReadProblemLog(lines.append)  # the publisher's, one per root
    host = MemoryHost()
    root = host.add_root(root_path, Settings())
    assert isinstance(root, MemoryRoot)
    state = RootState.scan(root_path, Settings())
    from pmem_lsp.engine.analysis import Analysis

    host.install(root, state, Analysis(state))
    problems.update(root)
    assert lines == [f"pmem: {root_path / 'notes/pipe.md'}: cannot be read (not a regular file (named pipe)); "
                            "it is not treated as missing"]
    problems.update(root)  # a second scan: nothing changed, nothing logged
    lines.clear()
    big = BAD_SUMMARY + "x" * (3 * MiB)
    for n in range(3):  # typing in a buffer over the cap: logged once
        changed = state.set_buffer(BAD, big + "y" * n)
        problems.update(root, changed)
    assert lines == [f"pmem: {root_path / BAD}: 3.0 MiB, only the first 2 MiB analysed"]
    problems.update(root, state.set_buffer(BAD, BAD_SUMMARY))  # under the cap again
    problems.update(root, state.set_buffer(BAD, big))  # and over it: logged again
    assert len(lines) == 2
