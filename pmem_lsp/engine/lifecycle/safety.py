"""The lifecycle safety contract (docs/design.md §3, spec "Lifecycle Safety Contract"), in one place.

Every lifecycle operation, from the CLI or the server, passes its untrusted path through
`validate_relative` and `resolve_inside`, and its source and destination through
`require_source` and `require_free` — when the action is offered *and* again at the moment
of execution. Each failure is a `Refusal` naming the rule it broke.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

from ..zones import ARCHIVE_DIR, ARCHIVE_INDEX, CORE_DIR, INDEX, TRASH_DIR, Containment, Zone, hidden_part, zone_of

# Rule names, as the refusal reports them.
NOT_RELATIVE = "relative-path"  # point 1
OUTSIDE_ROOT = "inside-root"  # point 2
SOURCE = "source-exists"  # point 3
UNREADABLE = "readable"  # a file the plan must read is there but cannot be read (unreadable is not missing)
COLLISION = "no-overwrite"  # point 3
PROTECTED = "protected-path"  # point 4
STRUCTURE = "lifecycle-structure"  # point 5: upgrade first
STATE = "wrong-zone"  # the operation does not apply to a file in that zone
CHANGED = "changed-since-preview"  # re-validation at execution found a different state
ENCODING = "not-rewritable"  # an index pmem cannot decode exactly is never rewritten
SECRET = "no-secrets"  # the format's core rule: memory never stores secrets
SETTINGS = "settings-usable"  # a `.pmem.toml` that cannot be used decides nothing by default
NESTED = "root-inside-root"  # the format has no root inside a root (`_archive/` holds an `_index.md`)

_HOME_ALIAS = re.compile(r"^(?:~|\$HOME\b|\$\{HOME\}|%USERPROFILE%|%HOMEPATH%|%HOMEDRIVE%)", re.I)
_DRIVE = re.compile(r"^[A-Za-z]:")
# Characters that look like `/`, `\`, `.` or `:` to a person but are not: a path that uses
# them is not what it seems, so it is refused rather than normalised.
_LOOKALIKES = set("\u2215\u2044\u29f8\u29f5\u29f9\u2216\u2571\u2572\ufe68\uff3c\uff0f\u2024\u2025\u2026\uff0e"
                  "\u3002\uff61\ufe52\u0589\u02d0\uff1a\ufe55\ufe13\u2236\ua789")


# Ordinary CJK punctuation in note names (`读书笔记：三体.md`, `计划。草稿.md`): allowed inside
# a name. A segment made only of dot-like characters (`。。`) or a drive-like start (`C：`)
# is still refused below.
_CJK_NAME_PUNCTUATION = {"\uff1a", "\u3002"}
_DOTLIKE = {".", "\u2024", "\u2025", "\u2026", "\uff0e", "\u3002", "\uff61", "\ufe52"}


def _looks_like_separator(c: str) -> bool:
    """A listed look-alike, or a character whose compatibility form contains `/`, `\\`, `.` or `:`
    (fullwidth and small forms, `⒈`, …)."""
    if c in _CJK_NAME_PUNCTUATION:
        return False
    return c in _LOOKALIKES or (not c.isascii() and any(x in unicodedata.normalize("NFKC", c) for x in "/\\.:"))


_LIFECYCLE_DIRS = {ARCHIVE_DIR, TRASH_DIR}


class Refusal(Exception):
    """The safety contract said no; `rule` names the rule, `message` says why to a person."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message

    def __str__(self) -> str:
        return self.message


def validate_relative(raw: object) -> str:
    """Point 1: a normalised relative POSIX path, or a refusal. Never touches the disk."""
    if not isinstance(raw, str):
        raise Refusal(NOT_RELATIVE, "the path must be a string")
    path = raw
    if any("\ud800" <= c <= "\udfff" for c in raw):
        # A name that is not UTF-8 arrives as lone surrogates, one per byte (U+DC80–U+DCFF):
        # pmem acts on it, writing its route with `%` escapes and its records in `names.shown`
        # form (docs/decisions.md, "Any name through the lifecycle"). A surrogate that stands for
        # no byte (JSON can carry "\ud800") names no file.
        try:
            # The bytes once more as the file system reads them: `\udcc3\udca9` is `é`.
            path = os.fsdecode(os.fsencode(raw))
        except UnicodeError:
            raise Refusal(NOT_RELATIVE, "the path holds a lone surrogate that stands for no byte of a name") from None
    # Checked on the string as given: stripping first would let a trailing newline or NEL
    # through, and would silently name a different file than ` notes.md`.
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in path):
        raise Refusal(NOT_RELATIVE, "the path contains control characters")
    if not path.strip():
        raise Refusal(NOT_RELATIVE, "the path is empty")
    if path != path.strip():
        raise Refusal(NOT_RELATIVE, "the path starts or ends with white space")
    if "\\" in path:
        raise Refusal(NOT_RELATIVE, "the path contains a backslash; use `/` and a path relative to the memory root")
    if any(_looks_like_separator(c) for c in path) or re.match(r"^[A-Za-z]\uff1a", path) or any(
            part and set(part) <= _DOTLIKE and part not in (".", "..") for part in path.split("/")):
        raise Refusal(NOT_RELATIVE, "the path contains a character that only looks like `/`, `.` or `:`")
    if path.startswith("/") or path.startswith("//"):
        raise Refusal(NOT_RELATIVE, f"`{path}` is absolute; give a path relative to the memory root")
    if _HOME_ALIAS.match(path) or path.startswith("$") or re.search(r"%[A-Za-z_]+%", path):
        # A note of the root may be named so (`$top.md`): `./` names it. Said only for one
        # Markdown name, so that `$HOME/notes/x.md` is never turned into a folder of the root.
        named_so = "/" not in path and path.lower().endswith(".md")
        raise Refusal(NOT_RELATIVE,
                      f"`{path}` uses a home or environment alias; give a path relative to the memory root"
                      + (f" (a file of the root named so: `./{path}`)" if named_so else ""))
    if _DRIVE.match(path):
        raise Refusal(NOT_RELATIVE, f"`{path}` is a drive path; give a path relative to the memory root")
    while path.startswith("./"):
        path = path[2:]
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise Refusal(NOT_RELATIVE, "the path names the memory root itself")
    if any(p == ".." for p in parts):
        raise Refusal(NOT_RELATIVE, f"`{raw}` contains `..`")
    return "/".join(parts)


