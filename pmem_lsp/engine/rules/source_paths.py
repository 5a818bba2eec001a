"""PM403: pointers to source material outside the root that do not exist on this machine.

The format keeps raw material in its project workspace and stores "a short description and a
path" in memory. Not every path in a note points at the user's material: `~/.zshrc` or
`/usr/local/bin/obsidian` in a sentence is an example, an instruction or a mention. A pointer
is a `~/…` or absolute path written

- as a link target (`[notes](~/notes/x.md)`), anywhere outside fenced code; or
- in a line that declares a source: a metadata-like line whose key names one (`Source:`,
  `Materials:`, `Path:`, `Repo:`, `来源：`, `资料：`, `路径：`, also in the front matter),
  or an item under a heading that does (`## Sources`, `## 资料`). There a plain path counts
  as well as a code span: `Source: ~/homelab/ansible`.

One finding per path per line, in active and core files. Each is looked at with `stat`
only: nothing outside the root is ever read.

What is not a pointer: a code span with white space in it (a command), patterns and
placeholders (`*`, `?`, `$`, `<…>`, `…`), protocol-relative `//…`, and an absolute path whose
first folder is neither on this machine nor a usual place for files (`/api/v1/orders` is a
URL path). Absolute route targets in `_index.md` are PM204's business.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, cast
from urllib.parse import unquote

from ..findings import Finding
from ..markdown import PARAGRAPH
from ..memory_file import MemoryFile, mask_code_spans, parse_metadata_line
from ..native import core_for
from ..paths import strip_fragment
from ..root_state import FileEntry, RootState
from ..rule import FileCheck, I, Rule
from .broken_links import LINK_ZONES

# The record's verdict for this rule, only where the build was written for its Python code
# (docs/native.md; native_mirrors.py, group "pointers").
_CORE_VERDICT = core_for("pointers") is not None

if TYPE_CHECKING:
    from ..analysis import Analysis

RULES = (
    Rule("PM403", "source-path-missing", I,
             "This points to source material outside the memory root (a `~/…` or absolute path in "
             "a code span or a link) that does not exist on this machine. The format keeps raw "
             "material in its workspace and a path to it in memory; a path that no longer "
             "resolves sends agents nowhere. Update it, or say where the material went. Checked "
             "with `stat` only: nothing outside the root is read."),
)

# First folders that hold files on some machine, even when this one lacks them.
FILE_ROOTS = {"Users", "home", "Volumes", "mnt", "media", "opt", "srv", "data", "tmp", "var", "private",
              "root", "etc", "usr", "workspace", "work", "projects", "Library", "Applications", "nix", "run"}
# A text that may hold a path outside links (one search; most files have none): a `/` and a
# letter after a space, backtick, parenthesis or colon. Written to start with its literal `/`
# (the preceding character checked behind it), so the search skips to each `/` instead of
# trying the class at every character: 17 → 2 µs on a 2.5 KB note, the same answer.
_ABSOLUTE_HINT = re.compile(r"/(?<=[\s`(:：]/)[A-Za-z]")
# Both start with their literal (the backtick; `~` or `/`) and check the character before it
# behind it, as `_ABSOLUTE_HINT` does: the search skips to each, instead of trying a
# look-behind at every character (issue 44: the two searches of a vault's two source lines,
# 7.8 → 4.4 µs; the same matches, tests/engine/test_rules_links.py).
_CODE_SPAN = re.compile(r"(`(?<!``)`*)(?!`)(.+?)(?<!`)\1(?!`)")
# A path stops at CJK punctuation (`/opt/cni/bin。`, `~/x，`): the ideographic full stop and
# comma, brackets and quotes, and the fullwidth forms of ASCII punctuation. CJK letters stay
# (`~/笔记/x.md` is a path).
_CJK_PUNCTUATION = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_PLAIN_PATH = re.compile(rf"(?:~(?<![\w/~.]~)|/(?<![\w/~.]/)(?=[A-Za-z]))[^\s`'\"<>()\[\]{{}},;|*{_CJK_PUNCTUATION}]*")
_RE_CJK_TEXT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LABEL_WORDS = 3  # `Source: ~/x`, `- Raw exports ~/x`: a label; more words before the path is a sentence


def _in_a_sentence(plain: str, start: int) -> bool:
    """Is the plain path at `start` a mention inside a sentence (`路径：CNI 插件默认装在
    /opt/cni/bin。`, `Source: the cluster keeps its plugins in /opt/cni/bin`) rather than the
    value of a source line? What comes between the key (or the item's marker) and the path
    must be a short label: a few words, no CJK prose (issue 44)."""
    before = plain[:start]
    for sep in (":", "："):
        cut = before.rfind(sep)
        if cut != -1:
            before = before[cut + 1:]
            break
    else:
        before = before.lstrip(" \t>").lstrip("-*+0123456789.)").strip()
    return _RE_CJK_TEXT.search(before) is not None or len(before.split()) > _LABEL_WORDS
_NOT_A_PATH = re.compile(r"[\s*?$<>{}\[\]|…]|\.\.\.")
_LINE_SUFFIX = re.compile(r"(?::\d+){1,2}$")  # `~/app/main.py:42` points at a line
# Words that declare a source: a key's or a heading's last word, or in CJK anywhere in it.
SOURCE_WORDS = frozenset("source sources material materials path paths repo repos repository repositories "
                         "location locations folder folders directory dir workspace checkout".split())
# Korean too: a real vault wrote `출처:` ("source") before its paths (docs/decisions.md).
SOURCE_WORDS_CJK = ("来源", "资料", "路径", "仓库", "目录", "資料", "パス", "ソース", "출처", "경로", "저장소")
_LAST_WORD = re.compile(r"([A-Za-z]+)[^A-Za-z]*$")


@lru_cache(maxsize=4096)
def declares_source(label: str) -> bool:
    """Does a key or a heading (`Source`, `Data sources`, `本地路径`) name where material is?
    Kept per label: a collection repeats its headings (`## Commands`, `## Code style`) in every
    file, and the answer depends on the label alone."""
    if not label.isascii() and any(word in label for word in SOURCE_WORDS_CJK):
        return True
    m = _LAST_WORD.search(label.strip("*_ "))
    return m is not None and m.group(1).lower() in SOURCE_WORDS


@dataclass(frozen=True, slots=True)
class SourcePointer:
    line: int
    start: int
    end: int
    written: str
    path: str  # expanded and absolute


def _pointer(written: str) -> str | None:
    """The absolute path `written` points at, or None when it is not a pointer."""
    text = written.strip()
    if text.startswith("~/"):
        # A pure function of the text and the home folder (a check reads the same `~/…` in
        # many files; expanding it is most of this call). The home folder is in the key: tests
        # and hosts set `HOME` (without it, the user's entry in the password database decides).
        return _home_pointer(text, os.environ.get("HOME"))
    if text.startswith("/") and not text.startswith("//"):
        first = text.lstrip("/").split("/", 1)[0]
        if not first or (first not in FILE_ROOTS and not os.path.isdir("/" + first)):
            return None
        return _path_of(text, text)
    return None


@lru_cache(maxsize=4096)
def _home_pointer(text: str, home: str | None) -> str | None:
    """`_pointer` of a `~/…` text (stripped) where the home folder is `home` (the key only)."""
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        return None  # no home folder known
    return _path_of(text, expanded)


def _path_of(text: str, expanded: str) -> str | None:
    """The path a pointer written `text` names, `expanded`: none for a pattern or placeholder,
    without a `:line` at its end."""
    if _NOT_A_PATH.search(text):
        return None
    return _LINE_SUFFIX.sub("", expanded)


@lru_cache(maxsize=8192)
def _declares_source_line(line: str) -> bool:
    """Is `line` a metadata line whose key names a source (`Source: …`, `**Repo**: …`)? Kept
    per line text: agent-rule collections repeat their boilerplate lines in every file."""
    parsed = parse_metadata_line(line)
    return parsed is not None and declares_source(parsed[0])


def _source_lines(doc: MemoryFile) -> list[int]:
    """Lines that declare a source: a `Source:`-like line (front matter included), or a list
    item under a heading that names sources (`## Sources`, not the file's title), up to the
    next heading of its level. Only the headings and the lines holding a `/` are looked at (a
    line without one holds no path): in line order, a heading before the lines below it."""
    out: list[int] = []
    source_level = 0  # the level of the source heading the line is under; 0: none
    start = doc.front_matter_end
    kinds = doc.blocks.line_kinds
    lines = doc.lines
    title = doc.title
    headings = doc.headings
    for h in headings:
        if h.top_level and h is not title and declares_source(h.text):
            break
    else:
        # No heading names sources (most files): only `Source:`-like lines count, so only the
        # lines with a `/` and a colon are looked at, without merging in the headings
        # (issue 44: agent-rule roots, many lines with a `/`, few with both). A heading's
        # line is no source line (a setext heading's text is of kind paragraph). The headings'
        # lines are gathered only where a line has both (most files have none): a loop over
        # the headings, then one comprehension over the lines, costs less than the dict of
        # headings and the loop with its tests that were here (issue 44: agent rules, 63
        # lines and 10 headings a file).
        both = [n for n, line in enumerate(lines) if "/" in line and (":" in line or "：" in line)]
        if both:
            head_lines = {h.line for h in headings if h.top_level}
            out = [n for n in both if n not in head_lines and (n < start or kinds[n - start] is PARAGRAPH)
                   and _declares_source_line(lines[n])]
        return out
    heads = {h.line: h for h in headings if h.top_level}
    slashed = [n for n, line in enumerate(lines) if "/" in line]
    if not slashed:
        return out
    for n in sorted(heads.keys() | slashed) if heads else slashed:
        heading = heads.get(n)
        if heading is not None:
            if heading is not title and (not source_level or heading.level <= source_level):
                source_level = heading.level if declares_source(heading.text) else 0
            continue
        if n >= start and kinds[n - start] is not PARAGRAPH:
            continue
        if source_level and doc.top_item_at(n) is not None:
            out.append(n)
            continue
        line = lines[n]
        if (":" in line or "：" in line) and _declares_source_line(line):
            out.append(n)
    return out


def source_pointers(doc: MemoryFile) -> list[SourcePointer]:
    """Every pointer to source material outside fenced code (text only; no file is touched)."""
    # The link targets that may point outside the root; parsed once, shared with PM402, outside
    # code already (none made for a text without a link). A loop, not a comprehension: a
    # file's few targets cost less than 3.11's call of one.
    linked: list[tuple[int, str]] = []
    for index, target in enumerate(() if doc.holds_no_link else doc.link_targets):
        written = target.strip()
        if written.startswith(("/", "~")):
            linked.append((index, written))
    text = doc.text
    # The native core's answer to the question below (docs/native.md).
    hint = doc.absolute_hint if _CORE_VERDICT else None
    if hint is None:
        hint = "~/" in text or text.startswith("/") or _ABSOLUTE_HINT.search(text) is not None
    if not linked and not hint:
        return []  # most texts: nothing below makes a pointer, nor its set and closure
    out: list[SourcePointer] = []
    seen: set[tuple[int, str]] = set()

    def add(line: int, start: int, end: int, written: str, path: str | None) -> None:
        if path is not None and (line, path) not in seen:
            seen.add((line, path))
            out.append(SourcePointer(line, start, end, written, path))

    for index, written in linked:
        link = doc.link_at(index)
        add(link.line, link.start, link.end, written, _pointer(unquote(strip_fragment(written))))
    # The lines that declare a source first: most texts have none, and then no link is made.
    source_lines = _source_lines(doc) if hint else []
    if source_lines:
        link_spans: dict[int, list[tuple[int, int]]] = {}
        for link in doc.links:
            link_spans.setdefault(link.line, []).append((link.start, link.end))
        for n in source_lines:
            line = doc.lines[n]
            plain = mask_code_spans(line)
            for m in _CODE_SPAN.finditer(line):
                # A code span in a sentence is a mention as a plain path is (a Korean how-to's
                # "`root` 는 … `/usr/share/nginx/html` 디렉토리에서 …" under `### location`).
                if _in_a_sentence(plain, m.start()):
                    continue
                s, e = m.span(2)
                add(n, s, e, m.group(2).strip(), _pointer(m.group(2)))
            for s, e in link_spans.get(n, ()):  # a link's target was looked at above
                plain = plain[:s] + " " * (e - s) + plain[e:]
            for m in _PLAIN_PATH.finditer(plain):
                written = m.group(0).rstrip(".:：,;!?")
                if len(written) > 1 and not _in_a_sentence(plain, m.start()):
                    add(n, m.start(), m.start() + len(written), written, _pointer(written))
    out.sort(key=lambda p: (p.line, p.start))
    return out


def _missing(path: str) -> bool:
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        return False  # cannot tell (permissions, a bad name): unknown is not missing
    return False


_SOURCES = "sources"  # the entry cache's key of a text's pointers


def checked_outside_paths(state: RootState) -> list[str]:
    """The paths outside the root whose existence PM403 asked about in the last analysis of
    `state` (the check cache keys a replay on their answers)."""
    out: list[str] = []
    for entry in state.files.values():
        pointers = cast("list[SourcePointer]", entry.cache.get(_SOURCES) or [])
        out += (p.path for p in pointers)
    return out


def pointers_of(entry: FileEntry) -> list[SourcePointer]:
    """The file's source pointers, found once per text and kept with it."""
    def build() -> list[SourcePointer]:
        doc = entry.doc  # None for a restored entry whose file was gone when it was read at last
        return source_pointers(doc) if doc is not None else []
    return entry.cached(_SOURCES, build)


def check_source_paths(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    """The pointers are found once per text (kept with it); whether each exists is asked of
    the system every time the file is checked."""
    pointers = pointers_of(entry)
    return [
        Finding(entry.rel, p.line, p.start, p.line, p.end, "PM403",
                f"`{p.written}` does not exist on this machine: the source it points to moved, "
                "was removed, or lives on another computer", data={"pointer": p.written})
        for p in pointers if _missing(p.path)
    ]


def _pointers_missing(_analysis: Analysis, entry: FileEntry) -> tuple[bool, ...]:
    """What `check_source_paths` asks of the system: whether each pointer's path is missing."""
    return tuple(_missing(p.path) for p in pointers_of(entry))


FILE_CHECKS = (FileCheck(("PM403",), LINK_ZONES, check_source_paths, depends=_pointers_missing),)
