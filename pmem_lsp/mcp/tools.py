"""What the MCP tools do, without the MCP SDK (docs/design.md §10): plain functions of a memory
root that return JSON-ready data or raise `ToolFailure`. `server.py` wraps them as tools.

Every value they return has passed through `mask_data`: memory text (a core file, a route
description, a preview's diff) can hold a likely secret, and no tool output ever shows one.
"""

from __future__ import annotations

import os
import stat
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.checking import check_files, root_relative
from ..engine.health import memory_health
from ..engine.index_routes import parse_index
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
from ..engine.lifecycle.safety import Refusal, resolve_inside, validate_relative
from ..engine.memory_file import MemoryFile
from ..engine.report import build_report, diagnostics_data
from ..engine.root_state import MAX_ANALYSED_BYTES, read_regular_text
from ..engine.rules.summary import check_summary
from ..engine.secrets import mask_data
from ..engine.settings import Settings, SettingsError, resolve_settings
from ..engine.status import memory_status
from ..engine.zones import CORE_DIR, INDEX, Zone, is_markdown, zone_of

# The operations `memory_preview` takes (`init` is not one: the server needs a root to serve).
OPERATIONS = ("save", "route", "upgrade", "archive", "delete", "recover", "purge")
# The codes that make a Summary invalid under the format's rule (3 to 6 factual bullets right
# after the title and metadata, nothing else in it, one of it): the file is then read whole.
SUMMARY_CODES = ("PM100", "PM101", "PM102", "PM103", "PM104", "PM105", "PM106")
DEFAULT_ARCHIVE_REASON = "archived through `pmem mcp`"
MAX_TOKENS = 64  # previews kept for memory_apply; older ones are forgotten


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


# -- masking ------------------------------------------------------------------------------
# -- reading --------------------------------------------------------------------------------
def settings_of(root: Path) -> Settings:
    try:
        return resolve_settings(root)
    except SettingsError as exc:
        raise ToolFailure("settings", f"the memory root's settings cannot be used: {exc}") from None


def _read(root: Path, rel: str) -> tuple[str, int, bool]:
    """(text up to the cap, size in bytes, truncated) of a regular file already validated."""
    path = root / rel
    try:
        size = os.lstat(path).st_size
    except OSError as exc:
        raise ToolFailure("unreadable", f"`{rel}` cannot be read ({exc.strerror})") from None
    text = read_regular_text(path)
    if text is None:
        raise ToolFailure("unreadable", f"`{rel}` cannot be read")
    return text, size, size > MAX_ANALYSED_BYTES


def _inside(root: Path, path: Path) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real.startswith(real_root.rstrip(os.sep) + os.sep)


def _core_files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root / CORE_DIR):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.startswith(".") or not is_markdown(name) or not _inside(root, path):
                continue
            out.append(path.relative_to(root).as_posix())
    return out


def load(root: Path) -> dict[str, Any]:
    """The format's loading: every file in `_core/` and the routes of `_index.md` — never
    `_archive/`."""
    core: list[dict[str, Any]] = []
    for rel in _core_files(root):
        try:
            text, size, truncated = _read(root, rel)
        except ToolFailure as exc:
            core.append({"path": rel, "text": None, "error": exc.message})
            continue
        core.append({"path": rel, "text": text, "bytes": size, **({"truncated": True} if truncated else {})})
    index: dict[str, Any] = {"path": INDEX, "routes": []}
    try:
        text, _size, _truncated = _read(root, INDEX)
    except ToolFailure:
        index["error"] = ("`_index.md` is missing, so no file can be loaded on demand"
                          if not os.path.lexists(root / INDEX) else "`_index.md` cannot be read")
    else:
        for route in parse_index(MemoryFile(text)).routes:
            row: dict[str, Any] = {"path": route.path, "description": route.description, "line": route.line + 1}
            if route.path is None:
                row.update(written=route.written, problem=route.problem)
            index["routes"].append(row)
    return mask_data({
        "root": str(root),
        "core": core,
        "index": index,
        "next": "Baseline context is loaded (not every file). When the conversation matches a route, "
                "read that file with memory_read: its summary first. `_archive/` is never loaded.",
    })


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


