"""Plans for upgrade, archive, delete, recover, purge and init (docs/design.md §3, spec "Lifecycle").

A plan is computed from the current state and shown to the user. At execution the same
request is planned again on the state of that moment (`replan`), so every check of the
safety contract runs twice, and the plan runs only if it still does what was confirmed.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..archive_index import DIALECTS, PMEM, V010, ArchiveRecord, parse_date, record_location, reference_blocks
from ..index_edit import (
    convert_record,
    find_records,
    format_record,
    newline_of,
    reads_back,
    root_dialect,
    route_for,
    route_neighbours,
    routes_to,
    update_record,
)
from ..index_routes import parse_index
from ..line_index import line_of, split_keepends
from ..memory_file import MemoryFile
from ..names import one_line as one_line_shown
from ..names import shown
from ..root_state import RootState, decode
from ..zones import (
    ARCHIVE_DIR,
    ARCHIVE_INDEX,
    CORE_DIR,
    INDEX,
    TRASH_DIR,
    Zone,
    archive_location,
    enclosing_root,
    inside_root,
    looks_like_root,
    original_of,
    trash_location,
    zone_of,
)
from .changes import (
    INDEX_SKELETON,
    AddRecord,
    AddRoute,
    Change,
    CreateText,
    RemoveRecord,
    RemoveRoutes,
    ReplaceText,
    UpdateRecord,
    apply_change,
    record_fields,
)
from .consequences import links_broken_by, preview_lines
from .plan import MakeDir, Move, Plan, Remove, Step, WriteText
from .safety import (
    CHANGED,
    COLLISION,
    NESTED,
    OUTSIDE_ROOT,
    SETTINGS,
    SOURCE,
    STATE,
    UNREADABLE,
    Refusal,
    refuse_secret,
    require_free,
    require_source,
    require_structure,
    resolve_inside,
    structure_missing,
    validate_relative,
    validate_target,
)

if TYPE_CHECKING:
    from ..settings import Settings

RECOVERY_DAYS = 30
OPERATIONS = ("upgrade", "archive", "delete", "recover", "purge")  # the lifecycle; save and route write too
ARCHIVE_INDEX_SKELETON = "# Archive index\n"
# The two files every agent reads first (PM003 until they exist), as `pmem init` writes them:
# a comment says what belongs there; nothing in them claims a fact about the user.
CORE_SKELETONS = {
    "_core/profile.md": "# Profile\n\n<!-- Who you are, in a few lines every agent reads first: name, role, "
                        "where you work, what you are working on. -->\n",
    "_core/preferences.md": "# Preferences\n\n<!-- How you want agents to work with you: language, tone, "
                            "format, tools, what to ask before doing. -->\n",
}


@dataclass(frozen=True)
class LifecycleContext:
    root: Path
    today: dt.date
    # The text of a root-relative file, None when it does not exist. The server reads open
    # buffers first, so a plan is made against what the user sees.
    read_text: Callable[[str], str | None]
    # The root's files as a session already holds them (the server's scanned state), for what a
    # preview says beyond its own steps (the links a move breaks); None: read them from the disk.
    state: RootState | None = None
    # The `dialect` setting when the caller has the settings (the server's: `.pmem.toml` with the
    # editor's on top); None reads the root's `.pmem.toml`.
    dialect: str | None = None
    # The root's `.pmem.toml` as `make_plan` read it, once per plan; everything the plan reads
    # settings for (its dialect, the scan for the links a move breaks, a save's checks) uses
    # these. None: not read yet.
    settings: Settings | None = None


def disk_reader(root: Path) -> Callable[[str], str | None]:
    def read(rel: str) -> str | None:
        if not inside_root(root, rel):  # a link out of the root is never read (nor shown in a preview)
            raise Refusal(OUTSIDE_ROOT, f"`{rel}` is a symbolic link that leads out of the memory root; "
                                        "pmem does not read or write it")
        try:
            return decode((root / rel).read_bytes())
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise Refusal(UNREADABLE, f"`{rel}` cannot be read ({exc.strerror})") from None

    return read


def context(root: Path, today: dt.date | None = None) -> LifecycleContext:
    return LifecycleContext(root, today or dt.date.today(), disk_reader(root))


def usable_settings(root: Path) -> Settings:
    """The root's settings, or a refusal: a `.pmem.toml` that is there but cannot be used (not
    TOML, a bad value, a folder, unreadable) would otherwise decide a write by the defaults —
    the dialect of the records and routes it writes, what it checks — without the person
    knowing (a review). Nothing changes until it is fixed; `pmem check` says what is wrong."""
    from ..settings_defaults import SettingsError, settings_for

    try:
        return settings_for(root)
    except SettingsError as exc:
        raise Refusal(SETTINGS, f"the memory root's settings cannot be used: {exc}. pmem changes nothing "
                                "until `.pmem.toml` is fixed (`pmem check` shows the problem)") from None


def refuse_nested(root: Path) -> None:
    """No write into a folder of another root as if it were a root: `--root ~/memory/_archive`
    would save "notes/x.md" into the archive past every zone rule (`_archive/` holds an
    `_index.md`, so it looks like a root; a review). The format has no root inside a root."""
    outer = enclosing_root(root)
    if outer is not None:
        raise Refusal(NESTED, f"{shown(str(root))} is inside the memory root {shown(str(outer))}, and the "
                              "format has no root inside a root; nothing was changed. Use that root")


def dialect_of(ctx: LifecycleContext) -> str:
    """The dialect this root is written in (index_edit.root_dialect), from its settings (the
    caller's, else `.pmem.toml`'s) and its two indexes."""
    setting: str | None = ctx.dialect
    if setting is None:
        setting = usable_settings(ctx.root).dialect
    return root_dialect(setting, ctx.read_text(ARCHIVE_INDEX), ctx.read_text(INDEX))


def one_line(text: str) -> str:
    return " ".join(text.split())


# -- finding the file an archived-file command means ----------------------------
@dataclass(frozen=True)
class Located:
    location: str  # where the file is now
    record: ArchiveRecord | None
    active: bool  # the path names an existing active file
    archived_copy: bool = False  # ...and a record names an archived copy of it that exists


def locate(ctx: LifecycleContext, raw: object, op: str = "find archived files") -> Located:
    """delete, recover and purge take the current location or the original path (docs/design.md §3)."""
    rel = validate_target(ctx.root, raw)
    zone = zone_of(rel)
    archive_text = ctx.read_text(ARCHIVE_INDEX) or ""
    records = find_records(archive_text)
    if zone is Zone.ACTIVE:
        matches = [r for r in records if (r.get("original") or r.title) == rel]
        if os.path.lexists(ctx.root / rel):
            return Located(rel, None, active=True, archived_copy=any(
                (loc := record_location(r)) and os.path.lexists(ctx.root / loc) for r in matches))
        present = [r for r in matches if (loc := record_location(r)) and os.path.lexists(ctx.root / loc)]
        chosen = present or matches
        if not chosen:
            # Without the lifecycle structure there are no records to look in: point to upgrade.
            require_structure(ctx.root, op)
            raise Refusal(SOURCE, f"`{rel}` is not an active file and `_archive/_index.md` has no record of it")
        if len(chosen) > 1:
            raise Refusal(STATE, f"`{rel}` has {len(chosen)} records; name its location (`_archive/…`) instead")
        location = record_location(chosen[0])
        if location is None:
            raise Refusal(SOURCE, f"the record for `{rel}` has no usable location")
        # The record is text anyone (an agent) may have written: its location gets the same
        # contract as a path typed by the user, and must be in `_archive/`.
        location = validate_target(ctx.root, location)
        if zone_of(location) not in (Zone.ARCHIVE, Zone.TRASH):
            raise Refusal(STATE, f"the record for `{rel}` says it is at `{location}`, which is not in `_archive/`")
        return Located(location, chosen[0], active=False)
    if zone in (Zone.ARCHIVE, Zone.TRASH):
        record = next((r for r in records if record_location(r) == rel), None)
        return Located(rel, record, active=False)
    raise Refusal(STATE, f"`{rel}` is not a memory file")


# -- the operations ---------------------------------------------------------------
def _write(path: str, before: str | None, change: Change) -> WriteText:
    """A write of `path` whose new text is `change` made on `before`: the text and the
    change that re-makes it at execution come from one rule (changes.apply_change)."""
    return WriteText(path, before, apply_change(change, path, before), change)


def plan_upgrade(ctx: LifecycleContext) -> Plan:
    root = ctx.root
    for rel, want_dir in ((ARCHIVE_DIR, True), (TRASH_DIR, True), (ARCHIVE_INDEX, False)):
        path = root / rel
        if os.path.lexists(path) and (path.is_dir() != want_dir or path.is_symlink()):
            kind = "folder" if want_dir else "file"
            raise Refusal(COLLISION, f"`{rel}` exists but is not a {kind}; move it away first")
    missing = structure_missing(root)
    steps: list[Step] = []
    if f"{ARCHIVE_DIR}/" in missing:
        steps.append(MakeDir(ARCHIVE_DIR))
    if f"{TRASH_DIR}/" in missing:
        steps.append(MakeDir(TRASH_DIR))
    if ARCHIVE_INDEX in missing:
        steps.append(_write(ARCHIVE_INDEX, None, CreateText(ARCHIVE_INDEX_SKELETON)))
    if not steps:
        preview = "Upgrade: nothing to do — `_archive/`, `_archive/_trash/` and `_archive/_index.md` exist."
    else:
        lines = ["Upgrade the memory root: create only the missing lifecycle paths"]
        lines += [f"  create {m}" for m in missing]
        lines.append("Nothing else changes: no memory file is moved, rewritten, summarised or deleted.")
        preview = "\n".join(lines)
    return Plan("upgrade", None, tuple(steps), preview, "Upgrade",
                f"created {', '.join(missing)}" if missing else "nothing to do")


def plan_init(ctx: LifecycleContext) -> Plan:
    root = ctx.root
    if root.exists() and (not root.is_dir() or looks_like_root(root)):
        raise Refusal(STATE, f"{root} is already a memory root (or not a folder); use upgrade")
    dirs = [CORE_DIR, "projects", "notes", ARCHIVE_DIR, TRASH_DIR]
    steps: list[Step] = [MakeDir(".", private=True), *(MakeDir(d) for d in dirs)]
    steps += [_write(INDEX, None, CreateText(INDEX_SKELETON)),
              _write(ARCHIVE_INDEX, None, CreateText(ARCHIVE_INDEX_SKELETON))]
    steps += [_write(rel, None, CreateText(text)) for rel, text in CORE_SKELETONS.items()]
    new_root = "" if root.exists() else " (a new folder only you can read)"
    preview = "\n".join([f"Create a memory root at {shown(str(root))}{new_root}:"] + [f"  {d}/" for d in dirs]
                        + [f"  {INDEX}", f"  {ARCHIVE_INDEX}", *(f"  {rel} (to fill in)" for rel in CORE_SKELETONS)])
    return Plan("init", None, tuple(steps), preview, "Create", f"created the memory root at {shown(str(root))}")


def plan_archive(ctx: LifecycleContext, raw: object, reason: str | None = None) -> Plan:
    root = ctx.root
    rel = validate_target(root, raw)
    if zone_of(rel) is not Zone.ACTIVE:
        raise Refusal(STATE, f"`{rel}` is not an active file; only active files can be archived")
    require_structure(root, "archive")
    require_source(root, rel)
    dest = archive_location(rel)
    resolve_inside(root, dest)
    require_free(root, dest)
    archive_text = ctx.read_text(ARCHIVE_INDEX) or ""
    if any(record_location(r) == dest for r in find_records(archive_text)):
        raise Refusal(COLLISION, f"`_archive/_index.md` already has a record for `{dest}`; resolve it first")

    index_text = ctx.read_text(INDEX)
    routes = routes_to(index_text, rel) if index_text is not None else []
    route_lines = [line_of(index_text or "", r.line) for r in routes]
    saved = route_lines[0] if route_lines else ""
    refuse_secret("reason", reason)  # it is kept in the record, which agents read
    why = one_line(reason or "") or "archived from the editor"
    nl = newline_of(archive_text)
    # A file that had no route gets no `index-line` (never an empty one) but `routed: no`: its
    # recover then adds none unless asked (docs/decisions.md). The route line's neighbours
    # are kept, so that a recover puts it back where it was.
    fields = [("status", "archived"), ("original", rel), ("location", dest)]
    place: list[tuple[str, str]] = []
    if routes:
        fields.append(("index-line", saved))
        above, below = route_neighbours(index_text or "", routes[0].line)
        place = [(key, value) for key, value in ((INDEX_AFTER, above), (INDEX_BEFORE, below)) if value]
    else:
        fields.append((ROUTED, "no"))
    tail = [("archived", ctx.today.isoformat()), ("reason", why)]
    dialect = dialect_of(ctx)
    record = format_record(rel, fields + tail, nl, dialect)
    placed = format_record(rel, fields + place + tail, nl, dialect) if place else ""
    steps: list[Step] = [Move(rel, dest), _write(ARCHIVE_INDEX, archive_text, AddRecord(dest, record, placed))]
    if routes:
        steps.append(_write(INDEX, index_text, RemoveRoutes(rel, tuple(route_lines))))
    lines = [f"Archive {shown(rel)}", f"  move: {shown(rel)} → {shown(dest)}"]
    if routes:
        lines.append("  _index.md: remove " + ("the route" if len(routes) == 1 else f"{len(routes)} routes"))
        lines += [f"    {one_line_shown(line)}" for line in route_lines]
    else:
        lines.append("  _index.md: no route to remove")
    record_kind = "a v0.10 record" if dialect == V010 else "a record"
    lines.append(f"  _archive/_index.md: add {record_kind} (reason: {one_line_shown(why)})")
    lines += preview_lines(links_broken_by(root, [rel], ctx.state, ctx.settings))
    lines.append(f"  To undo: recover {shown(rel)} — restores the file"
                 + (" and this route line exactly" if routes else ""))
    return Plan("archive", rel, tuple(steps), "\n".join(lines), "Archive", f"archived {shown(rel)} to {shown(dest)}",
                {"index-line": saved, "destination": dest})


def plan_delete(ctx: LifecycleContext, raw: object) -> Plan:
    root = ctx.root
    found = locate(ctx, raw, "delete")
    if found.active:
        raise Refusal(STATE, f"`{found.location}` is an active file: archive it first "
                             "(delete only moves archived files to the trash)")
    location = found.location
    if zone_of(location) is Zone.TRASH:
        raise Refusal(STATE, f"`{location}` is already in the trash")
    require_structure(root, "delete")
    require_source(root, location)
    if found.record is None:
        raise Refusal(SOURCE, f"`_archive/_index.md` has no record of `{location}`; add one first (quick fix on PM301)")
    original = found.record.get("original") or found.record.title or original_of(location) or location
    dest = trash_location(validate_relative(original))
    resolve_inside(root, dest)
    require_free(root, dest)
    recover_by = ctx.today + dt.timedelta(days=RECOVERY_DAYS)
    archive_text = ctx.read_text(ARCHIVE_INDEX) or ""
    values = {"status": "trashed", "location": dest, "deleted": ctx.today.isoformat(),
              "recover-by": recover_by.isoformat()}
    change = UpdateRecord(location, record_fields(found.record), tuple(values.items()))
    steps = (Move(location, dest), _write(ARCHIVE_INDEX, archive_text, change))
    preview = "\n".join([
        f"Delete {shown(original)} (move it to the trash)",
        f"  move: {shown(location)} → {shown(dest)}",
        f"  _archive/_index.md: mark the record trashed, deleted {ctx.today.isoformat()}, "
        f"recover by {recover_by.isoformat()}",
        *preview_lines(links_broken_by(root, [location], ctx.state, ctx.settings)),
        f"  To undo: recover {shown(original)} before {recover_by.isoformat()}; "
        "after that it may be purged (with a separate confirmation)",
    ])
    return Plan("delete", location, steps, preview, "Delete",
                f"moved {shown(location)} to {shown(dest)}; recoverable until {recover_by.isoformat()}",
                {"destination": dest, "recover-by": recover_by.isoformat()})


# pmem's own record keys for where a route line was (issue 26): unknown-key-tolerant readers
# keep them on rewrite (docs/design.md §2.4).
INDEX_AFTER, INDEX_BEFORE, ROUTED = "index-after", "index-before", "routed"


def plan_recover(ctx: LifecycleContext, raw: object, add_route: bool = False) -> Plan:
    """`add_route`: a file archived with no route (`routed: no`) comes back with none unless
    this asks for the proposed one (`pmem recover PATH --add-route`)."""
    root = ctx.root
    found = locate(ctx, raw, "recover")
    if found.active and found.archived_copy:
        raise Refusal(COLLISION, f"cannot recover: `{found.location}` is occupied by an active file, and the "
                                 "archive holds a copy of that name; rename one of them first")
    if found.active:
        raise Refusal(STATE, f"`{found.location}` is an active file already; there is nothing to recover")
    require_structure(root, "recover")
    location = found.location
    require_source(root, location)
    record = found.record
    original = (record.get("original") or record.title) if record is not None else original_of(location)
    original = validate_relative(original or "")
    if zone_of(original) is not Zone.ACTIVE:
        raise Refusal(STATE, f"the original path `{original}` is not an active memory path")
    resolve_inside(root, original)
    if os.path.lexists(root / original):
        raise Refusal(COLLISION, f"cannot recover: `{original}` is occupied by another file; rename one of them first")

    index_text = ctx.read_text(INDEX)
    saved = record.saved_route if record is not None else None
    # Archived with no route: `routed: no` (pmem's dialect) or the format's `(no active index
    # line)` (v0.10). It comes back with none unless the person asks for one.
    unrouted = saved is None and record is not None and record.archived_unrouted
    proposed = saved is None
    offer = ""
    if proposed:
        text = ctx.read_text(location)
        route = route_for(index_text or "", original, MemoryFile(text) if text is not None else None,
                          dialect=dialect_of(ctx))
        if unrouted and not add_route:
            offer, route = route, ""
    else:
        route = (saved or "").rstrip("\r\n")
    after = record.get(INDEX_AFTER) if record is not None and not proposed else None
    before = record.get(INDEX_BEFORE) if record is not None and not proposed else None
    already = bool(index_text) and bool(routes_to(index_text or "", original))
    steps: list[Step] = [Move(location, original)]
    if route.strip() and not already:
        steps.append(_write(INDEX, index_text, AddRoute(original, route, after, before)))
    archive_text = ctx.read_text(ARCHIVE_INDEX) or ""
    if record is not None:
        steps.append(_write(ARCHIVE_INDEX, archive_text, RemoveRecord(location, record_fields(record))))
    lines = [f"Recover {shown(original)}", f"  move: {shown(location)} → {shown(original)}"]
    if not route.strip():
        lines.append("  _index.md: the file had no route when it was archived; none is added")
        if offer.strip() and not already:
            lines += ["  To add a route as well, recover with --add-route (the editor's \"and add a route\" "
                      "action, or `add_route` in MCP); it would add this PROPOSED route:",
                      f"    {one_line_shown(offer)}"]
    elif already:
        lines.append("  _index.md: a route to it exists already; none is added")
    elif proposed:
        why = "asked for: the file had none when archived" if unrouted else "the record has no saved route line"
        lines += [f"  _index.md: add this PROPOSED route ({why}):", f"    {one_line_shown(route)}"]
    else:
        where = (f", back after: {one_line_shown(after)}" if after
                 else (f", back before: {one_line_shown(before)}" if before else ""))
        lines += [f"  _index.md: restore the saved route line exactly{where}:", f"    {one_line_shown(route)}"]
    lines.append("  _archive/_index.md: remove the record" if record is not None
                 else "  _archive/_index.md: no record to remove")
    return Plan("recover", location, tuple(steps), "\n".join(lines), "Recover", f"recovered {shown(original)}",
                {"destination": original, "route": route, "proposed": "yes" if proposed else "no"})


def plan_purge(ctx: LifecycleContext, raw: object) -> Plan:
    root = ctx.root
    found = locate(ctx, raw, "purge")
    location = found.location
    if found.active or zone_of(location) is not Zone.TRASH:
        raise Refusal(STATE, f"`{location}` is not in the trash; "
                             "only trashed files past their recover-by date can be purged")
    require_structure(root, "purge")
    require_source(root, location)
    if found.record is None:
        raise Refusal(SOURCE, f"`_archive/_index.md` has no record of `{location}`, so its recover-by date is unknown")
    recover_by = parse_date(found.record.get("recover-by"))
    if recover_by is None:
        raise Refusal(STATE, f"the record of `{location}` has no valid recover-by date")
    if recover_by >= ctx.today:
        raise Refusal(STATE, f"`{location}` can still be recovered until {recover_by.isoformat()}; "
                             "it cannot be purged yet")
    archive_text = ctx.read_text(ARCHIVE_INDEX) or ""
    steps = (Remove(location), _write(ARCHIVE_INDEX, archive_text, RemoveRecord(location, record_fields(found.record))))
    preview = "\n".join([
        f"Delete {shown(location)} PERMANENTLY",
        f"  its recover-by date ({recover_by.isoformat()}) has passed",
        "  _archive/_index.md: remove the record",
        "  This cannot be undone.",
    ])
    return Plan("purge", location, steps, preview, "Delete permanently", f"permanently deleted {shown(location)}")


# -- migrate: the whole root in one dialect (docs/decisions.md, "Dialects") ------------------------
def _needs_conversion(text: str, target: str) -> ArchiveRecord | None:
    """The first record not in `target`, or one the reference CLI would read as part of another."""
    lines = MemoryFile(text).lines
    blocks = reference_blocks(lines)
    for record in find_records(text):
        under_reference = lines[record.heading_line].startswith("### ")
        merged = not under_reference and any(a < record.heading_line < b for a, b, original in blocks
                                             if original is not None)
        if record.dialect != target or merged or (record.dialect == V010 and not under_reference):
            return record
    return None


def migrate_records(text: str, target: str) -> tuple[str, list[str]]:
    """`text` (an archive index) with every record in `target` and none merged: the new text
    and the records converted, in order."""
    done: list[str] = []
    for _ in range(2 * len(find_records(text)) + 2):
        record = _needs_conversion(text, target)
        if record is None:
            break
        text = convert_record(text, record, target)
        done.append(record.title)
    return text, done


def v010_route(path: str, description: str | None) -> str | None:
    """`- path — description`, the route line the format's reference CLI reads (its path the
    first word), or None where it cannot read one: a path with white space, no description."""
    desc = " ".join((description or "").split())
    if not path or not desc or any(c.isspace() for c in path):
        return None
    line = f"- {path} — {desc}"
    return line if reads_back(line, path) else None


def migrate_routes(text: str) -> tuple[str, list[tuple[str, str]]]:
    """`_index.md` with every route line in the v0.10 form `- path — description` that the
    format's reference CLI reads, where the path allows it (no white space) and the line has
    a description; the (old, new) lines changed."""
    lines = split_keepends(text)
    doc = MemoryFile(text)
    changed: list[tuple[str, str]] = []
    for route in parse_index(doc).routes:
        line = None if route.table or route.path is None else v010_route(route.path, route.description)
        if line is None:
            continue
        old = doc.lines[route.line]
        new = old[:len(old) - len(old.lstrip())] + line
        if new == old:
            continue
        eol = lines[route.line][len(lines[route.line].rstrip("\r\n")):]
        lines[route.line] = new + eol
        changed.append((old, new))
    return "".join(lines), changed


def migrate_saved_routes(text: str, moved: dict[str, str]) -> tuple[str, list[tuple[str, str, str]], list[str], int]:
    """`text` (an archive index in v0.10) with every record's `active_index_line` in the v0.10
    form, so that the reference CLI's recover restores a line its status reads (issue 40), and
    its `index-after`/`index-before` (where the line was) following `moved`, the route lines
    of `_index.md` the same migrate rewrites (old → new). Returns the new text, (record, old
    line, new line) per saved line changed, the records whose saved line stays as written
    because the reference CLI reads no line for that path (white space in it, no description;
    pmem still restores it exactly), and how many neighbour lines changed."""
    changed: list[tuple[str, str, str]] = []
    kept: list[str] = []
    neighbours = 0
    done: set[int] = set()
    while True:
        pending = [(n, r) for n, r in enumerate(find_records(text)) if n not in done]
        if not pending:
            return text, changed, kept, neighbours
        n, record = pending[0]
        done.add(n)
        updates = {key: moved[value] for key in (INDEX_AFTER, INDEX_BEFORE)
                   if (value := record.get(key)) is not None and value in moved}
        neighbours += len(updates)
        if record.saved_route is not None:
            saved = record.saved_route.rstrip("\r\n")
            routes = parse_index(MemoryFile(saved + "\n")).routes
            original = record.get("original") or record.title
            line = (v010_route(original, routes[0].description)
                    if len(routes) == 1 and routes[0].path == original and not routes[0].table else None)
            if line is None and not _is_v010_route(saved, original):
                kept.append(record.title)
            elif line is not None and line != saved:
                updates["index-line"] = line
                changed.append((record.title, saved, line))
        if updates:
            text = update_record(text, record, updates)


def _is_v010_route(line: str, path: str) -> bool:
    """Is `line` already `- path — …`, the way the reference CLI reads a route?"""
    return line.startswith(f"- {path} — ")


def refuse_pinned_dialect(ctx: LifecycleContext, target: str) -> None:
    """A `dialect` setting that names the other dialect would have pmem write the root in it
    again right after the migration (records, routes): refused, not rewritten — `.pmem.toml`
    is the person's file, which no lifecycle write touches (docs/decisions.md, "Migrate and a
    pinned dialect")."""
    in_file: str = ctx.settings.dialect if ctx.settings is not None else usable_settings(ctx.root).dialect
    # The caller's setting (the server's: `.pmem.toml` with the editor's on top) is the one that writes.
    pinned = ctx.dialect if ctx.dialect is not None else in_file
    where = "`.pmem.toml`" if pinned == in_file else "the editor's `pmem.dialect` setting"
    if pinned in DIALECTS and pinned != target:
        raise Refusal(SETTINGS, f"{where} pins `dialect = \"{pinned}\"`, so pmem would go on writing this root in "
                                f"the {pinned} dialect after migrating it to {target}; nothing was changed. Set "
                                f"`dialect = \"{target}\"` (or `\"auto\"`) there first, then migrate")


