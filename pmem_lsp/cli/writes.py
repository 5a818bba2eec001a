"""Every command that changes memory: `save`, `route add`, `upgrade`, `archive`, `delete`,
`recover`, `purge`, `init` (docs/design.md §6, §6.1). Preview, confirm, then act.

Three ways to confirm, one preview:
- a person at a terminal answers the prompt (or passes `--yes`): the plan is made again under
  the root's lock and applied if it still does what was shown;
- an agent (or any caller without a terminal) gets the preview and its token and exit 3, shows
  the preview to the user, and runs the same command with `--token T` after their yes: applied
  only if nothing the write reads or touches changed since, else `stale-preview`, exit 2,
  nothing written.
Both go through the engine's one door (`engine/lifecycle/execute.py`: `Confirmed`, `Tokened`),
which also puts back every step done when one fails.
`--format json` gives the preview, the outcome and any refusal as JSON on stdout.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ..engine.lifecycle import declines
from ..engine.lifecycle.execute import Confirmed, Tokened, Unattended, execute
from ..engine.lifecycle.fs_applier import ApplyError
from ..engine.lifecycle.operations import context
from ..engine.lifecycle.plan import Plan
from ..engine.lifecycle.preview import (
    Preview,
    Request,
    applied_data,
    preview,
    preview_data,
    refusal_data,
    save_findings,
)
from ..engine.lifecycle.safety import Refusal
from ..engine.names import clean_data
from ..engine.report import diagnostics_data
from ..engine.secrets import mask_text
from . import exit_codes
from .terminal import lines, one_line


def _confirm(action: str, stdin: TextIO, out: TextIO) -> bool:
    # The prompt is inside the `try`: a Ctrl-C that lands while it is being written (the user
    # saw the question, the flush had not returned) is the same "no".
    try:
        out.write(f"{action}? [y/N] ")
        out.flush()
        answer = stdin.readline()
    except KeyboardInterrupt:  # Ctrl-C at the prompt is a "no"
        out.write("\n")
        return False
    return answer.strip().lower() in ("y", "yes")


class _Output:
    """Where the command's words go: text for people, one JSON object for agents."""

    def __init__(self, fmt: str, out: TextIO, err: TextIO) -> None:
        self.json = fmt == "json"
        self.out, self.err = out, err
        self.applied = False  # a change reached the disk (`_done`)

    def data(self, value: dict[str, Any]) -> None:
        self.out.write(json.dumps(clean_data(value), indent=2, ensure_ascii=False) + "\n")  # any name: writable

    def refused(self, exc: Refusal, when: str = "refused") -> int:
        if self.json:
            self.data(refusal_data(exc))
        else:
            self.err.write(f"pmem: {when} ({exc.rule}): {one_line(mask_text(exc.message))}\n")  # as the JSON
        return exit_codes.ERROR


def _findings(root: Path, shown: Preview) -> list[dict[str, Any]]:
    """What the checks say of the text a save proposes, before it is written."""
    return diagnostics_data(save_findings(root, shown))


def _show(io: _Output, shown: Preview, findings: list[dict[str, Any]]) -> None:
    out = io.out
    out.write(lines(shown.plan.preview) + "\n")
    if findings and shown.plan.op == "save":  # an archive's or delete's broken links are in its preview
        out.write("  Findings on the proposed text:\n")
        for d in findings:
            out.write(f"    {one_line(d['path'])}:{d['line']}:{d['column']}: {d['code']} {d['name']} "
                      f"{d['severity']}: {one_line(d['message'])}\n")


def _token_command(argv: list[str] | None, token: str) -> str:
    """The command to run again with the token (what an agent runs after the user's yes)."""
    args = [a for a in (argv if argv is not None else sys.argv[1:]) if a not in ("-y", "--yes")]
    # The arguments masked like the preview: a path or a reason can hold a likely secret (the
    # caller has the real arguments; the token is what it needs from here). The token itself
    # is random hex, which the secret detection would take for a key, so it is added after.
    return f"{mask_text(shlex.join(['pmem', *args]))} --token {token}"


def _tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _held(root: Path, shown: Preview) -> tuple[str, str] | None:
    """The decline's key and why this change is held for the person's prompt (the user said no
    to it in an agent's session, engine/lifecycle/declines.py, or that record cannot be read),
    if it is."""
    if shown.empty:
        return None
    key = declines.plan_key(root, shown.plan)
    why = declines.held_because(key)
    return None if why is None else (key, why)


