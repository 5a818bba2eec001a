"""No secret value leaves pmem (issue 9, docs/design.md §7): not in `pmem check` (every format),
`pmem status`, `pmem health`, the lifecycle previews and confirmations, nor anywhere in what
the server sends — diagnostics, hover, code action titles and commands, code lenses,
completion, confirmation requests, `pmem.status`/`pmem.health`, log and show messages,
error responses — nor on the server's or the CLI's stderr, malformed requests and uncaught
exceptions included.

A secret "leaks" when any 12-character piece of it appears (masked hints show at most four
characters). The server is driven by a raw stdio client (`RawServer`) so that every byte it
writes, stderr included, is checked; `tests/server/test_no_network.py` reuses it.
"""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer

from roots import base_files, summary_file, write_root

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import secrets_eval as ev  # the PM401 evaluation set's generators: real formats
from pmem_lsp.engine import redaction
from pmem_lsp.engine.redaction import RedactingFilter, install, redact_text

_rng = random.Random(20261130)
# Built at run time in the formats the detector knows; never real credentials.
SECRETS: dict[str, str] = {
    "github": ev.TOKENS["GitHub token"](_rng),
    "aws": ev.TOKENS["AWS access key id"](_rng),
    "slack": ev.TOKENS["Slack token"](_rng),
    "stripe": ev.TOKENS["Stripe secret key"](_rng),
    "openai": ev.TOKENS["OpenAI API key"](_rng),
    "password": ev.v_password(_rng),
    "url": ev.rs(_rng, 18),
    "record": ev.rs(_rng, 20),
    "core": ev.TOKENS["GitLab token"](_rng),
    "unrouted": ev.TOKENS["npm token"](_rng),
    "legacy": ev.TOKENS["PyPI token"](_rng),
}
_PEM_LINES, _PEM_FIRST, _PEM_LAST = ev.pem_block(_rng, "RSA")
PEM_BODY = [line for line in _PEM_LINES[_PEM_FIRST + 1:_PEM_LAST] if len(line) >= 12]

DONE_ROUTE = f"- [Done project](projects/done.md) — finished; stripe key {SECRETS['stripe']}"
OLD_ROUTE = f"- [Old notes](notes/old.md) — password: {SECRETS['record']}"


def pieces(value: str, size: int = 12) -> list[str]:
    return [value[i:i + size] for i in range(0, max(1, len(value) - size + 1))]


def leaked(text: str) -> list[str]:
    """The names of the secrets a piece of which is in `text`."""
    out = [name for name, value in SECRETS.items() if any(p in text for p in pieces(value))]
    if any(line in text for line in PEM_BODY):
        out.append("pem")
    return out


def assert_no_leak(text: str, where: str) -> None:
    found = leaked(text)
    assert not found, f"{where}: a piece of the {', '.join(found)} secret leaked"