def plan_migrate(ctx: LifecycleContext, raw: object = None) -> Plan:
    """Convert every archive record to one dialect (`raw`: `v0.10` or `pmem`; default the
    root's), move records either reader would merge, and in v0.10 write every route line the
    way the reference CLI reads it. Memory files are never touched."""
    target = raw if raw is not None else dialect_of(ctx)
    if target not in DIALECTS:
        raise Refusal(STATE, f"`{target}` is not a dialect; use v0.10 or pmem")
    assert isinstance(target, str)
    refuse_pinned_dialect(ctx, target)
    steps: list[Step] = []
    lines = [f"Migrate the root's indexes to the {target} dialect"]
    index_text = ctx.read_text(INDEX)
    new_index, routes = migrate_routes(index_text) if target == V010 and index_text is not None else (index_text, [])
    archive_text = ctx.read_text(ARCHIVE_INDEX)
    if archive_text is not None:
        new, converted = migrate_records(archive_text, target)
        saved: list[tuple[str, str, str]] = []
        kept: list[str] = []
        neighbours = 0
        if target == V010:
            moved = {old.strip(): new_line.strip() for old, new_line in routes}
            new, saved, kept, neighbours = migrate_saved_routes(new, moved)
        if new != archive_text:
            steps.append(_write(ARCHIVE_INDEX, archive_text, ReplaceText(archive_text, new)))
        if converted:
            lines.append(f"  _archive/_index.md: rewrite {len(converted)} record(s) in the {target} dialect:")
            lines += [f"    {one_line_shown(title)}" for title in converted]
        if saved:
            lines.append(f"  _archive/_index.md: rewrite {len(saved)} saved route line(s) (active_index_line) "
                         "as `- path — summary`, the line the format's reference CLI restores and reads:")
            for title, old, new_line in saved:
                lines += [f"    {one_line_shown(title)}", f"      was: {one_line_shown(old)}",
                          f"      now: {one_line_shown(new_line)}"]
        if kept and steps:
            lines.append(f"  _archive/_index.md: {len(kept)} saved route line(s) kept as written (the reference "
                         "CLI reads no route line for a path with white space or without a description; "
                         "pmem restores them exactly):")
            lines += [f"    {one_line_shown(title)}" for title in kept]
        if neighbours:
            lines.append(f"  _archive/_index.md: rewrite {neighbours} index-after/index-before line(s) (where a "
                         "recover puts a route back) as the route lines rewritten below")
    if routes and index_text is not None and new_index is not None:
        steps.append(_write(INDEX, index_text, ReplaceText(index_text, new_index)))
        lines.append(f"  _index.md: rewrite {len(routes)} route line(s) as `- path — summary`:")
        for old, new_line in routes:
            lines += [f"    was: {one_line_shown(old.strip())}", f"    now: {one_line_shown(new_line.strip())}"]
    if not steps:
        return Plan("migrate", None, (), f"Migrate: nothing to do — the indexes are in the {target} dialect already.",
                    "Migrate", "nothing to do")
    lines.append("No memory file is moved or rewritten; every field and unknown key of a record is kept.")
    if target == PMEM:
        lines.append("The format's reference CLI does not read pmem's own records.")
    return Plan("migrate", None, tuple(steps), "\n".join(lines), "Migrate", f"migrated the indexes to {target}")


