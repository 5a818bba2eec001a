"""`pmem undo ENTRY` as one lifecycle plan (op `undo`): what a history entry changed, taken back
out of the root as it is now, through the one door like every other write (docs/design.md §11).

It is what makes undoing pmem's own lifecycle writes possible: an archive, a delete, a recover
moved a file and rewrote the indexes, which a `save` cannot do. So the plan is made of the
lifecycle's own steps:

- a file the entry moved (removed at A, added at B with the same bytes: an archive, a delete, a
  recover) is moved back from B to A, only while B still holds exactly what the entry left there
  and A is free;
- every other file the entry changed — the two indexes, `.pmem.toml`, memory files — is merged
  three-way (`history.merge.revert_file`: the entry's change taken out, later changes kept) and
  written compare-and-swap (`ReplaceText` / `CreateText`: only on the very text the preview
  was made on), so the route line comes back exactly and the record goes.

A conflict anywhere refuses the whole plan before any step, naming the file and the lines.
The request carries the entry's full commit in `path` and the chosen paths, one a line, in
`content` (so the token binds them like a save's text)."""

from __future__ import annotations

from ..archive_index import parse_archive_index, record_location
from ..history.git import HistoryOff
from ..history.merge import revert_file
from ..history.recording import history_disabled
from ..history.store import HistoryStore, open_store
from ..memory_file import MemoryFile
from ..names import shown
from ..rules.secrets import check_secrets
from ..zones import ARCHIVE_INDEX, Zone, is_markdown, zone_of
from .changes import CreateText, ReplaceText
from .operations import LifecycleContext, usable_settings
from .plan import MakeDir, Move, Plan, Step, WriteText
from .safety import SECRET, STATE, Refusal, resolve_inside
from .save import diff_lines

UNDO = "undo"
HISTORY_OFF = "history-off"
CONFLICT = "conflict"


def _store(ctx: LifecycleContext) -> HistoryStore:
    if history_disabled():
        raise Refusal(HISTORY_OFF, "history is off: PMEM_HISTORY is set to off")
    try:
        return open_store(ctx.root, create=False)
    except HistoryOff as exc:
        raise Refusal(HISTORY_OFF, str(exc)) from None


def entry_moves(before: dict[str, str], after: dict[str, str]) -> list[tuple[str, str]]:
    """(from, to) of each file the entry moved: gone from one path, the same blob added at
    another. Each blob pairs once, so two identical files are never taken for one move."""
    removed = {blob_path: blob for blob_path, blob in before.items() if blob_path not in after}
    added = [(p, b) for p, b in after.items() if p not in before]
    moves = []
    for to, blob in sorted(added):
        source = next((p for p, b in sorted(removed.items()) if b == blob), None)
        if source is not None:
            del removed[source]
            moves.append((source, to))
    return moves


def _read_bytes(ctx: LifecycleContext, rel: str) -> bytes | None:
    """What `rel` holds now, read through the plan's reader (the token binds what it reads)."""
    text = ctx.read_text(rel)
    return None if text is None else text.encode("utf-8", "surrogateescape")


def plan_undo(ctx: LifecycleContext, entry: object, chosen: object = None) -> Plan:
    if not isinstance(entry, str) or not entry:
        raise Refusal(STATE, "undo needs the entry to undo (see `pmem history`)")
    store = _store(ctx)
    try:
        commit = store.resolve(entry)
    except (ValueError, HistoryOff) as exc:
        raise Refusal("usage", str(exc)) from None
    parent = store.parent_of(commit)
    after = store.blobs_of(commit)
    before = store.blobs_of(parent) if parent else {}
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    wanted = [p for p in (chosen.split("\n") if isinstance(chosen, str) and chosen else []) if p]
    unknown = [p for p in wanted if p not in changed]
    if unknown:
        raise Refusal("usage", f"entry {commit[:12]} did not change {', '.join(f'`{p}`' for p in unknown)}")
    moves = [(a, b) for a, b in entry_moves(before, after) if not wanted or a in wanted or b in wanted]
    moved = {p for pair in moves for p in pair}
    hidden = [p for p in changed if zone_of(p) is Zone.HIDDEN]
    if hidden:
        raise Refusal(STATE, f"undo does not write hidden paths ({', '.join(hidden)}); nothing was changed")

    steps: list[Step] = []
    lines = [f"Undo entry {commit[:12]}"]
    conflicts: list[str] = []
    for source, destination in moves:
        now = _read_bytes(ctx, destination)
        if now is None:
            conflicts.append(f"`{destination}`: it is gone since that entry")
        elif now != store.text_at(commit, destination):
            conflicts.append(f"`{destination}`: it was changed since that entry, so it is not moved back")
        elif ctx.read_text(source) is not None:
            conflicts.append(f"`{source}`: another file is there now")
        else:
            steps.append(Move(destination, source))
            lines.append(f"  move: {shown(destination)} → {shown(source)}")
    for rel in (p for p in (wanted or changed) if p not in moved):
        current_text = ctx.read_text(rel)
        current = None if current_text is None else current_text.encode("utf-8", "surrogateescape")
        reverted = revert_file(store.git, store.dir, rel, current, store.text_at(commit, rel),
                               store.text_at(parent, rel) if parent else None,
                               lines_independent=zone_of(rel) in (Zone.INDEX, Zone.ARCHIVE_INDEX))
        if reverted.conflict:
            conflicts.append(f"`{rel}`: {reverted.conflict}")
            continue
        if reverted.text is None:
            if current is not None:
                conflicts.append(f"`{rel}`: the entry created it, and pmem removes a file only by archiving "
                                 "it (`pmem archive PATH`)")
            continue
        text = reverted.text.decode("utf-8", "replace")
        if text == current_text:
            continue
        change = CreateText(text) if current_text is None else ReplaceText(current_text, text)
        steps.append(WriteText(rel, current_text, text, change))
        lines.append(f"  {shown(rel)}: {'create' if current_text is None else 'put back'}")
        lines += [f"    {line}" for line in diff_lines(rel, current_text or "", text)[2:]]
    if conflicts:
        raise Refusal(CONFLICT, f"cannot undo entry {commit[:12]}: {'; '.join(conflicts)}; nothing was changed")
    if not steps:
        return Plan(UNDO, None, (), f"Undo entry {commit[:12]}: nothing to change (the files are as before it).",
                    "Undo", "nothing to undo")
    # The moves before the index writes, as a recover does: a crash in between leaves the file
    # where it was or where it was before, and the indexes in a state `pmem check` reports.
    steps.sort(key=lambda s: 0 if isinstance(s, Move) else 1)
    return Plan(UNDO, None, tuple(steps), "\n".join(lines), "Undo", f"undid entry {commit[:12]}",
                {"entry": commit})