def leak_root(base: Path) -> Path:
    """A root with secrets in every zone and in the places outputs quote: route lines, a
    Summary bullet that says the work is done, a stale file, an unrouted file's first bullet,
    an archive record's saved route and a legacy record's file."""
    files = base_files()
    files["_index.md"] += (f"- [Keys](notes/keys.md) — deploy notes\n{DONE_ROUTE}\n"
                           "- [Stale](projects/stale.md) — an old plan\n")
    files["notes/keys.md"] = summary_file("Keys", extra=(
        f"\nAWS key: {SECRETS['aws']}\n\npassword: {SECRETS['password']}\n\n"
        f"Database: postgres://admin:{SECRETS['url']}@db.internal:5432/app\n\n"
        f"SLACK_BOT_TOKEN={SECRETS['slack']}\n\n```\n" + "\n".join(_PEM_LINES) + "\n```\n"))
    files["projects/done.md"] = (
        "# Done project\n\n## Summary\n"
        f"- Shipped on 2026-05-01, deploy token {SECRETS['github']}\n"
        "- the rollout went well\n- the docs are written\n\n## Details\n\nBody.\n")
    files["projects/stale.md"] = summary_file("Stale", extra=f"\nOPENAI_API_KEY={SECRETS['openai']}\n")
    files["_core/profile.md"] += f"\napi_key = {SECRETS['core']}\n"
    # Not routed: completion and the add-route fix build its route from the title and first bullet.
    files["notes/deploy.md"] = ("# Deploy steps\n\n## Summary\n"
                                f"- publish with NPM_TOKEN={SECRETS['unrouted']}\n- then tag\n- then announce\n")
    files["_archive/notes/old.md"] = summary_file("Old notes")
    # Archived before records kept the route: recover proposes one from the first bullet.
    files["_archive/notes/legacy.md"] = ("# Release notes\n\n## Summary\n"
                                         f"- upload with PYPI_TOKEN={SECRETS['legacy']}\n- two\n- three\n")
    files["_archive/_index.md"] = (
        "# Archive index\n\n## notes/old.md\n- status: archived\n- original: notes/old.md\n"
        f"- location: _archive/notes/old.md\n- index-line: {OLD_ROUTE}\n"
        "- archived: 2026-01-02\n- reason: kept for reference\n\n"
        "## notes/legacy.md\n- status: archived\n- location: _archive/notes/legacy.md\n- archived: 2025-06-01\n")
    root = write_root(base, files)
    old = time.time() - 400 * 86400
    os.utime(root / "projects/stale.md", (old, old))
    return root


# -- the CLI ------------------------------------------------------------------------------
def pmem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return leak_root(tmp_path / "memory")


def test_the_root_holds_every_secret_where_pmem_check_sees_it(root: Path):
    """The premise: each planted value is detected (else the other tests prove nothing)."""
    report = json.loads(pmem("--root", str(root), "check", "--format", "json").stdout)
    found = {(d["path"], d["line"]) for d in report["diagnostics"] if d["code"] == "PM401"}
    assert len([p for p, _ in found if p == "notes/keys.md"]) == 5
    assert {p for p, _ in found} >= {"notes/keys.md", "_index.md", "projects/done.md", "projects/stale.md",
                                      "_core/profile.md", "_archive/_index.md"}
    codes = {(d["path"], d["code"]) for d in report["diagnostics"]}
    assert ("projects/done.md", "PM502") in codes and ("projects/stale.md", "PM501") in codes


@pytest.mark.parametrize("args", [
    ("check",), ("check", "--format", "json"), ("check", "--format", "github"),
    ("check", "--min-severity", "error", "--select", "PM401"),
    ("status",), ("health",), ("health", "--format", "json"),
])
def test_reports_never_contain_the_values(root: Path, args: tuple[str, ...]):
    result = pmem("--root", str(root), *args)
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout.strip()
    assert_no_leak(result.stdout + result.stderr, f"pmem {' '.join(args)}")


def test_health_quotes_the_concluded_line_masked(root: Path):
    out = pmem("--root", str(root), "health").stdout
    assert "Shipped on 2026-05-01, deploy token" in out and "projects/stale.md" in out


@pytest.mark.parametrize("yes", [False, True], ids=["preview-only", "yes"])
@pytest.mark.parametrize("target", ["notes/keys.md", "projects/stale.md"])
def test_archive_preview_of_a_file_holding_secrets(root: Path, target: str, yes: bool):
    result = pmem("--root", str(root), "archive", target, *(["--yes"] if yes else []))
    assert result.returncode == (0 if yes else 3), result.stderr
    assert f"Archive {target}" in result.stdout
    assert_no_leak(result.stdout + result.stderr, f"pmem archive {target}")
    assert (root / "_archive" / target).exists() == yes


@pytest.mark.parametrize("yes", [False, True], ids=["preview-only", "yes"])
def test_archive_preview_when_the_route_line_holds_a_secret(root: Path, yes: bool):
    result = pmem("--root", str(root), "archive", "projects/done.md", "--reason", "done",
                  *(["--yes"] if yes else []))
    assert result.returncode == (0 if yes else 3), result.stderr
    assert "Archive projects/done.md" in result.stdout
    assert_no_leak(result.stdout + result.stderr, "pmem archive projects/done.md")


