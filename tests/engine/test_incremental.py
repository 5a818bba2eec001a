"""Incremental analysis: the same findings as a fresh analysis, for work bounded by the change."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import TODAY, scan
from pmem_lsp.engine.analysis import Analysis
from pmem_lsp.engine.host import MemoryHost
from roots import active_file, index_text, make_root


def fresh(root: Path) -> dict:
    return Analysis(scan(root), TODAY).by_path()


def apply(analysis: Analysis, root: Path, *rels: str) -> set[str]:
    changed: set[str] = set()
    for rel in rels:
        changed |= analysis.state.refresh(rel)
    return analysis.update(changed)


def test_each_kind_of_change_matches_a_fresh_analysis(tmp_path: Path):
    root = make_root(tmp_path)
    analysis = Analysis(scan(root), TODAY)
    steps = [
        # edit a file's text: PM102 appears
        ("notes/beta.md", lambda: (root / "notes/beta.md").write_text("# Beta\n\n## Summary\n- one\n")),
        # create an unrouted file: PM202 on it
        ("notes/new.md", lambda: (root / "notes/new.md").write_text(active_file("New"))),
        # route it in the index: PM202 clears
        ("_index.md", lambda: (root / "_index.md").write_text(
            index_text(["projects/alpha.md", "notes/beta.md", "notes/new.md", "notes/ghost.md"]))),
        # the dangling route's target appears: PM201 clears
        ("notes/ghost.md", lambda: (root / "notes/ghost.md").write_text(active_file("Ghost"))),
        # a link to a file, then the file vanishes: PM402 appears in the linking file
        ("notes/new.md", lambda: (root / "notes/new.md").write_text(
            active_file("New", body="See [ghost](ghost.md).\n"))),
        ("notes/ghost.md", lambda: (root / "notes/ghost.md").unlink()),
        # an archived file without a record: PM301; then the record arrives
        ("_archive/notes/old.md", lambda: ((root / "_archive/notes").mkdir(parents=True, exist_ok=True),
                                           (root / "_archive/notes/old.md").write_text(active_file("Old")))),
        ("_archive/_index.md", lambda: (root / "_archive/_index.md").write_text(
            "# Archive index\n\n## notes/old.md\n- status: archived\n- original: notes/old.md\n"
            "- location: _archive/notes/old.md\n- index-line: - [Old](notes/old.md) — old\n"
            "- archived: 2026-11-01\n- reason: done\n")),
        # a whole folder appears and vanishes
        ("extra", lambda: ((root / "extra").mkdir(), (root / "extra/a.md").write_text(active_file("A")))),
        ("extra", lambda: ((root / "extra/a.md").unlink(), (root / "extra").rmdir())),
    ]
    for rel, act in steps:
        act()
        apply(analysis, root, rel)
        assert analysis.by_path() == fresh(root), f"after changing {rel}"


@pytest.mark.parametrize("order", [("notes/sub/c.md", "notes/sub"), ("notes/sub", "notes/sub/c.md")])
def test_a_file_where_a_folder_was_and_paths_under_a_file_are_nothing(tmp_path: Path, order):
    """`notes/sub` was a folder and is a file now; the watcher names both paths, in either
    order. A path whose folder is a file (ENOTDIR) is not there, not unreadable, and what the
    folder held went with it."""
    root = make_root(tmp_path)
    (root / "notes/sub").mkdir()
    (root / "notes/sub/c.md").write_text(active_file("C"))
    analysis = Analysis(scan(root), TODAY)
    (root / "notes/sub/c.md").unlink()
    (root / "notes/sub").rmdir()
    (root / "notes/sub").write_text("now a file\n")
    apply(analysis, root, order[0])
    assert "notes/sub/c.md" not in analysis.state.files
    apply(analysis, root, order[1])
    assert analysis.by_path() == fresh(root)
    apply(analysis, root, "notes/sub/x/y.md")  # deeper under the file
    assert analysis.by_path() == fresh(root) and "notes/sub/x/y.md" not in analysis.state.files


def test_links_to_folders_come_and_go_with_the_folders_around_them(tmp_path: Path):
    """A link to a folder is not followed: what lies under it is unknown, never missing, and
    never read. A folder holding such a link and replaced by a file takes the link with it; a
    link replaced by a real folder is a folder; a path named under a link is not in the root."""
    root = make_root(tmp_path / "m")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.md").write_text(active_file("Secret"))
    (root / "notes/sub").mkdir()
    (root / "notes/sub/ln").symlink_to(outside, target_is_directory=True)
    (root / "notes/out").symlink_to(outside, target_is_directory=True)
    (root / "notes/beta.md").write_text(active_file("Beta", body="See [x](sub/ln/secret.md), [y](out/nope.md).\n"))
    analysis = Analysis(scan(root), TODAY)
    assert analysis.by_path() == fresh(root)
    # a path under a link, as an editor's close or a watcher may name it: not read
    apply(analysis, root, "notes/out/secret.md")
    assert "notes/out/secret.md" not in analysis.state.files and analysis.by_path() == fresh(root)
    # the editor opens and closes it there: the buffer goes, and the file behind the link is not read
    analysis.update(analysis.state.set_buffer("notes/out/secret.md", "# Open in the editor\n"))
    analysis.update(analysis.state.drop_buffer("notes/out/secret.md"))
    assert "notes/out/secret.md" not in analysis.state.files and analysis.by_path() == fresh(root)
    # the folder holding a link becomes a file: the link goes with it (PM402 for x now)
    (root / "notes/sub/ln").unlink()
    (root / "notes/sub").rmdir()
    (root / "notes/sub").write_text("a file now\n")
    apply(analysis, root, "notes/sub")
    assert analysis.by_path() == fresh(root)
    # a link to a folder replaced by a real folder: its paths are known again (PM402 for y)
    (root / "notes/out").unlink()
    (root / "notes/out").mkdir()
    (root / "notes/out/c.md").write_text(active_file("C"))
    apply(analysis, root, "notes/out")
    assert analysis.by_path() == fresh(root)


def test_reported_changes_are_exactly_the_paths_whose_findings_changed(tmp_path: Path):
    root = make_root(tmp_path)
    analysis = Analysis(scan(root), TODAY)
    before = analysis.by_path()
    (root / "notes/beta.md").write_text("# Beta\n\n## Summary\n- one\n")
    changed = apply(analysis, root, "notes/beta.md")
    after = analysis.by_path()
    assert changed == {p for p in set(before) | set(after) if before.get(p) != after.get(p)} == {"notes/beta.md"}
    # A touch (same content) changes nothing.
    (root / "notes/beta.md").write_text("# Beta\n\n## Summary\n- one\n")
    assert apply(analysis, root, "notes/beta.md") == set()


def test_work_for_one_change_does_not_grow_with_the_root(tmp_path: Path):
    def work_for_one_edit(n: int) -> dict:
        files = {f"notes/n{i}.md": active_file(f"Note {i}", body=f"See [next](n{i + 1}.md).\n") for i in range(n)}
        root = make_root(tmp_path / str(n), files)
        analysis = Analysis(scan(root), TODAY)
        analysis.work.clear()
        target = f"notes/n{n // 2}.md"
        (root / target).write_text(active_file("Edited", body="Changed.\n"))
        apply(analysis, root, target)
        return dict(analysis.work)

    small, large = work_for_one_edit(20), work_for_one_edit(400)
    assert small == large  # the same constant amount of work, whatever the root's size
    assert large.get("parsed", 0) == 1 and large.get("files", 0) <= 3


def test_random_edit_sequences_match_a_fresh_analysis(tmp_path: Path):
    root = make_root(tmp_path)
    analysis = Analysis(scan(root), TODAY)
    rng = random.Random(7)
    names = [f"notes/r{i}.md" for i in range(6)]
    for step in range(60):
        rel = rng.choice(names + ["_index.md"])
        path = root / rel
        action = rng.random()
        if rel == "_index.md":
            routed = [n for n in names if rng.random() < 0.5] + ["projects/alpha.md", "notes/beta.md"]
            path.write_text(index_text(routed))
        elif action < 0.3 and path.exists():
            path.unlink()
        else:
            other = rng.choice(names)
            body = f"See [x]({Path(other).name}).\n" if rng.random() < 0.5 else "Plain.\n"
            bullets = rng.choice([1, 3])
            path.write_text(active_file(rel, summary="## Summary\n" + "- fact\n" * bullets, body=body))
        apply(analysis, root, rel)
        assert analysis.by_path() == fresh(root), f"step {step}: {rel}"


def test_a_folder_appearing_or_vanishing_at_a_routed_path_matches_a_fresh_analysis(tmp_path: Path):
    root = make_root(tmp_path, {"_index.md": index_text(["projects/alpha.md", "notes/beta.md", "notes/dir.md"])})
    analysis = Analysis(scan(root), TODAY)

    def codes() -> list[str]:
        return [f.code for f in analysis.by_path().get("_index.md", [])]

    assert codes() == ["PM201"]
    # A folder (holding a file) appears where the route points: PM201 becomes PM204.
    (root / "notes/dir.md").mkdir()
    (root / "notes/dir.md/a.md").write_text(active_file("A"))
    assert "_index.md" in apply(analysis, root, "notes/dir.md")
    assert codes() == ["PM204"]
    assert analysis.by_path() == fresh(root)
    # It vanishes: PM201 again.
    (root / "notes/dir.md/a.md").unlink()
    (root / "notes/dir.md").rmdir()
    assert "_index.md" in apply(analysis, root, "notes/dir.md")
    assert codes() == ["PM201"]
    assert analysis.by_path() == fresh(root)


def test_an_empty_folder_appearing_at_a_routed_path_is_noticed_at_once(tmp_path: Path):
    # An empty folder holds no file; the root state still reports its path as changed.
    root = make_root(tmp_path, {"_index.md": index_text(["projects/alpha.md", "notes/beta.md", "notes/dir.md"])})
    analysis = Analysis(scan(root), TODAY)
    (root / "notes/dir.md").mkdir()
    assert "_index.md" in apply(analysis, root, "notes/dir.md")
    assert [f.code for f in analysis.by_path()["_index.md"]] == ["PM204"]
    assert analysis.by_path() == fresh(root)
    (root / "notes/dir.md").rmdir()
    assert "_index.md" in apply(analysis, root, "notes/dir.md")
    assert [f.code for f in analysis.by_path()["_index.md"]] == ["PM201"]
    assert analysis.by_path() == fresh(root)


def test_a_file_replaced_by_a_folder_of_its_name_is_forgotten(tmp_path: Path):
    root = make_root(tmp_path, {"_index.md": index_text(["projects/alpha.md", "notes/beta.md"])})
    analysis = Analysis(scan(root), TODAY)
    (root / "notes/beta.md").unlink()
    (root / "notes/beta.md").mkdir()
    apply(analysis, root, "notes/beta.md")
    assert analysis.by_path() == fresh(root)
    assert [f.code for f in analysis.by_path()["_index.md"]] == ["PM204"]


# -- the keystroke path leaves the near-duplicate search for later (issue 13) ---------------

PROSE = " ".join(f"Sentence {i} of a long note about berths, cranes and the quay rota." for i in range(40))


def test_a_keystroke_defers_duplicates_and_settle_catches_up(tmp_path: Path):
    original = active_file("Quay rota", body=PROSE.replace(". ", ".\n") + "\n")
    root = make_root(tmp_path, {"notes/rota.md": original, "notes/other.md": active_file("Other")})
    analysis = Analysis(scan(root), TODAY)
    compared = analysis.duplicates.compared
    # The buffer of notes/other.md becomes a copy of the rota: typing does not compare it.
    changed = analysis.state.set_buffer("notes/other.md", original.replace("Sentence 3 ", "Sentence three "))
    analysis.update(changed, defer_duplicates=True)
    assert analysis.duplicates.compared == compared
    assert not any(f.code == "PM503" for f in analysis.all())
    # A pause in typing: the search runs, and the result is the fresh analysis's.
    assert {"notes/other.md", "notes/rota.md"} & analysis.settle()
    assert analysis.duplicates.compared > compared
    fresh_snap = scan(root)
    fresh_snap.set_buffer("notes/other.md", analysis.state.files["notes/other.md"].text or "")
    assert analysis.by_path() == Analysis(fresh_snap, TODAY).by_path()
    assert any(f.code == "PM503" for f in analysis.all())
    assert analysis.settle() == set()  # nothing left to do


def test_the_host_s_queries_change_nothing_and_analyse_is_the_step(tmp_path: Path):
    """Two edits inside the debounce window (issue 14, issue 28): asking for the findings, or
    whether a buffer is unsaved, changes nothing however often it is asked; `analyse` is the
    explicit step that catches up, and says once which paths' findings changed."""
    root = make_root(tmp_path)
    host = MemoryHost()
    memory = host.add_root(root, scan(root).settings)
    state = scan(root)
    host.install(memory, state, Analysis(state, TODAY))
    beta = root / "notes/beta.md"
    host.open_buffer(beta, "# Beta\n\n## Summary\n- one\n")
    host.change_buffer(beta, "# Beta\n\n## Summary\n- one\n- two\n")
    before = host.findings(memory)
    assert host.findings(memory) == before and memory.pending == {"notes/beta.md"}  # asked twice: the same
    assert "notes/beta.md" not in before  # not analysed yet: a query does not analyse
    assert host.unsaved(beta) and host.unsaved(beta) and memory.pending == {"notes/beta.md"}
    assert host.analyse(memory) == {"notes/beta.md"}  # the step
    assert [f.code for f in host.findings(memory)["notes/beta.md"]] == ["PM102"]
    assert host.analyse(memory) == set() and memory.pending == set()  # nothing left to catch up


