"""PM402: relative Markdown links to files that are not in the root."""

from __future__ import annotations

import datetime as dt
import functools
import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..findings import Finding
from ..fixes import Fix, TextEdit, text_of
from ..index_edit import link_destination
from ..line_index import split_keepends
from ..memory_file import Link
from ..names import clean, one_line, shown
from ..native import core_for
from ..paths import OUTSIDE, normalize_target, strip_fragment, unescape_bytes
from ..root_state import FileEntry, RootState
from ..rule import FileCheck, Rule, W
from ..zones import Zone, zone_of

_NATIVE = core_for("link_targets")  # only where the build was written for this Python code (docs/native.md)

if TYPE_CHECKING:
    from ..analysis import Analysis

RULES = (
    Rule("PM402", "broken-link", W,
             "This relative link points to a file that does not exist in the root."),
)

# Files whose links are checked (and whose targets the analysis follows, to re-check a file
# when a target appears or vanishes).
LINK_ZONES = frozenset({Zone.ACTIVE, Zone.CORE})


# A target read alone, as in a file at the top of the root: a pure function of one string, so a
# bounded memo of it is safe.
_alone = functools.lru_cache(maxsize=4096)(normalize_target)


def _normalize(target: str, base: str) -> tuple[str | None, str | None]:
    """`normalize_target(target, base)`, from memos of the target read alone. Files of many
    folders link to the same targets (a vault's `Daily%20notes.md` and `../Publish%20setup.md`
    in each of its 133 project folders): a memo of the pair missed for each folder, and
    reading a `%` escape is most of the call's ~10 µs. A path that stays inside the folder it
    is read in goes below the linking file's folder as it is; one that climbs out of it
    (`../x.md`) takes as many folders off the linking file's, or leaves the root."""
    path, problem = _alone(target)
    if not base:
        return path, problem
    if problem is None:
        if path is not None and _plain_folder(base):
            return (f"{base}/{path}" if path else base), None
    elif problem != OUTSIDE:
        return None, problem  # empty, a URL or absolute wherever the file is
    elif _plain_folder(base) and not base.startswith("/"):
        ups, rest = _climb(target)
        folders = base.split("/")
        if ups > len(folders):
            return None, OUTSIDE
        kept = folders[:len(folders) - ups]
        if rest:
            kept.append(rest)
        return "/".join(kept), None
    return normalize_target(target, base)


@functools.lru_cache(maxsize=4096)
def _climb(target: str) -> tuple[int, str]:
    """A target that `normalize_target` reads alone as leaving its folder (`../x.md`): how many
    folders it climbs, and the path below them ("" for a folder itself). The steps of
    `normalize_target` before it joins the folder (a property holds `_normalize` to it)."""
    norm = posixpath.normpath(unescape_bytes(strip_fragment(target.strip())))
    parts = norm.split("/")
    ups = next((i for i, part in enumerate(parts) if part != ".."), len(parts))
    return ups, "/".join(parts[ups:])


@functools.lru_cache(maxsize=4096)
def _plain_folder(base: str) -> bool:
    """Is `base` a folder that `posixpath.normpath` leaves as it is, below the root (no `.`,
    `..` or empty part, no `/` at its end): then `normpath(base/path)` is `base/path` for a
    `path` that is normalised and does not leave its folder."""
    return (posixpath.normpath(base) == base and base not in (".", "..") and not base.startswith("../")
            and not base.endswith("/"))  # `/` is its own normal form


def is_wikilink_text(text: str) -> bool:
    """`[[Target|Label]]("text")`: CommonMark reads a link to `"text"` whose text is
    `[Target|Label]`, but the author wrote a wiki link followed by parentheses (Obsidian
    and Foam show the wiki link and the parentheses as text). Not a link to what follows."""
    return len(text) >= 2 and text[0] == "[" and text[-1] == "]"


class LinkPaths(NamedTuple):
    """A file's relative links that name a root path: the paths, and where each link is in
    the file's links (`MemoryFile.link_at`), in the file's order. Two sequences rather than a
    `Link` per link: PM402 and the link graph read the paths, and a `Link` is made only for a
    finding."""

    paths: Sequence[str]
    at: Sequence[int]


_NO_LINKS = LinkPaths((), ())


def link_paths(entry: FileEntry) -> LinkPaths:
    """The file's relative links with the root-relative path each names (URLs, absolute
    paths, anchors and empty targets left out), normalised once per text and kept with the
    entry: PM402 and the analysis's link graph both use them."""
    # A path that is not UTF-8 (surrogate-escaped) cannot cross into the native core, which
    # takes UTF-8 strings: Python reads such a file's links (issue 40: the scan raised). Not a
    # branch inside `_link_paths`: that is the native core's twin, whose source the core's
    # digest is taken of (tests/engine/test_native_differential.py).
    # Asked once per text, not per call: PM402's check, its dependency and the link graph each
    # ask, and a name outside ASCII (obsidian's CJK folders) took a loop per character.
    return entry.cached("link-paths", _read_link_paths, entry)