@dataclass(frozen=True)
class PlanArguments:
    """A request's arguments as `make_plan` received them: each planner takes those its
    operation does (registry.py says which)."""

    path: object
    reason: str | None
    content: object
    description: str | None
    route: bool
    add_route: bool


def _plan_save(ctx: LifecycleContext, args: PlanArguments) -> Plan:
    from .save import plan_save  # save.py imports this module

    return plan_save(ctx, args.path, args.content, args.description, args.route)


def _plan_route(ctx: LifecycleContext, args: PlanArguments) -> Plan:
    from .save import plan_route

    return plan_route(ctx, args.path, args.description)


# One planner per write operation of the registry (registry.py; a test holds the two to the
# same names): adding an operation is its entry there and its planner here.
def _plan_undo(ctx: LifecycleContext, args: PlanArguments) -> Plan:
    from .undo import plan_undo

    return plan_undo(ctx, args.path, args.content)  # `path`: the entry; `content`: the chosen paths, one a line


def _plan_restore(ctx: LifecycleContext, args: PlanArguments) -> Plan:
    from .undo import plan_restore

    return plan_restore(ctx, args.path, args.content)  # `path`: the entry; `content`: the file to restore


PLANNERS: dict[str, Callable[[LifecycleContext, PlanArguments], Plan]] = {
    "save": _plan_save,
    "route": _plan_route,
    "upgrade": lambda ctx, args: plan_upgrade(ctx),
    "archive": lambda ctx, args: plan_archive(ctx, args.path, args.reason),
    "delete": lambda ctx, args: plan_delete(ctx, args.path),
    "recover": lambda ctx, args: plan_recover(ctx, args.path, args.add_route),
    "purge": lambda ctx, args: plan_purge(ctx, args.path),
    "init": lambda ctx, args: plan_init(ctx),
    "migrate": lambda ctx, args: plan_migrate(ctx, args.path),  # `path` carries the target dialect
    "undo": lambda ctx, args: _plan_undo(ctx, args),
    "restore": lambda ctx, args: _plan_restore(ctx, args),
}


