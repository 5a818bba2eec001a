"""Crash safety with real SIGKILLs (issue 9; docs/design.md §3 "A lifecycle failure must leave the file
either at its source or at its destination", §7 "a lifecycle operation killed at any point loses
no file").

The CLI: `pmem archive|delete|recover|purge|upgrade --yes` runs in its own process and is killed
(SIGKILL, by `crash_hook.py`) before the 1st, 2nd, … filesystem primitive of the applier, until a
run completes. The server: killed after it asks for confirmation, when each workspace edit
arrives at the client and after the client applied it (the move — RenameFile or DeleteFile —
then the index edits), and before each folder it creates itself; and, for a client without
resource operations (the server's own filesystem applier), before each filesystem primitive.

After every kill:

- no memory file is lost: every file's bytes are still somewhere in the root (a purge only
  loses the purged file, and only once it is past its recover-by date);
- each index holds exactly its text before or after the operation, never a torn write, and no
  new file appears but the destination (and a hidden temporary file of an interrupted write);
- `pmem check --format json` exits 0, or reports findings each of which has a fix: a quick fix
  of the engine (`fixes.quick_fixes`), or PM001's upgrade action;
- the sweep went through every intermediate state (start, the file in both places, moved,
  each index written in turn, done), so the kills did land between the steps; start and done
  report nothing new, every state in between reports something.

Workers are forked from a warm interpreter (`crash_hook.py zygote`): each run is still its own
process running `pmem_lsp.cli.main.main`, killed by the kernel, but without paying the
interpreter and lsprotocol start-up each time. One test runs the hook in a fresh interpreter.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from lsp_helpers import DiskClient
from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from pmem_lsp.cli.check import run_check
from pmem_lsp.engine.analysis import analyze
from pmem_lsp.engine.catalogue import quick_fixes
from pmem_lsp.engine.findings import Severity
from pmem_lsp.engine.lifecycle.operations import context, make_plan
from pmem_lsp.engine.lifecycle.plan import Plan
from pmem_lsp.engine.root_state import RootState
from pmem_lsp.engine.settings import resolve_settings
from roots import base_files, summary_file, write_root

HOOK = Path(__file__).resolve().parent / "crash_hook.py"
AI = "_archive/_index.md"
KILLED = -signal.SIGKILL
TODAY = dt.date.today()  # the CLI and the server plan with today's date, so the test does too

OLD = summary_file("Old project")
ROUTE = "- [Old project](projects/old.md) — shipped in March"
RECORD = ("\n## projects/old.md\n- status: {status}\n- original: projects/old.md\n- location: {location}\n"
          f"- index-line: {ROUTE}\n- archived: 2020-01-01\n- reason: finished\n")
TRASHED = "- deleted: 2020-01-02\n- recover-by: 2020-02-01\n"  # long past: purge applies


def files_for(op: str) -> dict[str, str]:
    """A well-formed root for `op`, with other memory beside the file acted upon."""
    files = base_files()
    files["notes/keep.md"] = summary_file("Keep")
    files["_index.md"] += "\n## Notes\n- [Keep](notes/keep.md) — stays where it is\n"
    if op == "archive":
        files["projects/old.md"] = OLD
        files["_index.md"] = files["_index.md"].replace("— the alpha project\n", f"— the alpha project\n{ROUTE}\n")
    elif op == "delete":
        files["_archive/projects/old.md"] = OLD
        files[AI] += RECORD.format(status="archived", location="_archive/projects/old.md")
    elif op in ("recover", "purge"):
        files["_archive/_trash/projects/old.md"] = OLD
        files[AI] += RECORD.format(status="trashed", location="_archive/_trash/projects/old.md") + TRASHED
    elif op == "upgrade":
        files = {k: v for k, v in files.items() if not k.startswith("_archive")}
    return files


ARGS = {"archive": ["archive", "projects/old.md", "--reason", "finished"], "delete": ["delete", "projects/old.md"],
        "recover": ["recover", "projects/old.md"], "purge": ["purge", "projects/old.md"], "upgrade": ["upgrade"]}
OPS = list(ARGS)


def plan_for(root: Path, op: str) -> Plan:
    args = ARGS[op]
    reason = args[3] if len(args) > 3 else None
    return make_plan(context(root, TODAY), op, args[1] if len(args) > 1 else None, reason)


# -- what must hold after a kill --------------------------------------------------------------------
def all_files(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            p = Path(dirpath) / name
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def memory_contents(files: dict[str, bytes]) -> Counter:
    """The bytes of every memory file (the two indexes excepted: lifecycle rewrites them)."""
    return Counter(data for rel, data in files.items()
                   if rel not in ("_index.md", AI) and not any(part.startswith(".") for part in rel.split("/")))


def pmem_check(root: Path) -> tuple[int, list[dict], RootState]:
    """`pmem check --format json` (what `main` runs for it: a fresh scan, `run_check`), in this
    process: one scan per kill instead of one more process. `test_cli_killed_in_a_fresh_interpreter`
    runs the real command."""
    root_state = RootState.scan(root, resolve_settings(root))
    out = io.StringIO()
    code = run_check(root_state, "json", Severity.HINT, Severity.ERROR, out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())["diagnostics"], root_state


def serious(diagnostics: list[dict]) -> set[tuple[str, str]]:
    return {(d["path"], d["code"]) for d in diagnostics if d["severity"] in ("error", "warning")}


def has_a_fix(root_state: RootState, code: str, path: str, line: int) -> bool:
    """The engine offers a fix for this finding: a quick fix, (PM001) the upgrade action, or
    (PM007, a killed write's temporary file) the next pmem write, which clears it
    (tests/engine/test_write_protocol.py checks that)."""
    if code in ("PM001", "PM007"):
        return True
    for finding in analyze(root_state, TODAY):
        if finding.code == code and finding.path == path and finding.line + 1 == line:
            return bool(quick_fixes(root_state, finding, TODAY))
    return False


class Invariants:
    """The root before the operation and what each of its indexes may hold afterwards."""

    def __init__(self, template: Path, plan: Plan) -> None:
        self.files = all_files(template)
        self.memory = memory_contents(self.files)
        self.plan = plan
        self.texts = {w.path: {w.before, w.after} for w in plan.writes()}
        self.new = {m.destination for m in plan.moves()} | {w.path for w in plan.writes()}
        self.purged = {self.files[s.path] for s in plan.steps if type(s).__name__ == "Remove"}
        self.start = self.state(template)
        self.done = tuple(not self._gone(rel) for rel in plan.touched()) + (True,) * len(plan.writes())
        self.baseline = serious(pmem_check(template)[1])  # upgrade starts from PM001

    def _gone(self, rel: str) -> bool:
        """After the whole plan: a moved-away source and a removed file no longer exist."""
        return any(getattr(s, "source", None) == rel or (type(s).__name__ == "Remove" and s.path == rel)
                   for s in self.plan.steps)

    def state(self, root: Path) -> tuple:
        """Where the operation got to: which touched paths exist, which writes are done."""
        exists = tuple(os.path.lexists(root / rel) for rel in self.plan.touched())
        written = tuple(read(root / w.path) == w.after for w in self.plan.writes())
        return exists + written

    def expected_states(self) -> int:
        """start, one per step, and one more per move (linked: the file is in both places)."""
        return 1 + len(self.plan.steps) + len(self.plan.moves())

    def check(self, root: Path, where: str) -> None:
        files = all_files(root)
        memory = memory_contents(files)
        lost = self.memory - memory
        assert set(lost) <= self.purged, f"{where}: a memory file was lost"
        assert set(memory) <= set(self.memory), f"{where}: a memory file was changed"
        for rel, allowed in self.texts.items():
            assert read(root / rel) in allowed, f"{where}: {rel} is neither before nor after (torn)"
        for rel in files.keys() - self.files.keys():
            name = rel.rsplit("/", 1)[-1]
            assert rel in self.new or (name.startswith(".") and name.endswith(".pmem-tmp")), f"{where}: {rel} appeared"
        code, diagnostics, root_state = pmem_check(root)
        found = serious(diagnostics)
        # A killed write's temporary file (or a purge's set-aside file) is reported as PM007 on
        # its target, exactly when one is there; the next write clears it (issue 23).
        leftovers = [rel for rel in files.keys() - self.files.keys() if rel.endswith(".pmem-tmp")]
        assert bool(leftovers) == any(c == "PM007" for _, c in found), f"{where}: PM007 iff a leftover"
        found = {(path, c) for path, c in found if c != "PM007"}
        assert code == (1 if any(d["severity"] == "error" for d in diagnostics) else 0)
        for d in diagnostics:
            if (d["path"], d["code"]) in found:
                assert has_a_fix(root_state, d["code"], d["path"], d["line"]), f"{where}: {d['code']} on {d['path']} has no fix"
        state = self.state(root)
        if state == self.start:
            assert found == self.baseline, where
        elif state == self.done:
            assert found == set(), where
        else:
            assert found, f"{where}: a half-done operation that `pmem check` does not report"


def read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None


# -- the zygote: one warm interpreter, one forked process per run -------------------------------
@pytest.fixture(scope="module")
def zygote(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("zygote") / "sock")
    proc = subprocess.Popen([sys.executable, str(HOOK), "zygote", path], stdin=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not os.path.exists(path):
        assert proc.poll() is None, "the zygote did not start"
        assert time.monotonic() < deadline, "the zygote did not start in time"
        time.sleep(0.02)
    yield path
    proc.stdin.close()  # the zygote's signal to stop
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def launch_command(zygote: str, argv: list[str], kill_at: int = 0, log: Path | None = None,
                   pidfile: Path | None = None) -> list[str]:
    spec = {"argv": argv, "kill_at": kill_at, "log": str(log) if log else None,
            "pidfile": str(pidfile) if pidfile else None}
    return [sys.executable, "-S", str(HOOK), "launch", zygote, json.dumps(spec)]


def launch(zygote: str, argv: list[str], kill_at: int = 0, log: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(launch_command(zygote, argv, kill_at, log), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


def logged(log: Path) -> list[str]:
    return log.read_text().split("\n")[:-1] if log.exists() else []


# -- the CLI ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", OPS)
def test_cli_killed_before_each_filesystem_primitive(tmp_path: Path, zygote: str, op: str):
    template = write_root(tmp_path / "template", files_for(op))
    plan = plan_for(template, op)
    inv = Invariants(template, plan)
    assert not plan.empty
    states = [inv.state(template)]
    for n in range(1, 60):
        root = tmp_path / f"n{n}"
        shutil.copytree(template, root)
        log = tmp_path / f"n{n}.log"
        result = launch(zygote, ["--root", str(root), *ARGS[op], "--yes"], kill_at=n, log=log)
        calls = logged(log)
        states.append(inv.state(root))
        if result.returncode != KILLED:
            assert result.returncode == 0, result.stderr
            assert len(calls) == n - 1 and "Done:" in result.stdout
            inv.check(root, f"{op} completed")
            break
        assert len(calls) == n, (n, calls)  # it died at the n-th primitive, not elsewhere
        inv.check(root, f"{op} killed before {calls[-1]}")
    else:
        pytest.fail("the operation never completed")
    assert n > len(plan.steps)
    distinct = list(dict.fromkeys(states))
    assert len(distinct) == inv.expected_states(), distinct
    assert distinct[-1] == states[-1]  # the last state is the completed one


def test_cli_killed_in_a_fresh_interpreter(tmp_path: Path, zygote: str):
    """The hook without the zygote: `python crash_hook.py run N LOG -- …` (one kill: after the
    hard link, before the unlink — the file is in both places)."""
    template = write_root(tmp_path / "template", files_for("archive"))
    inv = Invariants(template, plan_for(template, "archive"))
    root = tmp_path / "root"
    shutil.copytree(template, root)
    log = tmp_path / "log"
    probe = tmp_path / "probe"
    shutil.copytree(template, probe)
    launch(zygote, ["--root", str(probe), *ARGS["archive"], "--yes"], kill_at=999, log=log)
    unlink_at = next(int(c.split()[0]) for c in logged(log) if c.endswith(" unlink"))
    result = subprocess.run([sys.executable, str(HOOK), "run", str(unlink_at), "", "--", "--root", str(root),
                             *ARGS["archive"], "--yes"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                            timeout=60)
    assert result.returncode == KILLED, result.stderr
    assert (root / "projects/old.md").read_bytes() == (root / "_archive/projects/old.md").read_bytes()
    inv.check(root, "killed between link and unlink")
    check = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check", "--format", "json"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert check.returncode == 0, check.stderr  # PM301 is a warning
    assert [(d["path"], d["code"]) for d in json.loads(check.stdout)["diagnostics"]] == \
        [("_archive/projects/old.md", "PM301")]


# -- the server ---------------------------------------------------------------------------------------
ACTION = {"archive": "Archive", "delete": "Delete", "recover": "Recover", "purge": "Delete permanently",
          "upgrade": "Upgrade"}


class KillingClient(DiskClient):
    """A client that answers and applies edits like `DiskClient`, and SIGKILLs the server right
    after the confirmation request ("ask"), when the k-th workspace edit arrives (before applying
    it: "sent"), or right after it applied the k-th workspace edit ("edit")."""

    def __init__(self, client: LanguageClient, answer: str, pidfile: Path, kill: tuple) -> None:
        super().__init__(client, answer)
        self.pidfile, self.kill = pidfile, kill
        self.killed = False

    def _kill(self) -> None:
        os.kill(int(self.pidfile.read_text()), signal.SIGKILL)
        self.killed = True

    def _ask(self, params):
        answer = super()._ask(params)
        if self.kill == ("ask",):
            self._kill()
        return answer

    def _apply(self, params):
        if self.kill == ("sent", len(self.edits) + 1):
            self._kill()
            self.edits.append(params.edit)
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="the server is gone")
        result = super()._apply(params)
        if self.kill == ("edit", len(self.edits)):
            self._kill()
        return result


_CAPABILITIES: dict[bool, lsp.ClientCapabilities] = {}


def capabilities(moves: bool) -> lsp.ClientCapabilities:
    """Neovim's; without resource operations the server applies the plan itself, with the
    filesystem applier. Built once (pytest-lsp structures the profile with a new converter)."""
    if moves not in _CAPABILITIES:
        caps = client_capabilities("neovim")
        if not moves:
            caps.workspace.workspace_edit.resource_operations = []
            caps.workspace.workspace_edit.document_changes = False
        _CAPABILITIES[moves] = caps
    return _CAPABILITIES[moves]


_CLIENT_CONVERTER: list = []


def make_client() -> LanguageClient:
    """pytest-lsp's test client, sharing one converter across the many short sessions (cattrs
    builds its functions per converter, on first use: cold, that is a tenth of a second each)."""
    if not _CLIENT_CONVERTER:
        _CLIENT_CONVERTER.append(default_converter())
    client = LanguageClient(converter_factory=lambda: _CLIENT_CONVERTER[0])
    register_lsp_features(client)
    return client


async def server_run(zygote: str, root: Path, op: str, moves: bool, kill: tuple, tmp: Path) -> tuple[bool, dict | None]:
    """Start a server (forked by the zygote), run the command, kill as asked.
    Returns (killed, the command's result when it completed)."""
    tmp.mkdir()
    pidfile, log = tmp / "pid", tmp / "log"
    kill_at = kill[1] if kill[0] == "fs" else 0
    config = ClientServerConfig(server_command=launch_command(zygote, ["serve"], kill_at, log, pidfile),
                                client_factory=make_client)
    client = await config.start()
    try:
        await asyncio.wait_for(client.initialize_session(lsp.InitializeParams(
            capabilities=capabilities(moves), workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="m")])), 30)
        ui = KillingClient(client, ACTION[op], pidfile, kill)
        args = {"path": ARGS[op][1]} if op != "upgrade" else {}
        if op == "archive":
            args["reason"] = "finished"
        command = asyncio.ensure_future(client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command=f"pmem.{op}", arguments=[args])))
        deadline = time.monotonic() + 60
        while not command.done() and not client.stopped:
            assert time.monotonic() < deadline, "the command neither finished nor was killed"
            await asyncio.sleep(0.005)
        if command.done() and command.exception() is None:
            result = command.result()
            await asyncio.wait_for(client.shutdown_session(), 30)
            return False, result
        command.cancel()
        while not client.stopped:  # the request fails as soon as the process is gone
            await asyncio.sleep(0.005)
        assert client._server.returncode == KILLED  # the launcher reports the worker's SIGKILL
        if kill[0] == "fs":
            assert len(logged(log)) == kill[1]  # it died at that primitive, not elsewhere
        else:
            assert ui.killed
        return True, None
    finally:
        await client.stop()


