"""`pmem doctor` and `pmem setup AGENT` (engine/runtime_contract.py): the runtime contract checked, and
its fixable problems carried out as previewed, confirmed writes to the agents' configuration."""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from pathlib import Path
from typing import TextIO

from ..engine.runtime_contract import FileChange, doctor, setup_changes
from . import exit_codes
from .terminal import lines, one_line
from .writes import _confirm, _tty


def run_doctor(root: Path, fmt: str, out: TextIO) -> int:
    """Exit 0 when every agent found reaches the same root and the root is usable, else 1."""
    report = doctor(root)
    if fmt == "json":
        out.write(json.dumps(report.data(), indent=2, ensure_ascii=False) + "\n")
        return exit_codes.OK if report.ok else exit_codes.FINDINGS
    text = [f"Memory root: {root}"]
    text += ([f"  problem: {p.what}\n    fix: {p.fix}" for p in report.root_problems]
             or ["  ok: you can read and write it"])
    for agent in report.agents:
        if not agent.found:
            text.append(f"{agent.name}: not found on this machine")
            continue
        text.append(f"{agent.name}: " + (", ".join(agent.reaches) if agent.reaches else "does not reach the memory")
                    + (f" · root {agent.root}" if agent.root else ""))
        text += [f"  problem: {p.what}\n    fix: {p.fix}" for p in agent.problems] or ["  ok"]
    out.write(lines("\n".join(text)) + "\n")
    return exit_codes.OK if report.ok else exit_codes.FINDINGS


def _preview(changes: list[FileChange]) -> str:
    shown = []
    for change in changes:
        verb = "create" if change.before is None else "change"
        shown.append(f"{verb} {change.path}: {change.why}")
        diff = difflib.unified_diff((change.before or "").splitlines(), change.after.splitlines(),
                                    "before", "after", lineterm="", n=1)
        shown += [f"    {line}" for line in list(diff)[2:]]
    return "\n".join(shown)


def _write(change: FileChange) -> None:
    """Atomically, keeping the file's mode (Claude Code's `.claude.json` is the user's alone)."""
    change.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    mode = os.stat(change.path).st_mode & 0o777 if change.before is not None else 0o600
    fd, temp = tempfile.mkstemp(prefix=f".{change.path.name}.", dir=change.path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(change.after)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, mode)
        os.replace(temp, change.path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def run_setup(root: Path, agent: str, fmt: str, yes: bool, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    try:
        changes = setup_changes(agent, root)
    except ValueError as exc:
        err.write(f"pmem: refused: {one_line(str(exc))}\n")
        return exit_codes.ERROR
    preview = _preview(changes) if changes else f"{agent} is set up for {root}: nothing to change"
    data = {"agent": agent, "root": str(root), "preview": preview, "applied": False,
            "changes": [{"path": str(c.path), "create": c.before is None, "why": c.why} for c in changes]}
    if fmt != "json":
        out.write(lines(preview) + "\n")
    if not changes:
        if fmt == "json":
            out.write(json.dumps(data, ensure_ascii=False) + "\n")
        return exit_codes.OK
    if not yes and (fmt == "json" or not _tty(stdin)):
        if fmt == "json":
            out.write(json.dumps(data, ensure_ascii=False) + "\n")
        else:
            err.write("pmem: not confirmed: stdin is not a terminal. Nothing was changed. The person runs it at "
                      "their terminal, where pmem asks them.\n")
        return exit_codes.NOT_CONFIRMED
    if not yes and not _confirm(f"Set up {agent}", stdin, out):
        out.write("Cancelled; nothing was changed.\n")
        return exit_codes.OK
    for change in changes:
        try:
            _write(change)
        except OSError as exc:
            err.write(f"pmem: failed: {change.path}: {exc.strerror or exc}; the files before it were written\n")
            return exit_codes.ERROR
    if fmt == "json":
        out.write(json.dumps({**data, "applied": True}, ensure_ascii=False) + "\n")
    else:
        out.write(f"Done: {agent} set up for {root}. Start a new session of it to use the memory.\n")
    return exit_codes.OK