def _read_link_paths(entry: FileEntry) -> LinkPaths:
    # A text without a link asks neither the core nor the Python links (`holds_no_link`).
    doc = entry.doc
    if doc is None or doc.holds_no_link:
        return _NO_LINKS
    return _link_paths(entry) if _utf8(entry.rel) else _link_paths_in_python(entry)


def _utf8(text: str) -> bool:
    """Can `text` cross into the native core: no byte of a name that is not UTF-8 (`\\udc80`
    to `\\udcff`, surrogate-escaped) in it. Encoding is the one C call that answers for almost
    every name (it fails on any surrogate); only then is each character looked at."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return not any("\udc80" <= c <= "\udcff" for c in text)
    return True


def _link_paths_in_python(entry: FileEntry) -> LinkPaths:
    doc = entry.doc
    if doc is None:
        return _NO_LINKS
    base = posixpath.dirname(entry.rel)
    pairs = [(i, _python_path(link.target, link.text, base)) for i, link in enumerate(doc.links)]
    kept = [(i, path) for i, path in pairs if path is not None]
    return LinkPaths([path for _, path in kept], [i for i, _ in kept])


def _python_path(target: str, text: str, base: str) -> str | None:
    """The root path a link names, as the Python code reads it (None: no root path)."""
    if is_wikilink_text(text):
        return None
    path, problem = _normalize(target, base)
    return path if problem is None else None


def _link_paths(entry: FileEntry) -> LinkPaths:
    doc = entry.doc
    if doc is None:
        return _NO_LINKS
    base = posixpath.dirname(entry.rel)
    rows = doc._link_rows
    if _NATIVE is not None and rows is not None:
        # The native core normalises the targets of its record's links (docs/native.md); a
        # None is a target only Python reads (a `%` escape).
        at, found = _NATIVE.link_targets(rows, base)
        if None not in found:
            return LinkPaths(found, at)
        pairs = [(i, path if path is not None else _python_path(rows[i][3], rows[i][4], base))
                 for i, path in zip(at, found, strict=True)]
    else:
        pairs = [(i, _python_path(link.target, link.text, base)) for i, link in enumerate(doc.links)]
    kept = [(i, path) for i, path in pairs if path is not None]
    return LinkPaths([path for _, path in kept], [i for i, _ in kept])


def md_form(path: str) -> str | None:
    """The note a link target without an extension also names (`[a](note-a)`: Foam and
    Obsidian leave out `.md`), or None."""
    return None if "." in path[path.rfind("/") + 1:] else path + ".md"  # (`posixpath.basename`, without its calls)


def _broken(state: RootState, found: LinkPaths) -> tuple[int, ...]:
    """The links of `found` whose target is known to be absent, and so is the `.md` form it
    also names (`[a](notes/a)`): their indexes in `found.paths`. "" is the root itself. The
    `.md` form is asked only of a missing target: asking it of every target was most of this
    check's time, a settings and scan-error test for each."""
    paths = found.paths
    out = []
    for i in state.missing_among(paths):
        path = paths[i]
        if path:
            note = md_form(path)
            if note is None or state.missing(note):
                out.append(i)
    return tuple(out)


