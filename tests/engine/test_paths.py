"""`paths.normalize_target`'s shortcut past `posixpath.normpath` (`_normal`)."""

from __future__ import annotations

import posixpath

from hypothesis import given, settings
from hypothesis import strategies as st

from pmem_lsp.engine import paths

_PART = st.sampled_from(["", ".", "..", "a", ".hidden", "a.md", "..b", "b..", "é", " ", "a b"])


@settings(max_examples=2000, deadline=None)
@given(st.lists(_PART, min_size=1, max_size=6).map("/".join))
def test_a_path_called_normal_is_its_own_normpath(path: str) -> None:
    if path and paths._normal(path):
        assert posixpath.normpath(path) == path


@settings(max_examples=1000, deadline=None)
@given(st.lists(_PART, min_size=1, max_size=6).map("/".join), st.sampled_from(["", "notes", "a/b", "a/", "x/.."]))
def test_normalize_target_is_normpath_of_the_join(path: str, base: str) -> None:
    found, problem = paths.normalize_target(path, base)
    raw = path.strip()
    if problem is None and raw and not raw.startswith(("/", "~", "\\", "$")) and "%" not in raw \
            and "#" not in raw and "?" not in raw and ":" not in raw:
        norm = posixpath.normpath(posixpath.join(base, raw) if base else raw)
        assert found == ("" if norm == "." else norm)


def test_the_shortcut_takes_plain_paths_and_leaves_the_rest() -> None:
    assert paths._normal("notes/a b.md") and paths._normal("a/b..c.md")
    assert not any(paths._normal(p) for p in ("./a.md", "a/./b.md", "a/../b.md", "a//b.md", "a/", ".hidden/x.md"))