RESTORABLE_BY_PLAN = ("_index.md", "_archive/_index.md", ".pmem.toml")


def restorable_by_plan(rel: str) -> bool:
    """Whether `pmem restore` of `rel` is this plan (a save cannot write it): the indexes,
    `.pmem.toml`, and an archived file (`_archive/…`, not the trash)."""
    return rel in RESTORABLE_BY_PLAN or (zone_of(rel) is Zone.ARCHIVE and is_markdown(rel))


def _archived_checks(ctx: LifecycleContext, rel: str, text: str, commit: str) -> None:
    """An archived file comes back only where the archive index says a file is archived now
    (else it would be an archived file with no record: PM3xx), and without a likely secret (as
    every saved text; docs/decisions.md "Restoring an archived file")."""
    records = parse_archive_index(MemoryFile(ctx.read_text(ARCHIVE_INDEX) or ""))
    if not any(record_location(record) == rel for record in records):
        raise Refusal(STATE, f"no record in `{ARCHIVE_INDEX}` says `{shown(rel)}` is archived now, so restoring it "
                             "alone would leave an archived file without its record. If pmem recovered or deleted "
                             "it, undo that entry (`pmem undo ENTRY`); if the record was lost, restore the archive "
                             f"index first (`pmem restore {ARCHIVE_INDEX} --at {commit[:12]}`); nothing was changed")
    settings = ctx.settings or usable_settings(ctx.root)
    secrets = check_secrets(rel, Zone.ARCHIVE, MemoryFile(text), settings)
    if secrets:
        first = secrets[0]
        more = f" (and {len(secrets) - 1} more)" if len(secrets) > 1 else ""
        raise Refusal(SECRET, f"`{shown(rel)}` as at entry {commit[:12]}, line {first.line + 1}: {first.message}"
                              f"{more}; pmem does not write it back; nothing was changed")


def plan_restore(ctx: LifecycleContext, entry: object, rel: object) -> Plan:
    """`pmem restore PATH --at ENTRY` of what a save cannot write — an index, `.pmem.toml`, an
    archived file: the whole text as it was at ENTRY, written compare-and-swap on the text the
    preview showed (the preview's diff says what a newer text loses)."""
    if not isinstance(entry, str) or not isinstance(rel, str) or not restorable_by_plan(rel):
        raise Refusal(STATE, "restore by plan is for `_index.md`, `_archive/_index.md`, `.pmem.toml` and the "
                             "archived files in `_archive/`")
    resolve_inside(ctx.root, rel)
    store = _store(ctx)
    try:
        commit = store.resolve(entry)
    except (ValueError, HistoryOff) as exc:
        raise Refusal("usage", str(exc)) from None
    data = store.text_at(commit, rel)
    if data is None:
        raise Refusal("usage", f"`{rel}` was not in the root at entry {commit[:12]}")
    archived = zone_of(rel) is Zone.ARCHIVE
    try:
        text = data.decode("utf-8") if archived else data.decode("utf-8", "replace")
    except UnicodeDecodeError:
        raise Refusal(STATE, f"`{shown(rel)}` at entry {commit[:12]} is not UTF-8 text; nothing was changed") from None
    current = ctx.read_text(rel)
    if text == current:
        return Plan("restore", rel, (), f"Restore {rel}: it is as at entry {commit[:12]} already.", "Restore",
                    "nothing to restore")
    steps: list[Step] = []
    if archived:
        _archived_checks(ctx, rel, text, commit)
        parent = rel.rpartition("/")[0]
        if current is None and not (ctx.root / parent).is_dir():
            steps.append(MakeDir(parent))  # the move out of `_archive/` pruned its emptied folder
    change = CreateText(text) if current is None else ReplaceText(current, text)
    steps.append(WriteText(rel, current, text, change))
    lines = [f"Restore {shown(rel)} as at entry {commit[:12]}"
             + (" (an archived file: its record in `_archive/_index.md` is kept as it is)" if archived else "")]
    lines += [f"    {line}" for line in diff_lines(rel, current or "", text)[2:]]
    return Plan("restore", rel, tuple(steps), "\n".join(lines), "Restore",
                f"restored {shown(rel)} as at entry {commit[:12]}", {"entry": commit})