def read(root: Path, raw: object, full: bool = False, archived: bool = False) -> dict[str, Any]:
    """Summary-first reading (the format's "Summary-first on-demand loading")."""
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
        out["truncated"] = True
        out["why"] += f" (only its first {MAX_ANALYSED_BYTES // (1024 * 1024)} MiB)"
    return mask_data(out)


def status(root: Path) -> dict[str, Any]:
    """`pmem status --format json`."""
    try:
        excluded = resolve_settings(root).excluded
    except SettingsError:
        excluded = None  # as the CLI: the status is still given, without `exclude`
    return mask_data(memory_status(root, excluded).as_dict())


def health(root: Path) -> dict[str, Any]:
    """`pmem health --format json`."""
    return mask_data(memory_health(root, settings_of(root)).as_dict())


def _check_path(root: Path, raw: object) -> str:
    if not isinstance(raw, str) or not raw:
        raise ToolFailure("relative-path", "a path must be a non-empty string")
    rel = root_relative(root, raw, cwd=root)
    if rel is None:
        raise ToolFailure("inside-root", f"`{raw}` is not inside the memory root")
    return rel


def check(root: Path, paths: list[str] | None = None, path: str | None = None,
          content: str | None = None) -> dict[str, Any]:
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
    report = build_report(str(root), files, result.findings, result.state.read_problems(wanted or None))
    return mask_data(report.model_dump(mode="json"))


# -- writing: previews and their tokens -------------------------------------------------------
@dataclass(frozen=True)
class Pending:
    request: Request
    preview: str  # what the user is shown (masked)


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

    def take(self, token: object) -> Pending:
        """The preview `token` names, forgotten at once: a token is spent by its first use."""
        pending = self._by_token.pop(token, None) if isinstance(token, str) else None
        if pending is None:
            raise ToolFailure("unknown-token", "this token is not a preview this server gave, or it was used "
                                               "already; call memory_preview again and show the user the new preview")
        return pending


def _request(operation: str, path: str | None, content: str | None, description: str | None,
             reason: str | None, route: bool) -> Request:
    if operation not in OPERATIONS:
        raise ToolFailure("arguments", f"unknown operation `{operation}`; one of: {', '.join(OPERATIONS)}")
    if operation != "upgrade" and path is None:
        raise ToolFailure("arguments", f"{operation} needs a `path`")
    if operation == "save" and content is None:
        raise ToolFailure("arguments", "save needs the file's whole new `content`")
    if operation != "save" and content is not None:
        raise ToolFailure("arguments", f"`content` is for save only, not {operation}")
    if operation == "archive" and not (reason or "").strip():
        reason = DEFAULT_ARCHIVE_REASON
    return Request(operation, path if operation != "upgrade" else None, reason if operation == "archive" else None,
                   content, description if operation in ("save", "route") else None,
                   route if operation == "save" else True)


def make_preview(root: Path, previews: Previews, operation: str, path: str | None = None,
                 content: str | None = None, description: str | None = None, reason: str | None = None,
                 route: bool = True) -> dict[str, Any]:
    request = _request(operation, path, content, description, reason, route)
    try:
        shown = preview(context(root), request)
    except Refusal as exc:
        raise ToolFailure.from_refusal(exc) from None
    findings = diagnostics_data(save_findings(root, shown))
    # The token is random hex, never memory: kept out of the masking, which could take it for a key.
    data = mask_data({**preview_data(shown, findings), "token": None})
    data["token"] = shown.token
    if shown.token is None:
        data["next"] = "Nothing to do: there is nothing to apply."
    else:
        previews.remember(shown.token, Pending(request, data["preview"]))
        data["next"] = ("Show the user this preview (and any findings) and ask them to confirm. Only after "
                        "their explicit yes, call memory_apply with this token. Never apply without asking.")
    return data


def apply(root: Path, pending: Pending, token: str) -> dict[str, Any]:
    try:
        plan, done = execute(root, Tokened(pending.request, token))  # the one door
    except Refusal as exc:  # StalePreview and ApplyError included
        raise ToolFailure.from_refusal(exc) from None
    return mask_data(applied_data(plan, done))
