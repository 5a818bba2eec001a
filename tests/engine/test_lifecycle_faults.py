"""Fault injection for archive, delete and recover (docs/design.md §3, issue 3 "How it is checked").

Each filesystem step, and each primitive call inside it (`mkdir`, `link`, `unlink`, `rename`,
`replace`, `fsync`), is made to fail in turn, or the process is "killed" there (a
BaseException at that call and at every call after it, so no clean-up runs). After each:

- no file is lost: the file is at its source or its destination (or both), with its bytes;
- each index holds exactly its text before or after the plan, never a torn write;
- `pmem check` (the engine on a fresh scan) reports the state with exactly the expected codes.

The expected codes are written out per state below; which state a fault leads to follows from
which primitive calls completed before it.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pmem_lsp.engine.lifecycle.fs_applier as fs_applier
from engine_helpers import findings
from pmem_lsp.engine.lifecycle.fs_applier import ApplyError, apply_step, run_steps
from pmem_lsp.engine.lifecycle.operations import context, make_plan
from pmem_lsp.engine.lifecycle.plan import Move
from roots import active_file, make_root

AI = "_archive/_index.md"
TODAY = dt.date(2026, 11, 25)  # findings() checks as of 2026-12-01: nothing here has expired

OLD = active_file("Old project")
OLD_ROUTE = "- [Old project](projects/old.md) — the old project"
ARCHIVED_RECORD = (f"# Archive index\n\n## projects/old.md\n- status: archived\n- original: projects/old.md\n"
                   f"- location: _archive/projects/old.md\n- index-line: {OLD_ROUTE}\n- archived: 2026-11-01\n"
                   f"- reason: finished\n")
TRASHED_RECORD = (f"# Archive index\n\n## projects/old.md\n- status: trashed\n- original: projects/old.md\n"
                  f"- location: _archive/_trash/projects/old.md\n- index-line: {OLD_ROUTE}\n- archived: 2026-11-01\n"
                  f"- reason: finished\n- deleted: 2026-11-24\n- recover-by: 2026-12-24\n")

# op: (files, path, source, destination, expected codes per state). States, in order:
#   start   nothing done            both    linked, not yet unlinked (file in both places)
#   moved   the move is done        step2   the move and the first index write are done
#   done    everything
SCENARIOS = {
    "archive": (
        {}, "projects/alpha.md", "projects/alpha.md", "_archive/projects/alpha.md",
        {
            "start": set(),
            "both": {("_archive/projects/alpha.md", "PM301")},
            "moved": {("_index.md", "PM205"), ("_archive/projects/alpha.md", "PM301")},
            "step2": {("_index.md", "PM205")},  # recorded; the route still points at the old place
            "done": set(),
        },
    ),
    "delete": (
        {"_archive/projects/old.md": OLD, AI: ARCHIVED_RECORD}, "projects/old.md",
        "_archive/projects/old.md", "_archive/_trash/projects/old.md",
        {
            "start": set(),
            "both": {("_archive/_trash/projects/old.md", "PM301")},
            "moved": {(AI, "PM302"), ("_archive/_trash/projects/old.md", "PM301")},
            "done": set(),
        },
    ),
    "recover": (
        {"_archive/_trash/projects/old.md": OLD, AI: TRASHED_RECORD}, "projects/old.md",
        "_archive/_trash/projects/old.md", "projects/old.md",
        {
            "start": set(),
            "both": {("projects/old.md", "PM202"), (AI, "PM305")},
            "moved": {("projects/old.md", "PM202"), (AI, "PM302")},
            "step2": {(AI, "PM302")},  # the route is back; the record is left over
            "done": set(),
        },
    ),
    "recover-archived": (
        {"_archive/projects/old.md": OLD, AI: ARCHIVED_RECORD}, "_archive/projects/old.md",
        "_archive/projects/old.md", "projects/old.md",
        {
            "start": set(),
            "both": {("projects/old.md", "PM202"), (AI, "PM305")},
            "moved": {("projects/old.md", "PM202"), (AI, "PM302")},
            "step2": {(AI, "PM302")},
            "done": set(),
        },
    ),
}
# Codes with a fix that restores consistency (docs/design.md §4: PM205 remove route, PM301 add record,
# PM202 add route; PM302 and PM305 name the record to remove or the file to move).
REPORTED_WITH_A_FIX = {"PM202", "PM205", "PM301", "PM302", "PM305"}


def op_name(scenario: str) -> str:
    return scenario.split("-")[0]


def setup(tmp_path: Path, scenario: str):
    files, path, source, dest, states = SCENARIOS[scenario]
    root = make_root(tmp_path, dict(files))
    assert findings(root) == [], "the starting root must be clean"
    plan = make_plan(context(root, TODAY), op_name(scenario), path, "finished")
    data = (root / source).read_bytes()
    texts = {w.path: (w.before, w.after) for w in plan.writes()}
    names = non_hidden_files(root)
    return root, plan, data, texts, names, (source, dest, states)


def non_hidden_files(root: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        out |= {(Path(dirpath) / f).relative_to(root).as_posix() for f in filenames if not f.startswith(".")}
    return out


def codes(root: Path) -> set[tuple[str, str]]:
    return {(f.path, f.code) for f in findings(root)}


def assert_consistent_after_fault(root, data, texts, names, source, dest, expected: set):
    at_source = (root / source).is_file()
    at_dest = (root / dest).is_file()
    assert at_source or at_dest, "the file was lost"
    for rel in (source, dest):
        if (root / rel).is_file():
            assert (root / rel).read_bytes() == data
    for rel, (before, after) in texts.items():
        assert (root / rel).read_text(encoding="utf-8") in (before, after), f"{rel} was torn"
    assert non_hidden_files(root) <= names | {dest}
    found = codes(root)
    # A write killed between its temporary file and the rename leaves that file: PM007 reports
    # it, on the index it was for, exactly when one is there (issue 23).
    temps = {rel for rel in texts if any(p.name.startswith(f".{Path(rel).name}.") and p.name.endswith(".pmem-tmp")
                                         for p in (root / rel).parent.iterdir())}
    assert {path for path, code in found if code == "PM007"} == temps
    found -= {(rel, "PM007") for rel in temps}
    assert found == expected
    if found:
        assert {code for _, code in found} & REPORTED_WITH_A_FIX


# -- step-level: apply_step fails at step k, or the process stops after step k ---------------
def state_after_steps(scenario: str, k: int, n: int) -> str:
    if k == 0:
        return "start"
    if k == n:
        return "done"
    return "moved" if k == 1 else "step2"


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_kill_after_each_step(tmp_path, scenario):
    n = len(make_plan(context(make_root(tmp_path / "probe", dict(SCENARIOS[scenario][0])), TODAY),
                      op_name(scenario), SCENARIOS[scenario][1], "finished").steps)
    assert n >= 2
    for k in range(n + 1):
        root, plan, data, texts, names, (source, dest, states) = setup(tmp_path / f"k{k}", scenario)
        assert isinstance(plan.steps[0], Move)
        for step in plan.steps[:k]:
            apply_step(root, step)
        expected = states[state_after_steps(scenario, k, n)]
        assert_consistent_after_fault(root, data, texts, names, source, dest, expected)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_each_step_failing_in_turn(tmp_path, scenario, monkeypatch):
    probe = setup(tmp_path / "probe", scenario)[1]
    n = len(probe.steps)
    for k in range(n):
        root, plan, data, texts, names, (source, dest, states) = setup(tmp_path / f"k{k}", scenario)
        calls = []
        real = fs_applier.apply_step

        def failing(root_, step, _k=k, calls=calls, real=real):
            calls.append(step)
            if len(calls) - 1 == _k:
                raise OSError(errno.EIO, "injected I/O error")
            return real(root_, step)

        monkeypatch.setattr(fs_applier, "apply_step", failing)
        with pytest.raises(ApplyError) as exc:
            run_steps(root, plan)
        monkeypatch.setattr(fs_applier, "apply_step", real)
        assert exc.value.rule == "filesystem" and len(exc.value.done) == k
        assert "injected I/O error" in exc.value.message
        assert ("nothing was changed" in exc.value.message) == (k == 0)
        if k:
            assert "pmem check" in exc.value.message
        assert_consistent_after_fault(root, data, texts, names, source, dest, states[state_after_steps(scenario, k, n)])


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_each_index_write_failing_in_turn(tmp_path, scenario, monkeypatch):
    n_writes = len(setup(tmp_path / "probe", scenario)[1].writes())
    for k in range(n_writes):
        root, plan, data, texts, names, (source, dest, states) = setup(tmp_path / f"w{k}", scenario)
        seen = []
        real = fs_applier.write_atomic

        def failing(path, text, bom=False, create=False, expected=None, _k=k, seen=seen, real=real):
            seen.append(path)
            if len(seen) - 1 == _k:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(path, text, bom=bom, create=create, expected=expected)

        monkeypatch.setattr(fs_applier, "write_atomic", failing)
        with pytest.raises(ApplyError) as exc:
            run_steps(root, plan)
        monkeypatch.setattr(fs_applier, "write_atomic", real)
        assert "No space left" in exc.value.message
        state = "moved" if k == 0 else "step2"
        assert_consistent_after_fault(root, data, texts, names, source, dest, states[state])


# -- primitive-level: every os call in turn -------------------------------------------------------
PRIMITIVES = ("mkdir", "link", "unlink", "rename", "replace", "fsync")


class Killed(BaseException):
    """The process died here: nothing after it runs, not even clean-up."""


class Faults:
    """Wraps the os primitives the applier uses; counts calls while active; makes call `at`
    fail (OSError once) or die (Killed there and at every later call)."""

    def __init__(self, monkeypatch, at: int | None = None, kill: bool = False, no_hard_links: bool = False):
        self.at, self.kill, self.no_hard_links = at, kill, no_hard_links
        self.calls: list[str] = []
        self.active = False
        self.dead = False
        self.failed = False
        for name in PRIMITIVES:
            monkeypatch.setattr(os, name, self._wrap(name, getattr(os, name)))

    def _wrap(self, name, real):
        def call(*args, **kwargs):
            if not self.active:
                return real(*args, **kwargs)
            if self.dead:
                raise Killed(name)
            index = len(self.calls)
            self.calls.append(name)
            if index == self.at:
                if self.kill:
                    self.dead = True
                    raise Killed(name)
                self.failed = True
                raise OSError(errno.EIO, f"injected failure of {name}")
            if name == "link" and self.no_hard_links:
                raise OSError(errno.EPERM, "hard links not supported here")
            return real(*args, **kwargs)

        return call

    def run(self, root, plan) -> Exception | None:
        self.active = True
        try:
            run_steps(root, plan)
        except (ApplyError, Killed) as exc:
            return exc
        finally:
            self.active = False
        return None


def model_state(calls: list[str], upto: int, writes: int, no_hard_links: bool = False) -> str:
    """The state once the first `upto` primitive calls completed: a link puts the file in both
    places, the unlink (or a rename) after it completes the move, each replace is one index write."""
    state, moved, replaced = "start", False, 0
    for name in calls[:upto]:
        if name == "link" and not moved and not no_hard_links:
            state = "both"
        elif name in ("unlink", "rename") and not moved:
            moved, state = True, "moved"
        elif name == "replace":
            replaced += 1
            state = "done" if replaced == writes else "step2"
    return state


def clean_sequence(tmp_path, scenario, monkeypatch, no_hard_links=False) -> list[str]:
    root, plan, *_ = setup(tmp_path / "clean", scenario)
    faults = Faults(monkeypatch, no_hard_links=no_hard_links)
    assert faults.run(root, plan) is None
    return faults.calls


@pytest.mark.parametrize("no_hard_links", [False, True], ids=["link", "rename-fallback"])
@pytest.mark.parametrize("kill", [False, True], ids=["fail", "kill"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_primitive_call_failing_or_dying_in_turn(tmp_path, scenario, kill, no_hard_links, monkeypatch):
    sequence = clean_sequence(tmp_path, scenario, monkeypatch, no_hard_links)
    moving = ["rename"] if no_hard_links else ["link", "unlink"]
    assert [c for c in sequence if c in ("link", "unlink", "rename", "replace")] == \
        (["link"] if no_hard_links else []) + moving + ["replace"] * (sequence.count("replace"))
    seen_states = set()
    for k in range(len(sequence)):
        root, plan, data, texts, names, (source, dest, states) = setup(tmp_path / f"p{k}", scenario)
        monkeypatch.undo()
        faults = Faults(monkeypatch, at=k, kill=kill, no_hard_links=no_hard_links)
        outcome = faults.run(root, plan)
        monkeypatch.undo()
        writes = len(plan.writes())
        if kill:
            assert isinstance(outcome, Killed)
            state = model_state(sequence, k, writes, no_hard_links)
        elif outcome is None:  # a failed folder fsync, or mkdir of a folder that exists: harmless
            assert sequence[k] in ("fsync", "mkdir")
            state = "done"
        else:
            assert isinstance(outcome, ApplyError), outcome
            state = model_state(sequence, k, writes, no_hard_links)
            if state == "both":  # the unlink after the link failed: the link is undone (issue 23)
                state = "start"
            steps_done = {"start": 0, "both": 0, "moved": 1, "step2": 2}[state]
            assert len(outcome.done) == steps_done, (k, sequence[k], outcome.done)
        seen_states.add(state)
        assert_consistent_after_fault(root, data, texts, names, source, dest, states[state])
    expected_states = set(SCENARIOS[scenario][4]) - ({"both"} if no_hard_links or not kill else set())
    assert seen_states == expected_states


@pytest.mark.e2e
def test_pmem_check_reports_a_half_done_archive_with_exit_1(tmp_path):
    root, plan, *_ = setup(tmp_path, "archive")
    apply_step(root, plan.steps[0])  # killed after the move
    result = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check", "--format", "json"],
                            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert result.returncode == 1  # PM205 is an error
    found = {(d["path"], d["code"]) for d in json.loads(result.stdout)["diagnostics"]}
    assert found == {("_index.md", "PM205"), ("_archive/projects/alpha.md", "PM301")}
