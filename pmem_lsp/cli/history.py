"""`pmem history`, `pmem diff`, `pmem restore`, `pmem undo`, `pmem review` (docs/design.md §11): the root's
history, read from its store (engine/history/), and changes put back as ordinary writes.

Restore and undo write nothing themselves: each file they bring back is a `save` of its old
text through the one door (engine/lifecycle/execute.py), with the preview, `--yes`, `--token`
and exit codes of every write (§6.1), and every check a save has (a secret is refused, a route
is added to a file that needs one)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

from ..engine.history import review
from ..engine.history.forget import forget_path
from ..engine.history.git import HistoryOff
from ..engine.history.merge import Reverted, revert_file
from ..engine.history.recording import caught_up_store
from ..engine.history.store import HistoryStore
from ..engine.lifecycle.execute import Tokened, Unattended, execute
from ..engine.lifecycle.fs_applier import ApplyError
from ..engine.lifecycle.operations import context
from ..engine.lifecycle.preview import Preview, Request, applied_data, preview, preview_data
from ..engine.lifecycle.safety import Refusal, validate_relative
from ..engine.lifecycle.undo import restorable_by_plan
from ..engine.names import clean_data
from ..engine.secrets import mask_text
from ..engine.zones import Zone, zone_of
from . import exit_codes
from .terminal import lines, one_line
from .writes import _confirm, _tty, run_write

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's tree with nothing in it
UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class UsageError(Exception):
    """Bad input (an unknown entry, a path outside the root): exit 2, nothing changed."""


def _emit(fmt: str, out: TextIO, data: dict[str, Any], text: str) -> None:
    if fmt == "json":
        out.write(json.dumps(clean_data(data), indent=2, ensure_ascii=False) + "\n")
    elif text:
        out.write(text if text.endswith("\n") else text + "\n")


def _fail(fmt: str, out: TextIO, err: TextIO, kind: str, message: str) -> int:
    message = mask_text(message)
    if fmt == "json":
        _emit(fmt, out, {"applied": False, "error": {"kind": kind, "message": message}}, "")
    else:
        err.write(f"pmem: {one_line(message)}\n")
    return exit_codes.ERROR


def parse_when(value: str) -> dt.datetime:
    """`2h`, `30m`, `7d`, `1w` ago, or an ISO date or time (local time when it names no zone)."""
    found = re.fullmatch(r"(\d+)\s*([mhdw])", value.strip())
    now = dt.datetime.now(dt.timezone.utc).astimezone()
    if found:
        return now - dt.timedelta(seconds=int(found.group(1)) * UNITS[found.group(2)])
    try:
        when = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(f"`{value}` is neither an entry id nor a time (`2h`, `3d`, `2026-01-31`, "
                         "`2026-01-31T09:00`)") from None
    return when if when.tzinfo else when.astimezone()


def root_relative(root: Path, given: str) -> str:
    """PATH as given on the command line (relative to the root, or absolute inside it)."""
    if os.path.isabs(given):
        real_root = os.path.realpath(root)
        full = os.path.realpath(given) if os.path.lexists(given) else os.path.normpath(given)
        if not (full == real_root or full.startswith(real_root + os.sep)):
            raise UsageError(f"`{given}` is outside the memory root {root}")
        given = os.path.relpath(full, real_root).replace(os.sep, "/")
    try:
        return validate_relative(given)
    except Refusal as exc:
        raise UsageError(exc.message) from None


def _store(root: Path) -> HistoryStore:
    """The root's store, after recording what changed since its last entry (writer `outside`)."""
    return caught_up_store(root)


# A restore or an undo of a memory file is a save, and a save writes neither the indexes nor
# `_archive/`: those are written by a plan (undo's, and restore's for the indexes, `.pmem.toml`
# and archived files: `restorable_by_plan`). What is left here is refused in history's words.
UNSAVABLE = (Zone.INDEX, Zone.ARCHIVE_INDEX, Zone.ARCHIVE, Zone.TRASH, Zone.HIDDEN)


