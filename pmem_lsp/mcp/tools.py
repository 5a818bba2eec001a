"""What the MCP tools do, without the MCP SDK (docs/design.md §10): plain functions of a memory
root that return JSON-ready data or raise `ToolFailure`. `server.py` wraps them as tools.

Every value they return has passed through `mask_data`: memory text (a core file, a route
description, a preview's diff) can hold a likely secret, and no tool output ever shows one.

Replies are bounded (docs/decisions.md, "Bounded replies"): the list a tool returns (routes,
findings, health items) comes a page at a time (`offset`, `limit`), a long text in pieces
(`offset`), and a reply that leaves something out says so in its `page` and how to ask for
the rest. File names are shown as `engine/names.py` shows them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import stat
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine import pending_saves
from ..engine.checking import check_files, root_relative
from ..engine.folders import walk
from ..engine.health_proposal import memory_health
from ..engine.index_routes import Route, parse_index
from ..engine.lifecycle import declines
from ..engine.lifecycle.execute import Tokened, execute
from ..engine.lifecycle.fs_applier import ApplyError
from ..engine.lifecycle.operations import context
from ..engine.lifecycle.preview import (
    Request,
    applied_data,
    preview,
    preview_data,
    refusal_data,
    save_findings,
)
from ..engine.lifecycle.registry import BY_NAME, Surface, names_on
from ..engine.lifecycle.safety import Refusal, resolve_inside, validate_relative
from ..engine.memory_file import MemoryFile
from ..engine.names import shown
from ..engine.report import diagnostics_data, report_data
from ..engine.root_state import MAX_ANALYSED_BYTES, read_regular_text
from ..engine.rules.summary import check_summary
from ..engine.secrets import mask_data, mask_text
from ..engine.settings import Settings, SettingsError, resolve_settings
from ..engine.status_report import LEADS_OUT, memory_status
from ..engine.zones import CORE_DIR, INDEX, Containment, Zone, is_markdown, zone_of

# The operations `memory_preview` takes (`init` creates the root the server is started for).
OPERATIONS = names_on(Surface.MCP)
PENDING_DIR = pending_saves.FOLDER  # in the user's cache folder: a save's text, for the command a person runs
# The codes that make a Summary invalid under the format's rule (3 to 6 factual bullets right
# after the title and metadata, nothing else in it, one of it): the file is then read whole.
SUMMARY_CODES = ("PM100", "PM101", "PM102", "PM103", "PM104", "PM105", "PM106")
DEFAULT_ARCHIVE_REASON = "archived through `pmem mcp`"
MAX_TOKENS = 64  # previews kept for memory_apply; older ones are forgotten
# A reply's JSON is at most about this many characters (~25k tokens, what agents' MCP clients
# take in one result): lists come in pages, long texts in pieces.
MAX_REPLY_CHARS = 100_000
DEFAULT_LIMIT = 100  # items of a list per reply, unless the call asks for another number
MAX_LIMIT = 1000
TEXT_CHARS = 60_000  # characters of a file's text per reply (memory_read, memory_load's core files)


class ToolFailure(Exception):
    """A tool's refusal as data: `{"error": {"kind", "message"}}`, with `"applied": false` for
    the write tools (the shape the CLI's `--format json` gives), reported as a tool error."""

    def __init__(self, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.extra = extra

    def data(self, write: bool = False) -> dict[str, Any]:
        head = {"applied": False} if write else {}
        return mask_data({**head, "error": {"kind": self.kind, "message": self.message}, **self.extra})

    @classmethod
    def from_refusal(cls, exc: Refusal) -> ToolFailure:
        data = refusal_data(exc)["error"]
        extra = {"done": list(exc.done)} if isinstance(exc, ApplyError) and exc.done else {}
        return cls(data["kind"], data["message"], **extra)


def require_root(root: Path) -> None:
    """No memory root (a new user, or PMEM_ROOT not passed to the server): said plainly, with
    how to create it — a previewed write like any other."""
    if root.is_dir():
        return
    what = "is not a folder" if os.path.lexists(root) else "does not exist"
    raise ToolFailure("no-root", f"no memory root at {root} (it {what}); create it with memory_preview "
                                 "(operation `init`), shown to the user, and memory_apply after their yes — or a "
                                 f"person runs `pmem --root {shlex.quote(str(root))} init`. If the memory is "
                                 "elsewhere, set PMEM_ROOT in this server's environment (the client's MCP "
                                 "configuration) and restart it.")


# -- reading --------------------------------------------------------------------------------
def settings_of(root: Path) -> Settings:
    try:
        return resolve_settings(root)
    except SettingsError as exc:
        raise ToolFailure("settings", f"the memory root's settings cannot be used: {exc}") from None


def _read(root: Path, rel: str, where: Containment | None = None) -> tuple[str, int, bool]:
    """(text up to the cap, size in bytes, truncated) of a regular file already validated. A
    path that leads out of the root (a link) is refused before anything is opened."""
    if not (where or Containment(root)).inside(rel):
        raise ToolFailure("inside-root", f"`{shown(rel)}` is {LEADS_OUT}")
    path = root / rel
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise ToolFailure("unreadable", f"`{shown(rel)}` cannot be read ({exc.strerror})") from None
    text = read_regular_text(path)
    if text is None:
        raise ToolFailure("unreadable", f"`{shown(rel)}` cannot be read")
    return text, size, size > MAX_ANALYSED_BYTES


def _core_files(root: Path, where: Containment) -> list[str]:
    if not where.inside(CORE_DIR):
        return [CORE_DIR]  # reported as leading out, never listed
    out = []
    for dirpath, dirnames, filenames in walk(root / CORE_DIR):
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d)))
        base = os.path.relpath(dirpath, root).replace(os.sep, "/")
        out += [f"{base}/{name}" for name in sorted(filenames) if not name.startswith(".") and is_markdown(name)]
    return out


