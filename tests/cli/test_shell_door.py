"""The shell door (engine/shell_door.py, `pmem hook pre-shell`): an agent that adds `--yes` or
the token to a previewed pmem command and runs it through its shell is blocked; every other
command passes (issue 43)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from pmem_lsp.cli.hook import FORGET_REFUSAL, REVIEW_REFUSAL, SHELL_REFUSAL, run_hook
from pmem_lsp.engine.shell_door import confirmed_write

BLOCKED = [
    "pmem archive projects/x.md --reason done --yes",
    "pmem --root ~/.persistent-memory archive projects/x.md -y",
    "pmem recover projects/x.md --token=3f2a9c",
    "pmem recover projects/x.md --token 3f2a9c",
    "pmem delete projects/x.md --ye",  # argparse takes an abbreviation
    "pmem delete projects/x.md --tok 3f2a",
    "pmem save notes/a.md --route 'A note' --yes < /tmp/a.md",
    "cat /tmp/a.md | pmem save notes/a.md --yes",
    "cd ~ && PMEM_ROOT=/m pmem route add notes/a.md --yes",
    "/home/u/src/pmem-lsp/.venv/bin/pmem purge _archive/_trash/x.md --yes",
    "python -m pmem_lsp.cli.main archive projects/x.md --yes",
    "python3 -m pmem_lsp archive projects/x.md --yes",
    "sh -c 'pmem archive projects/x.md --yes'",
    "bash -lc \"cd /tmp; pmem archive 'projects/x.md' --yes\"",
    "env FOO=1 pmem upgrade --yes",
    "echo ok; pmem migrate --to v0.10 --yes",
    "pmem init -y",
    "yes | script -qc 'pmem archive projects/x.md' /dev/null",
    "echo y | unbuffer pmem archive projects/x.md",
    "x=$(pmem archive projects/x.md --yes)",
    "`pmem archive projects/x.md --yes`",
    "pmem undo 3f2a9c --yes",
    "pmem restore notes/a.md --at 3f2a9c -y",
    "pmem history --forget notes/a.md --yes",
    "pmem review --accept 3f2a9c",  # no agent accepts a review, confirmed or not
    "pmem review --all",
    "pmem review --acc=3f2a9c",
]
PASSED = [
    "pmem archive projects/x.md --reason done",  # the preview: exit 3, nothing written
    "pmem archive projects/x.md --format json",
    "pmem check --format json",
    "pmem status",
    "pmem health --format json",
    "pmem migrate --to v0.10",
    "pmem route add notes/a.md --description 'yes, the launch notes'",
    "git commit -m 'archive the old notes' --yes-really",  # no pmem
    "ls -la ~/.persistent-memory && git status",
    "yes | head -3",
    "rm -rf build --yes",
    "echo pmem is installed",
    "pmem --version",
    "pmem rules PM202",
    "pmem review",
    "pmem history notes/a.md",
    "pmem diff --unreviewed",
    "pmem undo 3f2a9c",  # its preview
    "",
    "'unbalanced",
]


@pytest.mark.parametrize("command", BLOCKED)
def test_a_pmem_write_the_agent_confirms_itself_is_found(command: str):
    assert confirmed_write(command) is not None


@pytest.mark.parametrize("command", PASSED)
def test_every_other_command_passes(command: str):
    assert confirmed_write(command) is None


def bash(command: object) -> str:
    return json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command, "description": "Run it"}, "tool_use_id": "toolu_01"})


def test_the_hook_blocks_with_a_message_that_names_no_way_around():
    err = io.StringIO()
    code = run_hook(None, "pre-shell", io.StringIO(bash(BLOCKED[0])), io.StringIO(), err)  # type: ignore[arg-type]
    assert code == 2 and SHELL_REFUSAL in err.getvalue()
    for hint in ("--yes", "--token", "-y", "PMEM_", "hook", "settings"):
        for refusal in (SHELL_REFUSAL, REVIEW_REFUSAL, FORGET_REFUSAL):
            assert hint not in refusal


@pytest.mark.parametrize(("command", "refusal", "not_said"), [
    ("pmem review --accept", REVIEW_REFUSAL, "confirmation"),
    ("pmem --root ~/m review --all --accept", REVIEW_REFUSAL, "confirmation"),
    ("pmem history --forget notes/a.md --yes", FORGET_REFUSAL, "confirmation"),
])
def test_each_refusal_says_whose_decision_it_is(command: str, refusal: str, not_said: str):
    # Accepting a review or forgetting a file takes no confirmation option: the words must not
    # talk of one ("with the agent's own confirmation"), but of whose decision it is.
    err = io.StringIO()
    assert run_hook(None, "pre-shell", io.StringIO(bash(command)), io.StringIO(), err) == 2  # type: ignore[arg-type]
    assert refusal in err.getvalue() and not_said not in err.getvalue() and "only" in refusal


@pytest.mark.parametrize("payload", [bash(PASSED[0]), bash(42), "not json", "[" * 100_000, json.dumps({"x": 1})])
def test_the_hook_lets_everything_else_through(payload: str):
    assert run_hook(None, "pre-shell", io.StringIO(payload), io.StringIO(), io.StringIO()) == 0  # type: ignore[arg-type]


@pytest.mark.e2e
def test_pmem_hook_pre_shell_as_the_plugin_runs_it():
    blocked = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "hook", "pre-shell"], input=bash(BLOCKED[1]),
                             capture_output=True, text=True, timeout=60)
    assert blocked.returncode == 2 and "nothing was run" in blocked.stderr and "Traceback" not in blocked.stderr
    passed = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "hook", "pre-shell"], input=bash("ls"),
                            capture_output=True, text=True, timeout=60)
    assert (passed.returncode, passed.stdout, passed.stderr) == (0, "", "")