@pytest.mark.parametrize("yes", [False, True], ids=["preview-only", "yes"])
def test_recover_of_a_legacy_record_proposes_no_route_holding_a_secret(root: Path, yes: bool):
    result = pmem("--root", str(root), "recover", "notes/legacy.md", *(["--yes"] if yes else []))
    assert result.returncode == (0 if yes else 3), result.stderr
    assert "PROPOSED route" in result.stdout
    assert_no_leak(result.stdout + result.stderr, "pmem recover notes/legacy.md")
    assert "legacy" not in leaked((root / "_index.md").read_text(encoding="utf-8")), "copied into _index.md"


def test_recover_preview_when_the_saved_route_holds_a_secret(root: Path):
    result = pmem("--root", str(root), "recover", "notes/old.md")
    assert result.returncode == 3, result.stderr
    assert "Recover notes/old.md" in result.stdout
    assert_no_leak(result.stdout + result.stderr, "pmem recover notes/old.md")


def test_the_lifecycle_still_restores_the_route_line_exactly(root: Path):
    """Masking is for what is shown: the record keeps the exact bytes, so recover restores them."""
    assert pmem("--root", str(root), "archive", "projects/done.md", "--yes").returncode == 0
    assert DONE_ROUTE in (root / "_archive/_index.md").read_text(encoding="utf-8")
    assert pmem("--root", str(root), "recover", "projects/done.md", "--yes").returncode == 0
    assert DONE_ROUTE + "\n" in (root / "_index.md").read_text(encoding="utf-8")


def test_a_crash_in_the_cli_prints_a_redacted_traceback(root: Path):
    """The CLI's uncaught-exception printer is redacted: an exception whose text carries a
    secret (here raised on purpose after `install()`, as the CLI entry does) shows none."""
    code = ("import sys; from pmem_lsp.engine.redaction import install; install(); "
            f"raise RuntimeError('could not parse line: password: ' + {SECRETS['password']!r})")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "RuntimeError: could not parse line: password: [REDACTED]" in result.stderr
    assert_no_leak(result.stderr, "traceback")


# -- the redaction under the logs ------------------------------------------------------------
def test_redact_text_masks_every_kind_also_inside_reprs_and_json():
    text = (f"token {SECRETS['github']}\npassword: {SECRETS['password']}\n"
            f"postgres://admin:{SECRETS['url']}@db:5432/app\n" + "\n".join(_PEM_LINES))
    for form in (text, repr(text), json.dumps(text), json.dumps({"params": {"text": text}}), repr({"t": text})):
        out = redact_text(form)
        assert_no_leak(out, "redact_text")
        assert "[REDACTED]" in out
    assert redact_text("nothing to hide: projects/a.md:3:1 PM102") == "nothing to hide: projects/a.md:3:1 PM102"
    # The allow marker does not protect a value in a log.
    assert_no_leak(redact_text(f"password: {SECRETS['password']} <!-- pmem: allow-secret -->"), "allow marker")


def test_the_log_filter_redacts_message_arguments_and_exception_text():
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Collect()
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("pmem_lsp.test_no_leaks")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("Unknown message %s", {"text": f"AWS key: {SECRETS['aws']}"})
        try:
            raise ValueError(f"invalid literal for int() with base 10: '{SECRETS['github']}'")
        except ValueError:
            logger.exception("Failed to handle request %s", f"token={SECRETS['slack']}")
        logger.warning("bad format %s %s", "one")  # a record that cannot be formatted
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    assert len(records) == 3
    joined = "\n".join(records)
    assert_no_leak(joined, "log records")
    assert "ValueError: invalid literal for int() with base 10: '[REDACTED]'" in joined
    assert "unformattable log message" in records[2]