def _refuse_unsavable(rels: list[str], what: str) -> None:
    blocked = [rel for rel in rels if zone_of(rel) in UNSAVABLE or rel == ".pmem.toml"]
    if blocked:
        named = ", ".join(f"`{rel}`" for rel in blocked)
        raise UsageError(f"{what} cannot write {named}: the trash and hidden files are pmem's own (a trashed file "
                         "comes back with `pmem recover PATH`), and only Markdown files are memory; see the old "
                         "text with `pmem diff`; nothing was changed")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


# -- pmem history -----------------------------------------------------------------------------

def run_history(root: Path, path: str | None, since: str | None, fmt: str, out: TextIO, err: TextIO) -> int:
    try:
        rel = root_relative(root, path) if path else None
        when = parse_when(since) if since else None
        store = _store(root)
        entries = store.entries(rel, when)
    except HistoryOff as exc:
        return _fail(fmt, out, err, "history-off", str(exc))
    except UsageError as exc:
        return _fail(fmt, out, err, "usage", str(exc))
    text = []
    for entry in entries:
        who = entry.writer.kind + (f" ({entry.writer.detail})" if entry.writer.detail else "")
        text.append(f"{entry.id}  {entry.time.isoformat(timespec='seconds')}  {who}: {entry.title}")
        text += [f"    {change:8} {name}" for name, change in entry.files]
    if not entries:
        text.append("No entries" + (" for that path" if rel else "") + ".")
    _emit(fmt, out, {"root": str(root), "entries": [e.data() for e in entries]}, mask_text("\n".join(text)))
    return exit_codes.OK


# -- pmem diff --------------------------------------------------------------------------------

def _base_for(store: HistoryStore, since: str) -> str:
    """The entry `since` names, or the state at the time it names (the newest entry before it)."""
    try:
        return store.resolve(since)
    except ValueError as not_an_entry:
        if re.fullmatch(r"[0-9a-fA-F]{7,40}", since):
            raise UsageError(str(not_an_entry)) from None
    when = parse_when(since)
    older = [e for e in store.entries() if e.time <= when]
    return older[0].commit if older else EMPTY_TREE


def run_diff(root: Path, entry: str | None, path: str | None, since: str | None, fmt: str,
             out: TextIO, err: TextIO, unreviewed: bool = False) -> int:
    try:
        if sum((entry is not None and since is None and not unreviewed, since is not None, unreviewed)) != 1:
            raise UsageError("give an ENTRY, or --since ENTRY|WHEN, or --unreviewed")
        rel = root_relative(root, path) if path else None
        store = _store(root)
        if unreviewed:
            if entry is not None:
                rel = root_relative(root, entry)  # `pmem diff --unreviewed PATH`
            base, head = review.reviewed_upto(store) or EMPTY_TREE, store.head() or EMPTY_TREE
        elif since is not None:
            if entry is not None:
                rel = root_relative(root, entry)  # `pmem diff --since X PATH`
            base, head = _base_for(store, since), store.head() or EMPTY_TREE
        else:
            assert entry is not None
            head = store.resolve(entry)
            base = store.parent_of(head) or EMPTY_TREE
    except HistoryOff as exc:
        return _fail(fmt, out, err, "history-off", str(exc))
    except (UsageError, ValueError) as exc:
        return _fail(fmt, out, err, "usage", str(exc))
    args = ["diff", "--no-color", "--no-ext-diff", "--no-renames", base, head]
    diff = mask_text(_decode(store.git.run(*args, *(["--", rel] if rel else []))))
    _emit(fmt, out, {"from": base[:12], "to": head[:12], "diff": diff}, diff or "No changes.")
    return exit_codes.OK


# -- pmem restore -----------------------------------------------------------------------------

