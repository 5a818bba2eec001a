"""PM503: an active file that is a near-duplicate of another (docs/design.md §4).

Two active files are duplicates when the Jaccard similarity of their word 3-shingles is at
least `duplicates.threshold` (default 0.9): every reported pair is that similar. A shared
title alone makes no pair (502 templates titled `[PROJECT TITLE]` are not copies). A file of
fewer than `MIN_WORDS` words is never a duplicate: a short note is mostly its template
(title, status, a few bullets), two of them look alike without being copies, and a copy of
one costs agents little.

Comparing every pair of a 10k-file root is 50 million comparisons, so candidates come from a
sketch, and the work stays about linear whatever the corpus — a journal of 2,000 daily notes
made from one template included:

- each file's long lines (20 characters or more once lower-cased and stripped) are hashed, and
  the `SKETCH` smallest hashes are its sketch — a bottom-k MinHash over line shingles;
- files that share a sketch hash (an LSH bucket) are candidates, but a bucket of more than
  `BUCKET_CAP` files is boilerplate (a template's line, a signature) and brings none;
- files whose whole sketch is the same (a group of copies, or notes that are all template)
  are compared with the first `GROUP_REPRESENTATIVES` files of that group only;
- only candidates are compared exactly, on their word 3-shingles (CJK counts a character as
  a word).

A copy with a few lines changed shares most of its sketch with the original, so it shares a
small bucket or the whole sketch. What this misses: a copy whose only shared sketch lines are
boilerplate lines of more than `BUCKET_CAP` files and whose whole sketch differs; and a
reflowed copy (the same words wrapped differently), whose lines all differ.

Sketches are kept per file and updated one file at a time (`DuplicateIndex.update`), so an
edit compares that file with its candidates only. A pair, once found, stays while both texts
stay the same. The pair is reported on the newer file (the later change; on a tie — changes
less than `TIE_WINDOW` apart, as of two files copied together — the shorter, then the later
path), naming the other.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard
from zlib import crc32

from ..findings import Finding, entry_finding
from ..lazy_re import lazy
from ..native import core_for
from ..root_state import FileEntry
from ..rule import FileCheck, I, Rule
from ..zones import Zone

_NATIVE = core_for("sketch")  # only where the build was written for this Python code (docs/native.md)

if TYPE_CHECKING:
    from ..analysis import Analysis

RULES = (
    Rule("PM503", "duplicate-content", I,
         "This active file is a near-duplicate of another: their text is at least "
         "`duplicates.threshold` (default 0.9) similar (word 3-shingles). It is reported on the newer "
         "(or shorter) of the two, naming the other. Keep one: the quick fix archives this "
         "one (\"duplicate of …\"), after confirmation."),
)

SKETCH = 8  # hashes per file
MIN_LINE = 20  # characters: shorter lines are headings, metadata and boilerplate
BUCKET_CAP = 10  # a sketch hash shared by more files than this is boilerplate
GROUP_REPRESENTATIVES = 2  # files of a same-sketch group a new member is compared with
# Words a file needs before its text is compared: shorter notes are mostly their template
# (title, status, a few bullets), and two of them look alike without being copies.
MIN_WORDS = 50
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = lazy(rf"[{_CJK}]|[^\W_{_CJK}]+")  # only for the files compared
_TITLE_JUNK = re.compile(r"[\W_]+")


class Sketch(NamedTuple):
    title: str | None  # the title as written; normalised only for a pair (`same_title`), and it makes none
    keys: tuple[int, ...]  # the smallest hashes of the file's long lines


def normalise_title(title: str | None) -> str | None:
    if not title:
        return None
    key = _TITLE_JUNK.sub(" ", unicodedata.normalize("NFKC", title).casefold()).strip()
    return key or None


def _candidate(entry: FileEntry | None) -> TypeGuard[FileEntry]:
    return entry is not None and entry.zone is Zone.ACTIVE and entry.markdown and entry.readable


# ASCII characters that str.splitlines/str.strip treat as line breaks or space and bytes do not
# (looked for with `in`, a fast substring search: a regex class over the text costs more).
_ODD_ASCII_SPACE = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def sketch_of(entry: FileEntry) -> Sketch:
    """The file's sketch, kept in the entry until its text changes."""
    return entry.cached("dup-sketch", lambda: _build_sketch(entry))


