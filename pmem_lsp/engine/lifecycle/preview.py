"""Two-step writes for agents: a preview with a token, then applying exactly that preview
(docs/design.md §6.1, §10).

The token binds the operation, its arguments (the proposed content by its hash) and the
content of every file the plan read or touches. Applying with a token plans again, under the
root's lock, on what the disk holds then: if the new token differs — an index line, the file,
the arguments changed — nothing is written and the preview is stale. Tokens are stateless (the
CLI needs no store; `pmem mcp` keeps its own, single-use), and any change in between makes a
different token, so what is applied is what the user saw.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..findings import Finding
from ..secrets import mask_data, mask_text
from ..settings_defaults import SETTINGS_FILE
from .operations import LifecycleContext, make_plan
from .plan import MakeDir, Move, Plan, Remove, WriteText
from .safety import Refusal
from .save import diff_lines, settings_or_defaults

if TYPE_CHECKING:
    from ..settings import Settings

STALE = "stale-preview"
TOKEN_VERSION = 1


@dataclass(frozen=True)
class Request:
    """One write an agent (or a person) asks for, as given: checked when planned."""

    op: str
    path: object = None
    reason: str | None = None
    content: object = None  # save: the proposed text
    description: str | None = None  # save, route: the route's description
    route: bool = True  # save: add a route for a new active file
    add_route: bool = False  # recover: add the proposed route for a file archived with none

    def plan(self, ctx: LifecycleContext) -> Plan:
        return make_plan(ctx, self.op, self.path, self.reason, content=self.content,
                         description=self.description, route=self.route, add_route=self.add_route)

    def arguments(self) -> dict[str, Any]:
        """What the token binds: the arguments, the content by its hash."""
        content = self.content if isinstance(self.content, str) else None
        return {"path": self.path if isinstance(self.path, str) else None, "reason": self.reason,
                "content": (None if content is None
                            else hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()),
                "description": self.description, "route": self.route,
                **({"add_route": True} if self.add_route else {})}


class StalePreview(Refusal):
    def __init__(self, message: str) -> None:
        super().__init__(STALE, message)


def _file_state(path: Path) -> str:
    """What a path holds, for the token: a content hash, or what kind of thing is there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    if stat.S_ISDIR(st.st_mode):
        return "folder"
    if not stat.S_ISREG(st.st_mode):
        return "other"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"unreadable:{exc.errno}"


@dataclass(frozen=True)
class Preview:
    request: Request
    plan: Plan
    token: str | None  # None: nothing to apply
    read: tuple[str, ...] = field(default=(), compare=False)  # the files the plan read

    @property
    def empty(self) -> bool:
        return self.plan.empty


# How many times a preview plans again when the root changed under it before it gives up.
_ATTEMPTS = 4


def preview(ctx: LifecycleContext, request: Request, *, exact: bool = True) -> Preview:
    """Plan `request` and compute its token. Raises a Refusal when the contract says no.
    `exact=False`: a preview whose token nobody applies (`--yes`, a prompt: the plan is made
    again under the lock), planned once however busy the root is.

    The token binds what the plan *saw*: each file's state is taken just before the plan first
    reads it and again once the plan is made, and the settings' before and after. A file that
    changed in between (another agent's write landing mid-plan) would otherwise give a token of
    the new bytes beside a preview made from the old ones, and applying it would write what the
    user never saw. Then the preview is made again, on the new bytes."""
    for _ in range(_ATTEMPTS):
        shown = _preview_once(ctx, request, exact)
        if shown is not None:
            return shown
    raise Refusal(STALE, "the memory root kept changing while the preview was made (another writer is "
                         "busy in it); nothing was written — preview again in a moment")


