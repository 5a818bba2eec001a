"""PM401: likely secrets, in every zone. The message names the kind, never the value. Fixes:
redact the value, or allow it on its line."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..findings import Finding, Severity
from ..fixes import Fix, TextEdit, text_of
from ..line_index import split_keepends
from ..memory_file import MemoryFile
from ..native import core_for
from ..root_state import RootState
from ..rule import ALL_ZONES, E, Rule, TextCheck
from ..secrets import ALLOW_MARKER, DOOR_CASE, DOOR_FOLDS, DOOR_PLAIN, REDACTED, SecretMatch, find_in_name, find_secrets
from ..secrets._generic import PREFILTER
from ..zones import Zone

_NATIVE = core_for("secrets")  # only where the build was written for this Python code (docs/native.md)

if TYPE_CHECKING:  # the settings model (pydantic) is not needed to run a check: hooks start fast
    from ..settings import Settings

RULES = (
    Rule("PM401", "secret", E,
             "This looks like a password, API key, token, private key or credentialed URL. Memory "
             "is plain text read by every agent the person uses, so a secret here travels far "
             "(the format's core rule 6). Remove it and keep it in a password manager. A value that "
             "only looks like a secret is the person's to allow, from their editor's quick fix; "
             "agents are never told how. The message names the kind and shows at most the first "
             "four characters. It is an error where the evidence is strong (a provider's documented "
             "token format, a private key block, a credential in a URL) and a warning, with its "
             "reason, where only a secret-named key, option or table column points at the value."),
)



# A link's path text or relative target, or a code span naming a path:
# `[a/x.md](a/x.md)`, `](<notes/x.md>)`, `` `notes/x.md` ``.
_LINKED_PATH = re.compile(r"\[(?P<c>[^\]\s]*/[^\]\s]*)(?=\]\()|\]\(\s*<?(?P<a>[^)\s>]+)|`(?P<b>[^`\s]*/[^`\s]*)`")


def _in_linked_paths(lines: list[str], found: list[SecretMatch],
                     allow: Sequence[re.Pattern[str]], only: Sequence[int] | None = None) -> list[SecretMatch]:
    """The secrets in the paths that `lines` link to (a route's target), which a line's own
    scan does not see: there a key after a `/` is taken for a path (`find_in_name`). Only
    relative targets (a URL's query is scanned with the line), and only on lines holding a
    secret-ish key word and an assignment sign, so that prose costs a few `in` tests. `only`:
    the lines that may hold both (the core's lines of the plain door, `secret_doors_lines`); None: all."""
    out: list[SecretMatch] = []
    for ln, line in enumerate(lines) if only is None else ((ln, lines[ln]) for ln in only):
        if "/" not in line or ("](" not in line and "`" not in line) or not ("=" in line or ":" in line):
            continue
        lowered = line.lower()
        if not any(k in lowered for k in PREFILTER):
            continue
        for w in _LINKED_PATH.finditer(line):
            group = next(g for g in "abc" if w.group(g) is not None)
            target, at = w.group(group), w.start(group)
            if "://" in target:
                continue
            for m in find_in_name(target, allow, whole=False):
                a, e = at + m.start, at + m.end
                if not any(o.line == ln and o.start < e and a < o.end for o in (*found, *out)):
                    out.append(SecretMatch(ln, a, ln, e, m.kind, m.hint, m.strong, m.reason))
    return out


def check_secrets(path: str, zone: Zone, doc: MemoryFile, settings: Settings) -> list[Finding]:
    secrets = settings.secrets
    if not secrets.enabled:
        return []
    out = []
    # The core's verdicts (docs/native.md, "The PM401 verdict"): nothing to find in the name or
    # the text, whatever the allow patterns; without one, the scan below decides.
    named = [] if _NATIVE is not None and _NATIVE.secrets_clear([path]) else find_in_name(path, secrets.allow_patterns)
    if named:
        m = named[0]
        kinds = "; ".join(f"{n.kind} ({n.hint})" for n in named)
        out.append(Finding(path, 0, 0, 0, 0, "PM401",
                           f"the file's name holds a likely {kinds}: every agent reads the names in memory, "
                           "so rename the file to say what it is about", None if m.strong else Severity.WARNING,
                           {"kind": m.kind, "evidence": "strong" if m.strong else "weak", "reason": m.reason,
                            "in": "name"}))
    # The record's verdict, else the core's doors of the lines (one native pass, where a file has
    # no record or its record said no): none open but a folded character is the same verdict
    # ("nothing here"); otherwise the scan runs only its parts behind an open door (an agent-rule
    # file's `API_KEY=<your-api-key>` opens the named door alone, not the disguise's or markup's).
    # The core names the lines that open the plain door, and the plain scan and the linked
    # paths read those only.
    doors: int | None = None
    plain_lines: list[int] | None = None
    if _NATIVE is not None:
        if doc.secrets_clear:
            return out
        doors, plain_lines = doc.secret_doors if doc.secret_doors is not None else _NATIVE.secret_doors_lines(doc.lines)
        if not doors & ~DOOR_FOLDS:  # the verdict: a folded character alone opens no door
            return out
    found = find_secrets(doc.lines, secrets.allow_patterns, in_sentences=False, doors=doors, plain_lines=plain_lines)
    if doors is None or doors & (DOOR_PLAIN | DOOR_CASE):  # a linked path's door is a named value's
        found += _in_linked_paths(doc.lines, found, secrets.allow_patterns, only=plain_lines)
    for m in found:
        if m.strong:
            message = (f"likely {m.kind} ({m.hint}): every agent reads memory, so remove it and keep it "
                       "in a password manager")
            severity = None
        else:
            message = (f"possible {m.kind} ({m.hint}; {m.reason}): every agent reads memory, so if it is "
                       "a secret remove it and keep it in a password manager")
            severity = Severity.WARNING
        data = {"kind": m.kind, "evidence": "strong" if m.strong else "weak", "reason": m.reason}
        out.append(Finding(path, m.line, m.start, m.end_line, m.end, "PM401", message, severity, data))
    return out


TEXT_CHECKS = (TextCheck(("PM401",), ALL_ZONES, check_secrets),)


# -- fixes ----------------------------------------------------------------------


def secret_fixes(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """Redact the value, or allow it on its line. Titles never contain the value."""
    if (finding.data or {}).get("in") == "name":
        return []  # a file's name: renaming it is the person's choice of a new name
    text = text_of(state, finding.path)
    if text is None:
        return []
    lines = split_keepends(text)
    if finding.end_line >= len(lines):
        return []
    redact = TextEdit(finding.path, finding.line, finding.col, finding.end_line, finding.end_col, REDACTED)
    # The allow marker goes on the line where the secret starts, or on a PEM block's BEGIN line.
    at = finding.line
    if at > 0 and "-----BEGIN" in lines[at - 1] and "-----BEGIN" not in lines[at]:
        at -= 1
    content = lines[at].rstrip("\r\n")
    allow = TextEdit(finding.path, at, len(content), at, len(content), f" {ALLOW_MARKER}")
    return [Fix("Redact the secret", "PM401", (redact,), preferred=True),
            Fix("Allow on this line (not a secret)", "PM401", (allow,))]


FIXES = {"PM401": secret_fixes}
