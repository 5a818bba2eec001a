"""Undo, as a property over whole sequences (issue 42; docs/design.md §11): a small real root is
written by pmem (a save through the one door), by an agent (Claude Code's Write and Edit, through
the real hook entry with its exact payloads) and by another program (plain writes, a
truncate-then-write that stalls, deletes, renames); whatever records entries records them. Then
one entry, chosen at random, is undone by `pmem undo ENTRY` (cli/history.py's `run_undo`,
applied through the executor):

- where no later entry touched the same lines, the root equals the sequence replayed without
  that entry;
- where a later entry touched the same lines, the undo refuses, naming the file and the lines,
  and no byte of the root changed;
- either way nothing is lost: every version of every file any entry recorded is still read back
  from the store.

The model: each memory file is a heading and `SLOTS` lines; every write puts new, unique text in
one or two of those lines (so "the same lines" is exact), or creates, removes, renames or
truncates a whole file. Three cases are left open by the spec and only held to "the three-way
answer, or a refusal that changes nothing": a later change on a line next to the entry's (git's
merge joins touching hunks); a later whole-file rewrite around the entry's lines (the three-way
merge sees only the texts, not that the file was emptied in between); and a file changed since
and now back to what the entry left or to what it was before the entry (removed, written,
removed again; renamed away and back): the merge sees no change since, or nothing to undo.
pmem's own refusals are expected where the replay would remove a file (pmem removes only by
archiving) or leave a memory file empty (a save refuses empty text)."""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pmem_lsp.cli.history import run_undo
from pmem_lsp.cli.hook import run_hook
from pmem_lsp.engine.history.recording import caught_up_store
from pmem_lsp.engine.history.store import HistoryStore
from pmem_lsp.engine.lifecycle.execute import Unattended, execute
from pmem_lsp.engine.lifecycle.preview import Request
from roots import make_root

