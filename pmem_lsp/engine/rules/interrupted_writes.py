"""PM007: a hidden temporary file a killed pmem write left in the root
(engine/lifecycle/leftovers.py)."""

from __future__ import annotations

from ..findings import Finding
from ..lifecycle.leftovers import leftover
from ..root_state import RootState
from ..rule import Rule, W

RULES = (
    Rule("PM007", "write-leftover", W,
             "A pmem write was stopped part-way (the process was killed) and left a hidden "
             "temporary file beside its target: `.<name>.<random>.pmem-tmp`. Agents never read it, "
             "but it can hold a whole index or note. The next pmem write in that folder removes it "
             "once the target is intact (or puts back a file a stopped purge had set aside); you "
             "may also delete a write's temporary file yourself once the target reads as it should."),
)


def check_leftovers(state: RootState) -> list[Finding]:
    """One finding per leftover, on its target's first line."""
    out: list[Finding] = []
    for rel in sorted(state.leftovers):
        found = leftover(rel)
        if found is None:
            continue
        if found.purge:
            message = (f"`{rel}` is `{found.target}`, set aside by a purge that was stopped part-way; the next "
                       "pmem write puts it back (or removes it once its record is gone)")
        else:
            message = (f"`{rel}` is a temporary copy left by a stopped write of `{found.target}`; the next pmem "
                       "write removes it once the target is intact, or delete it")
        out.append(Finding(found.target, 0, 0, 0, 0, "PM007", message, data={"leftover": rel, "purge": found.purge}))
    return out