def test_install_is_idempotent_and_covers_the_last_resort_handler():
    handlers = [logging.lastResort, *logging.getLogger().handlers]
    saved = (sys.excepthook, threading.excepthook, [list(h.filters) for h in handlers])
    try:
        install()
        install()
        for h in handlers:
            assert sum(isinstance(f, RedactingFilter) for f in h.filters) == 1
        # The redacting hooks, whatever was installed before (a server started in this
        # process by an earlier test installs them too, and this test may run after it).
        assert sys.excepthook is redaction._excepthook
        assert threading.excepthook is redaction._thread_excepthook
    finally:  # this process is pytest's: leave its logging as it was
        sys.excepthook, threading.excepthook = saved[0], saved[1]
        for h, filters in zip(handlers, saved[2], strict=True):
            h.filters[:] = filters


# -- the server --------------------------------------------------------------------------------
# A client that cannot move files: the server applies a confirmed change itself, so a whole
# lifecycle operation happens inside the session without the client touching the disk.
CAPABILITIES: dict = {
    "general": {"positionEncodings": ["utf-16"]},
    "window": {"showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}}},
    "workspace": {"applyEdit": False, "workspaceFolders": True, "symbol": {}},
    "textDocument": {
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["", "quickfix", "refactor"]}}},
        "completion": {"completionItem": {"snippetSupport": False}},
        "publishDiagnostics": {},
    },
}

def _pos(line: int, character: int) -> dict:
    return {"line": line, "character": character}


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()) if needle in line)


def run_session(session: RawServer, root: Path) -> dict[str, Any]:
    """A full session over `root` (a `leak_root`): every feature that shows memory text, a
    confirmed archive, the reports, then shutdown. Returns what was collected by kind."""
    out: dict[str, Any] = {}
    session.confirm = True  # the archive in this session is confirmed, as a user would
    session.initialize(root, CAPABILITIES)
    keys, index, archive_index = root / "notes/keys.md", root / "_index.md", root / "_archive/_index.md"
    out["diagnostics"] = session.wait_for_code(keys, "PM401")
    session.wait_for_code(index, "PM401")

    # Editing a buffer: a new secret typed into an open file is reported, never repeated.
    text = session.open(keys)
    session.notify("textDocument/didChange", {
        "textDocument": {"uri": keys.as_uri(), "version": 2},
        "contentChanges": [{"text": text + f"\nnew token: {SECRETS['core']}\n"}]})
    new_line = len(text.splitlines()) + 1
    session.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                 and m["params"]["uri"] == keys.as_uri()
                 and any(d["range"]["start"]["line"] == new_line for d in m["params"]["diagnostics"]),
                 what="the typed secret's diagnostic")

    hovers = {
        "route": (index, _pos(_line_of(index, "notes/keys.md"), 4)),
        "route-with-secret": (index, _pos(_line_of(index, "projects/done.md"), 4)),
        "title": (keys, _pos(0, 3)),
        "record": (archive_index, _pos(_line_of(archive_index, "## notes/old.md"), 5)),
        "record-index-line": (archive_index, _pos(_line_of(archive_index, "index-line"), 4)),
    }
    out["hover"] = {name: session.request("textDocument/hover", {
        "textDocument": {"uri": path.as_uri()}, "position": pos}) for name, (path, pos) in hovers.items()}

    actions = []
    for path in (keys, index, root / "projects/done.md", root / "projects/stale.md", root / "notes/deploy.md",
                 archive_index):
        answer = session.request("textDocument/codeAction", {
            "textDocument": {"uri": path.as_uri()},
            "range": {"start": _pos(0, 0), "end": _pos(60, 0)},
            "context": {"diagnostics": session.diagnostics(path)}})
        actions += answer.get("result") or []
    out["action_titles"] = [a["title"] for a in actions]
    # Titles and commands (their arguments carry the archive reason); edits are the user's own
    # text moved or replaced, not output.
    out["actions"] = [{"title": a["title"], "command": a.get("command")} for a in actions]
    lenses = session.request("textDocument/codeLens", {"textDocument": {"uri": keys.as_uri()}})["result"] or []
    out["lenses"] = [lens if lens.get("command") else session.request("codeLens/resolve", lens)["result"]
                     for lens in lenses]

    # Completion of a whole route on an empty list item: built from titles and first bullets.
    index_text = session.open(index)
    session.notify("textDocument/didChange", {"textDocument": {"uri": index.as_uri(), "version": 2},
                                              "contentChanges": [{"text": index_text + "- "}]})
    out["completion"] = session.request("textDocument/completion", {
        "textDocument": {"uri": index.as_uri()}, "position": _pos(len(index_text.splitlines()), 2)})

    # The user discards both unsaved edits: a file with unsaved edits is never archived, nor
    # an index with unsaved edits rewritten (docs/design.md §5.1; test_server_lifecycle.py).
    for path in (keys, index):
        session.notify("textDocument/didClose", {"textDocument": {"uri": path.as_uri()}})
    out["status"] = session.request("workspace/executeCommand", {"command": "pmem.status", "arguments": [{}]})
    out["health"] = session.request("workspace/executeCommand", {"command": "pmem.health", "arguments": [{}]})
    out["archive"] = session.request("workspace/executeCommand", {
        "command": "pmem.archive", "arguments": [{"path": "notes/keys.md"}]})
    out["confirmations"] = [r["params"]["message"] for r in session.server_requests
                            if r["method"] == "window/showMessageRequest"]
    out["messages"] = [m["params"]["message"] for m in session.received
                       if m.get("method") in ("window/showMessage", "window/logMessage")]
    return out


