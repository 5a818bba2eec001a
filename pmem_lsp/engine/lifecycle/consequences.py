"""What a lifecycle move does around it, beyond its own steps: the links from active and core
files that stop resolving when a file leaves its path (shown in archive and delete previews,
docs/decisions.md "Lifecycle"), and the folders in `_archive/` a move or a purge out of them
left empty.

Both are additive to a plan: the links are information for the user (the plan writes none of
those files, so they are not bound by the preview's token), and removing an empty folder loses
nothing and is never needed for the plan to be complete.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..findings import Finding
from ..names import shown
from ..zones import ARCHIVE_DIR, TRASH_DIR

if TYPE_CHECKING:
    from ..root_state import RootState
    from ..settings import Settings

# At most this many broken links are listed in a preview's text (the JSON findings keep all).
PREVIEW_LINKS = 10


@dataclass(frozen=True)
class BrokenLink:
    path: str  # the file holding the link
    line: int  # 0-based
    start: int
    end: int
    target: str  # the root-relative path the link names (the file that moves)


def links_broken_by(root: Path, sources: list[str], state: RootState | None = None,
                    settings: Settings | None = None) -> list[BrokenLink]:
    """Relative links in active and core files (as PM402 reads them) to any of `sources`,
    which are about to leave their paths. The moving files' own links are not counted, nor
    links in archived files (PM402 does not read those either). `state`: the root's files as
    a session holds them (the server's); without it the root is scanned (a fraction of a second
    for 10,000 files) with `settings` (the plan's), else the root's own."""
    if not sources:
        return []
    from ..root_state import RootState
    from ..rules.broken_links import LINK_ZONES, link_paths, md_form
    from ..zones import zone_of
    from .save import settings_or_defaults

    moving = set(sources)
    stems = {posixpath.basename(s)[:-3] if s.endswith(".md") else posixpath.basename(s) for s in moving}
    if state is None:
        state = RootState.scan(root, settings if settings is not None else settings_or_defaults(root))
    out: list[BrokenLink] = []
    for rel in sorted(state.files):
        entry = state.files[rel]
        if rel in moving or zone_of(rel) not in LINK_ZONES or entry.text is None:
            continue
        if not any(stem in entry.text for stem in stems):
            continue  # cheap: a link to the file spells its name
        found = link_paths(entry)
        for index, path in zip(found.at, found.paths, strict=True):
            # A link may leave out `.md` (Foam, Obsidian): `[a](notes/a)` names `notes/a.md`.
            target = path if path in moving else md_form(path)
            if target in moving and entry.doc is not None:
                link = entry.doc.link_at(index)
                out.append(BrokenLink(rel, link.line, link.start, link.end, target))
    return out


def preview_lines(broken: list[BrokenLink]) -> list[str]:
    """The preview's lines for `broken` (none when nothing breaks)."""
    if not broken:
        return []
    files = len({b.path for b in broken})
    lines = [f"  links that will break: {len(broken)} in {files} active file{'s' if files != 1 else ''} "
             "(PM402 until they are fixed, or the file is recovered)"]
    for b in broken[:PREVIEW_LINKS]:
        lines.append(f"    {shown(b.path)}:{b.line + 1} → {shown(b.target)}")
    if len(broken) > PREVIEW_LINKS:
        lines.append(f"    … and {len(broken) - PREVIEW_LINKS} more")
    return lines


def broken_link_findings(broken: list[BrokenLink], operation: str) -> list[Finding]:
    """`broken` as the PM402 findings the operation would add: the preview's `findings`."""
    return [Finding(b.path, b.line, b.start, b.line, b.end, "PM402",
                    f"link target `{b.target}` will not exist after this {operation}") for b in broken]


def prune_emptied(root: Path, moved_from: str) -> list[str]:
    """Remove the folders a move out of `_archive/` left empty, from the file's old folder
    up, never `_archive/` or `_archive/_trash/` themselves. Returns the folders removed. A
    folder that is not empty, or cannot be removed, stays (nothing depends on it)."""
    keep = {ARCHIVE_DIR, TRASH_DIR, ""}
    if not moved_from.startswith(ARCHIVE_DIR + "/"):
        return []
    removed: list[str] = []
    folder = posixpath.dirname(moved_from)
    while folder not in keep and folder.startswith(ARCHIVE_DIR + "/"):
        path = root / folder
        try:
            if path.is_symlink() or not path.is_dir():
                break
            os.rmdir(path)  # fails unless empty: never loses a file
        except OSError:
            break
        removed.append(folder)
        folder = posixpath.dirname(folder)
    return removed