def _held_for_token(root: Path, request: Request) -> str | None:
    """For `--token`: why the change it applies is held (planned only when anything is recorded)."""
    if not declines.any_declined():
        return None
    try:
        held = _held(root, preview(context(root), request))
    except Refusal:  # applying says why, as before
        return None
    return None if held is None else held[1]


def run_write(root: Path, request: Request, *, fmt: str = "text", yes: bool = False, token: str | None = None,
              stdin: TextIO | None = None, out: TextIO | None = None, err: TextIO | None = None,
              argv: list[str] | None = None, applied: Callable[[], None] | None = None) -> int:
    """Preview, confirm, apply (docs/design.md §6.1). `applied` runs once the change is on disk
    (not after a "no", a preview, a refusal or a change with nothing to do)."""
    # Looked up at call time, so a caller (or a test) that swaps sys.stdin is honoured.
    stdin, out, err = stdin or sys.stdin, out or sys.stdout, err or sys.stderr
    io = _Output(fmt, out, err)
    status = _run_write(root, request, io, yes, token, stdin, argv)
    if io.applied and applied is not None:
        applied()
    return status


def _run_write(root: Path, request: Request, io: _Output, yes: bool, token: str | None, stdin: TextIO,
               argv: list[str] | None) -> int:
    out, err = io.out, io.err
    # A change the user declined in an agent's session is theirs to apply, at a terminal: no
    # token, no --yes, nothing without a prompt (docs/decisions.md, "A declined change stays
    # declined"). The words give an agent no step of its own to take.
    if token is not None:
        why = _held_for_token(root, request)
        if why is not None:
            return io.refused(Refusal("declined", why))
        return _apply_token(root, request, token, io)
    # Only a preview whose token is handed out (exit 3) must be exact; `--yes` and a prompt plan
    # again under the lock.
    exact = not yes and (io.json or not _tty(stdin))
    try:
        shown = preview(context(root), request, exact=exact)
    except Refusal as exc:
        return io.refused(exc)
    held = _held(root, shown)
    if held is not None and (yes or io.json or not (_tty(stdin) and _tty(out))):
        return io.refused(Refusal("declined", held[1]))
    findings = _findings(root, shown)
    if io.json:
        io.data(preview_data(shown, findings))
    else:
        _show(io, shown, findings)
    if shown.empty:
        return exit_codes.OK
    assert shown.token is not None
    if held is not None:
        out.write("You declined this change in an agent's session.\n" if held[1] == declines.DECLINED_MESSAGE
                  else f"{one_line(held[1].split('; nothing')[0])}.\n")
        if not _confirm(shown.plan.action, stdin, out):
            out.write("Cancelled; nothing was changed.\n")
            return exit_codes.OK
    elif not yes:
        if exact:  # the token is handed out: no terminal to ask at, or JSON
            if not io.json:
                piped = request.op == "save" and "--content-file" not in (argv if argv is not None else sys.argv)
                again = " (with the same content on stdin)" if piped else ""
                err.write("pmem: not confirmed: stdin is not a terminal. Nothing was changed. After the user's yes "
                          f"to this preview, apply exactly it with{again}:\n  {_token_command(argv, shown.token)}\n")
            return exit_codes.NOT_CONFIRMED
        if not _confirm(shown.plan.action, stdin, out):
            out.write("Cancelled; nothing was changed.\n")
            return exit_codes.OK
    try:
        confirmation = Unattended.after(request, shown.plan) if yes and held is None else Confirmed(request, shown.plan)
        plan, done = execute(root, confirmation)
    except ApplyError as exc:
        return io.refused(exc, "failed")
    except Refusal as exc:
        return io.refused(exc, "refused at execution")
    if held is not None:
        declines.clear(held[0])  # the person said yes to it at last
    return _done(io, plan, done)


def _apply_token(root: Path, request: Request, token: str, io: _Output) -> int:
    try:
        plan, done = execute(root, Tokened(request, token))
    except ApplyError as exc:
        return io.refused(exc, "failed")
    except Refusal as exc:
        return io.refused(exc)
    return _done(io, plan, done)


def _done(io: _Output, plan: Plan, done: list[str]) -> int:
    io.applied = True
    if io.json:
        io.data(applied_data(plan, done))
    else:
        io.out.write(f"Done: {one_line(plan.done)}.\n")
    return exit_codes.OK