def server_output(session: RawServer, skip_code_actions: bool = True) -> str:
    """Everything the server wrote (bodies and stderr), code action answers excepted when
    asked (their edits hold the user's own text, moved or replaced)."""
    bodies = []
    for body, message in zip(session.raw, session.received, strict=False):
        if skip_code_actions and "result" in message and isinstance(message["result"], list) and any(
                isinstance(a, dict) and "kind" in a and "title" in a for a in message["result"]):
            continue
        bodies.append(body.decode("utf-8", "replace"))
    return "\n".join(bodies) + "\n" + "".join(session.stderr)


def session_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PMEM")}
    env.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    return env


def test_a_full_server_session_never_sends_the_values(root: Path, tmp_path: Path):
    (tmp_path / "home").mkdir()
    session = RawServer(cwd=tmp_path, env=session_env(tmp_path / "home"))
    try:
        out = run_session(session, root)
    finally:
        code = session.close()
    assert code == 0, "".join(session.stderr)

    # What was collected is what it should be (the checks below are not vacuous).
    assert any(d["code"] == "PM401" for d in out["diagnostics"])
    assert all(out["hover"][k].get("result") for k in ("route", "title", "record")), out["hover"]
    assert "Redact the secret" in out["action_titles"]
    assert any(t.startswith("Archive") for t in out["action_titles"])
    assert "notes/keys.md" in json.dumps(out["status"]["result"])
    assert "projects/done.md" in json.dumps(out["health"]["result"])
    assert out["archive"]["result"]["applied"] is True, out["archive"]
    assert len(out["confirmations"]) == 1 and "notes/keys.md" in out["confirmations"][0]
    assert (root / "_archive/notes/keys.md").exists()

    for name, value in out.items():
        assert_no_leak(json.dumps(value), f"server {name}")
    assert_no_leak("".join(session.stderr), "server stderr")
    assert_no_leak(server_output(session), "server output")


def test_server_confirmation_when_the_route_line_holds_a_secret(root: Path, tmp_path: Path):
    (tmp_path / "home").mkdir()
    session = RawServer(cwd=tmp_path, env=session_env(tmp_path / "home"))
    session.confirm = False
    try:
        session.initialize(root, CAPABILITIES)
        for op, path in (("archive", "projects/done.md"), ("recover", "notes/old.md")):
            result = session.request("workspace/executeCommand",
                                     {"command": f"pmem.{op}", "arguments": [{"path": path}]})
            assert result["result"]["applied"] is False, result
    finally:
        session.close()
    confirmations = [r["params"]["message"] for r in session.server_requests
                     if r["method"] == "window/showMessageRequest"]
    assert len(confirmations) == 2
    assert_no_leak("\n".join(confirmations), "confirmation request")


