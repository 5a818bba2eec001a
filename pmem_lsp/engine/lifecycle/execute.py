"""The one door for carrying out a confirmed write (docs/design.md §3, §5.1; docs/SECURITY.md,
"The write protocol").

Every surface comes through `execute`: the CLI's prompt and `--yes` (`Confirmed`), the CLI's
`--token` and `pmem mcp`'s `memory_apply` (`Tokened`), and the language server (`Confirmed`,
its moves through the editor). So each rule of the protocol is written once, here and in what
it calls:

1. take the root's lock (`lock.RootLock`: the root folder itself, whatever the caller's
   environment);
2. wait until every index the confirmed plan writes is settled — no line of the text the user
   saw is missing, or the text has held still (`fs_applier.settled`): an index caught mid
   truncate-then-write is never the base of a plan, and one emptied or gutted since pmem read
   it (the plan's or the preview's reading: `readings`) is refused if it does not come back;
3. plan again on the disk of that moment and require that it is what was confirmed (the same
   moves and index changes — `operations.replan` — or the same token — `preview`); the
   surface's own guard runs here (the server: no unsaved buffer among the files touched);
4. clear what a killed pmem write left in the folders it writes (`leftovers.py`, PM007);
5. run the steps (`fs_applier.run_steps` with undo): every index write compare-and-swap on a
   settled text with its post-condition checked before the rename; a step that fails puts
   back every step done before it, and the error says which state is left when even that fails.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from functools import partial
from pathlib import Path

from ..history.recording import record_quietly
from ..history.store import Writer
from ..index_edit import routes_to
from ..root_state import decode
from ..zones import ARCHIVE_INDEX, INDEX
from . import fs_applier
from .fs_applier import UNSETTLED, Mover, Replan, run_steps, settled
from .leftovers import clear_leftovers
from .lock import RootLock
from .operations import LifecycleContext, context, replan
from .plan import Plan
from .preview import Request, StalePreview, preview
from .safety import Refusal


@dataclass(frozen=True)
class Confirmed:
    """The user saw `plan`, made for `request` (a prompt, `--yes`, the editor's confirmation)."""

    request: Request
    plan: Plan

    @property
    def op(self) -> str:
        return self.plan.op

    def settle(self, root: Path, deadline: float) -> None:
        for write in self.plan.writes():
            settled(root / write.path, write.before, deadline)

    def again(self, ctx: LifecycleContext) -> Plan:
        # Every argument of the request, by name: one added to `Request` reaches `replan` too.
        arguments = {f.name: getattr(self.request, f.name) for f in fields(self.request) if f.name != "op"}
        return replan(ctx, self.plan, **arguments)


@dataclass(frozen=True)
class Unattended:
    """`--yes`: nobody waits on a preview, so the plan made under the lock is the one carried
    out (every rule of the contract still applies to it). Comparing it with a plan made before
    the lock would refuse ordinary contention — another pmem process archiving meanwhile — with
    "review the new preview", which nobody was shown (a review)."""

    request: Request
    # What the preview read of each index it writes (path, text): pmem's last reading, so that
    # an index emptied or gutted since is never taken as the base of the plan (`steady`).
    read: tuple[tuple[str, str | None], ...] = ()

    @classmethod
    def after(cls, request: Request, shown: Plan) -> Unattended:
        """`--yes` after the preview `shown` (not compared with it; its readings are kept)."""
        return cls(request, tuple((w.path, w.before) for w in shown.writes()))

    @property
    def op(self) -> str:
        return self.request.op

    def settle(self, root: Path, deadline: float) -> None:
        """The indexes are read settled when the plan is made (`steady`)."""

    def again(self, ctx: LifecycleContext) -> Plan:
        return self.request.plan(ctx)


@dataclass(frozen=True)
class Tokened:
    """The user saw the preview `token` names (`--token`, `memory_apply`): applied only while
    every file it reads or touches is as it was then."""

    request: Request
    token: str

    @property
    def op(self) -> str:
        return self.request.op

    def settle(self, root: Path, deadline: float) -> None:
        """Nothing to wait for: the token binds the exact bytes of every file the plan reads, so
        a text caught mid-rewrite makes it stale, and nothing is written."""

    def again(self, ctx: LifecycleContext) -> Plan:
        try:
            now = preview(ctx, self.request)
        except Refusal as exc:
            raise StalePreview(f"the preview no longer applies ({exc.message}); nothing was written") from None
        if now.token != self.token:
            what = ("the arguments or the files it reads or writes changed" if now.token
                    else "it was applied already, or there is nothing to do now")
            raise StalePreview(f"this token is not the current preview of this {self.request.op}: {what} since "
                               "(or the token is from another command); nothing was written — preview again")
        return now.plan


Confirmation = Confirmed | Tokened | Unattended


def execute(root: Path, confirmation: Confirmation, *, today: dt.date | None = None,
            ctx: LifecycleContext | None = None, move: Mover | None = None,
            guard: Callable[[Plan], None] | None = None) -> tuple[Plan, list[str]]:
    """Carry out what the user confirmed; returns the plan that ran and the steps done. Raises a
    Refusal (nothing changed: refused, stale, another writer kept the root busy) or an
    ApplyError (a step failed: what was done is put back, or the error says what remains)."""
    ctx = ctx or context(root, today)
    if confirmation.op == "init" and not root.is_dir():
        # The root itself is being made: nothing to lock yet (every creation is no-overwrite).
        done = _run(root, ctx, confirmation, move, guard)
        _record_after(root, confirmation, done[0])
        return done
    with RootLock(root):
        # History (docs/design.md §11): what others wrote since the last entry, then this write,
        # each an entry; under the lock, so no other pmem write falls between them.
        record_quietly(root, Writer("outside"), "changed outside pmem")
        done = _run(root, ctx, confirmation, move, guard)
        _record_after(root, confirmation, done[0])
        return done


def _record_after(root: Path, confirmation: Confirmation, plan: Plan) -> None:
    """The entry of this write: the operation and its arguments, titled with what it did."""
    request = confirmation.request
    words = [request.op, *([request.path] if isinstance(request.path, str) else [])]
    detail = " ".join(words) + (f" — {request.reason}" if request.reason else "")
    record_quietly(root, Writer("pmem", detail), plan.done or detail)


def readings(confirmation: Confirmation) -> dict[str, str | None]:
    """What pmem last read of each index the confirmed write changes: the text the user's plan
    (or the preview before `--yes`) was made on. None of it for a token: the token binds the
    exact bytes, so a changed index makes it stale anyway."""
    if isinstance(confirmation, Confirmed):
        return {w.path: w.before for w in confirmation.plan.writes()}
    if isinstance(confirmation, Unattended):
        return dict(confirmation.read)
    return {}


def steady(ctx: LifecycleContext, deadline: float,
           last_read: dict[str, str | None] | None = None) -> tuple[LifecycleContext, Callable[[], None]]:
    """`ctx`, reading the two indexes only once they are settled (`fs_applier.settled`): a plan
    is never made on an index caught mid-rewrite. `last_read`: pmem's last reading of an index
    (the preview's); an index emptied, or that lost its heading or most of its routes since, is
    waited for and, if it does not come back, refused — never planned on (issue 40)."""
    seen: dict[str, str | None] = {}
    last_read = last_read or {}

    def read(rel: str) -> str | None:
        if rel not in (INDEX, ARCHIVE_INDEX):
            return ctx.read_text(rel)
        if rel not in seen:  # one steady read per plan: the plan and its checks see one text
            raw = settled(ctx.root / rel, last_read.get(rel), deadline)
            seen[rel] = None if raw is None else decode(raw)
        return seen[rel]

    return replace(ctx, read_text=read), seen.clear


def _run(root: Path, ctx: LifecycleContext, confirmation: Confirmation, move: Mover | None,
         guard: Callable[[Plan], None] | None) -> tuple[Plan, list[str]]:
    deadline = time.monotonic() + fs_applier.SETTLE_LIMIT
    ctx, afresh = steady(ctx, deadline, readings(confirmation))
    while True:
        afresh()
        try:
            confirmation.settle(root, deadline)
            plan = confirmation.again(ctx)
        except Refusal as exc:  # before any step: say so
            if "nothing was" in exc.message:
                raise
            raise type(exc)(exc.rule, f"{exc.message}; nothing was changed") if type(exc) is Refusal \
                else exc from None
        if guard is not None:
            guard(plan)
        if root.is_dir():  # what a killed write left where this one writes (PM007)
            clear_leftovers(root, {rel.rpartition("/")[0] for rel in plan.touched()})
        try:
            return plan, run_steps(root, plan, move=move, undo=True, verify=partial(goal_missed, root, plan, deadline))
        except Replan as exc:
            if time.monotonic() >= deadline:
                raise Refusal(UNSETTLED, f"{exc.message}; another program kept rewriting the indexes, "
                                         "so pmem stopped trying") from None


def goal_missed(root: Path, plan: Plan, deadline: float) -> str | None:
    """After the steps, before they are final: why the operation did not reach what it is for
    (None: it did). A plan made on an index read mid-rewrite (a route missing from a half-written
    text) runs without error and misses it: an archived file keeps its route, a saved or
    recovered one has none. Then everything is put back and the plan made again."""
    if plan.op not in ("archive", "recover", "save", "route"):
        return None
    raw = settled(root / INDEX, None, deadline)
    index = None if raw is None else decode(raw)
    if plan.op == "archive" and plan.target and index and routes_to(index, plan.target):
        return f"`{INDEX}` still routes `{plan.target}`, which the plan did not see (it was being rewritten)"
    routed = plan.facts.get("destination") if plan.op == "recover" else plan.target
    wants_route = bool((plan.facts.get("route") or "").strip())
    if plan.op != "archive" and routed and wants_route and not routes_to(index or "", routed):
        return f"`{INDEX}` has no route to `{routed}` after the write (it was being rewritten)"
    return None


