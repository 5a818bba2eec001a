"""PM503: `DuplicateIndex.build` takes its candidate pairs from the buckets and groups at once
(`_candidate_pairs`); they must be the pairs, and the orientation, that asking every file for
its `_candidates` (as `update` does) gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.rules.duplicates import BUCKET_CAP, GROUP_REPRESENTATIVES, DuplicateIndex, Sketch


def _file_by_file(index: DuplicateIndex) -> dict[tuple[str, str], None]:
    """The pairs as `build` compared them before: each once, as (the first file in sketch order
    that names the other, the other)."""
    pairs: dict[tuple[str, str], None] = {}
    seen: set[frozenset[str]] = set()
    for rel in index.sketches:
        for other in index._candidates(rel):
            if frozenset((rel, other)) not in seen:
                seen.add(frozenset((rel, other)))
                pairs[rel, other] = None
    return pairs


# A few hashes, so that buckets are shared, some by more than BUCKET_CAP files, and some
# sketches are whole copies of others (groups of more than GROUP_REPRESENTATIVES files).
_KEYS = st.lists(st.integers(0, 30), max_size=4, unique=True).map(lambda keys: tuple(sorted(keys)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_KEYS, st.sampled_from([(1, 2, 3), (4,), (5, 6)])), max_size=40))
def test_candidate_pairs_are_those_of_each_files_candidates(sketches):
    index = DuplicateIndex({}, 0.9)
    for n, keys in enumerate(sketches):
        index._add_sketch(f"f{n:02d}.md" if n % 3 else f"z{n:02d}.md", Sketch(None, keys))
    pairs = index._candidate_pairs()
    assert set(pairs) == set(_file_by_file(index))
    assert len({frozenset(pair) for pair in pairs}) == len(pairs)  # each pair once


def test_a_large_group_and_a_large_bucket():
    index = DuplicateIndex({}, 0.9)
    for n in range(BUCKET_CAP + 3):
        index._add_sketch(f"copy{n}.md", Sketch(None, (7, 8)))  # one group, buckets too large
    index._add_sketch("other.md", Sketch(None, (7, 9)))
    pairs = index._candidate_pairs()
    assert set(pairs) == set(_file_by_file(index))
    # each later copy with the first ones only, named by the later one
    assert len(pairs) == 1 + (BUCKET_CAP + 3 - GROUP_REPRESENTATIVES) * GROUP_REPRESENTATIVES
    assert ("copy5.md", "copy0.md") in pairs


def test_a_bucket_of_bucket_cap_files_brings_its_pairs():
    index = DuplicateIndex({}, 0.9)
    for n in range(BUCKET_CAP):
        index._add_sketch(f"note{n}.md", Sketch(None, (50, 100 + n)))  # one shared line each
    pairs = index._candidate_pairs()
    assert set(pairs) == set(_file_by_file(index))
    assert len(pairs) == BUCKET_CAP * (BUCKET_CAP - 1) // 2
