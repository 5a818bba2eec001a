"""PM210 `routes-vanished` and PM308 `records-vanished` (docs/design.md §11): they compare the
root with the history store, so they cannot be shown by a fixture root (tests/rules/NO_FIXTURE);
here with a real store in the test's state folder. The red team's wipe — an agent truncates
`_index.md`, stalls, writes one line, and the next pmem command records that — must end with
PM210 and a fix that puts every route back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_fixes import apply_fix

from engine_helpers import TODAY, scan
from pmem_lsp.engine.analysis import analyze
from pmem_lsp.engine.catalogue import quick_fixes
from pmem_lsp.engine.history.store import Writer, open_store
from pmem_lsp.engine.index_routes import parse_index
from pmem_lsp.engine.memory_file import MemoryFile
from roots import make_root

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="history keeps its entries with git")

NOTES = {f"notes/n{i}.md": f"# Note {i}\n\nFact {i}.\n" for i in range(6)}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return make_root(tmp_path, NOTES)


def routed(text: str) -> set[str]:
    return {r.path for r in parse_index(MemoryFile(text)).routes if r.path}


def codes(root: Path) -> list[str]:
    return [f.code for f in analyze(scan(root), TODAY)]


def test_silent_without_history(root: Path):
    (root / "_index.md").write_text("# Memory index\n")
    assert "PM210" not in codes(root)


def test_the_wipe_ends_with_pm210_and_its_fix_restores_every_route(root: Path):
    store = open_store(root)
    store.record(Writer("pmem", "save"), "before")
    before = (root / "_index.md").read_text()
    # The agent's truncate, a stall, one line written; the next pmem command records it.
    (root / "_index.md").write_text("")
    (root / "_index.md").write_text("# Memory index\n- [n0](notes/n0.md) — note 0\n")
    store.record(Writer("outside"), "changed outside pmem")
    state = scan(root)
    found = [f for f in analyze(state, TODAY) if f.code == "PM210"]
    assert len(found) == 1 and found[0].line == 0
    lost = routed(before) - {"notes/n0.md"}
    assert f"{len(lost)} routes" in found[0].message
    fixes = quick_fixes(state, found[0], TODAY)
    assert fixes
    apply_fix(root, state, fixes[0])
    text = (root / "_index.md").read_text()
    assert routed(text) == routed(before)
    for line in before.splitlines():  # each vanished route line exactly as it was
        if line.startswith("- ") and "notes/n0.md" not in line:
            assert line in text.splitlines()
    assert "PM210" not in codes(root)


def test_an_archive_is_no_vanished_route_and_a_confirmed_removal_is_the_new_reference(root: Path):
    store = open_store(root)
    store.record(Writer("pmem"), "first")
    text = (root / "_index.md").read_text()
    kept = "\n".join(line for line in text.splitlines() if "notes/n1.md" not in line) + "\n"
    (root / "_index.md").write_text(kept)
    (root / "_archive/notes").mkdir(parents=True)
    (root / "notes/n1.md").rename(root / "_archive/notes/n1.md")
    assert "PM210" not in codes(root)  # the file went to the archive: not a wipe
    (root / "_index.md").write_text("\n".join(line for line in kept.splitlines() if "notes/n2.md" not in line) + "\n")
    assert "PM210" in codes(root)
    store.record(Writer("editor"), "route removed in the editor")  # a confirmed writer's state
    assert "PM210" not in codes(root)


def test_records_vanished_and_their_fix(root: Path):
    archive_index = root / "_archive/_index.md"
    (root / "_archive/notes").mkdir(parents=True)
    (root / "_archive/notes/old.md").write_text("# Old\n")
    archive_index.write_text(archive_index.read_text() + "\n### notes/old.md\n- status: archived\n"
                             "- original: notes/old.md\n- location: _archive/notes/old.md\n"
                             "- archived: 2026-01-01\n- reason: done\n")
    before = archive_index.read_text()
    store = open_store(root)
    store.record(Writer("pmem"), "first")
    archive_index.write_text("# Archive index\n")
    state = scan(root)
    found = [f for f in analyze(state, TODAY) if f.code == "PM308"]
    assert len(found) == 1 and found[0].path == "_archive/_index.md"
    apply_fix(root, state, quick_fixes(state, found[0], TODAY)[0])
    assert "- location: _archive/notes/old.md" in archive_index.read_text()
    assert [line for line in before.splitlines() if line.startswith("- ")] == \
        [line for line in archive_index.read_text().splitlines() if line.startswith("- ")]
    assert "PM308" not in codes(root)


def test_an_index_over_the_large_file_limit_is_kept(root: Path):
    (root / ".pmem.toml").write_text("[largeFile]\nkb = 1\n")
    index = root / "_index.md"
    index.write_text(index.read_text() + "".join(f"<!-- padding {i} -->\n" for i in range(100)))
    assert index.stat().st_size > 1024
    store = open_store(root)
    store.record(Writer("pmem"), "first")
    assert store.text_at(store.head() or "", "_index.md") == index.read_bytes()