def restore_request(root: Path, rel: str, at: str) -> Request:
    """The write `pmem restore REL --at AT` is (and `memory_preview`'s restore): a `restore` plan
    for what a save cannot write (the indexes, `.pmem.toml`, an archived file), else a `save` of
    the old text. Raises UsageError, HistoryOff, ValueError (an unknown entry)."""
    if restorable_by_plan(rel):
        # Written compare-and-swap as the whole old text (engine/lifecycle/undo.plan_restore).
        commit = _store(root).resolve(at)
        return Request("restore", commit, rel, rel)
    _refuse_unsavable([rel], "restore")
    store = _store(root)
    commit = store.resolve(at)
    data = store.text_at(commit, rel)
    if data is None:
        raise UsageError(f"`{rel}` was not in the root at entry {commit[:12]}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"`{rel}` at that entry is not UTF-8 text; it cannot be saved back") from None
    return Request("save", rel, f"restore as at {commit[:12]}", text, route=True)


def run_restore(root: Path, path: str, at: str, fmt: str, yes: bool, token: str | None,
                out: TextIO, err: TextIO, argv: list[str] | None) -> int:
    try:
        request = restore_request(root, root_relative(root, path), at)
    except HistoryOff as exc:
        return _fail(fmt, out, err, "history-off", str(exc))
    except (UsageError, ValueError) as exc:
        return _fail(fmt, out, err, "usage", str(exc))
    return run_write(root, request, fmt=fmt, yes=yes, token=token, out=out, err=err, argv=argv)


# -- pmem undo --------------------------------------------------------------------------------

def _reverted(root: Path, store: HistoryStore, commit: str, wanted: list[str]) -> list[Reverted]:
    parent = store.parent_of(commit)
    entry = next(e for e in store.entries(after=parent) if e.commit == commit) if parent else \
        store.entries()[-1]
    changed = [name for name, _ in entry.files]
    for rel in wanted:
        if rel not in changed:
            raise UsageError(f"entry {commit[:12]} did not change `{rel}`")
    chosen = wanted or changed
    try:
        _refuse_unsavable(chosen, "undo")
    except UsageError as exc:
        others = [rel for rel in chosen if zone_of(rel) not in UNSAVABLE and rel != ".pmem.toml"]
        hint = f" (undo only the others: pmem undo {commit[:12]} {' '.join(others)})" if others else ""
        raise UsageError(f"{exc}{hint}") from None
    results = []
    for rel in chosen:
        try:
            current: bytes | None = (root / rel).read_bytes()
        except FileNotFoundError:
            current = None
        before = store.text_at(parent, rel) if parent else None
        results.append(revert_file(store.git, store.dir, rel, current, store.text_at(commit, rel), before))
    return results


def _touches_lifecycle_files(store: HistoryStore, commit: str, wanted: list[str]) -> bool:
    """Whether the undo writes a path only the lifecycle writes (or the entry moved a file)."""
    parent = store.parent_of(commit)
    changed = wanted or [name for name, _ in _entry_files(store, commit, parent)]
    return any(zone_of(rel) in UNSAVABLE or rel == ".pmem.toml" for rel in changed)


def _entry_files(store: HistoryStore, commit: str, parent: str | None) -> list[tuple[str, str]]:
    entry = next(e for e in store.entries(after=parent) if e.commit == commit) if parent else \
        store.entries()[-1]
    return entry.files


def undo_request(root: Path, entry: str, wanted: list[str]) -> Request:
    """The one lifecycle plan that undoes `entry` (only `wanted` of its files, when given):
    moves back, indexes merged three-way, every file written compare-and-swap
    (engine/lifecycle/undo.plan_undo). Raises UsageError, HistoryOff, ValueError."""
    commit = _store(root).resolve(entry)
    return Request("undo", commit, None, "\n".join(wanted) or None)  # history: "undo <entry>"


def run_undo(root: Path, entry: str, paths: list[str], fmt: str, yes: bool, token: str | None,
             stdin: TextIO, out: TextIO, err: TextIO, argv: list[str] | None) -> int:
    try:
        wanted = [root_relative(root, p) for p in paths]
        store = _store(root)
        commit = store.resolve(entry)
        if _touches_lifecycle_files(store, commit, wanted):
            # The indexes, `_archive/` or `.pmem.toml`: one lifecycle plan (moves back, indexes
            # merged three-way and written compare-and-swap), which a save cannot be.
            return run_write(root, undo_request(root, commit, wanted), fmt=fmt, yes=yes, token=token, stdin=stdin,
                             out=out, err=err, argv=argv)
        results = _reverted(root, store, commit, wanted)
    except HistoryOff as exc:
        return _fail(fmt, out, err, "history-off", str(exc))
    except (UsageError, ValueError) as exc:
        return _fail(fmt, out, err, "usage", str(exc))
    conflicts = [r for r in results if r.conflict]
    if conflicts:
        named = "; ".join(f"`{r.rel}`: {r.conflict}" for r in conflicts)
        return _fail(fmt, out, err, "conflict", f"cannot undo entry {commit[:12]}: {named}; nothing was changed")
    removals = [r.rel for r in results if r.text is None and (root / r.rel).exists()]
    if removals:
        return _fail(fmt, out, err, "refused", f"undoing entry {commit[:12]} would remove "
                     f"{', '.join(f'`{r}`' for r in removals)}, which pmem only does by archiving it "
                     "(`pmem archive PATH`); nothing was changed")
    requests = []
    for r in results:
        if r.text is None:
            continue
        current = (root / r.rel).read_bytes() if (root / r.rel).exists() else None
        if current == r.text:
            continue
        try:
            text = r.text.decode("utf-8")
        except UnicodeDecodeError:
            return _fail(fmt, out, err, "refused", f"`{r.rel}` is not UTF-8 text; nothing was changed")
        requests.append(Request("save", r.rel, f"undo {commit[:12]}", text, route=False))  # only what the entry changed
    if not requests:
        _emit(fmt, out, {"applied": False, "operation": "undo", "previews": [], "token": None},
              f"Undo {commit[:12]}: nothing to change (the files are as before that entry).")
        return exit_codes.OK
    return run_saves(root, f"Undo entry {commit[:12]}", requests, fmt, yes, token, stdin, out, err, argv)


def _combined(previews: list[Preview]) -> str:
    """One token for several saves: it changes when any of theirs does."""
    return hashlib.sha256("\n".join(p.token or "" for p in previews).encode()).hexdigest()[:32]


def run_saves(root: Path, action: str, requests: list[Request], fmt: str, yes: bool, token: str | None,
              stdin: TextIO, out: TextIO, err: TextIO, argv: list[str] | None) -> int:
    """Several saves previewed together and applied one by one through the one door (each is
    checked again under the lock; `--token` applies only when every preview still holds)."""
    previews = []
    for request in requests:
        try:
            previews.append(preview(context(root), request, exact=True))
        except Refusal as exc:  # a save's refusal names no file: say which of the undo's it is
            return _fail(fmt, out, err, exc.rule, f"`{request.path}`: {exc.message}; nothing was changed")
    combined = _combined(previews)
    if token is not None and token != combined:
        return _fail(fmt, out, err, "stale-preview", "this token is not the current preview of this undo: the "
                     "files changed since; nothing was written — preview again")
    if token is None:
        if fmt == "json":
            _emit(fmt, out, {"operation": "undo", "previews": [preview_data(p) for p in previews],
                             "token": None, "applied": False} | {"token": combined}, "")
        else:
            out.write(f"{action}\n" + "\n".join(lines(p.plan.preview) for p in previews) + "\n")
        if not yes:
            if fmt == "json" or not _tty(stdin):
                if fmt != "json":
                    args = [a for a in (argv if argv is not None else sys.argv[1:]) if a not in ("-y", "--yes")]
                    err.write("pmem: not confirmed: stdin is not a terminal. Nothing was changed. After the user's "
                              f"yes to this preview, apply exactly it with:\n  "
                              f"{mask_text(shlex.join(['pmem', *args]))} --token {combined}\n")
                return exit_codes.NOT_CONFIRMED
            if not _confirm(action, stdin, out):
                out.write("Cancelled; nothing was changed.\n")
                return exit_codes.OK
    done: list[dict[str, Any]] = []
    for shown in previews:
        confirmation = Tokened(shown.request, shown.token) if token is not None and shown.token \
            else Unattended.after(shown.request, shown.plan)
        try:
            plan, steps = execute(root, confirmation)
        except (ApplyError, Refusal) as exc:
            before = f" (applied before it: {', '.join(d['path'] for d in done)})" if done else ""
            return _fail(fmt, out, err, exc.rule, f"{exc.message}{before}")
        done.append(applied_data(plan, steps))
    _emit(fmt, out, {"applied": True, "operation": "undo", "done": done},
          "\n".join(f"Done: {one_line(d['outcome'])}." for d in done))
    return exit_codes.OK


# -- pmem history --forget --------------------------------------------------------------------

def run_forget(root: Path, path: str, fmt: str, yes: bool, stdin: TextIO, out: TextIO, err: TextIO) -> int:
    try:
        rel = root_relative(root, path)
        store = _store(root)
        held = len(store.entries(rel))
    except HistoryOff as exc:
        return _fail(fmt, out, err, "history-off", str(exc))
    except UsageError as exc:
        return _fail(fmt, out, err, "usage", str(exc))
    action = f"Forget every kept version of {rel} ({held} entr{'y' if held == 1 else 'ies'} changed it)"
    if (root / rel).exists():
        # History records the root as it is: the text still in the file is kept again next time.
        action += (f"; {rel} is still in the root, so its text as it is now will be recorded again at the next "
                   "entry (remove what must not be kept from it first)")
    if not yes:
        if fmt == "json" or not _tty(stdin):
            _emit(fmt, out, {"operation": "forget", "path": rel, "entries": held, "applied": False},
                  f"{action}. The file in the root is not touched.")
            if fmt != "json":
                err.write("pmem: not confirmed: stdin is not a terminal; nothing was changed. Run again with --yes "
                          "after the user's yes.\n")
            return exit_codes.NOT_CONFIRMED
        out.write(f"{action}. The file in the root is not touched.\n")
        if not _confirm("Forget", stdin, out):
            out.write("Cancelled; nothing was changed.\n")
            return exit_codes.OK
    try:
        forget_path(store, rel)
    except HistoryOff as exc:
        return _fail(fmt, out, err, "history-off", str(exc))
    _emit(fmt, out, {"operation": "forget", "path": rel, "entries": held, "applied": True},
          f"Done: no version of {rel} is kept in history any more.")
    return exit_codes.OK


# -- pmem review ------------------------------------------------------------------------------

def run_review(root: Path, accept: list[str] | None, accept_all: bool, fmt: str, out: TextIO, err: TextIO) -> int:
    """What changed since the user last accepted, by writer; `--accept` / `--all` marks it
    reviewed (in the store: the root is not touched)."""
    try:
        store = _store(root)
        if accept_all:
            review.accept_all(store)
        elif accept:
            review.accept(store, [store.resolve(given) for given in accept])
        pending = review.unreviewed(store)
    except HistoryOff as exc:
        return _fail(fmt, out, err, "history-off", str(exc))
    except (UsageError, ValueError) as exc:
        return _fail(fmt, out, err, "usage", str(exc))
    by_writer: dict[str, list[dict[str, Any]]] = {}
    for entry in pending:
        by_writer.setdefault(entry.writer.kind, []).append(entry.data())
    text = []
    if accept_all or accept:
        text.append("Marked reviewed.")
    for kind, items in by_writer.items():
        text.append(f"{kind}: {len(items)} entr{'y' if len(items) == 1 else 'ies'}")
        for item in items:
            files = ", ".join(f"{f['change']} {f['path']}" for f in item["files"])
            text.append(f"  {item['id']}  {item['time']}  {item['title']} — {files}")
    if not pending:
        text.append("Nothing to review: every change is accepted.")
    else:
        text.append("Accept with `pmem review --accept ENTRY…` or `--all`; see one with `pmem diff ENTRY`.")
    _emit(fmt, out, {"unreviewed": [e.data() for e in pending], "by_writer": by_writer},
          mask_text("\n".join(text)))
    return exit_codes.OK