def primitives_of(zygote: str, template: Path, op: str, tmp: Path) -> list[str]:
    """The filesystem primitives the applier calls for `op` on `template` (a CLI run, not killed)."""
    root, log = tmp / "probe", tmp / "probe.log"
    shutil.copytree(template, root)
    result = launch(zygote, ["--root", str(root), *ARGS[op], "--yes"], kill_at=10_000, log=log)
    assert result.returncode == 0, result.stderr
    return [line.split()[1] for line in logged(log)]


async def server_primitives(zygote: str, template: Path, op: str, tmp: Path) -> int:
    """How many filesystem primitives the server's applier calls for `op` when the editor moves
    the files (a run not killed)."""
    root = tmp / "server-probe"
    shutil.copytree(template, root)
    killed, result = await server_run(zygote, root, op, True, ("fs", 10_000), tmp / "server-probe-run")
    assert not killed and result["applied"] is True, result
    return len(logged(tmp / "server-probe-run" / "log"))


async def at_most(n: int, runs: list):
    """Run the coroutines `n` at a time (each waits on its server most of the time)."""
    gate = asyncio.Semaphore(n)

    async def one(run):
        async with gate:
            return await run

    return await asyncio.gather(*(one(r) for r in runs))


@pytest.mark.parametrize("moves", [True, False], ids=["editor-moves", "server-moves"])
@pytest.mark.parametrize("op", OPS)
async def test_server_killed_at_each_step(tmp_path: Path, zygote: str, op: str, moves: bool):
    template = write_root(tmp_path / "template", files_for(op))
    plan = plan_for(template, op)
    inv = Invariants(template, plan)
    kinds = [type(s).__name__ for s in plan.steps]
    if moves:
        # Confirmation asked; then each move, sent to and applied by the client one by
        # one, and one more, which never comes: that run completes. The server writes the indexes
        # (and creates folders) itself, through the applier: killed at each of those primitives.
        edits = kinds.count("Move")  # a removal is set aside on disk by the server (undoable), not sent
        written = await server_primitives(zygote, template, op, tmp_path)
        kills = [("ask",)] + [(kind, k) for k in range(1, edits + 1) for kind in ("sent", "edit")] + [("edit", edits + 1)]
        kills += [("fs", n) for n in range(1, written + 1)]
    else:
        # The server's own filesystem applier: the same primitives as the CLI's, each in turn,
        # and one more, which never comes: that run completes.
        count = len(primitives_of(zygote, template, op, tmp_path))
        kills = [("fs", n) for n in range(1, count + 2)]
    roots = []
    for i, _ in enumerate(kills):
        roots.append(tmp_path / f"k{i}")
        shutil.copytree(template, roots[-1])
    (tmp_path / "runs").mkdir()
    outcomes = await at_most(3, [server_run(zygote, root, op, moves, kill, tmp_path / "runs" / str(i))
                                 for i, (root, kill) in enumerate(zip(roots, kills, strict=True))])
    states = [inv.start]
    for root, kill, (killed, result) in zip(roots, kills, outcomes, strict=True):
        where = f"{op} {'editor' if moves else 'server'} killed at {kill}"
        completes = kill == ("edit", edits + 1) if moves else kill == kills[-1]
        assert killed != completes, where
        if completes:
            assert result["applied"] is True, (where, result)
            assert inv.state(root) == inv.done, where
        inv.check(root, where)
        states.append(inv.state(root))
    distinct = set(states)
    if moves:  # the editor renames in one step: never the "in both places" state of a hard link
        assert len(distinct) == 1 + len(plan.steps), distinct
    else:
        assert len(distinct) == inv.expected_states(), distinct
