"""PM402: relative Markdown links to files that are not in the root."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from ..findings import Finding
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


def check_links(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    state, rel, doc = analysis.state, entry.rel, entry.doc
    assert doc is not None
    out: list[Finding] = []
    base = posixpath.dirname(rel)
    for link in doc.links:
        target = link.target.strip()
        if not target or target.startswith("#"):
            continue  # an anchor in the same file
        path, problem = normalize_target(target, base)
        if problem is not None or path is None:
            continue  # URLs and absolute paths are not relative links (absolute ones: PM403)
        if path == "" or not state.missing(path):
            continue
        if "." not in posixpath.basename(path) and not state.missing(path + ".md"):
            continue  # `[a](note-a)`: Foam and Obsidian links leave out `.md`
        out.append(Finding(rel, link.line, link.start, link.line, link.end, "PM402",
                           f"link target `{path}` does not exist in the memory root"))
    return out


FILE_CHECKS = (FileCheck(("PM402",), LINK_ZONES, check_links),)
