"""Code actions: the quick fixes of the findings in view (text edits, `catalogue.quick_fixes`)
and the lifecycle actions of the place (`engine/actions.py`), converted in `convert.py`.

Kinds, so that VS Code's Ctrl+. and lightbulb show them (they show `quickfix` and
`refactor.*`, and `source.*` only under "Source Action…"): the action a diagnostic calls for is
a `quickfix` carrying that diagnostic — archive a stale (PM501), concluded (PM502) or duplicate
(PM503) note, purge expired trash (PM304), upgrade (PM001); every other lifecycle action on the
file or record under the cursor is `refactor.pmem.<operation>`.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from ..engine.actions import actions_at
from ..engine.catalogue import quick_fixes
from . import convert
from .nav_common import after_first_scan

if TYPE_CHECKING:
    from .app import PmemServer


def code_actions(ls: PmemServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    path = convert.uri_to_path(params.text_document.uri)
    found = ls.host.locate(path) if path is not None else None
    if found is None:
        return []
    root, rel = found
    state = root.state
    if state is None:
        return []
    today = dt.date.today()
    diagnostics = list(params.context.diagnostics)
    wanted = {str(d.code) for d in diagnostics if d.source == convert.SOURCE}
    at = convert.positions(ls, state, rel)
    first, _ = at.from_client(params.range.start)
    last, _ = at.from_client(params.range.end)
    findings = ls.publisher.catch_up(root).of(rel)  # made from the text the root holds now
    out = [convert.fix_action(ls, root, fix, diagnostics)
           for f in findings if f.code in wanted and f.line <= last and first <= f.end_line
           for fix in quick_fixes(state, f, today)]
    out += [convert.lifecycle_action(action, diagnostics)
            for action in actions_at(state, rel, first, last, findings, wanted, today)]
    only = params.context.only
    if only:
        out = [a for a in out if any(a.kind == k or str(a.kind).startswith(f"{k}.") for k in only)]
    return out


def register(server: PmemServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, convert.LIFECYCLE_KIND]))
    @after_first_scan  # before it, nothing is known: an empty answer would look like "nothing to do"
    def on_code_action(ls: PmemServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return code_actions(ls, params)