def _ascii_hashes(text: str) -> list[int]:
    """The sketch hashes of an ASCII `text` without `_ODD_ASCII_SPACE`, smallest first, at most
    `SKETCH`: on bytes, which split and strip exactly as str does for such a text, so no str
    per line is encoded again."""
    lines = map(bytes.strip, text.encode("ascii").lower().splitlines())
    return sorted({crc32(line) for line in lines if len(line) >= MIN_LINE})[:SKETCH]


# The native core's record of a file computes the hashes of the bytes path below for these
# constants (docs/native.md); with others, this module computes them.
_RECORD_SKETCH = _NATIVE is not None and (_NATIVE.SKETCH_MIN_LINE, _NATIVE.SKETCH_COUNT) == (MIN_LINE, SKETCH)


def _build_sketch(entry: FileEntry) -> Sketch:
    text = entry.text or ""
    doc = entry.doc
    # crc32, not `hash()`: str hashes change with every process (PYTHONHASHSEED), and the
    # sketch picks the smallest ones, so the candidates — and the findings — must not.
    if _RECORD_SKETCH and _NATIVE is not None and doc is not None and doc.sketch_hashes is not None:
        hashes = doc.sketch_hashes  # the core's record: the hashes of the branch below
    elif text.isascii() and not any(c in text for c in _ODD_ASCII_SPACE):
        # The native core gives the same hashes (docs/native.md).
        hashes = _ascii_hashes(text) if _NATIVE is None else _NATIVE.sketch_hashes(text, MIN_LINE, SKETCH)
    else:
        # The core computes the hashes of this branch for a text of ASCII and a few signs (docs/native.md).
        wide = _core_or_none(_NATIVE.sketch_hashes_wide, text, MIN_LINE, SKETCH) if _NATIVE is not None else None
        hashes = wide if wide is not None else sorted(
            {crc32(line.encode("utf-8", "surrogatepass"))
             for line in map(str.strip, text.lower().splitlines()) if len(line) >= MIN_LINE})
    return Sketch(doc.title_text if doc else None, tuple(hashes[:SKETCH]))


def shingles(entry: FileEntry) -> frozenset[int] | Any:
    """Hashes of the word 3-shingles of the file's normalised text (cached with the entry);
    empty for a file under `MIN_WORDS` words. With the core, its `Shingles` (the same hashes,
    kept in Rust: `len`, and `common` for the size of an intersection)."""
    return entry.cached("dup-shingles", lambda: _build_shingles(entry))


# The core hashes the shingles its own way (`similarity` only compares sets made in one process,
# by one of these paths): of a text of ASCII and a few word breaks it finds the words too.
_SHINGLES = core_for("shingles")


def _core_or_none(call: Any, text: str | list[str], *args: int) -> Any:
    """The core's answer, or None (Python's path) for a text or words holding a lone surrogate
    (an editor's buffer can), which the core cannot take as UTF-8."""
    try:
        return call(text, *args)
    except UnicodeEncodeError:
        return None


def _build_shingles(entry: FileEntry) -> frozenset[int] | Any:
    text = entry.text or ""
    if _SHINGLES is not None:
        found = _core_or_none(_SHINGLES.text_shingle_array, text, MIN_WORDS)
        if found is not None:
            return found
    words = _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
    if len(words) < MIN_WORDS:
        return frozenset()
    if _SHINGLES is not None:
        found = _core_or_none(_SHINGLES.word_shingle_array, words, MIN_WORDS)
        if found is None:  # a lone surrogate: any one-to-one spelling of the words gives the same sets
            found = _SHINGLES.word_shingle_array([w.encode("utf-8", "surrogatepass").decode("latin-1")
                                                  for w in words], MIN_WORDS)
        return found
    return frozenset(map(hash, zip(words, words[1:], words[2:], strict=False)))


def _similarity(a: FileEntry, b: FileEntry) -> float:
    """`similarity`, kept with each entry by the other's `stat_sig`: the per-file records
    (`entry_cache.py`) bring it back while neither file changed, so an unchanged pair is not read
    again. (The shingles themselves are not kept: `hash` differs from process to process.)"""
    if a.sig is None or b.sig is None or a.from_buffer or b.from_buffer:
        return similarity(a, b)
    key = ("dup-similarity", b.rel, b.sig)
    sim = a.cache.get(key)
    if not isinstance(sim, float):
        sim = b.cache.get(("dup-similarity", a.rel, a.sig))
    if not isinstance(sim, float):
        sim = similarity(a, b)
    a.cache[key] = sim
    return sim


