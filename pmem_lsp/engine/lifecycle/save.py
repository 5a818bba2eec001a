"""Plans for `save` (the format's saving procedure) and `route` (the route quick fix), which an
agent uses to write memory through the same contract as the lifecycle (docs/design.md §6.1).

Saving: the agent proposes the exact content and the destination; the preview shows the new
file (or a diff against the existing one) and the route line that makes it loadable; nothing is
written before the user's yes. Refused, with nothing written: a likely secret in the text, a
destination in `_archive/`, the two indexes, hidden paths, anything that is not a Markdown
file inside the root. `_core/` files may be saved (they are always loaded, so never routed).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..index_edit import route_for, routes_to
from ..memory_file import MemoryFile, set_updated
from ..names import one_line, shown
from ..rules.secrets import check_secrets
from ..saved_routes import saved_line
from ..settings import Settings, SettingsError, resolve_settings
from ..zones import ARCHIVE_INDEX, INDEX, Zone, is_markdown, zone_of
from .changes import AddRoute, Change, CreateText, ReplaceText, apply_change
from .plan import MakeDir, Plan, Step, WriteText
from .safety import (
    COLLISION,
    PROTECTED,
    SECRET,
    SOURCE,
    STATE,
    Refusal,
    check_not_protected,
    refuse_secret,
    require_source,
    resolve_inside,
    validate_relative,
    validate_target,
)

if TYPE_CHECKING:
    from .operations import LifecycleContext  # which imports this module

CONTENT = "content"  # the proposed text cannot be a memory file as given


def _dialect(ctx: LifecycleContext) -> str:
    from .operations import dialect_of

    return dialect_of(ctx)


def _route_line(ctx: LifecycleContext, rel: str, index_text: str | None, doc: MemoryFile,
                description: str | None) -> str:
    """The route line for `rel`: the one its archive record saved when a recover stopped after
    moving it back (exactly, never a new one: engine/saved_routes.py), else one made from the
    file (`route_for`). A saved line that no longer reads as a route, or a description asked
    for over a saved line, is refused with where the saved line is."""
    saved = saved_line(ctx.read_text(ARCHIVE_INDEX), rel, lambda p: os.path.isfile(ctx.root / p))
    if saved is None:
        return route_for(index_text or "", rel, doc, description, _dialect(ctx))
    if saved.line is None:
        raise Refusal(STATE, f"the archive record of `{shown(rel)}` ({saved.where()}) saved a route line that no "
                      "longer reads as a route to it; nothing was written. Correct that line in the record, or "
                      "copy it into `_index.md` as the user wants it")
    if description is not None and description.strip() and description.strip() not in saved.line:
        raise Refusal(STATE, f"the archive record of `{shown(rel)}` ({saved.where()}) saved its route line: "
                      f"`{one_line(saved.line)}`; nothing was written. Routing it without a description restores "
                      "that line exactly")
    return saved.line


def _write(path: str, before: str | None, change: Change) -> WriteText:
    return WriteText(path, before, apply_change(change, path, before), change)


def _destination(ctx: LifecycleContext, raw: object) -> tuple[str, Zone]:
    rel = validate_relative(raw)
    zone = zone_of(rel)
    if zone in (Zone.ARCHIVE, Zone.TRASH, Zone.ARCHIVE_INDEX):
        raise Refusal(PROTECTED, f"`{rel}` is in `_archive/`, which only archive, delete, recover and purge "
                                 "change (with their records)")
    if zone is Zone.INDEX:
        raise Refusal(PROTECTED, f"`{rel}` is the index; add a route with `pmem route add PATH`")
    if zone is not Zone.CORE:
        check_not_protected(rel)  # hidden paths, lifecycle folders, letter-case look-alikes
    if not is_markdown(rel):
        raise Refusal(STATE, f"`{rel}` is not a Markdown file; memory files end in `.md`")
    resolve_inside(ctx.root, rel)
    return rel, zone


def _check_content(rel: str, zone: Zone, content: object, settings: Settings) -> str:
    if not isinstance(content, str):
        raise Refusal(CONTENT, "the content must be text")
    if not content.strip():
        raise Refusal(CONTENT, "the content is empty; to remove a file, archive it")
    if "\x00" in content:
        raise Refusal(CONTENT, "the content contains NUL bytes")
    secrets = check_secrets(rel, zone, MemoryFile(content), settings)
    if secrets:
        # The kind and the line, never the value (the finding's message masks it).
        first = secrets[0]
        more = f" (and {len(secrets) - 1} more)" if len(secrets) > 1 else ""
        raise Refusal(SECRET, f"line {first.line + 1}: {first.message}{more}; nothing was saved")
    return content


# A preview shows what a write does, never a whole huge text: its size, its head and its tail.
PREVIEW_HEAD = 40  # lines of a new file (or of a long change) shown first
PREVIEW_TAIL = 20  # ... and last
PREVIEW_LINE_CHARS = 400  # a longer line is cut, with how much was left out
DIFF_CHARS = 256 * 1024  # texts up to this size are diffed with difflib; larger ones by their common ends


def _size(text: str) -> str:
    n = len(text.encode("utf-8", "surrogatepass"))
    return f"{n} bytes" if n < 1024 else f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.1f} MiB"


def _cut_line(line: str) -> str:
    if len(line) <= PREVIEW_LINE_CHARS:
        return line
    return f"{line[:PREVIEW_LINE_CHARS]} … ({len(line) - PREVIEW_LINE_CHARS} more characters)"


def _head_tail(lines: list[str], what: str = "lines") -> list[str]:
    """`lines`, or their head and tail with how many are left out between them."""
    if len(lines) <= PREVIEW_HEAD + PREVIEW_TAIL:
        return [_cut_line(line) for line in lines]
    left_out = len(lines) - PREVIEW_HEAD - PREVIEW_TAIL
    return ([_cut_line(line) for line in lines[:PREVIEW_HEAD]] + [f"… {left_out} {what} not shown …"]
            + [_cut_line(line) for line in lines[-PREVIEW_TAIL:]])


def _refuse_marked_secret(before: str | None, text: str, settings: Settings) -> None:
    """A save that marks a likely secret as allowed, where the file did not: refused. The
    marker is the person's decision, taken in their editor, never a saved text's (issue 25)."""
    from ..hooks import new_secrets

    marked = [f for f in new_secrets(before, text, settings) if f.marked]
    if marked:
        first = marked[0]
        raise Refusal(SECRET, f"line {first.line + 1}: likely {first.kind} ({first.hint}); a saved text cannot "
                              "declare a value not secret, only the person can; nothing was saved")


def _shown(text: str) -> list[str]:
    return [f"    {line}" for line in _head_tail(text.splitlines())]


def diff_lines(rel: str, before: str, after: str) -> list[str]:
    """A unified diff of `before` → `after`, bounded: large texts are compared by their common
    first and last lines (linear; one hunk for what lies between), and a long diff shows its
    head and tail."""
    if len(before) + len(after) <= DIFF_CHARS:
        diff = [line.rstrip("\n") for line in difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{shown(rel)}", f"b/{shown(rel)}",
            n=2)]
    else:
        diff = _ends_diff(rel, before.splitlines(), after.splitlines())
    return _head_tail(diff, "diff lines")


def _ends_diff(rel: str, old: list[str], new: list[str]) -> list[str]:
    """One hunk: the lines between the common first and last lines, removed and added."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    if start == len(old) == len(new):
        return []
    context_start = max(0, start - 2)
    old_mid, new_mid = old[start:len(old) - end], new[start:len(new) - end]
    after_context = old[len(old) - end:len(old) - end + 2]
    head = old[context_start:start]
    a_len = len(head) + len(old_mid) + len(after_context)
    b_len = len(head) + len(new_mid) + len(after_context)
    return [f"--- a/{shown(rel)}", f"+++ b/{shown(rel)}",
            f"@@ -{context_start + 1 if a_len else context_start},{a_len} "
            f"+{context_start + 1 if b_len else context_start},{b_len} @@",
            *(f" {line}" for line in head), *(f"-{line}" for line in old_mid),
            *(f"+{line}" for line in new_mid), *(f" {line}" for line in after_context)]