def _limits(offset: object, limit: object) -> tuple[int, int]:
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise ToolFailure("arguments", "`offset` must be a whole number, 0 or more")
    if limit is None:
        return offset, DEFAULT_LIMIT
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise ToolFailure("arguments", f"`limit` must be a whole number from 1 to {MAX_LIMIT}")
    return offset, limit


def _size(data: Any) -> int:
    return len(json.dumps(data, ensure_ascii=False, default=str))


def paged(data: dict[str, Any], keys: tuple[str, ...], tool: str, what: str, offset: object = 0,
          limit: object = None) -> dict[str, Any]:
    """`data` with the list at `keys` cut to one page: `limit` items from `offset`, fewer when
    the reply would pass MAX_REPLY_CHARS. When anything is left out, `page` says what was
    returned, how many there are, and the `offset` that gives the next ones."""
    start, count = _limits(offset, limit)
    holder: Any = data
    for key in keys[:-1]:
        holder = holder.get(key) if isinstance(holder, dict) else None
    items = holder.get(keys[-1]) if isinstance(holder, dict) else None
    if not isinstance(items, list):
        return data  # no such list in this reply (nothing to page)
    total = len(items)
    chosen = items[start:start + count]
    holder[keys[-1]] = chosen
    while len(chosen) > 1 and _size(data) > MAX_REPLY_CHARS:
        chosen = chosen[:max(1, len(chosen) // 2)]
        holder[keys[-1]] = chosen
    if start == 0 and len(chosen) == total:
        return data
    page: dict[str, Any] = {"list": ".".join(keys), "offset": start, "returned": len(chosen), "total": total}
    following = start + len(chosen)
    if following < total:
        page["next_offset"] = following
        page["note"] = (f"{len(chosen)} of {total} {what} returned (from {start}); call {tool} again with "
                        f"offset {following} for the next ones")
    elif chosen:
        page["note"] = f"the last {len(chosen)} of {total} {what} (from {start})"
    else:
        page["note"] = f"nothing from offset {start}: there are {total} {what}"
    data["page"] = page
    return data


def text_piece(text: str, offset: object, tool: str, limit: int = TEXT_CHARS) -> tuple[str, dict[str, Any] | None]:
    """`limit` characters of `text` from `offset`, and the `page` that says what is left (None:
    the whole text)."""
    start, _ = _limits(offset, None)
    if start == 0 and len(text) <= limit:
        return text, None
    piece = text[start:start + limit]
    page: dict[str, Any] = {"offset": start, "returned": len(piece), "total": len(text)}
    if start + len(piece) < len(text):
        page["next_offset"] = start + len(piece)
        page["note"] = (f"characters {start} to {start + len(piece)} of {len(text)}; call {tool} again with "
                        f"offset {start + len(piece)} for the rest")
    elif not piece:
        page["note"] = (f"nothing from offset {start}: the text has {len(text)} characters, so an offset "
                        f"from 0 to {max(0, len(text) - 1)} gives a piece of it")
    else:
        page["note"] = f"the last characters of the text, from {start} of {len(text)}"
    return piece, page


def _cut_note(size: int) -> str:
    cap = MAX_ANALYSED_BYTES
    return (f"the file is {size} bytes and memory tools read only its first {cap} bytes "
            f"({cap // (1024 * 1024)} MiB): the last {size - cap} bytes are in no reply, at any offset")


def load(root: Path, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
    """The format's loading: every file in `_core/` and the routes of `_index.md` — never
    `_archive/`. A core file or an index that is a link leading out of the root is named with
    the reason, never read."""
    where = Containment(root)
    core: list[dict[str, Any]] = []
    for rel in _core_files(root, where):
        try:
            text, size, truncated = _read(root, rel, where)
        except ToolFailure as exc:
            core.append({"path": shown(rel), "text": None, "error": exc.message})
            continue
        piece, page = text_piece(text, 0, "memory_read")
        row: dict[str, Any] = {"path": shown(rel), "text": piece, "bytes": size,
                               **({"truncated": True} if truncated else {})}
        if page is not None:
            row.update(truncated=True, note=f"only the first {len(piece)} characters; read the rest with "
                                            "memory_read (full: true, offset)")
        if truncated:
            row.update(read=MAX_ANALYSED_BYTES, note=f"{row['note']}; {_cut_note(size)}" if "note" in row
                       else _cut_note(size))
        core.append(row)
    index: dict[str, Any] = {"path": INDEX, "routes": []}
    try:
        text, index_size, index_cut = _read(root, INDEX, where)
    except ToolFailure as exc:
        index["error"] = (exc.message if exc.kind == "inside-root"
                          else "`_index.md` is missing, so no file can be loaded on demand"
                          if not os.path.lexists(root / INDEX) else "`_index.md` cannot be read")
        routes: tuple[Route, ...] = ()
    else:
        if index_cut:
            # A line cut at the cap is no route (as memory_status and `pmem status` read it).
            text = text[:text.rindex("\n") + 1] if "\n" in text else ""
            index.update(truncated=True, bytes=index_size, read=MAX_ANALYSED_BYTES,
                         note=_cut_note(index_size) + "; the routes listed are those of the lines read whole, "
                              "so some routes are missing: tell the user the index is too large to load")
        routes = parse_index(MemoryFile(text)).routes
    start, count = _limits(offset, limit)
    # Only the page asked for is built (a 200k-line index holds tens of thousands of routes).
    rows: list[dict[str, Any]] = [{} for _ in routes]
    for i in range(start, min(len(routes), start + count)):
        route = routes[i]
        row = {"path": shown(route.path) if route.path is not None else None, "description": route.description,
               "line": route.line + 1}
        if route.path is None:
            row.update(written=route.written, problem=route.problem)
        rows[i] = row
    index["routes"] = rows
    data = {
        "root": shown(str(root)),
        "core": core,
        "index": index,
        "next": "Baseline context is loaded (not every file). When the conversation matches a route, "
                "read that file with memory_read: its summary first. `_archive/` is never loaded.",
    }
    return mask_data(paged(data, ("index", "routes"), "memory_load", "routes", offset, limit))


def summary_of(doc: MemoryFile, rel: str) -> tuple[list[str] | None, list[str]]:
    """The bullets of a valid Summary (the format's rule), else None and the codes that say why not."""
    problems = sorted({f.code for f in check_summary(rel, Zone.ACTIVE, doc) if f.code in SUMMARY_CODES})
    section = doc.summary
    if problems or section is None:
        return None, problems or ["PM100"]
    bullets = []
    starts = [b.line for b in section.bullets] + [section.end]
    for bullet, nxt in zip(section.bullets, starts[1:], strict=True):
        more = [doc.lines[j].strip() for j in range(bullet.line + 1, nxt) if doc.lines[j].strip()]
        bullets.append(" ".join([bullet.text, *more]))
    return bullets, []


_WHY_FULL = {
    "PM100": "it has no `## Summary`",
    "PM101": "its summary is not right after the title and metadata",
    "PM102": "its summary does not hold 3 to 6 bullets",
    "PM103": "its summary holds more than bullets",
    "PM104": "a summary bullet is empty or a placeholder",
    "PM105": "it has two summary headings",
    "PM106": "its summary heading is not `## Summary` or `## 摘要`",
}


def read(root: Path, raw: object, full: bool = False, archived: bool = False, offset: int = 0) -> dict[str, Any]:
    """Summary-first reading (the format's "Summary-first on-demand loading"); a long text comes
    in pieces of TEXT_CHARS characters, from `offset`."""
    try:
        rel = validate_relative(raw)
    except Refusal as exc:
        raise ToolFailure.from_refusal(exc) from None
    zone = zone_of(rel)
    if zone is Zone.HIDDEN:
        raise ToolFailure("protected-path", f"`{rel}` is hidden; memory tools never read hidden files")
    if zone in (Zone.ARCHIVE, Zone.TRASH, Zone.ARCHIVE_INDEX) and not archived:
        raise ToolFailure("archive", f"`{rel}` is in `_archive/`, which is not loaded in normal use; read it "
                                     "only when the user explicitly asks (archived: true)")
    if not is_markdown(rel):
        raise ToolFailure("not-memory", f"`{rel}` is not a memory file (memory files end in `.md`)")
    try:
        resolve_inside(root, rel)
    except Refusal as exc:
        raise ToolFailure.from_refusal(exc) from None
    try:
        st = os.lstat(root / rel)
    except FileNotFoundError:
        raise ToolFailure("source-exists", f"`{rel}` does not exist") from None
    except OSError as exc:
        raise ToolFailure("unreadable", f"`{rel}` cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ToolFailure("source-exists", f"`{rel}` is not a regular file")
    text, size, truncated = _read(root, rel)
    doc = MemoryFile(text)
    out: dict[str, Any] = {"path": rel, "zone": zone.value, "title": doc.title_text, "bytes": size}
    if zone is not Zone.ACTIVE:
        out.update(summary_only=False, text=text,
                   why="summary-first applies to active on-demand files only; this one is read whole")
    elif full:
        out.update(summary_only=False, text=text, why="the whole file was asked for (full: true)")
    else:
        bullets, problems = summary_of(doc, rel)
        if bullets is None:
            reasons = "; ".join(_WHY_FULL[c] for c in problems)
            out.update(summary_only=False, text=text, why=f"no valid summary ({reasons}), so the whole file")
        else:
            out.update(summary_only=True, summary=bullets,
                       next="This is the file's summary only. If it answers the request, answer from it without "
                            "claiming to have read the whole file. If the fact is absent, ambiguous or needs "
                            "exact detail, say the summary is not enough and call memory_read with full: true; "
                            "never invent the missing detail.")
    if truncated and not out["summary_only"]:
        out.update(truncated=True, read=MAX_ANALYSED_BYTES, note=_cut_note(size))
        out["why"] += f" (only its first {MAX_ANALYSED_BYTES // (1024 * 1024)} MiB)"
    if "text" in out:
        out["text"], page = text_piece(out["text"], offset, "memory_read")
        if page is not None:
            if out.get("truncated"):
                # `total` counts the characters that can be read, not the file's: say so on the page.
                page.update(truncated=True, bytes=size, read=MAX_ANALYSED_BYTES)
                if "next_offset" not in page:
                    page["note"] += (f"; that is where reading stops, not where the file ends ({size} bytes, "
                                     f"only the first {MAX_ANALYSED_BYTES} can be read)")
            out["page"] = page
    out["path"] = shown(rel)
    return mask_data(out)


UNROUTED_NAMED = 100  # unrouted files named in memory_status (all are counted)
SIDE_LIST = 100  # items of a reply's other lists (expired trash, unreadable files), all counted


def _capped(holder: dict[str, Any], key: str, what: str) -> None:
    """Keep the first SIDE_LIST items of a list beside the paged one, saying how many there are."""
    items = holder.get(key)
    if isinstance(items, list) and len(items) > SIDE_LIST:
        holder[key] = items[:SIDE_LIST]
        holder[f"{key}Count"] = len(items)
        holder[f"{key}Note"] = f"the first {SIDE_LIST} of {len(items)} {what}"


def status(root: Path, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
    """`pmem status --format json`, its routes a page at a time."""
    try:
        excluded = resolve_settings(root).excluded
    except SettingsError:
        excluded = None  # as the CLI: the status is still given, without `exclude`
    data = memory_status(root, excluded).as_dict()
    unrouted = data["active"]["unrouted"]
    if len(unrouted) > UNROUTED_NAMED:
        data["active"]["unrouted"] = unrouted[:UNROUTED_NAMED]
        data["active"]["unroutedCount"] = len(unrouted)
        data["active"]["unroutedNote"] = (f"the first {UNROUTED_NAMED} of {len(unrouted)} unrouted files; "
                                          "memory_check lists each as a PM202 finding")
    return mask_data(paged(data, ("routes",), "memory_status", "routes", offset, limit))


def health(root: Path, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
    """`pmem health --format json`, its items a page at a time."""
    data = memory_health(root, settings_of(root)).as_dict()
    _capped(data, "expiredTrash", "expired trash items; `pmem health --format json` lists them all")
    return mask_data(paged(data, ("items",), "memory_health", "items", offset, limit))


def _history_json(run: Any, root: Path, *args: Any) -> dict[str, Any]:
    """A history command's `--format json` answer (cli/history.py: one implementation for the
    CLI and the agent), or its refusal as a tool error."""
    import io

    out, err = io.StringIO(), io.StringIO()
    code = run(root, *args, "json", out, err)
    text = out.getvalue().strip()
    data = json.loads(text) if text else {}
    if code != 0:
        error = data.get("error") or {}
        raise ToolFailure(error.get("kind", "history"), error.get("message") or err.getvalue().strip()
                          or "the history command failed")
    return data


def history(root: Path, path: str | None = None, since: str | None = None, offset: int = 0,
            limit: int | None = None) -> dict[str, Any]:
    """`pmem history [PATH] [--since WHEN] --format json`, its entries a page at a time."""
    from ..cli.history import run_history

    require_root(root)
    data = _history_json(run_history, root, path, since)
    return mask_data(paged(data, ("entries",), "memory_history", "entries", offset, limit))


def diff(root: Path, entry: str | None = None, path: str | None = None, since: str | None = None,
         unreviewed: bool = False, offset: int = 0) -> dict[str, Any]:
    """`pmem diff … --format json` (secrets masked there), a long diff in pieces."""
    from ..cli.history import run_diff

    require_root(root)

    def run(root: Path, fmt: str, out: Any, err: Any) -> int:
        return run_diff(root, entry, path, since, fmt, out, err, unreviewed=unreviewed)

    data = _history_json(run, root)
    piece, page = text_piece(data.get("diff", ""), offset, "memory_diff")
    data["diff"] = piece
    if page is not None:
        data["page"] = page
    return data


def _check_path(root: Path, raw: object) -> str:
    if not isinstance(raw, str) or not raw:
        raise ToolFailure("relative-path", "a path must be a non-empty string")
    rel = root_relative(root, raw, cwd=root)
    if rel is None:
        raise ToolFailure("inside-root", f"`{raw}` is not inside the memory root")
    return rel


def check(root: Path, paths: list[str] | None = None, path: str | None = None,
          content: str | None = None, offset: int = 0, limit: int | None = None) -> dict[str, Any]:
    """`pmem check [PATH…] --format json`, or with `content` `pmem check --stdin-filename PATH`."""
    if content is not None and path is None:
        raise ToolFailure("arguments", "`content` needs `path`: where the text would be saved")
    wanted: list[str] = []
    for raw in [*(paths or []), *([path] if path is not None else [])]:
        rel = _check_path(root, raw)
        if rel not in wanted:
            wanted.append(rel)
    if content is not None:
        assert path is not None
        proposed = (_check_path(root, path), content)
        if zone_of(proposed[0]) is Zone.HIDDEN:
            raise ToolFailure("protected-path", f"`{proposed[0]}` is hidden; it is never a memory file")
    else:
        proposed = None
    result = check_files(root, settings_of(root), wanted or None, proposed)
    missing = [p for p in wanted if not result.state.is_file(p)]
    if missing:
        raise ToolFailure("source-exists", f"`{missing[0]}` is not a file in the memory root")
    files = result.state.markdown_count() if not wanted else len(wanted)
    data = report_data(str(root), files, result.findings, result.state.read_problems(wanted or None))
    _capped(data, "unreadable", "files that cannot be read; `pmem check --format json` lists them all")
    _capped(data, "truncated", "files analysed only up to the cap")
    return mask_data(paged(data, ("diagnostics",), "memory_check", "findings", offset, limit))


# -- writing: previews and their tokens -------------------------------------------------------
@dataclass(frozen=True)
class Pending:
    request: Request
    preview: str  # what the user is shown (masked)
    command: str = ""  # what a person runs to review and apply it themselves (cli_command)
    declined_as: str = ""  # how a "no" to it is recorded (engine/lifecycle/declines.py)


class Previews:
    """The previews this server gave, by token: each can be applied once (docs/design.md §10)."""

    def __init__(self, limit: int = MAX_TOKENS) -> None:
        self._by_token: OrderedDict[str, Pending] = OrderedDict()
        self._limit = limit

    def remember(self, token: str, pending: Pending) -> None:
        self._by_token.pop(token, None)
        self._by_token[token] = pending
        while len(self._by_token) > self._limit:
            self._by_token.popitem(last=False)

    def peek(self, token: object) -> Pending | None:
        """The preview `token` names, left unspent (the confirmation is asked before the token
        is taken: in protocol revision 2026-07-28 the client answers by calling again with it)."""
        return self._by_token.get(token) if isinstance(token, str) else None

    def discard(self, token: object) -> Pending | None:
        """Spend `token` without applying it (its confirmation failed); its preview, if any."""
        return self._by_token.pop(token, None) if isinstance(token, str) else None

    def take(self, token: object) -> Pending:
        """The preview `token` names, forgotten at once: a token is spent by its first use."""
        pending = self._by_token.pop(token, None) if isinstance(token, str) else None
        if pending is None:
            raise ToolFailure("unknown-token", "this token is not a preview this server gave, or it was used "
                                               "already (a token works only in the server session that previewed "
                                               "it); call memory_preview again and show the user the new preview")
        return pending


@dataclass(frozen=True)
class HistoryWrite:
    """undo or restore as the agent asked for it: made into a `Request` from the history store
    (`_from_history`), as the CLI makes it."""

    op: str
    entry: str  # the entry id as given (`entry` for undo, `at` for restore)
    path: str | None  # restore: the file
    paths: tuple[str, ...] = ()  # undo: only these files of the entry


def _request(operation: str, path: str | None, content: str | None, description: str | None,
             reason: str | None, route: bool | str, add_route: bool = False, entry: str | None = None,
             at: str | None = None, paths: list[str] | None = None) -> Request | HistoryWrite:
    if isinstance(route, str):
        # The CLI's `--route DESCRIPTION`: a route, with this description.
        if not (operation in BY_NAME and BY_NAME[operation].route):
            raise ToolFailure("arguments", f"`route` is for {_takers('route')} only, not {operation}; "
                                           "a route's description for the route operation is `description`")
        if description is not None and description != route:
            raise ToolFailure("arguments", "`route` (the description, as the CLI's --route) and `description` "
                                           "differ; give one")
        description, route = route, True
    if operation not in OPERATIONS:
        raise ToolFailure("arguments", f"unknown operation `{operation}`; one of: {', '.join(OPERATIONS)}")
    # What each operation takes is its registry entry's (engine/lifecycle/registry.py); an
    # argument it does not take is dropped, except those whose presence says a mistake.
    op = BY_NAME[operation]
    if op.takes_path and path is None:
        raise ToolFailure("arguments", f"{operation} needs a `path`")
    if op.content and content is None:
        raise ToolFailure("arguments", f"{operation} needs the file's whole new `content`")
    if not op.content and content is not None:
        raise ToolFailure("arguments", f"`content` is for {_takers('content')} only, not {operation}")
    if add_route and not op.add_route:
        raise ToolFailure("arguments", f"`add_route` is for {_takers('add_route')} only, not {operation}")
    given = {"entry": entry, "at": at}
    for name, value in given.items():
        if value is not None and op.entry != name:
            raise ToolFailure("arguments", f"`{name}` is for {_entry_takers(name)} only, not {operation}")
    if op.paths and path is not None:
        raise ToolFailure("arguments", f"{operation} takes `paths` (a list of the entry's files), not `path`")
    if paths is not None and not op.paths:
        raise ToolFailure("arguments", f"`paths` is for {_takers('paths')} only, not {operation}")
    if op.entry is not None:
        # History's writes: the entry as given, and (undo) the chosen files; `make_preview` turns
        # them into the request the CLI makes, from the history store.
        value = given[op.entry]
        if not isinstance(value, str) or not value.strip():
            raise ToolFailure("arguments", f"{operation} needs `{op.entry}`: an entry id from memory_history")
        chosen = [p for p in paths or [] if isinstance(p, str)]
        if len(chosen) != len(paths or []) or any(not p for p in chosen):
            raise ToolFailure("arguments", "`paths` must be file paths (non-empty strings)")
        return HistoryWrite(operation, value.strip(), path if op.takes_path else None, tuple(chosen))
    if op.reason and not (reason or "").strip():
        reason = DEFAULT_ARCHIVE_REASON
    return Request(operation, path if op.takes_path else None,
                   reason if op.reason else None,
                   content, description if op.description else None,
                   route if op.route else True, add_route)


def _takers(argument: str) -> str:
    """The MCP operations that take `argument` (a `WriteOperation` flag), for an error."""
    return " and ".join(name for name in OPERATIONS if getattr(BY_NAME[name], argument))


def _entry_takers(argument: str) -> str:
    """The MCP operations whose history entry is named `argument` (`entry`, `at`)."""
    return " and ".join(name for name in OPERATIONS if BY_NAME[name].entry == argument)


def _from_history(root: Path, asked: HistoryWrite) -> tuple[Request, str]:
    """A history write as given (`_request`) made into the request the CLI makes of it
    (cli/history.py), and the command a person runs for it: the same preview, the same door.
    undo is always one lifecycle plan here (engine/lifecycle/undo.py): one preview, one token,
    where the CLI applies an undo of memory files only as saves, one by one."""
    from ..cli.history import UsageError, restore_request, root_relative, undo_request
    from ..engine.history.git import HistoryOff

    try:
        if asked.op == "undo":
            chosen = [root_relative(root, p) for p in asked.paths]
            request = undo_request(root, asked.entry, chosen)
            args = ["undo", asked.entry, *chosen]
        else:
            rel = root_relative(root, str(asked.path))
            request = restore_request(root, rel, asked.entry)
            args = ["restore", rel, "--at", asked.entry]
    except HistoryOff as exc:
        raise ToolFailure("history-off", str(exc)) from None
    except (UsageError, ValueError) as exc:
        raise ToolFailure("usage", f"{exc}; nothing was changed") from None
    return request, mask_text(shlex.join(["pmem", "--root", str(root), *args]))


def make_preview(root: Path, previews: Previews, operation: str, path: str | None = None,
                 content: str | None = None, description: str | None = None, reason: str | None = None,
                 route: bool | str = True, add_route: bool = False, entry: str | None = None,
                 at: str | None = None, paths: list[str] | None = None) -> dict[str, Any]:
    asked = _request(operation, path, content, description, reason, route, add_route, entry, at, paths)
    request, command = _from_history(root, asked) if isinstance(asked, HistoryWrite) else (asked, None)
    try:
        shown = preview(context(root), request)
    except Refusal as exc:
        raise ToolFailure.from_refusal(exc) from None
    findings = diagnostics_data(save_findings(root, shown))
    data = preview_data(shown, findings)  # masked, the token kept
    if shown.token is None:
        data["next"] = "Nothing to do: there is nothing to apply."
    else:
        command = command or cli_command(root, request)
        key = declines.plan_key(root, shown.plan)
        previews.remember(shown.token, Pending(request, data["preview"], command, key))
        data["command"] = command
        data["next"] = ("Show the user this preview (and any findings) and ask them to confirm. Only after "
                        "their explicit yes, call memory_apply with this token. Never apply without asking. "
                        "If nobody can answer here (a headless run), give the user `command`: it shows them "
                        "this change and applies it after their yes.")
    return data


def cli_command(root: Path, request: Request) -> str:
    """The `pmem` command that shows a person this change and applies it after their yes in
    the terminal: the same request, so the same preview (a save's text is kept in the user's
    cache folder for it)."""
    args = ["pmem", "--root", str(root)]
    op, path = request.op, request.path if isinstance(request.path, str) else None
    if op == "save" and isinstance(request.content, str):
        args += ["save", path or ""]
        if not request.route:
            args.append("--no-route")
        elif request.description:
            args += ["--route", request.description]
        args += ["--content-file", str(pending_saves.keep(root, request.content))]
    elif op == "route":
        args += ["route", "add", path or ""]
        if request.description:
            args += ["--description", request.description]
    else:
        args.append(op)
        if path is not None:
            args.append(path)
        if op == "archive" and request.reason:
            args += ["--reason", request.reason]
        if request.add_route:
            args.append("--add-route")
    return mask_text(shlex.join(args))


def no_advice(pending: Pending) -> str:
    """After the user's no (or a dismissed question): nothing for the agent to do itself. The
    command stays (a headless run has nobody to answer), but the CLI asks the person for it."""
    return ("Do not retry this change or apply it another way: `pmem` refuses it without the person. If the user "
            f"wants it after all, they can run `{pending.command}` in their own terminal, where pmem shows them the "
            "change and asks them.")


def unanswered_advice(pending: Pending) -> str:
    """After a question nobody answered (dismissed, a headless run, a client that could not
    ask): no no is recorded — nobody said it — but nothing for the agent to do itself either."""
    return ("Do not apply this change another way: only the user decides. If they want it, they can run "
            f"`{pending.command}` in their own terminal, where pmem shows them the change and asks them.")


def record_no(pending: Pending) -> None:
    """The user declined or dismissed `pending`: the CLI will not apply it for an agent."""
    if pending.declined_as:
        with contextlib.suppress(OSError):  # the cache folder cannot be written: the answer is still a no
            declines.record(pending.declined_as)


def record_yes(pending: Pending) -> None:
    if pending.declined_as:
        with contextlib.suppress(OSError):
            declines.clear(pending.declined_as)


def was_declined(pending: Pending) -> bool:
    return bool(pending.declined_as) and declines.declined(pending.declined_as)


def apply(root: Path, pending: Pending, token: str) -> dict[str, Any]:
    try:
        plan, done = execute(root, Tokened(pending.request, token))  # the one door
    except Refusal as exc:  # StalePreview and ApplyError included
        raise ToolFailure.from_refusal(exc) from None
    if pending.request.op == "save" and isinstance(pending.request.content, str):
        pending_saves.forget(root, pending.request.content)  # applied: the person's command is spent too
    return applied_data(plan, done)  # masked
