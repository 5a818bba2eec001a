"""The one door for carrying out a confirmed plan on disk: lock the root, plan again on what
it holds now (the safety contract at the moment of execution), apply (docs/design.md §3, §5.1).

The CLI, the server's fallback for clients that cannot move files, and the agent surface all
come through here, so two pmem processes never interleave and every check runs twice.
"""

from __future__ import annotations

from .fs_applier import apply_plan
from .lock import RootLock
from .operations import LifecycleContext, replan
from .plan import Plan


def carry_out(ctx: LifecycleContext, confirmed: Plan, path: object = None, reason: str | None = None, *,
              content: object = None, description: str | None = None,
              route: bool = True, add_route: bool = False) -> tuple[Plan, list[str]]:
    """Apply what the user confirmed; returns the plan that ran and the steps done. Raises a
    Refusal (nothing changed) or an ApplyError (stopped part-way, the state says what to fix)."""
    if confirmed.op == "init":  # the root itself is being made: there is no lock file yet
        plan = replan(ctx, confirmed, path, reason, content=content, description=description, route=route,
                      add_route=add_route)
        return plan, apply_plan(ctx.root, plan)
    with RootLock(ctx.root):
        plan = replan(ctx, confirmed, path, reason, content=content, description=description, route=route,
                      add_route=add_route)
        return plan, apply_plan(ctx.root, plan)
