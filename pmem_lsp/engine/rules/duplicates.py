"""PM503: an active file that is a near-duplicate of another (DESIGN §4).

Two active files are duplicates when the Jaccard similarity of their word 3-shingles is at
least `duplicates.threshold` (default 0.9), or when their titles are the same once normalised
(case, width, punctuation and spacing ignored) and at least half their text is shared
(`SAME_TITLE_SIMILARITY`): a title alone names a topic, and two notes on one topic are not
copies. Comparing every pair of a 10k-file root is 50
million comparisons, so candidates come from a MinHash sketch instead:

- each file's long lines (20 characters or more once lower-cased and stripped) are hashed, and
  the `SKETCH` smallest hashes are its sketch — a bottom-k MinHash over line shingles;
- files that share a sketch hash (an LSH bucket) or a normalised title are candidates;
- only candidates are compared exactly, on their word 3-shingles (CJK counts a character as a
  word). A file of fewer than `MIN_WORDS` words is never a duplicate: a short note is mostly
  its template (title, status, a few bullets), two of them look alike without being copies,
  and a copy of one costs agents little.

A copy with at most `SKETCH - 1` lines changed on either side always shares a bucket with its
original (the smallest shared line hash is then within both sketches), and a copy with a few
words changed has a few lines changed. A reflowed copy (the same words wrapped differently) is
found only by its title.

Sketches are kept per file and updated one file at a time (`DuplicateIndex.update`), so an
edit compares that file with its candidates only. The pair is reported on the newer file (the
later change; on a tie the shorter, then the later path), naming the other.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, NamedTuple

from ..findings import Finding, file_finding
from ..snapshot import FileEntry
from ..zones import Zone

SKETCH = 6  # hashes per file
MIN_LINE = 20  # characters: shorter lines are headings, metadata and boilerplate
# Words a file needs before its text is compared: shorter notes are mostly their template
# (title, status, a few bullets), and two of them look alike without being copies.
MIN_WORDS = 50
SAME_TITLE_SIMILARITY = 0.5
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_TITLE_JUNK = re.compile(r"[\W_]+")


class Sketch(NamedTuple):
    title: str | None  # normalised title
    keys: list[int]  # the smallest hashes of the file's long lines


def normalise_title(title: str | None) -> str | None:
    if not title:
        return None
    key = _TITLE_JUNK.sub(" ", unicodedata.normalize("NFKC", title).casefold()).strip()
    return key or None


def _candidate(entry: FileEntry | None) -> bool:
    return entry is not None and entry.zone is Zone.ACTIVE and entry.markdown and entry.text is not None


def sketch_of(entry: FileEntry) -> Sketch:
    """The file's sketch, kept in the entry until its text changes."""
    cached = entry.cache.get("dup-sketch")
    if cached is None:
        text = entry.text or ""
        hashes = sorted({hash(line) for line in map(str.strip, text.lower().splitlines()) if len(line) >= MIN_LINE})
        doc = entry.doc
        cached = entry.cache["dup-sketch"] = Sketch(normalise_title(doc.title_text if doc else None),
                                                    hashes[:SKETCH])
    return cached  # type: ignore[return-value]


def shingles(entry: FileEntry) -> frozenset[int]:
    """Hashes of the word 3-shingles of the file's normalised text (cached with the entry);
    empty for a file under `MIN_WORDS` words."""
    cached = entry.cache.get("dup-shingles")
    if cached is None:
        words = _TOKEN.findall(unicodedata.normalize("NFKC", entry.text or "").casefold())
        if len(words) < MIN_WORDS:
            cached = frozenset()
        else:
            cached = frozenset(map(hash, zip(words, words[1:], words[2:])))
        entry.cache["dup-shingles"] = cached
    return cached  # type: ignore[return-value]


def similarity(a: FileEntry, b: FileEntry) -> float:
    """Jaccard similarity of the word 3-shingles (0 when either file is too short)."""
    sa, sb = shingles(a), shingles(b)
    if not sa or not sb:
        return 0.0
    inter = len(sa & sb)
    return inter / (len(sa) + len(sb) - inter)


@dataclass(frozen=True, slots=True)
class Pair:
    similarity: float
    same_title: bool


class DuplicateIndex:
    """Sketches, buckets and the duplicate pairs of the active files of one snapshot."""

    def __init__(self, files: dict[str, FileEntry], threshold: float) -> None:
        self.files = files
        self.threshold = threshold
        self.sketches: dict[str, Sketch] = {}
        # LSH buckets: a sketch hash → the one file holding it, or (`shared`) the files when
        # several do. Nearly every hash has one file, and a set per hash would cost more than
        # the sketches themselves.
        self.owner: dict[int, str] = {}
        self.shared: dict[int, set[str]] = {}
        self.titles: dict[str, set[str]] = defaultdict(set)
        self.pairs: dict[str, dict[str, Pair]] = defaultdict(dict)
        self.compared = 0  # exact comparisons made (for tests and benchmarks)

    def build(self) -> None:
        for rel, entry in self.files.items():
            if _candidate(entry):
                self._add_sketch(rel, sketch_of(entry))
        for rel in list(self.sketches):
            for other in self._candidates(rel):
                if other > rel:
                    self._compare(rel, other)

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
                self._add_sketch(rel, sketch_of(entry))  # type: ignore[arg-type]
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
        if sk.title is not None:
            self.titles[sk.title].add(rel)

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
        if sk.title is not None:
            same = self.titles[sk.title]
            same.discard(rel)
            if not same:
                del self.titles[sk.title]
        partners = self.pairs.pop(rel, {})
        for other in partners:
            self.pairs[other].pop(rel, None)
        return set(partners) | {rel}

    def _candidates(self, rel: str) -> set[str]:
        sk = self.sketches[rel]
        shared = self.shared
        found: set[str] = set()
        for key in sk.keys:
            files = shared.get(key)
            if files is not None:
                found |= files
        if sk.title is not None:
            found |= self.titles[sk.title]
        found.discard(rel)
        return found

    def _compare(self, a: str, b: str) -> bool:
        ea, eb = self.files[a], self.files[b]
        self.compared += 1
        same_title = self.sketches[a].title is not None and self.sketches[a].title == self.sketches[b].title
        sim = similarity(ea, eb)
        if sim == 0.0 or sim < (min(SAME_TITLE_SIMILARITY, self.threshold) if same_title else self.threshold):
            return False
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
        more = f"; {len(older) - 1} more near-duplicate{'s' if len(older) > 2 else ''}" if len(older) > 1 else ""
        return file_finding(rel, me.doc, "PM503",
                            f"near-duplicate of `{best}` ({why}{more}): keep one, archive the other")

    def originals_of(self, rel: str, changed_on: Callable[[str], float | None]) -> list[str]:
        """The files `rel` duplicates and is newer than (PM503's candidates to name)."""
        me = self.files[rel]
        return sorted(o for o in self.pairs.get(rel, {}) if _newer(rel, me, o, self.files[o], changed_on))


def _newer(a: str, ea: FileEntry, b: str, eb: FileEntry, changed_on: Callable[[str], float | None]) -> bool:
    """Whether `a` is the one to report: changed later; on a tie shorter; then the later path."""
    ta, tb = changed_on(a) or 0.0, changed_on(b) or 0.0
    if ta != tb:
        return ta > tb
    if ea.size != eb.size:
        return ea.size < eb.size
    return a > b


def duplicate_reason(other: str) -> str:
    return f"duplicate of {other}"