# Messages a broken or hostile client could send, each carrying memory text with secrets in a
# place the server may quote in a log line, an error or a pop-up.
def _malformed(keys: Path) -> list[bytes]:
    text = keys.read_text(encoding="utf-8")
    doc = {"uri": keys.as_uri(), "languageId": "markdown", "version": 1, "text": text}
    return [json.dumps(m).encode() for m in (
        # a type error whose message repeats the value (`int('ghp_…')`)
        {"jsonrpc": "2.0", "id": 900, "method": "textDocument/hover",
         "params": {"textDocument": {"uri": keys.as_uri()}, "position": {"line": SECRETS["github"], "character": 0}}},
        # a wrong JSON-RPC version: pygls logs such a message whole
        {"jsonrpc": "1.0", "method": "textDocument/didOpen", "params": {"textDocument": doc}},
        {"jsonrpc": "1.0", "id": 901, "method": "textDocument/hover", "params": {"text": text}},
        # a notification of the wrong shape holding the text
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {**doc, "version": SECRETS["aws"]}}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange",
         "params": {"textDocument": {"uri": keys.as_uri()}, "contentChanges": text}},
        # a request the server does not know, with the text as parameters
        {"jsonrpc": "2.0", "id": 902, "method": "pmem/unknown", "params": {"text": text}},
        # command arguments of the wrong shape
        {"jsonrpc": "2.0", "id": 903, "method": "workspace/executeCommand",
         "params": {"command": "pmem.archive", "arguments": [{"path": "notes/keys.md", "reason": {"text": text}}]}},
        {"jsonrpc": "2.0", "id": 904, "method": "workspace/executeCommand",
         "params": {"command": "pmem.archive", "arguments": [text]}},
    )] + [
        # not JSON at all, the text inside
        b'{"jsonrpc": "2.0", "id": 905, "method": "textDocument/hover", "params": ' + text.encode() + b"}",
        # not UTF-8
        b'{"jsonrpc": "2.0", "method": "x", "params": "\xff' + text.encode() + b'"}',
    ]


def test_malformed_requests_carrying_secrets_leak_them_nowhere(root: Path, tmp_path: Path):
    (tmp_path / "home").mkdir()
    session = RawServer(cwd=tmp_path, env=session_env(tmp_path / "home"))
    try:
        session.initialize(root, CAPABILITIES)
        session.wait_for_code(root / "notes/keys.md", "PM401")
        for body in _malformed(root / "notes/keys.md"):
            session.send_raw(body)
        # The server still serves, and has answered every request it could read.
        index = root / "_index.md"
        hover = session.request("textDocument/hover", {"textDocument": {"uri": index.as_uri()},
                                                        "position": _pos(_line_of(index, "notes/keys.md"), 4)})
        assert hover.get("result"), hover
        for msg_id in (900, 902, 903, 904):
            session.wait(lambda m, i=msg_id: "method" not in m and m.get("id") == i, what=f"an answer to {msg_id}")
    finally:
        code = session.close()
    assert code == 0
    assert session.stderr, "the malformed messages were logged"  # the check below saw real log lines
    assert_no_leak("".join(session.stderr), "server stderr")
    assert_no_leak(server_output(session, skip_code_actions=False), "server output")


def _refused_with_a_secret(root: Path, tmp_path: Path) -> RawServer:
    """A lifecycle command refused on an argument that holds a secret: the server raises, and
    the exception's text is logged (the realistic exception path: an agent passing the wrong
    thing)."""
    (tmp_path / "home").mkdir()
    session = RawServer(cwd=tmp_path, env=session_env(tmp_path / "home"))
    try:
        session.initialize(root, CAPABILITIES)
        answer = session.request("workspace/executeCommand", {
            "command": "pmem.archive", "arguments": [{"path": f"notes/{SECRETS['github']}.md"}]})
        assert answer["error"]["code"] == -32803, answer
    finally:
        session.close()
    return session


