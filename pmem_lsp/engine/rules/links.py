"""PM402: relative Markdown links to files that are not in the root."""

from __future__ import annotations

import functools
import posixpath
from typing import TYPE_CHECKING

from ..findings import Finding
from ..memory_file import Link
from ..native import CORE as _NATIVE
from ..paths import normalize_target
from ..root_state import FileEntry
from ..rule import FileCheck, Rule, W
from ..zones import Zone

if TYPE_CHECKING:
    from ..analysis import Analysis

RULES = (
    Rule("PM402", "broken-link", W,
             "This relative link points to a file that does not exist in the root."),
)

# Files whose links are checked (and whose targets the analysis follows, to re-check a file
# when a target appears or vanishes).
LINK_ZONES = frozenset({Zone.ACTIVE, Zone.CORE})


# Files of one folder link to the same targets (the index, core files, siblings): a pure
# function of two strings, so a bounded memo of it is safe.
_normalize = functools.lru_cache(maxsize=4096)(normalize_target)


def is_wikilink_text(text: str) -> bool:
    """`[[Target|Label]]("text")`: CommonMark reads a link to `"text"` whose text is
    `[Target|Label]`, but the author wrote a wiki link followed by parentheses (Obsidian
    and Foam show the wiki link and the parentheses as text). Not a link to what follows."""
    return len(text) >= 2 and text[0] == "[" and text[-1] == "]"


def link_paths(entry: FileEntry) -> tuple[tuple[Link, str], ...]:
    """The file's relative links with the root-relative path each names (URLs, absolute
    paths, anchors and empty targets left out), normalised once per text and kept with the
    entry: PM402 and the analysis's link graph both use them."""
    return entry.cached("link-paths", lambda: _link_paths(entry))


def _link_paths(entry: FileEntry) -> tuple[tuple[Link, str], ...]:
    doc = entry.doc
    if doc is None:
        return ()
    base = posixpath.dirname(entry.rel)
    out = []
    rows = doc._link_rows
    if _NATIVE is not None and rows is not None:
        # The native core normalises the targets of its record's links (docs/native.md): kind
        # 0 names no root path, 1 the path, 2 a target only Python reads (a `%` escape).
        answers = _NATIVE.link_paths([(row[3], row[4]) for row in rows], base)
        for link, (kind, found) in zip(doc.links, answers, strict=True):
            if kind == 2:
                path, problem = (None, "wikilink") if is_wikilink_text(link.text) else _normalize(link.target, base)
                if problem is None and path is not None:
                    out.append((link, path))
            elif kind == 1:
                out.append((link, found))
        return tuple(out)
    for link in doc.links:
        if is_wikilink_text(link.text):
            continue
        path, problem = _normalize(link.target, base)
        if problem is None and path is not None:
            out.append((link, path))
    return tuple(out)


def md_form(path: str) -> str | None:
    """The note a link target without an extension also names (`[a](note-a)`: Foam and
    Obsidian leave out `.md`), or None."""
    return None if "." in posixpath.basename(path) else path + ".md"


def check_links(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    state, rel = analysis.state, entry.rel
    out: list[Finding] = []
    for link, path in link_paths(entry):
        # (URLs and absolute paths are not relative links: absolute ones are PM403's.)
        if path == "" or not state.missing(path):
            continue
        note = md_form(path)
        if note is not None and not state.missing(note):
            continue
        out.append(Finding(rel, link.line, link.start, link.line, link.end, "PM402",
                           f"link target `{path}` does not exist in the memory root"))
    return out


def _targets_present(analysis: Analysis, entry: FileEntry) -> tuple[tuple[bool, bool], ...]:
    """What `check_links` asks of the root: whether each target is missing, and where it is
    and names no extension, whether its `.md` form is (only then does `check_links` ask: the
    `.md` form of a target that is there is never looked up, which was most of this check's
    time, a settings and scan-error test for each)."""
    missing = analysis.state.missing
    out = []
    for _link, path in link_paths(entry):
        if path:
            gone = missing(path)
            note = md_form(path) if gone else None
            out.append(_PAIRS[gone][note is not None and missing(note)])
    return tuple(out)


# The four answers for one target, shared by every file that keeps them (`Analysis` keeps a
# file's answers with its PM402 findings).
_PAIRS = (((False, False), (False, True)), ((True, False), (True, True)))


FILE_CHECKS = (FileCheck(("PM402",), LINK_ZONES, check_links, depends=_targets_present),)
