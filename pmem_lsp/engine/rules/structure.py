"""PM001–PM006: the shape of the root (lifecycle folders, index, core, raw material)."""

from __future__ import annotations

from ..findings import Finding, file_finding
from ..settings import Settings
from ..snapshot import FileEntry, RootSnapshot
from ..zones import ARCHIVE_DIR, ARCHIVE_INDEX, INDEX, REQUIRED_CORE_FILES, TRASH_DIR, Zone, is_markdown


def _file_finding(entry: FileEntry, code: str, message: str) -> Finding:
    return file_finding(entry.rel, entry.doc if entry.markdown else None, code, message)


def check_raw_material(entry: FileEntry, settings: Settings) -> Finding | None:
    """PM005 for one file: not Markdown, or larger than `largeFile.kb`."""
    if entry.error or entry.zone in (Zone.INDEX, Zone.ARCHIVE_INDEX):
        return None  # the indexes are never raw material (an index too long is PM006)
    if not entry.markdown:
        return _file_finding(entry, "PM005", "non-Markdown file in memory: keep raw material in its project "
                                             "and store a short description and path here")
    if entry.size > settings.large_file.kb * 1024:
        return _file_finding(entry, "PM005", f"{entry.size // 1024} KiB file in memory (over {settings.large_file.kb} "
                                             "KiB): store a summary and a path to the source instead")
    return None


def check_structure(snap: RootSnapshot) -> list[Finding]:
    """Findings about the root's shape (PM001–PM004, PM006); they sit on `_index.md`, on the
    missing core files, or on the largest core file."""
    out: list[Finding] = []
    settings = snap.settings
    missing = [label for label, rel in ((f"{ARCHIVE_DIR}/", ARCHIVE_DIR), (f"{TRASH_DIR}/", TRASH_DIR),
                                        (ARCHIVE_INDEX, ARCHIVE_INDEX))
               if snap.missing(rel)]
    if missing:
        out.append(Finding(INDEX, 0, 0, 0, 0, "PM001",
                           f"lifecycle structure incomplete, missing {', '.join(missing)}: run `pmem upgrade`"))
    index = snap.files.get(INDEX)
    if index is None and not snap.is_file(INDEX):
        if any(is_markdown(rel) for rel in snap.files.by_zone[Zone.ACTIVE]):
            out.append(Finding(INDEX, 0, 0, 0, 0, "PM002",
                               "active memory files exist but `_index.md` does not: agents cannot find them"))
    for rel in REQUIRED_CORE_FILES:
        if snap.missing(rel):
            out.append(Finding(rel, 0, 0, 0, 0, "PM003", f"`{rel}` is missing: it is baseline context every agent reads"))

    core = [snap.files[rel] for rel in snap.files.by_zone[Zone.CORE]]
    total = sum(e.size for e in core)
    if core and total > settings.core.max_bytes:
        largest = max(core, key=lambda e: (e.size, e.rel))
        out.append(_file_finding(largest, "PM004",
                                 f"`_core/` is {total} bytes, over {settings.core.max_bytes} "
                                 f"(largest file: {largest.size} bytes); it is loaded on every activation"))

    if index is not None and index.doc is not None:
        n_lines = len(index.doc.lines)
        if n_lines > settings.index.max_lines or index.size > settings.index.max_bytes:
            out.append(Finding(INDEX, 0, 0, 0, 0, "PM006",
                               f"`_index.md` has {n_lines} lines and {index.size} bytes (limits: "
                               f"{settings.index.max_lines} lines, {settings.index.max_bytes} bytes); "
                               "agents read it on every activation and truncate long indexes"))
    return out
