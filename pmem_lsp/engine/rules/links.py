"""PM402: relative Markdown links to files that are not in the root."""

from __future__ import annotations

import posixpath

from ..findings import Finding
from ..memory_file import MemoryFile
from ..paths import normalize_target
from ..snapshot import RootSnapshot


def check_links(snap: RootSnapshot, rel: str, doc: MemoryFile) -> list[Finding]:
    out: list[Finding] = []
    base = posixpath.dirname(rel)
    for link in doc.links:
        target = link.target.strip()
        if not target or target.startswith("#"):
            continue  # an anchor in the same file
        path, problem = normalize_target(target, base)
        if problem is not None or path is None:
            continue  # URLs and absolute paths are not relative links (absolute ones: PM403)
        if path == "" or not snap.missing(path):
            continue
        if "." not in posixpath.basename(path) and not snap.missing(path + ".md"):
            continue  # `[a](note-a)`: Foam and Obsidian links leave out `.md`
        out.append(Finding(rel, link.line, link.start, link.line, link.end, "PM402",
                           f"link target `{path}` does not exist in the memory root"))
    return out