def settings_or_defaults(root: Path) -> Settings:
    """The root's settings, or the defaults where `.pmem.toml` cannot be read: a save is still
    checked for secrets (with the default detectors), and `pmem check` reports the settings."""
    try:
        return resolve_settings(root)
    except SettingsError:
        return Settings()


def plan_save(ctx: LifecycleContext, raw: object, content: object, description: str | None = None,
              route: bool = True, settings: Settings | None = None) -> Plan:
    rel, zone = _destination(ctx, raw)
    refuse_secret("file name", rel, path=True)  # a token as a file's name is a secret every listing shows
    refuse_secret("route description", description)
    settings = settings or ctx.settings or settings_or_defaults(ctx.root)
    text = _check_content(rel, zone, content, settings)
    path = ctx.root / rel
    if os.path.lexists(path):
        require_source(ctx.root, rel)  # a regular file, not a folder or a link
    before = ctx.read_text(rel)
    _refuse_marked_secret(before, text, settings)
    # A write is the file's `updated` (format v0.10): set in the front matter when the text
    # has one, and shown in the preview (docs/decisions.md, "Metadata dates").
    dated = text if before == text else set_updated(text, ctx.today)
    dated_note = dated != text
    text = dated
    steps: list[Step] = []
    lines: list[str] = []
    if before is None:
        parent = rel.rpartition("/")[0]
        if parent and not (ctx.root / parent).is_dir():
            if os.path.lexists(ctx.root / parent):
                raise Refusal(COLLISION, f"`{parent}` exists but is not a folder")
            steps.append(MakeDir(parent))
        steps.append(_write(rel, None, CreateText(text)))
        n = len(text.splitlines())
        lines += [f"Save {shown(rel)} (a new file, {n} line{'s' if n != 1 else ''}, {_size(text)})",
                  f"  create: {shown(rel)}",
                  *_shown(text)]
    elif before == text:
        lines.append(f"Save {shown(rel)}: it holds this text already; nothing to change")
    else:
        steps.append(_write(rel, before, ReplaceText(before, text)))
        lines += [f"Save {shown(rel)} (replace its text, {_size(before)} → {_size(text)}; the diff)",
                  *(f"    {d}" for d in diff_lines(rel, before, text))]

    facts = {"path": rel}
    if dated_note:
        lines.append(f"  front matter: updated: {ctx.today.isoformat()} (the date of this write)")
        facts["updated"] = ctx.today.isoformat()
    if zone is Zone.CORE:
        lines.append("  _index.md: none — `_core/` files are loaded on every activation, never routed")
    else:
        index_text = ctx.read_text(INDEX)
        routed = index_text is not None and bool(routes_to(index_text, rel))
        if routed:
            lines.append("  _index.md: it is routed already; the route is kept")
        elif not route and before is not None:
            # An existing file left unrouted: the words must fit an undo or a restore (which
            # keep the index as it is) as well as `save --no-route`.
            lines.append("  _index.md: unchanged; the file has no route, so agents will not load it on demand (PM202)")
        elif not route:
            lines.append("  _index.md: no route (--no-route): agents will not load it on demand (PM202)")
        else:
            line = _route_line(ctx, rel, index_text, MemoryFile(text), description)
            steps.append(_write(INDEX, index_text, AddRoute(rel, line)))
            lines += ["  _index.md: add the route", f"    {one_line(line)}"]
            facts["route"] = line
    done = f"saved {shown(rel)}" + (" and routed it" if "route" in facts else "")
    return Plan("save", rel, tuple(steps), "\n".join(lines), "Save", done, facts)