def check_not_protected(rel: str) -> None:
    """Point 4: never `_core/**`, the two indexes, hidden paths, or the lifecycle folders."""
    zone = zone_of(rel)
    if zone is Zone.HIDDEN:
        part = hidden_part(rel)
        raise Refusal(PROTECTED, f"`{rel}` is hidden (`{part}` starts with `.`); pmem never touches hidden files")
    if zone is Zone.CORE or rel == CORE_DIR:
        raise Refusal(PROTECTED, f"`{rel}` is in `_core/`, which is protected")
    if rel in (INDEX, ARCHIVE_INDEX):
        raise Refusal(PROTECTED, f"`{rel}` is a protected index")
    if rel in _LIFECYCLE_DIRS:
        raise Refusal(PROTECTED, f"`{rel}` is a lifecycle folder")
    # On a case-insensitive file system (macOS, Windows) `_Core/profile.md` *is*
    # `_core/profile.md`: a path that only differs in case from a pmem path is refused.
    folded = rel.lower()
    if folded != rel and (zone_of(folded) is not zone or folded in (CORE_DIR, INDEX, ARCHIVE_INDEX, *_LIFECYCLE_DIRS)):
        raise Refusal(PROTECTED, f"`{rel}` differs only in letter case from a protected or lifecycle path")


def resolve_inside(root: Path, rel: str) -> Path:
    """Point 2: resolved (symlinks included), the path stays inside the root; and no part of
    it is a symbolic link, even one that stays inside (it would change what the path names,
    so the zone we checked would not be the zone we touch). `zones.Containment` decides."""
    where = Containment(root)
    if not where.inside(rel):
        raise Refusal(OUTSIDE_ROOT, f"`{rel}` resolves outside the memory root")
    if where.through_link(rel):
        raise Refusal(OUTSIDE_ROOT, f"`{rel}` goes through a symbolic link")
    return root / rel


def require_source(root: Path, rel: str) -> None:
    """Point 3: the source exists and is a regular file (not a link, folder or device)."""
    try:
        st = os.lstat(root / rel)
    except FileNotFoundError:
        raise Refusal(SOURCE, f"`{rel}` does not exist") from None
    except OSError as exc:
        raise Refusal(UNREADABLE, f"`{rel}` cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a symbolic link" if stat.S_ISLNK(st.st_mode)
                else "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file")
        raise Refusal(SOURCE, f"`{rel}` is {kind}")


def require_free(root: Path, rel: str) -> None:
    """Point 3: the destination does not exist. On a collision, stop: never overwrite, never merge."""
    if os.path.lexists(root / rel):
        raise Refusal(COLLISION, f"`{rel}` already exists; pmem never overwrites or merges files")


def validate_target(root: Path, raw: object) -> str:
    """Points 1, 2 and 4 for an untrusted path: a root-relative path that may be acted upon."""
    rel = validate_relative(raw)
    check_not_protected(rel)
    resolve_inside(root, rel)
    return rel


def refuse_secret(name: str, value: str | None, *, path: bool = False) -> None:
    """A text pmem would write into memory (a route's description, an archive reason, a file's
    path with `path=True`) must not hold a likely secret: refused, naming the kind only."""
    if not value:
        return
    from ..secrets import find_in_name, find_secrets

    found = find_in_name(value) if path else find_secrets([" ".join(value.split())])
    if found:
        raise Refusal(SECRET, f"the {name} holds a likely {found[0].kind}; memory never stores secrets, "
                              "so nothing was changed")


def structure_missing(root: Path) -> list[str]:
    """Point 5: the lifecycle paths that are not there (upgrade creates them)."""
    missing = []
    if not (root / ARCHIVE_DIR).is_dir():
        missing.append(f"{ARCHIVE_DIR}/")
    if not (root / TRASH_DIR).is_dir():
        missing.append(f"{TRASH_DIR}/")
    if not (root / ARCHIVE_INDEX).is_file():
        missing.append(ARCHIVE_INDEX)
    return missing


def require_structure(root: Path, op: str) -> None:
    missing = structure_missing(root)
    if missing:
        raise Refusal(STRUCTURE, f"cannot {op}: the lifecycle structure is incomplete "
                                 f"(missing {', '.join(missing)}); run upgrade first")
