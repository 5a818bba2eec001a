"""engine/hooks.py: the lines a write changed, found without comparing character by character."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pmem_lsp.engine import hooks


@given(st.text("ab\n", max_size=40), st.text("ab\n", max_size=40), st.text("ab\n", max_size=40),
       st.integers(1, 5))
def test_shared_start_and_end_are_the_longest_common_prefix_and_suffix(head: str, a: str, b: str, chunk: int):
    # Chunks of a few characters (the real one is 64 Ki) so that every path of the halving runs.
    x, y = head + a, head + b
    old = hooks._CHUNK
    hooks._CHUNK = chunk
    try:
        start = hooks._shared(x, y, min(len(x), len(y)))
        end = hooks._shared(x, y, min(len(x), len(y)) - start, at_end=True)
    finally:
        hooks._CHUNK = old
    n = min(len(x), len(y))
    want_start = next((i for i in range(n) if x[i] != y[i]), n)
    most = n - want_start
    want_end = next((i for i in range(most) if x[len(x) - 1 - i] != y[len(y) - 1 - i]), most)
    assert (start, end) == (want_start, want_end)


def test_edited_lines_hold_the_changed_line_and_its_neighbours_where_they_are():
    before = "a\nb\nc\nd\ne\n"
    after = "a\nb\nC!\nd\ne\n"
    old, new, at = hooks.edited_lines(before, after)
    assert "c" in old.splitlines() and "C!" in new.splitlines()
    assert {"b", "d"} <= set(new.splitlines()) and "e" not in new.splitlines()
    assert after.splitlines()[at:at + len(new.splitlines())] == new.splitlines()
    assert before.splitlines()[at:at + len(old.splitlines())] == old.splitlines()
