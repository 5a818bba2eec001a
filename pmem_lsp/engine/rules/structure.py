"""PM001–PM006: the shape of the root (lifecycle folders, index, core, raw material)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import Finding, entry_finding
from ..root_state import FileEntry, RootState
from ..rule import ALL_ZONES, FileCheck, I, Rule, W
from ..zones import ARCHIVE_DIR, ARCHIVE_INDEX, INDEX, REQUIRED_CORE_FILES, TRASH_DIR, Zone, is_markdown

if TYPE_CHECKING:
    from ..analysis import Analysis

RULES = (
    Rule("PM001", "lifecycle-missing", W,
             "The lifecycle structure (`_archive/`, `_archive/_trash/`, `_archive/_index.md`) is "
             "incomplete. Archive, delete and recover need it, and the format says to run "
             "`memory upgrade` first; `pmem upgrade` creates only what is missing."),
    Rule("PM002", "index-missing", W,
             "Active memory files exist but `_index.md` does not. Agents find on-demand files "
             "only through the index, so none of them can be loaded on demand."),
    Rule("PM003", "core-missing", I,
             "`_core/profile.md` or `_core/preferences.md` is missing. These are the baseline "
             "context every agent reads when memory is loaded."),
    Rule("PM004", "core-too-large", W,
             "`_core/` is larger than `core.maxBytes`. Everything in `_core/` is loaded on every "
             "activation; the format asks to keep it small. Move detail into on-demand files."),
    Rule("PM005", "raw-material", W,
             "A non-Markdown or very large file is stored in memory. The format keeps raw "
             "repositories, downloads, media and datasets in their project workspaces and stores "
             "a short description and a path in memory instead."),
    Rule("PM006", "index-too-long", W,
             "`_index.md` is longer than `index.maxLines` or `index.maxBytes`. It is read on every "
             "activation, and agents truncate long indexes: keep one short line per file, archive the "
             "files agents no longer need, or, where your agents read more, raise the limits."),
)


def _file_finding(entry: FileEntry, code: str, message: str) -> Finding:
    return entry_finding(entry, code, message)


def check_raw_material(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    """PM005 for one file: not Markdown, or larger than `largeFile.kb`. Never the indexes: an
    index too long is PM006."""
    if entry.error:
        return []
    kb = analysis.settings.large_file.kb
    if not entry.markdown:
        # Said so that following it breaks nothing: a note that links to the file (a figure)
        # would get PM402 once it moves, so the message says to change that link too.
        return [_file_finding(entry, "PM005", "non-Markdown file in memory: move it to its project's workspace "
                                              "and keep a short description and its new path in a note "
                                              "(change any link to it to that path)")]
    if entry.size > kb * 1024:
        return [_file_finding(entry, "PM005", f"{entry.size // 1024} KiB file in memory (over {kb} "
                                              "KiB): store a summary and a path to the source instead")]
    return []


FILE_CHECKS = (FileCheck(("PM005",), ALL_ZONES - {Zone.INDEX, Zone.ARCHIVE_INDEX}, check_raw_material,
                         needs_text=False, depends=lambda _a, _e: ()),)


def check_structure(state: RootState) -> list[Finding]:
    """Findings about the root's shape (PM001–PM004, PM006); they sit on `_index.md`, on the
    missing core files, or on the largest core file."""
    out: list[Finding] = []
    settings = state.settings
    missing = [label for label, rel in ((f"{ARCHIVE_DIR}/", ARCHIVE_DIR), (f"{TRASH_DIR}/", TRASH_DIR),
                                        (ARCHIVE_INDEX, ARCHIVE_INDEX))
               if state.missing(rel)]
    if missing:
        out.append(Finding(INDEX, 0, 0, 0, 0, "PM001",
                           f"lifecycle structure incomplete, missing {', '.join(missing)}: run `pmem upgrade`"))
    index = state.files.get(INDEX)
    if index is None and not state.is_file(INDEX):
        if any(is_markdown(rel) for rel in state.files.by_zone[Zone.ACTIVE]):
            out.append(Finding(INDEX, 0, 0, 0, 0, "PM002",
                               "active memory files exist but `_index.md` does not: agents cannot find them"))
    for rel in REQUIRED_CORE_FILES:
        if state.missing(rel):
            out.append(Finding(rel, 0, 0, 0, 0, "PM003",
                               f"`{rel}` is missing: it is baseline context every agent reads"))

    core = [state.files[rel] for rel in state.files.by_zone[Zone.CORE]]
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
                               "agents read it on every activation and truncate long indexes: archive the "
                               "files agents no longer need (`pmem archive`), shorten the descriptions, or, "
                               "where your agents read more, raise `maxLines`/`maxBytes` under `[index]` "
                               "in `.pmem.toml`"))
    return out