def test_an_exception_carrying_a_secret_is_logged_redacted(root: Path, tmp_path: Path):
    session = _refused_with_a_secret(root, tmp_path)
    stderr = "".join(session.stderr)
    # pygls (or the server's protocol layer) logs the refusal, message included: redacted.
    assert "`notes/[REDACTED].md` does not exist" in stderr, stderr
    assert_no_leak(stderr, "server stderr")


def test_a_refusal_does_not_repeat_a_secret_it_was_given(root: Path, tmp_path: Path):
    session = _refused_with_a_secret(root, tmp_path)
    assert_no_leak(server_output(session, skip_code_actions=False), "server output")


def test_the_add_route_fix_copies_no_secret_into_the_index(root: Path, tmp_path: Path):
    """The index is loaded by every agent on every activation: a fix must not copy a secret
    from a file into it."""
    (tmp_path / "home").mkdir()
    session = RawServer(cwd=tmp_path, env=session_env(tmp_path / "home"))
    deploy = root / "notes/deploy.md"
    try:
        session.initialize(root, CAPABILITIES)
        diagnostics = session.wait_for_code(deploy, "PM202")
        actions = session.request("textDocument/codeAction", {
            "textDocument": {"uri": deploy.as_uri()}, "range": {"start": _pos(0, 0), "end": _pos(0, 0)},
            "context": {"diagnostics": diagnostics}})["result"]
    finally:
        session.close()
    add = [a for a in actions if a["title"] == "Add route to _index.md"]
    assert len(add) == 1
    assert_no_leak(json.dumps(add[0]["edit"]), "the add-route edit")


# A bug that quotes memory in an exception: the hover of the real server, replaced before it
# starts by one that raises with the hovered line in its message.
CRASHING_HOVER = """
import sys
import pmem_lsp.server.hover as hover

def broken(state, rel, line, char, findings):
    text = (state.root / rel).read_text(encoding="utf-8").splitlines()[line]
    raise ValueError(f"cannot hover {rel}:{line}: {text!r}")

hover.engine_hover = broken
from pmem_lsp.cli.main import serve_main
sys.exit(serve_main())
"""


def _hover_that_crashes(root: Path, tmp_path: Path) -> tuple[RawServer, dict]:
    (tmp_path / "home").mkdir()
    launcher = tmp_path / "crashing_server.py"
    launcher.write_text(CRASHING_HOVER, encoding="utf-8")
    session = RawServer(tmp_path, command=[sys.executable, str(launcher)], env=session_env(tmp_path / "home"))
    keys = root / "notes/keys.md"
    try:
        session.initialize(root, CAPABILITIES)
        session.wait_for_code(keys, "PM401")
        answer = session.request("textDocument/hover", {"textDocument": {"uri": keys.as_uri()},
                                                        "position": _pos(_line_of(keys, "password:"), 2)})
        # The server survives its own bug.
        session.request("textDocument/documentSymbol", {"textDocument": {"uri": keys.as_uri()}})
    finally:
        assert session.close() == 0
    assert answer["error"]["code"] == -32603, answer
    return session, answer


def test_an_internal_error_quoting_a_secret_is_logged_and_shown_without_it(root: Path, tmp_path: Path):
    session, _answer = _hover_that_crashes(root, tmp_path)
    stderr = "".join(session.stderr)
    assert "Traceback" in stderr and "ValueError: cannot hover notes/keys.md" in stderr, stderr
    assert "[REDACTED]" in stderr
    assert_no_leak(stderr, "server stderr")
    shown = [m["params"]["message"] for m in session.received
             if m.get("method") in ("window/showMessage", "window/logMessage")]
    assert_no_leak(json.dumps(shown), "messages to the user")