def test_sync_buffer_is_the_step_that_reads_the_disk_under_a_buffer(tmp_path: Path):
    """The editor saved (or reloaded) a buffer ahead of the watcher's news: `unsaved` says what
    the host last heard; `sync_buffer` reads the disk and the root state follows."""
    root = make_root(tmp_path)
    host = MemoryHost()
    memory = host.add_root(root, scan(root).settings)
    state = scan(root)
    host.install(memory, state, Analysis(state, TODAY))
    beta = root / "notes/beta.md"
    text = "# Beta\n\n## Summary\n- one\n"
    host.open_buffer(beta, text)
    host.analyse(memory)
    assert host.unsaved(beta) and memory.state is not None and memory.state.files["notes/beta.md"].from_buffer
    beta.write_text(text, encoding="utf-8")  # the editor wrote it; no didSave, no watcher yet
    assert host.unsaved(beta)  # a query reads no disk
    assert host.sync_buffer(beta) is memory
    assert not host.unsaved(beta) and not memory.state.files["notes/beta.md"].from_buffer
    assert host.sync_buffer(beta) is None  # in sync: nothing to read


# -- files coming and going: the routes are re-checked only when they can change -------------
# Routed paths (one of them a route to nothing from the start), files of the same names in
# other folders (the "did it move?" hint needs exactly one), and the archive and trash copies
# PM205 names.
_ROUTED = ["notes/a.md", "notes/b.md", "projects/gone.md"]
_PLACES = ["notes/a.md", "notes/b.md", "projects/a.md", "ideas/a.md", "ideas/gone.md", "projects/gone.md",
           "notes/unrelated.md", "_archive/notes/a.md", "_archive/_trash/projects/gone.md", "_archive/projects/gone.md"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_PLACES), min_size=1, max_size=12))
