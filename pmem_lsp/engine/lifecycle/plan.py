"""A lifecycle plan: plain data, ordered steps, and the preview the user confirms.

The order of `steps` is the crash-safety argument: each applier performs them in this order,
so a crash after any step leaves every file at its source or its destination, and the
indexes in a state `pmem check` reports with a fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..secrets import mask_secrets, mask_text
from .changes import Change, apply_change


@dataclass(frozen=True)
class MakeDir:
    path: str
    # Created readable by its owner only (the root `pmem init` creates: memory is private).
    # A folder that exists already keeps its permissions.
    private: bool = False


@dataclass(frozen=True)
class Move:
    source: str
    destination: str


@dataclass(frozen=True)
class Remove:
    path: str


@dataclass(frozen=True)
class Splice:
    """Replace `before[start:end]` (which is `old`) with `new`; offsets are characters."""

    start: int
    end: int
    old: str
    new: str


@dataclass(frozen=True)
class WriteText:
    path: str
    before: str | None  # the text the change was planned against; None: create the file
    after: str
    # What the write does (changes.py), so it can be made again on the text the file holds
    # when the write runs. None: only `before` exactly may become `after`.
    change: Change  # what the write does, re-made on the text of the moment at execution

    def rebase(self, current: str | None) -> WriteText:
        """This write, made on `current` (what the file holds now; None: it does not exist):
        other lines are kept as they are now. Refuses when the change no longer applies (the
        route line or the record the user confirmed changed, a file to create exists)."""
        if current == self.before:
            return self
        after = apply_change(self.change, self.path, current)
        return WriteText(self.path, current, after, self.change)

    @property
    def splice(self) -> Splice:
        """The one contiguous change from `before` to `after` (common prefix and suffix kept)."""
        before = self.before or ""
        after = self.after
        limit = min(len(before), len(after))
        start = 0
        while start < limit and before[start] == after[start]:
            start += 1
        end_b, end_a = len(before), len(after)
        while end_b > start and end_a > start and before[end_b - 1] == after[end_a - 1]:
            end_b -= 1
            end_a -= 1
        return Splice(start, end_b, before[start:end_b], after[start:end_a])


Step = MakeDir | Move | Remove | WriteText


@dataclass(frozen=True)
class Plan:
    op: str  # upgrade, archive, delete, recover, purge, init
    target: str | None  # the file acted upon (its current location), None for upgrade/init
    steps: tuple[Step, ...]
    preview: str
    action: str  # the confirm button: "Archive", "Delete", "Recover", "Upgrade", "Delete permanently"
    done: str  # what to tell the user afterwards
    facts: dict[str, str] = field(default_factory=dict, compare=False)  # e.g. the saved route line

    def __post_init__(self) -> None:
        # What the user reads (preview, outcome) names paths and quotes route lines, and
        # either can hold a secret: masked here, once, for the CLI and the server alike.
        object.__setattr__(self, "preview", mask_text(self.preview))
        object.__setattr__(self, "done", mask_secrets(self.done))

    @property
    def empty(self) -> bool:
        return not self.steps

    def signature(self) -> tuple:
        """What the user confirmed. Execution re-plans on the current state and proceeds only
        when the new plan has the same signature: the same moves, removals and folders, and
        the same change to each index — the same route lines removed or added, the same
        record added, updated or removed (other lines may have changed — an agent adding or
        reordering lines in `_index.md` meanwhile is fine, and its lines are kept)."""
        out: list[object] = []
        for step in self.steps:
            if isinstance(step, WriteText):
                out.append(("write", step.path, step.change))
            else:
                out.append(step)
        return tuple(out)

    def touched(self) -> list[str]:
        """Every root-relative path a step creates, changes or removes."""
        out: list[str] = []
        for step in self.steps:
            paths = [step.source, step.destination] if isinstance(step, Move) else [step.path]
            out += [p for p in paths if p not in out]
        return out

    def moves(self) -> list[Move]:
        return [s for s in self.steps if isinstance(s, Move)]

    def writes(self) -> list[WriteText]:
        return [s for s in self.steps if isinstance(s, WriteText)]