def check_links(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    state = analysis.state
    if not _broken(state, link_paths(entry)):
        return []  # no text parsed here (a pool worker or the per-file records found the paths)
    doc = entry.doc
    if doc is None:
        return []
    # Asked again of the text `doc` is: a restored entry reads its file here, and where the
    # file changed since its record, its cache went with the old text (root_state.RestoredEntry).
    found = link_paths(entry)
    out: list[Finding] = []
    for i in _broken(state, found):
        link, path = doc.link_at(found.at[i]), found.paths[i]
        out.append(_broken_link_finding(state, entry.rel, link, path))
    return out


# Zones a stale link's file may have moved to: not the trash (deleted) nor hidden folders.
_MOVED_ZONES = frozenset({Zone.CORE, Zone.ACTIVE, Zone.ARCHIVE, Zone.INDEX, Zone.ARCHIVE_INDEX})


def moved_to(state: RootState, path: str) -> str | None:
    """The one other file of the root with the missing target's name (or its `.md` form's,
    for `[a](notes/a)`): where the linked file likely went (`creative_writing/x.md` →
    `creative/x.md`). None where no file or several have that name."""
    note = md_form(path)
    names = {path.rpartition("/")[2]} | ({note.rpartition("/")[2]} if note is not None else set())
    found = {rel for name in names for rel in state.files.named(name) if zone_of(rel) in _MOVED_ZONES}
    return found.pop() if len(found) == 1 else None


def _broken_link_finding(state: RootState, rel: str, link: Link, path: str) -> Finding:
    """A broken link's finding. A Windows path (`images\\3-top.png`) is broken because of its
    backslashes, which a Markdown link does not read as folders: the message says so, and
    where the `/` form names a file that is there, the fix writes it (issue 44). A target
    whose name one other file of the root has: the message asks whether it moved there, and
    the fix links to it."""
    if "\\" not in link.target:
        moved = moved_to(state, path)
        message = _missing_message(link.target, path)
        if moved is None:
            return Finding(rel, link.line, link.start, link.line, link.end, "PM402", message)
        return Finding(rel, link.line, link.start, link.line, link.end, "PM402",
                       f"{message}; did it move to `{one_line(clean(moved))}`?",
                       data={"moved_to": moved, "target": link.target})
    slashed = link.target.replace("\\", "/")
    slashed_path, problem = _normalize(slashed, posixpath.dirname(rel))
    exists = problem is None and slashed_path is not None and not state.missing(slashed_path)
    there = f"`{slashed_path}` exists" if exists else f"`{slashed_path}` does not exist either"
    return Finding(rel, link.line, link.start, link.line, link.end, "PM402",
                   f"link target `{one_line(clean(link.target))}` uses backslashes, which a Markdown link does not "
                   f"read as folders: write `/` ({there})",
                   data={"backslash": True, "slash_target": slashed if exists else None})


def _missing_message(target: str, path: str) -> str:
    """PM402's message for a target that names no file: the target as written, then the root
    path it resolves to where that reads otherwise (`b.md` in `notes/`, `a//b`, `%20`); the
    path alone would quote what the user did not write (issue 44: `[https://x](https://x)`
    shown as `notes/[https:/x](https:/x)`). A target holding `](` or starting with `[` is a
    link written inside a link's parentheses, which the message says."""
    written = one_line(clean(target))
    resolved = one_line(clean(path))
    where = "" if resolved == written else f" (resolves to `{resolved}`)"
    nested = "](" in target or target.startswith("[")
    why = ": it looks like a link nested in a link (write `[text](url)`)" if nested else ""
    return f"link target `{written}`{where} does not exist in the memory root{why}"


def fix_backslash(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """Write the link's target with `/` where that names a file that is there."""
    slashed = (finding.data or {}).get("slash_target")
    text = text_of(state, finding.path)
    if not slashed or text is None:
        return []
    lines = split_keepends(text)
    if finding.line >= len(lines) or "\\" not in lines[finding.line][finding.col:finding.end_col]:
        return []  # the text changed since the finding
    edit = TextEdit(finding.path, finding.line, finding.col, finding.line, finding.end_col, slashed)
    return [Fix(f"Write the link with `/`: {shown(slashed)}", "PM402", (edit,), preferred=True)]


def fix_link(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    data = finding.data or {}
    return fix_backslash(state, finding, today) if data.get("backslash") else fix_moved(state, finding, today)


def fix_moved(state: RootState, finding: Finding, today: dt.date) -> list[Fix]:
    """Link to the file the target likely moved to, relative to the linking file, keeping the
    target's `#fragment` or `?query` and its form (`.md` left out where it was)."""
    data = finding.data or {}
    moved, written = data.get("moved_to"), data.get("target")
    text = text_of(state, finding.path)
    if not moved or written is None or text is None or not state.exists(moved):
        return []
    lines = split_keepends(text)
    if finding.line >= len(lines) or lines[finding.line][finding.col:finding.end_col] != written:
        return []  # the text changed since the finding
    line = lines[finding.line]
    new = posixpath.relpath(moved, posixpath.dirname(finding.path) or ".")
    bare = strip_fragment(written)
    if "." not in bare.rpartition("/")[2] and new.endswith(".md"):
        new = new[:-3]  # `[a](notes/a)`: the link left `.md` out
    destination, fragment = link_destination(new), written[len(bare):]
    destination = destination[:-1] + fragment + ">" if destination.startswith("<") else destination + fragment
    start, end = finding.col, finding.end_col
    if start > 0 and line[start - 1] == "<" and line[end:end + 1] == ">":
        start, end = start - 1, end + 1  # the brackets go with the old target
    edit = TextEdit(finding.path, finding.line, start, finding.line, end, destination)
    return [Fix(f"Link to {shown(moved)}", "PM402", (edit,), preferred=True)]


def _broken_links(analysis: Analysis, entry: FileEntry) -> tuple:
    """What `check_links` reads of the root: which links are broken (for most files, `()`),
    and where each one's file may have moved (a file of its name appearing or vanishing
    changes the finding). (URLs and absolute paths are not relative links: absolute ones are
    PM403's.)"""
    state = analysis.state
    found = link_paths(entry)
    broken = _broken(state, found)
    return tuple((i, moved_to(state, found.paths[i])) for i in broken) if broken else ()


FILE_CHECKS = (FileCheck(("PM402",), LINK_ZONES, check_links, depends=_broken_links),)
FIXES = {"PM402": fix_link}