def test_files_coming_and_going_match_a_fresh_analysis(tmp_path_factory, toggles: list[str]):
    root = make_root(tmp_path_factory.mktemp("come-go"), {"_index.md": index_text(_ROUTED), "notes/b.md": None})
    analysis = Analysis(scan(root), TODAY)
    for step, rel in enumerate(toggles):
        path = root / rel
        if path.exists():
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(active_file(Path(rel).stem.title()))
        apply(analysis, root, rel)
        assert analysis.by_path() == fresh(root), f"step {step}: {rel} {toggles}"


def test_a_file_no_route_names_does_not_walk_the_routes(tmp_path: Path):
    files = {f"notes/n{i}.md": active_file(f"Note {i}") for i in range(300)}
    root = make_root(tmp_path, files)
    analysis = Analysis(scan(root), TODAY)
    analysis.work.clear()
    (root / "notes/new.md").write_text(active_file("New"))
    apply(analysis, root, "notes/new.md")
    assert "index" not in analysis.work  # the 300 routes were not walked again
    assert analysis.by_path() == fresh(root)
    assert [f.code for f in analysis.by_path()["notes/new.md"]] == ["PM202"]
    # Named by a route: walked again, and its PM201 goes.
    (root / "_index.md").write_text(index_text([*files, "notes/later.md"]))
    apply(analysis, root, "_index.md")
    analysis.work.clear()
    (root / "notes/later.md").write_text(active_file("Later"))
    apply(analysis, root, "notes/later.md")
    assert analysis.work["index"] == 1 and analysis.by_path() == fresh(root)