def test_an_internal_error_answer_quotes_no_secret(root: Path, tmp_path: Path):
    _session, answer = _hover_that_crashes(root, tmp_path)
    assert "ValueError" in answer["error"]["message"]
    assert_no_leak(json.dumps(answer), "the error answer")


# -- secrets in paths ------------------------------------------------------------------------
# A path can hold a secret too (a token pasted as a file name, a record's location). Messages,
# previews and reports never repeat one; where a path is the location itself (`path:line:col`,
# a diagnostic's uri) it is printed as it is, since the editor must open that file.
PATH_TOKEN = SECRETS["github"]
PATH_KEY = SECRETS["aws"]


def path_root(base: Path) -> Path:
    files = base_files()
    files["_index.md"] += f"- [Gone](notes/{PATH_TOKEN}.md) — a route to a file that is not there\n"
    files["projects/alpha.md"] += f"\nSee [the keys](../notes/{PATH_TOKEN}.md).\n"
    files[f"projects/{PATH_KEY}.md"] = summary_file("Named badly")
    files["_index.md"] += f"- [Named badly](projects/{PATH_KEY}.md) — a file whose name is a key\n"
    files["_archive/_index.md"] = (
        f"# Archive index\n\n## notes/old-{PATH_KEY}.md\n- status: archived\n- original: notes/old-{PATH_KEY}.md\n"
        f"- location: _archive/notes/old-{PATH_KEY}.md\n- index-line:\n- archived: 2026-01-02\n- reason: old\n")
    return write_root(base, files)


def test_messages_previews_and_reports_never_repeat_a_secret_in_a_path(tmp_path: Path):
    root = path_root(tmp_path / "memory")
    report = json.loads(pmem("--root", str(root), "check", "--format", "json").stdout)
    codes = {d["code"] for d in report["diagnostics"]}
    assert {"PM201", "PM402", "PM302"} <= codes, codes  # the premise: each message names the path
    messages = "\n".join(d["message"] for d in report["diagnostics"])
    assert_no_leak(messages, "finding messages")
    for fmt in ("text", "github"):
        out = pmem("--root", str(root), "check", "--format", fmt).stdout
        named = [line for line in out.splitlines() if f"projects/{PATH_KEY}.md" not in line]
        assert_no_leak("\n".join(named), f"pmem check --format {fmt} (beyond the file's own location)")
    for args in (("status",), ("health",), ("archive", f"projects/{PATH_KEY}.md")):
        result = pmem("--root", str(root), *args)
        assert_no_leak(result.stdout + result.stderr, f"pmem {args[0]}")
    assert "Archive projects/AKIA" in pmem("--root", str(root), "archive", f"projects/{PATH_KEY}.md").stdout


def test_the_server_never_repeats_a_secret_in_a_path(tmp_path: Path):
    root = path_root(tmp_path / "memory")
    (tmp_path / "home").mkdir()
    session = RawServer(tmp_path, env=session_env(tmp_path / "home"))
    try:
        session.initialize(root, CAPABILITIES)
        session.wait_for_code(root / "_index.md", "PM201")
        session.wait_for_code(root / "projects/alpha.md", "PM402")
        session.wait_for_code(root / "_archive/_index.md", "PM302")
        for command in ("pmem.status", "pmem.health"):
            session.request("workspace/executeCommand", {"command": command, "arguments": [{}]})
        session.request("workspace/executeCommand", {"command": "pmem.archive",
                                                     "arguments": [{"path": f"projects/{PATH_KEY}.md"}]})
    finally:
        session.close()
    messages = [d["message"] for m in session.received if m.get("method") == "textDocument/publishDiagnostics"
                for d in m["params"]["diagnostics"]]
    assert_no_leak("\n".join(messages), "diagnostic messages")
    shown = [m["params"]["message"] for m in session.received
             if m.get("method") in ("window/showMessage", "window/showMessageRequest", "window/logMessage")]
    assert any("Archive projects/AKIA" in text for text in shown), shown
    assert_no_leak("\n".join(shown), "messages shown to the user")