def similarity(a: FileEntry, b: FileEntry) -> float:
    """Jaccard similarity of the word 3-shingles (0 when either file is too short)."""
    sa: Any = shingles(a)
    sb: Any = shingles(b)
    if not sa or not sb:
        return 0.0
    # Both the core's (`_build_shingles` made both in this process: never one of each, an
    # empty one has returned above), or both frozensets.
    inter = len(sa & sb) if _SHINGLES is None else sa.common(sb)
    return inter / (len(sa) + len(sb) - inter)


@dataclass(frozen=True, slots=True)
class Pair:
    similarity: float
    same_title: bool


class DuplicateIndex:
    """Sketches, buckets and the duplicate pairs of the active files of one root state."""

    def __init__(self, files: dict[str, FileEntry], threshold: float) -> None:
        self.files = files
        self.threshold = threshold
        self.sketches: dict[str, Sketch] = {}
        # LSH buckets: a sketch hash → the one file holding it, or (`shared`) the files when
        # several do. Nearly every hash has one file, and a set per hash would cost more than
        # the sketches themselves.
        self.owner: dict[int, str] = {}
        self.shared: dict[int, set[str]] = {}
        # Files by their whole sketch, in the order they came (a dict is an ordered set).
        self.groups: dict[tuple[int, ...], dict[str, None]] = defaultdict(dict)
        self.pairs: dict[str, dict[str, Pair]] = defaultdict(dict)
        self.compared = 0  # exact comparisons made (for tests and benchmarks)

    def build(self) -> None:
        for rel, entry in self.files.items():
            if _candidate(entry):
                self._add_sketch(rel, sketch_of(entry))
        for a, b in self._candidate_pairs():
            self._compare(a, b)

    def _candidate_pairs(self) -> dict[tuple[str, str], None]:
        """Every pair `_candidates` gives, once, as (the first file, in sketch order, that names
        the other as a candidate; the other) — in sketch order the same pairs the loop
        `for rel in sketches: for other in _candidates(rel)` compares first.

        Made from the small buckets and the groups, not file by file: asking every file for its
        candidates looked up its eight hashes, and built a set, for the nine files in ten that
        share none (a test holds the two equal)."""
        order = {rel: n for n, rel in enumerate(self.sketches)}
        pairs: dict[tuple[str, str], None] = {}
        for files in self.shared.values():
            if len(files) <= BUCKET_CAP:  # a small bucket: each of its files names the others
                ranked = sorted(files, key=order.__getitem__)
                for n, a in enumerate(ranked):
                    for b in ranked[n + 1:]:
                        pairs[a, b] = None
        for group in self.groups.values():
            if len(group) < 2:
                continue
            members = list(group)  # in sketch order
            firsts = members[:GROUP_REPRESENTATIVES]
            for n, a in enumerate(firsts):  # the first files name each other
                for b in firsts[n + 1:]:
                    pairs.setdefault((a, b))
            for later in members[GROUP_REPRESENTATIVES:]:  # a later file names the first ones
                for first in firsts:
                    if (first, later) not in pairs:  # unless they share a small bucket too
                        pairs[later, first] = None
        return pairs

    def update(self, rels: set[str]) -> set[str]:
        """`rels` changed (text, appeared or vanished). Returns the files whose pairs changed:
        those files and their old and new partners."""
        affected: set[str] = set()
        for rel in rels:
            affected |= self._drop(rel)
        fresh = []
        for rel in rels:
            entry = self.files.get(rel)
            if _candidate(entry):
                self._add_sketch(rel, sketch_of(entry))
                fresh.append(rel)
        for rel in fresh:
            for other in self._candidates(rel):
                if other not in self.pairs[rel] and self._compare(rel, other):
                    affected.add(other)
        return affected | rels

    # -- internals ----------------------------------------------------------
    def _add_sketch(self, rel: str, sk: Sketch) -> None:
        self.sketches[rel] = sk
        owner, shared = self.owner, self.shared
        for key in sk.keys:
            first = owner.setdefault(key, rel)
            if first != rel:
                files = shared.get(key)
                if files is None:
                    shared[key] = {first, rel}
                else:
                    files.add(rel)
        if sk.keys:
            self.groups[sk.keys][rel] = None

    def _drop(self, rel: str) -> set[str]:
        sk = self.sketches.pop(rel, None)
        if sk is None:
            return set()
        for key in sk.keys:
            files = self.shared.get(key)
            if files is None:
                del self.owner[key]
                continue
            files.discard(rel)
            if len(files) == 1:
                del self.shared[key]
            self.owner[key] = next(iter(files))
        if sk.keys:
            group = self.groups[sk.keys]
            group.pop(rel, None)
            if not group:
                del self.groups[sk.keys]
        partners = self.pairs.pop(rel, {})
        for other in partners:
            self.pairs[other].pop(rel, None)
        return set(partners) | {rel}

    def _candidates(self, rel: str) -> set[str]:
        """Files sharing a small bucket with `rel`, and the first files of its same-sketch group."""
        sk = self.sketches[rel]
        shared = self.shared
        found: set[str] = set()
        for key in sk.keys:
            files = shared.get(key)
            if files is not None and len(files) <= BUCKET_CAP:
                found |= files
        if sk.keys:
            for n, other in enumerate(self.groups[sk.keys]):
                if n >= GROUP_REPRESENTATIVES:
                    break
                found.add(other)
        found.discard(rel)
        return found

    def _compare(self, a: str, b: str) -> bool:
        ea, eb = self.files[a], self.files[b]
        self.compared += 1
        sim = _similarity(ea, eb)
        if sim == 0.0 or sim < self.threshold:
            return False
        title = normalise_title(self.sketches[a].title)
        same_title = title is not None and title == normalise_title(self.sketches[b].title)
        pair = Pair(sim, same_title)
        self.pairs[a][b] = pair
        self.pairs[b][a] = pair
        return True

    # -- results ------------------------------------------------------------
    def finding(self, rel: str, changed_on: Callable[[str], float | None]) -> Finding | None:
        """PM503 on `rel` when it is the newer of a pair: naming its closest older twin."""
        partners = self.pairs.get(rel)
        if not partners:
            return None
        me = self.files[rel]
        older = [o for o in partners if _newer(rel, me, o, self.files[o], changed_on)]
        if not older:
            return None
        best = max(older, key=lambda o: (partners[o].similarity, -(changed_on(o) or 0.0), o))
        pair = partners[best]
        why = f"{int(pair.similarity * 100)}% similar text"
        if pair.same_title:
            why = "same title, " + why
        # Every other near-duplicate of this file, older or newer: the same count on each of a
        # group of copies, whatever order they were written or scanned in (docs/decisions.md,
        # "PM503: the count of other copies"). Counting only the older ones gave 0, 1, … 6 on
        # eight copies of one file.
        others = len(partners) - 1
        more = f"; {others} other file{'s are' if others > 1 else ' is'} a near-duplicate too" if others else ""
        return entry_finding(me, "PM503",
                            f"near-duplicate of `{best}` ({why}{more}): keep one, archive the other",
                            data={"original": best, "similarity": round(pair.similarity, 3),
                                  "same_title": pair.same_title, "others": others,
                                  "reason": duplicate_reason(best)})