def make_plan(ctx: LifecycleContext, op: str, path: object = None, reason: str | None = None, *,
              content: object = None, description: str | None = None, route: bool = True,
              add_route: bool = False) -> Plan:
    """The plan for one request. `content`, `description` and `route` are `save`'s and
    `route`'s (docs/design.md §6.1); the other operations take a path and a reason. No
    operation is planned on settings that cannot be used (`usable_settings`), not even by a
    caller that brings its own (the server falls back to the defaults to keep checking).
    `.pmem.toml` is read here once, and what was read decides the whole plan (its dialect, a
    save's checks): two reads could check one settings file and write in another's dialect."""
    refuse_nested(ctx.root)
    settings = usable_settings(ctx.root)
    ctx = replace(ctx, settings=settings, dialect=settings.dialect if ctx.dialect is None else ctx.dialect)
    planner = PLANNERS.get(op)
    if planner is None:
        raise ValueError(f"unknown lifecycle operation {op!r}")
    return planner(ctx, PlanArguments(path, reason, content, description, route, add_route))


def _writes_by_path(plan: Plan) -> dict[str, tuple]:
    return {x[1]: x for x in plan.signature() if isinstance(x, tuple) and x[0] == "write"}


def replan(ctx: LifecycleContext, confirmed: Plan, path: object = None, reason: str | None = None, *,
           content: object = None, description: str | None = None, route: bool = True,
           add_route: bool = False) -> Plan:
    """The safety contract again, at the moment of execution: plan anew and require that the
    new plan does what the user confirmed — the same moves and the same index changes (route
    lines, records), wherever the other lines of the indexes have moved meanwhile."""
    fresh = make_plan(ctx, confirmed.op, path, reason, content=content, description=description, route=route,
                      add_route=add_route)
    again = "nothing was changed — review the new preview and confirm again"
    # The confirmed index changes, made on the indexes as they are now: says which route line
    # or record changed (changes.py). Lines an agent added or reordered meanwhile are fine.
    for write in confirmed.writes():
        try:
            write.rebase(ctx.read_text(write.path))
        except Refusal as exc:
            raise Refusal(exc.rule, f"{exc.message}; {again}") from None
    if fresh.signature() != confirmed.signature():
        new, old = _writes_by_path(fresh), _writes_by_path(confirmed)
        paths = sorted(p for p in new.keys() | old.keys() if new.get(p) != old.get(p))
        what = " and ".join(f"`{p}`" for p in paths) + (" changed" if paths else "the files changed")
        raise Refusal(CHANGED, f"{what} since the preview, so the change is no longer the one previewed "
                               f"(for example a route line or the record was edited); {again}")
    return fresh