def plan_route(ctx: LifecycleContext, raw: object, description: str | None = None) -> Plan:
    rel = validate_target(ctx.root, raw)
    # The route line names the file: a token as its name would be copied into the index.
    refuse_secret("file name", rel, path=True)
    if zone_of(rel) is not Zone.ACTIVE or not is_markdown(rel):
        raise Refusal(STATE, f"`{rel}` is not an active memory file; only those are routed")
    refuse_secret("route description", description)
    require_source(ctx.root, rel)
    index_text = ctx.read_text(INDEX)
    existing = routes_to(index_text, rel) if index_text is not None else []
    if existing:
        return Plan("route", rel, (), f"Route {shown(rel)}: `_index.md` routes it already "
                    f"(line {existing[0].line + 1})", "Route", "nothing to do")
    text = ctx.read_text(rel)
    if text is None:
        raise Refusal(SOURCE, f"`{rel}` does not exist")
    line = _route_line(ctx, rel, index_text, MemoryFile(text), description)
    steps = (_write(INDEX, index_text, AddRoute(rel, line)),)
    where = "add the route" if index_text is not None else "create it with the route"
    preview = "\n".join([f"Route {shown(rel)} in _index.md", f"  _index.md: {where}", f"    {one_line(line)}"])
    return Plan("route", rel, steps, preview, "Route", f"routed {shown(rel)}", {"route": line})