def test_a_link_without_md_follows_its_note_appearing_and_vanishing(tmp_path: Path):
    """PM402 keeps what it asked of the root (engine/rules/broken_links.py): a target named without
    `.md` is asked in its `.md` form only while the target itself is missing, and the kept
    answer still changes when that note, a file of the bare name, or a folder of it appears."""
    root = make_root(tmp_path)
    (root / "notes/new.md").write_text(active_file("New", body="See [g](ghost) and [h](here.md).\n"))
    analysis = Analysis(scan(root), TODAY)
    assert any(f.code == "PM402" for f in analysis.by_path().get("notes/new.md", []))
    steps = [
        ("notes/ghost.md", lambda: (root / "notes/ghost.md").write_text(active_file("Ghost"))),  # clears
        ("notes/ghost.md", lambda: (root / "notes/ghost.md").unlink()),  # back
        ("notes/ghost", lambda: (root / "notes/ghost").write_text("a file of the bare name\n")),  # clears
        ("notes/ghost", lambda: (root / "notes/ghost").unlink()),
        ("notes/ghost", lambda: (root / "notes/ghost").mkdir()),  # a folder of the name: clears
        ("notes/ghost", lambda: (root / "notes/ghost").rmdir()),
        ("notes/ghost/x.md", lambda: ((root / "notes/ghost").mkdir(), (root / "notes/ghost/x.md").write_text(
            active_file("X")))),  # the folder comes with its first file
        (("notes/ghost/x.md", "notes/ghost"),  # both gone, as a watcher reports them
         lambda: ((root / "notes/ghost/x.md").unlink(), (root / "notes/ghost").rmdir())),
        ("notes/ghost.md", lambda: (root / "notes/ghost.md").mkdir()),  # a folder at the `.md` form
        ("notes/ghost.md", lambda: (root / "notes/ghost.md").rmdir()),
    ]
    for rels, act in steps:
        act()
        apply(analysis, root, *((rels,) if isinstance(rels, str) else rels))
        assert analysis.by_path() == fresh(root), f"after changing {rels}"
    assert [f.code for f in analysis.by_path()["notes/new.md"]].count("PM402") == 2