def _preview_once(ctx: LifecycleContext, request: Request, exact: bool = True) -> Preview | None:
    """One attempt of `preview`; None when a file the plan read changed while it planned."""
    read: list[str] = []
    before: dict[str, str] = {SETTINGS_FILE: _file_state(ctx.root / SETTINGS_FILE)}

    def recording(rel: str) -> str | None:
        if rel not in read:
            read.append(rel)
            before.setdefault(rel, _file_state(ctx.root / rel))
        return ctx.read_text(rel)

    plan = request.plan(LifecycleContext(ctx.root, ctx.today, recording))
    if plan.empty:
        states = {p: _file_state(ctx.root / p) for p in before}
        return Preview(request, plan, None, tuple(read)) if states == before or not exact else None
    # The settings decide what a plan writes (the dialect of its records and routes, what a save
    # is checked for): a `.pmem.toml` changed since the preview makes the token stale.
    paths = sorted(set(read) | set(plan.touched()) | {SETTINGS_FILE})
    states = {p: _file_state(ctx.root / p) for p in paths}
    if exact and any(states[p] != was for p, was in before.items()):
        return None
    payload = {"version": TOKEN_VERSION, "root": str(ctx.root), "operation": request.op,
               "arguments": request.arguments(), "files": states}
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=True).encode()).hexdigest()
    return Preview(request, plan, f"{request.op}-{digest[:24]}", tuple(read))


# -- the preview as data ------------------------------------------------------------------
def changes(plan: Plan) -> list[dict[str, Any]]:
    """Each step as plain data; text shown as a unified diff with likely secrets masked."""
    out: list[dict[str, Any]] = []
    for step in plan.steps:
        if isinstance(step, MakeDir):
            out.append({"kind": "create-folder", "path": step.path})
        elif isinstance(step, Move):
            out.append({"kind": "move", "from": step.source, "to": step.destination})
        elif isinstance(step, Remove):
            out.append({"kind": "delete", "path": step.path})
        elif isinstance(step, WriteText):
            diff = diff_lines(step.path, step.before or "", step.after)
            out.append({"kind": "create" if step.before is None else "update", "path": step.path,
                        "diff": mask_text("\n".join(diff))})
    return out


def save_findings(root: Path, shown: Preview) -> list[Finding]:
    """What the checks say of the text a `save` preview proposes, or the links an archive or a
    delete will break (none for other operations, or a write that changes nothing): shown by
    the CLI and the MCP server alike."""
    if shown.plan.op in ("archive", "delete") and not shown.empty:
        from .consequences import broken_link_findings, links_broken_by

        return broken_link_findings(links_broken_by(root, [m.source for m in shown.plan.moves()]), shown.plan.op)
    if shown.plan.op != "save" or shown.empty:
        return []
    return proposed_findings(root, shown.plan, settings_or_defaults(root))


def proposed_findings(root: Path, plan: Plan, settings: Settings) -> list[Finding]:
    """The findings on the files `plan` writes, as they would be after it (the rest of the
    root as it is): what a `save` preview shows the user before anything is written."""
    from ..analysis import Analysis
    from ..root_state import RootState

    writes = [w for w in plan.writes() if w.path == plan.target]
    if not writes:
        return []
    state = RootState.scan(root, settings)
    for write in plan.writes():
        state.set_buffer(write.path, write.after)
    findings = Analysis(state).by_path()
    # The write makes the file fresh: PM501 (untouched for long) is about the old text's date.
    return [f for w in writes for f in findings.get(w.path, []) if f.code != "PM501"]


# -- what the CLI's --format json and the MCP server return -----------------------------
# Masked here, once, for every surface: a path (`notes/ghp_…/x.md`), a move's ends, a done
# step can hold a likely secret as well as a diff can.
def preview_data(shown: Preview, findings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    plan = shown.plan
    data = mask_data({"operation": plan.op, "path": plan.target, "preview": plan.preview, "changes": changes(plan),
                      "findings": findings or [], "token": None, "applied": False})
    # The token is random hex, never memory: kept out of the masking, which could take it for a key.
    data["token"] = shown.token
    return data


def applied_data(plan: Plan, done: list[str]) -> dict[str, Any]:
    return mask_data({"applied": True, "operation": plan.op, "path": plan.target, "outcome": plan.done,
                      "done": done})


def refusal_data(refusal: Refusal) -> dict[str, Any]:
    return {"applied": False, "error": {"kind": refusal.rule, "message": mask_text(refusal.message)}}
