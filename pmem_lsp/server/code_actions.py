"""Code actions: quick fixes (text edits) and lifecycle actions (commands that confirm first).

Lifecycle actions are offered where they apply (DESIGN §5): archive on an active file;
delete and recover on an archived file or its record; recover, and purge once expired, on a
trashed file or its record; upgrade on PM001. Delete is never offered on an active file.

Kinds, so that VS Code's Ctrl+. and lightbulb show them (they show `quickfix` and
`refactor.*`, and `source.*` only under "Source Action…"): the action a diagnostic calls for
is a `quickfix` carrying that diagnostic — archive a stale (PM501), concluded (PM502) or
duplicate (PM503) note, purge expired trash (PM304), upgrade (PM001); every other lifecycle
action on the file or record under the cursor is `refactor.pmem.<operation>`.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.archive_index import TRASHED, parse_archive_index, parse_date, record_location
from ..engine.fixes import Fix, quick_fixes
from ..engine.health import HEALTH_CODES, archive_reason
from ..engine.host import MemoryRoot
from ..engine.zones import ARCHIVE_INDEX, Zone, is_markdown, zone_of
from .convert import uri_to_path
from .nav_common import after_first_scan, workspace_edit

if TYPE_CHECKING:
    from .app import PmemServer

LIFECYCLE_KIND = lsp.CodeActionKind.Refactor + ".pmem"


def _command(title: str, op: str, path: str | None, reason: str | None = None,
             diagnostics: list[lsp.Diagnostic] | None = None) -> lsp.CodeAction:
    """A lifecycle action: a quick fix when it answers `diagnostics`, else a refactoring."""
    args: dict = {} if path is None else {"path": path}
    if reason:
        args["reason"] = reason
    kind = lsp.CodeActionKind.QuickFix if diagnostics else f"{LIFECYCLE_KIND}.{op}"
    return lsp.CodeAction(title=title, kind=kind, diagnostics=diagnostics or None,
                          command=lsp.Command(title=title, command=f"pmem.{op}", arguments=[args]))


def _record_actions(root: MemoryRoot, line: int, today: dt.date,
                    expired: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    doc = root.snapshot.doc(ARCHIVE_INDEX) if root.snapshot else None
    if doc is None:
        return []
    for record in parse_archive_index(doc):
        if record.heading_line <= line < record.end:
            location = record_location(record)
            if location is None:
                return []
            here = [d for d in expired if d.range.start.line == record.heading_line]
            return _file_actions(location, record.status == TRASHED, parse_date(record.get("recover-by")), today,
                                 here)
    return []


def _file_actions(rel: str, trashed: bool, recover_by: dt.date | None, today: dt.date,
                  expired: list[lsp.Diagnostic] | None = None) -> list[lsp.CodeAction]:
    zone = zone_of(rel)
    if zone is Zone.ACTIVE and is_markdown(rel):
        return [_command(f"Archive {rel}", "archive", rel)]
    if zone is Zone.ARCHIVE and not trashed:
        return [_command(f"Recover {rel}", "recover", rel), _command(f"Delete {rel} (move to trash)", "delete", rel)]
    if zone is Zone.TRASH:
        actions = [_command(f"Recover {rel}", "recover", rel)]
        if recover_by is not None and recover_by < today:
            actions.append(_command(f"Delete {rel} permanently", "purge", rel, diagnostics=expired))
        return actions
    return []


def _trash_deadline(root: MemoryRoot, rel: str) -> dt.date | None:
    doc = root.snapshot.doc(ARCHIVE_INDEX) if root.snapshot else None
    if doc is None:
        return None
    for record in parse_archive_index(doc):
        if record_location(record) == rel:
            return parse_date(record.get("recover-by"))
    return None


def to_code_action(ls: PmemServer, root: MemoryRoot, fix: Fix, diagnostics: list[lsp.Diagnostic]) -> lsp.CodeAction:
    related = [d for d in diagnostics if d.code == fix.code]
    return lsp.CodeAction(title=fix.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=related or None,
                          is_preferred=fix.preferred or None, edit=workspace_edit(ls, root, fix.edits))


def _quick_fixes(ls: PmemServer, root: MemoryRoot, rel: str, params: lsp.CodeActionParams,
                 today: dt.date) -> list[lsp.CodeAction]:
    if root.snapshot is None:
        return []
    wanted = {str(d.code) for d in params.context.diagnostics if d.source == "pmem"}
    out = []
    for finding in ls.host.findings(root).get(rel, []):
        if finding.code not in wanted:
            continue
        if not (finding.line <= params.range.end.line and params.range.start.line <= finding.end_line):
            continue
        for fix in quick_fixes(root.snapshot, finding, today):
            out.append(to_code_action(ls, root, fix, list(params.context.diagnostics)))
    return out


def _archive_fixes(ls: PmemServer, root: MemoryRoot, rel: str, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """PM501–PM503: archive the file, with the finding's reason (stale, concluded, duplicate).
    The command confirms first (lifecycle_commands.py)."""
    wanted = {str(d.code) for d in params.context.diagnostics if d.source == "pmem"} & set(HEALTH_CODES)
    if not wanted or root.snapshot is None:
        return []
    out = []
    for finding in ls.host.findings(root).get(rel, []):
        if finding.code not in wanted or not (
                finding.line <= params.range.end.line and params.range.start.line <= finding.end_line):
            continue
        reason = archive_reason(root.snapshot, finding)
        if reason is None:
            continue
        title = f"Archive {rel} ({reason})"
        related = [d for d in params.context.diagnostics if str(d.code) == finding.code]
        args = {"path": rel, "reason": reason}
        out.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=related or None,
                                  command=lsp.Command(title=title, command="pmem.archive", arguments=[args])))
    return out


def code_actions(ls: PmemServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    path = uri_to_path(params.text_document.uri)
    found = ls.host.locate(path) if path is not None else None
    if found is None:
        return []
    root, rel = found
    today = dt.date.today()
    ours = [d for d in params.context.diagnostics if d.source == "pmem"]
    expired = [d for d in ours if str(d.code) == "PM304"]
    actions = _quick_fixes(ls, root, rel, params, today) + _archive_fixes(ls, root, rel, params)
    if rel == ARCHIVE_INDEX:
        actions += _record_actions(root, params.range.start.line, today, expired)
    elif zone_of(rel) is Zone.TRASH:
        actions += _file_actions(rel, True, _trash_deadline(root, rel), today, expired)
    else:
        actions += _file_actions(rel, False, None, today)
    upgrade = [d for d in ours if str(d.code) == "PM001"]
    if upgrade:
        actions.append(_command("Upgrade: create the missing lifecycle folders", "upgrade", None, diagnostics=upgrade))
    only = params.context.only
    if only:
        actions = [a for a in actions if any(a.kind == k or str(a.kind).startswith(f"{k}.") for k in only)]
    return actions


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, LIFECYCLE_KIND]))
    @after_first_scan  # before it, nothing is known: an empty answer would look like "nothing to do"
    def on_code_action(ls: PmemServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return code_actions(ls, params)