pytestmark = [pytest.mark.slow,  # ~25-45 s: 25 sequences, each its own root and store
              pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with the git command")]

FILES = ("notes/a.md", "notes/b.md", "notes/c.md")  # c starts absent: created, renamed into
SLOTS = 6
HEADER = 2  # "# Title\n\n" before the slots: slot s is line s + 3 of the file
EMPTY = "EMPTY"  # a file truncated to nothing (only between a stalled truncate and its write)

State = tuple[str, ...] | str | None  # the slots' texts, EMPTY, or None (no file)


def render(rel: str, state: State) -> bytes | None:
    if state is None:
        return None
    if state == EMPTY:
        return b""
    assert isinstance(state, tuple)
    return ("# Note\n\n" + "".join(f"{line}\n" for line in state)).encode()


@dataclass
class Change:
    """What one entry did to one file: the state before and after, and the slots it changed
    (None: the whole file — created, removed, truncated, or written after a truncate)."""

    before: State
    after: State
    slots: frozenset[int] | None


@dataclass
class Recorded:
    commit: str
    writer: str  # the kind the entry must carry
    changes: dict[str, Change]
    states: dict[str, State] = field(default_factory=dict)  # every file as this entry recorded it
    indexes: frozenset[str] = frozenset()  # the indexes it changed (an archive's; not modelled line by line)


class Sequence:
    """The root, the model of its files, and the entries recorded so far."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("XDG_STATE_HOME", str(folder / "state"))
        monkeypatch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
        monkeypatch.delenv("PMEM_HOOK_CLIENT", raising=False)
        self.state: dict[str, State] = {rel: None for rel in FILES}
        for rel in FILES[:2]:
            self.state[rel] = tuple(f"{rel} base {s}" for s in range(SLOTS))
        self.root = make_root(folder, {rel: render(rel, st_).decode() for rel, st_ in self.state.items()
                                       if isinstance(st_, tuple)})
        self.store: HistoryStore = caught_up_store(self.root)
        self.first = self.store.head()
        assert self.first is not None
        self.entries: list[Recorded] = []
        self.archived: list[str] = []  # archived once: archiving a name again is another test's
        self.step = 0

    # -- the model ----------------------------------------------------------------------------

    def fresh(self, rel: str, slot: int) -> str:
        return f"{rel} step {self.step} slot {slot}"

    def with_slots(self, rel: str, slots: list[int]) -> tuple[str, ...]:
        old = self.state[rel]
        assert isinstance(old, tuple)
        return tuple(self.fresh(rel, s) if s in slots else old[s] for s in range(SLOTS))

    def catch_up(self, writer: str, changes: dict[str, Change]) -> None:
        """Record what changed (a pmem command that looks), and check the entries made since
        `head` are one, by `writer`, with exactly the files `changes` names."""
        head = self.store.head()
        store = caught_up_store(self.root)
        if writer != "outside":  # pmem's and the hooks' own recordings made the entry already
            assert store.head() == head, "the write's own recording left something for the catch-up"
        self._expect_one(self.before_head, writer, changes)

    def _expect_one(self, since: str | None, writer: str, changes: dict[str, Change]) -> None:
        made = self.store.entries(after=since)
        assert len(made) == 1, [(e.writer, e.title, e.files) for e in made]
        entry = made[0]
        assert entry.writer.kind == writer, (entry.writer, writer)
        assert sorted(rel for rel, _ in entry.files) == sorted(changes), (entry.files, changes)
        indexes = frozenset(rel for rel in changes if rel in ("_index.md", "_archive/_index.md"))
        changes = {rel: change for rel, change in changes.items() if rel in FILES}
        self.entries.append(Recorded(entry.commit, writer, changes, dict(self.state), indexes))

    def begin(self) -> None:
        self.step += 1
        self.before_head = self.store.head()

    def on_disk(self, rel: str) -> None:
        assert (None if not (self.root / rel).exists() else (self.root / rel).read_bytes()) == \
            render(rel, self.state[rel])

    # -- the writers --------------------------------------------------------------------------

    def pmem_save(self, rel: str, slots: list[int]) -> None:
        self.begin()
        before, after = self.state[rel], self.with_slots(rel, slots)
        text = render(rel, after)
        assert text is not None
        execute(self.root, Unattended(Request("save", rel, "a pmem save", text.decode(), route=False)))
        self.state[rel] = after
        self.on_disk(rel)
        self.catch_up("pmem", {rel: Change(before, after, frozenset(slots))})

    def pmem_archive(self, rel: str) -> None:
        """`pmem archive`: the file moves to `_archive/`, its route leaves `_index.md`, a record is
        added to `_archive/_index.md` (paths outside the model: named in the entry, not kept)."""
        self.begin()
        before = self.state[rel]
        index = (self.root / "_index.md").read_bytes()
        execute(self.root, Unattended(Request("archive", rel, "done with it")))
        routed = (self.root / "_index.md").read_bytes() != index  # a note without a route leaves it as is
        self.state[rel] = None
        self.archived.append(rel)
        assert not (self.root / rel).exists() and (self.root / "_archive" / rel).is_file()
        self.catch_up("pmem", {rel: Change(before, None, None), f"_archive/{rel}": Change(None, None, None),
                               **({"_index.md": Change(None, None, None)} if routed else {}),
                               "_archive/_index.md": Change(None, None, None)})

    def _agent(self, tool: str, rel: str, tool_input: dict, response: dict, write: bytes) -> None:
        path = str(self.root / rel)
        call = {"session_id": "sess-prop", "transcript_path": "/tmp/t.jsonl", "cwd": str(self.root),
                "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
                "tool_input": {"file_path": path, **tool_input}, "tool_use_id": f"toolu_{self.step:04d}"}
        err = io.StringIO()
        assert run_hook(self.root, "pre-write", io.StringIO(json.dumps(call)), io.StringIO(), err) == 0, \
            err.getvalue()
        (self.root / rel).write_bytes(write)  # what Claude Code does between the two hooks
        post = {**call, "hook_event_name": "PostToolUse", "tool_response": {"filePath": path, **response}}
        err = io.StringIO()
        assert run_hook(self.root, "post-write", io.StringIO(json.dumps(post)), io.StringIO(), err) == 0, \
            err.getvalue()

    def rewritten(self, rel: str, slots: list[int]) -> tuple[State, State, bytes]:
        """A new step begins: the file before, after a rewrite of `slots` (or, for a file not
        there, a new one with every line fresh), and the bytes of after."""
        self.begin()
        before = self.state[rel]
        after = self.with_slots(rel, slots) if before is not None else \
            tuple(self.fresh(rel, s) for s in range(SLOTS))
        text = render(rel, after)
        assert text is not None
        return before, after, text

    def agent_write(self, rel: str, slots: list[int]) -> None:
        """Claude Code's Write over the file (or creating it: slots are then every line)."""
        before, after, text = self.rewritten(rel, slots)
        original = render(rel, before)
        self._agent("Write", rel, {"content": text.decode()},
                    {"type": "update" if original is not None else "create", "content": text.decode(),
                     "structuredPatch": [], "originalFile": None if original is None else original.decode()},
                    text)
        self.state[rel] = after
        self.catch_up("agent", {rel: Change(before, after, frozenset(slots) if before is not None else None)})

    def agent_edit(self, rel: str, slot: int) -> None:
        """Claude Code's Edit of one line: old_string is that line (unique in the file)."""
        self.begin()
        before, after = self.state[rel], self.with_slots(rel, [slot])
        assert isinstance(before, tuple)
        text, original = render(rel, after), render(rel, before)
        assert text is not None and original is not None
        old, new = before[slot], after[slot]
        self._agent("Edit", rel, {"old_string": old, "new_string": new, "replace_all": False},
                    {"oldString": old, "newString": new, "originalFile": original.decode(),
                     "structuredPatch": [], "userModified": False, "replaceAll": False}, text)
        self.state[rel] = after
        self.catch_up("agent", {rel: Change(before, after, frozenset([slot]))})

    def outside_write(self, rel: str, slots: list[int]) -> None:
        """Another program writes the file in place (or creates it)."""
        before, after, text = self.rewritten(rel, slots)
        (self.root / rel).write_bytes(text)
        self.state[rel] = after
        self.catch_up("outside", {rel: Change(before, after, frozenset(slots) if before is not None else None)})

    def truncate_then_write(self, rel: str, slots: list[int], stalled: bool) -> None:
        """Another program truncates the file, then writes it; `stalled`: a recording looks in
        between, and keeps the empty file as an entry of its own."""
        self.begin()
        before, after = self.state[rel], self.with_slots(rel, slots)
        text = render(rel, after)
        assert text is not None
        with open(self.root / rel, "wb") as fh:
            fh.flush()
            if stalled:
                self.state[rel] = EMPTY
                self.catch_up("outside", {rel: Change(before, EMPTY, None)})
                self.before_head = self.store.head()
            fh.write(text)
        self.state[rel] = after
        if stalled:
            self.catch_up("outside", {rel: Change(EMPTY, after, None)})
        else:
            self.catch_up("outside", {rel: Change(before, after, frozenset(slots))})

    def delete(self, rel: str) -> None:
        self.begin()
        before = self.state[rel]
        (self.root / rel).unlink()
        self.state[rel] = None
        self.catch_up("outside", {rel: Change(before, None, None)})

    def rename(self, rel: str, to: str) -> None:
        self.begin()
        moved = self.state[rel]
        (self.root / rel).rename(self.root / to)
        self.state[rel], self.state[to] = None, moved
        self.catch_up("outside", {rel: Change(moved, None, None), to: Change(None, moved, None)})


# -- the oracle ---------------------------------------------------------------------------------

def replayed_without(first: dict[str, State], entries: list[Recorded], k: int) -> dict[str, State]:
    """Every entry's change applied in order except entry k's: a line change sets its lines on
    the file as the replay has it, a whole-file change sets the file."""
    state = dict(first)
    for n, entry in enumerate(entries):
        if n == k:
            continue
        for rel, change in entry.changes.items():
            current = state[rel]
            if change.slots is not None and isinstance(current, tuple) and isinstance(change.after, tuple):
                state[rel] = tuple(change.after[s] if s in change.slots else current[s] for s in range(SLOTS))
            else:
                state[rel] = change.after
    return state


def three_way(rel: str, change: Change, now: State) -> State:
    """What a three-way undo of `change` answers when it does not refuse: the file now with the
    entry's lines put back (defined for line changes on a file that is still lines), or the file
    as before the entry where it is now as the entry left it."""
    if now in (change.after, change.before):
        return change.before
    assert change.slots is not None and isinstance(now, tuple) and isinstance(change.before, tuple)
    return tuple(change.before[s] if s in change.slots else now[s] for s in range(SLOTS))


def expectation(entries: list[Recorded], k: int, final: dict[str, State]) -> tuple[str, dict[str, str]]:
    """("apply" | "refuse" | "open", per file why). "refuse" is a line a later entry changed too
    (or a whole file removed or rewritten over a line, or created and changed since); "open" is
    one of the two cases the docstring names; "empty" and "removes" are pmem's own refusals: the
    replay would leave a memory file empty, or remove a file (pmem removes only by archiving)."""
    verdicts: dict[str, str] = {}
    for rel, change in entries[k].changes.items():
        later = [e.changes[rel] for e in entries[k + 1:] if rel in e.changes]
        if change.slots is not None:
            if any(c.slots is not None and c.slots & change.slots for c in later):
                verdicts[rel] = "refuse"
            elif any(c.slots is None for c in later):
                # A removal after the entry refuses; a rewrite through an empty file is open.
                verdicts[rel] = "refuse" if final[rel] is None else "open"
            elif any(c.slots is not None and any(abs(a - b) == 1 for a in c.slots for b in change.slots)
                     for c in later):
                verdicts[rel] = "open"
            else:
                verdicts[rel] = "apply"
        elif not later:
            if change.before is None:
                verdicts[rel] = "removes"
            elif change.before == EMPTY:
                verdicts[rel] = "empty"
            else:
                verdicts[rel] = "apply"
        elif change.before is None and final[rel] is None:
            verdicts[rel] = "apply"  # created, removed since: nothing left to take back
        elif final[rel] in (change.after, change.before):
            verdicts[rel] = "open"  # changed since and back to what the entry left, or to before it
        else:
            verdicts[rel] = "refuse"
    for index in entries[k].indexes:
        # An archive's route and record sit among the later archives' lines: whether a three-way
        # merge calls them apart or adjacent is git's to say, so either answer is right here.
        if any(index in e.indexes for e in entries[k + 1:]):
            verdicts[index] = "open"
    if "refuse" in verdicts.values():
        return "refuse", verdicts
    if "open" in verdicts.values():
        return "open", verdicts
    if "removes" in verdicts.values() or "empty" in verdicts.values():
        return "refuse-own", verdicts
    return "apply", verdicts


def digest(top: Path) -> dict[str, str]:
    return {p.relative_to(top).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(top.rglob("*")) if p.is_file()}


def last_json(text: str) -> dict:
    decoder, at, found = json.JSONDecoder(), 0, {}
    while at < len(text):
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        found, at = decoder.raw_decode(text, at)
    return found


def named_lines(message: str) -> list[range]:
    return [range(int(a), int(b or a) + 1) for a, b in re.findall(r"lines? (\d+)(?:–(\d+))?", message)]


# -- the property -------------------------------------------------------------------------------

STEP_KINDS = ("pmem save", "pmem archive", "agent write", "agent edit", "outside write", "truncate then write",
              "stalled truncate then write", "delete", "rename", "create")


def run_step(seq: Sequence, data: st.DataObject) -> None:
    present = [rel for rel in FILES if isinstance(seq.state[rel], tuple)]
    absent = [rel for rel in FILES if seq.state[rel] is None]
    kinds = [k for k in STEP_KINDS if (k in ("rename", "create") and absent and (present or k == "create"))
             or (k not in ("rename", "create") and present)]
    if "pmem archive" in kinds and not [rel for rel in present if rel not in seq.archived]:
        kinds.remove("pmem archive")
    kind = data.draw(st.sampled_from(kinds), label="step")
    event(f"step: {kind}")
    slots = st.lists(st.integers(0, SLOTS - 1), min_size=1, max_size=2, unique=True)
    if kind == "create":
        rel = data.draw(st.sampled_from(absent), label="file")
        if data.draw(st.booleans(), label="by the agent"):
            seq.agent_write(rel, [])
        else:
            seq.outside_write(rel, [])
        return
    rel = data.draw(st.sampled_from(present), label="file")
    if kind == "pmem save":
        seq.pmem_save(rel, data.draw(slots, label="slots"))
    elif kind == "pmem archive":
        seq.pmem_archive(data.draw(st.sampled_from([r for r in present if r not in seq.archived]), label="file"))
    elif kind == "agent write":
        seq.agent_write(rel, data.draw(slots, label="slots"))
    elif kind == "agent edit":
        seq.agent_edit(rel, data.draw(st.integers(0, SLOTS - 1), label="slot"))
    elif kind == "outside write":
        seq.outside_write(rel, data.draw(slots, label="slots"))
    elif kind in ("truncate then write", "stalled truncate then write"):
        seq.truncate_then_write(rel, data.draw(slots, label="slots"), stalled=kind.startswith("stalled"))
    elif kind == "delete":
        seq.delete(rel)
    else:
        seq.rename(rel, data.draw(st.sampled_from(absent), label="to"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_undo_of_any_entry_of_a_mixed_sequence_equals_the_replay_without_it_or_refuses(
        data: st.DataObject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
        seq = Sequence(Path(folder), monkeypatch)
        first = dict(seq.state)
        for _ in range(data.draw(st.integers(1, 7), label="steps")):
            run_step(seq, data)
        k = data.draw(st.integers(0, len(seq.entries) - 1), label="undone")
        undone = seq.entries[k]
        verdict, why = expectation(seq.entries, k, seq.state)
        event(f"expected: {verdict}")
        before = digest(seq.root)
        out, err = io.StringIO(), io.StringIO()
        code = run_undo(seq.root, undone.commit[:12], [], "json", True, None, io.StringIO(), out, err, [])
        answer = last_json(out.getvalue())
        after = {rel: (seq.root / rel).read_bytes() if (seq.root / rel).exists() else None for rel in FILES}
        event(f"undo: {'applied' if code == 0 else 'refused'}")
        if code == 0:
            assert verdict in ("apply", "open"), (verdict, why, answer)
            if verdict == "apply":
                expected = replayed_without(first, seq.entries, k)
            else:
                expected = dict(seq.state)
                for rel, change in undone.changes.items():
                    expected[rel] = three_way(rel, change, seq.state[rel]) if why[rel] == "open" else \
                        replayed_without(first, seq.entries, k)[rel]
            assert after == {rel: render(rel, expected[rel]) for rel in FILES}, (why, answer)
        else:
            assert verdict in ("refuse", "open", "refuse-own"), (verdict, why, answer, err.getvalue())
            assert digest(seq.root) == before, "a refused undo changed the root"
            message = answer["error"]["message"]
            named = [rel for rel, v in why.items() if v != "apply"]
            assert any(f"`{rel}`" in message for rel in named), (message, why)
            for rel, v in why.items():
                if rel not in undone.changes:
                    continue  # an index: named in the message, its lines not modelled
                change = undone.changes[rel]
                if v == "refuse" and change.slots is not None and isinstance(seq.state[rel], tuple):
                    # a line changed by the entry and again later: named, as a line of the file now
                    assert answer["error"]["kind"] == "conflict", answer
                    clashing = {s + HEADER + 1 for e in seq.entries[k + 1:] if rel in e.changes
                                and e.changes[rel].slots for s in e.changes[rel].slots & change.slots}
                    spans = named_lines(message)
                    assert any(line in span for line in clashing for span in spans), (message, clashing)
        # Nothing is lost: every version any entry recorded is still read back from the store.
        store = caught_up_store(seq.root)
        assert store.text_at(seq.first or "", FILES[0]) == render(FILES[0], first[FILES[0]])
        for entry in seq.entries:
            for rel in FILES:
                assert store.text_at(entry.commit, rel) == render(rel, entry.states[rel]), (entry.writer, rel)
        assert store.git.ok("merge-base", "--is-ancestor", seq.entries[-1].commit, store.head() or "")


def test_undo_that_would_empty_a_file_refuses_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The case the property found: undoing the write that followed a stalled truncate would
    leave the file empty, which a save refuses; the refusal names the file (it named none)."""
    seq = Sequence(tmp_path, monkeypatch)
    seq.truncate_then_write("notes/a.md", [0], stalled=True)
    before = digest(seq.root)
    out = io.StringIO()
    code = run_undo(seq.root, seq.entries[-1].commit[:12], [], "json", True, None, io.StringIO(), out,
                    io.StringIO(), [])
    error = last_json(out.getvalue())["error"]
    assert code != 0 and "`notes/a.md`" in error["message"] and "empty" in error["message"], error
    assert digest(seq.root) == before
