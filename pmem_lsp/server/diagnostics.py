"""What a file's diagnostics are, beside the findings themselves: the `diagnostics.scope =
"changes"` filter and the read-problem log. Both keep state per root, owned by the publisher
(`publisher.py`), which is the one place that publishes.

Push, not pull: Neovim cannot be asked to re-pull, and a change in one file (the index)
changes diagnostics in others (docs/design.md §8), so the server decides what to send.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..engine.findings import Finding
from ..engine.host import MemoryRoot


class ChangesScope:
    """`diagnostics.scope = "changes"` (an agent's client, issue 25): the findings each file had
    when the server first analysed the root, and the files this client opened or changed.
    Everything, for an editor (`"root"`)."""

    def __init__(self) -> None:
        self.baseline: dict[str, Counter[tuple[str, str]]] | None = None
        self.touched: set[str] = set()

    def record_baseline(self, final: Mapping[str, Sequence[Finding]]) -> None:
        """The root's findings as first analysed from the disk: old problems, not news to an
        agent's client. From the disk alone: a buffer the client changed before the first scan
        landed is its change (what an edit of `_index.md` breaks elsewhere is news)."""
        if self.baseline is not None:
            return
        self.baseline = {rel: Counter((f.code, f.message) for f in found) for rel, found in final.items() if found}

    def filter(self, root: MemoryRoot, rel: str, findings: tuple[Finding, ...], is_open: bool) -> tuple[Finding, ...]:
        """Everything, for an editor; for an agent's client (`changes`) all of a file it opened or
        changed, and elsewhere only what was not there when the server first analysed the root.
        A file counts as touched from the first publication that finds it open."""
        if root.settings.diagnostics.scope != "changes":
            return findings
        if is_open:
            self.touched.add(rel)
        if rel in self.touched:
            return findings
        if self.baseline is None:
            return ()  # before the first analysis lands every finding is an old one
        left = Counter(self.baseline.get(rel, Counter()))
        out = []
        for f in findings:
            key = (f.code, f.message)
            if left[key] > 0:
                left[key] -= 1
            else:
                out.append(f)
        return tuple(out)


class ReadProblemLog:
    """The read problem last logged for each path of one root ("" for a file capped at the size
    limit, else the reason it cannot be read), so that each is logged once per change of its
    state, not on every keystroke."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.logged: dict[str, str] = {}

    def update(self, root: MemoryRoot, paths: Iterable[str] | None = None) -> None:
        """Log (window/logMessage) each file or folder that cannot be read, or is analysed only
        up to the cap, naming it and the reason. `paths`: the files that changed (None after a
        scan: all of them)."""
        state = root.state
        if state is None:
            return
        logged = self.logged
        paths = None if paths is None else set(paths)
        problems = state.read_problems(paths)  # with `paths`: those files, and every unlisted folder
        if paths is None:
            looked_at = set(logged)
        else:
            # The changed files, and what is logged but is no file (folders, whose problems are
            # always in the list).
            looked_at = paths | {rel for rel in logged if rel not in state.files}
        for rel in looked_at - {p.path for p in problems}:
            logged.pop(rel, None)  # healed or gone: a later problem is logged again
        for problem in problems:
            reason = problem.reason or ""
            if logged.get(problem.path) != reason:
                logged[problem.path] = reason
                self.log(f"pmem: {root.path / problem.path}: {problem.message()}")
