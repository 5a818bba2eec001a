"""`pmem upgrade|archive|delete|recover|purge|init`: preview, confirm, then act.

Preview always. Act only with `--yes` or an interactive "y". On a non-interactive stdin
without `--yes`, exit 3 with nothing changed. Refusals exit 2 with the reason.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from ..engine.lifecycle.execute import carry_out
from ..engine.lifecycle.fs_applier import ApplyError
from ..engine.lifecycle.operations import context, make_plan
from ..engine.lifecycle.safety import Refusal
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


def run_lifecycle(root: Path, op: str, path: str | None, reason: str | None, yes: bool,
                  stdin: TextIO | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    # Looked up at call time, so a caller (or a test) that swaps sys.stdin is honoured.
    stdin, out, err = stdin or sys.stdin, out or sys.stdout, err or sys.stderr
    ctx = context(root)
    if op == "archive" and not reason:
        reason = "archived with `pmem archive`"  # the engine's default says "from the editor"
    try:
        plan = make_plan(ctx, op, path, reason)
    except Refusal as exc:
        err.write(f"pmem: refused ({exc.rule}): {one_line(exc.message)}\n")
        return exit_codes.ERROR
    out.write(lines(plan.preview) + "\n")
    if plan.empty:
        return exit_codes.OK
    if not yes:
        if not stdin.isatty():
            err.write("pmem: not confirmed: stdin is not a terminal; run again with --yes to apply. "
                      "Nothing was changed.\n")
            return exit_codes.NOT_CONFIRMED
        if not _confirm(plan.action, stdin, out):
            out.write("Cancelled; nothing was changed.\n")
            return exit_codes.OK
    try:
        plan, _done = carry_out(context(root), plan, path, reason)
    except ApplyError as exc:
        err.write(f"pmem: failed ({exc.rule}): {one_line(exc.message)}\n")
        return exit_codes.ERROR
    except Refusal as exc:
        err.write(f"pmem: refused at execution ({exc.rule}): {one_line(exc.message)}\n")
        return exit_codes.ERROR
    out.write(f"Done: {one_line(plan.done)}.\n")
    return exit_codes.OK