# Change times closer than this are a tie: two files copied together get mtimes microseconds
# apart, in either order, and which one is reported must not hang on that (docs/decisions.md).
TIE_WINDOW = 1.0  # seconds


def _newer(a: str, ea: FileEntry, b: str, eb: FileEntry, changed_on: Callable[[str], float | None]) -> bool:
    """Whether `a` is the one to report: changed later (by `TIE_WINDOW` or more); on a tie
    shorter; then the later path."""
    ta, tb = changed_on(a) or 0.0, changed_on(b) or 0.0
    if abs(ta - tb) >= TIE_WINDOW:
        return ta > tb
    if ea.size != eb.size:
        return ea.size < eb.size
    return a > b


def duplicate_reason(other: str) -> str:
    return f"duplicate of {other}"


def check_duplicates(analysis: Analysis, entry: FileEntry) -> list[Finding]:
    found = analysis.duplicates.finding(entry.rel, analysis.changed_on)
    return [found] if found is not None else []


def _pairs(analysis: Analysis, entry: FileEntry) -> tuple:
    """What `DuplicateIndex.finding` reads for `entry`: its pairs, and when each file of them
    changed and how large it is."""
    index, changed_on = analysis.duplicates, analysis.changed_on
    partners = index.pairs.get(entry.rel) or {}
    return changed_on(entry.rel), entry.size, tuple(sorted(
        (o, p.similarity, p.same_title, changed_on(o), index.files[o].size) for o, p in partners.items()))


FILE_CHECKS = (FileCheck(("PM503",), frozenset({Zone.ACTIVE}), check_duplicates, depends=_pairs),)
