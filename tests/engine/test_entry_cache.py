"""Per-file records never hide a change, and spare the reads they promise (engine/entry_cache.py).

The property: after any random series of changes to a small root — edits, edits of the same
size with the mtime put back, touches, renames, a file replaced by another of the same size
and times, deletions, new files, a file made a near-duplicate of another, an outside source
pointer's target appearing or vanishing, other settings, another day, another pmem (package
stamp), a record file damaged or replaced by garbage — the analysis of a root restored from
the records equals the analysis of a root read from disk, finding for finding. The racy
window is shortened (as in test_check_cache.py) so records are stored in a test.
"""

from __future__ import annotations

import datetime as dt
import os
import pickle
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmem_lsp.engine import entry_cache as records_module
from pmem_lsp.engine import user_cache
from pmem_lsp.engine.analysis import Analysis
from pmem_lsp.engine.entry_cache import Records
from pmem_lsp.engine.root_state import ReadCount, RestoredEntry, RootState
from pmem_lsp.engine.settings import Settings, settings_from_text

RACY = 0.02
TODAY = dt.date(2026, 12, 1)
BODY = ("The long shared paragraph about the brewing of coffee in the morning, its beans, its grinder, "
        "the water temperature and the kettle we bought in the spring of that year, written out at length. ")


def note(title: str, body: str = "") -> str:
    return f"# {title}\n\nStatus: active\n\n## Summary\n- {title} in one line.\n- Second.\n- Third.\n\n{body}"


def build(root: Path, outside: Path) -> None:
    files = {
        "_index.md": ("# Index\n\n- [Alpha](notes/alpha.md) — alpha\n- [Beta](notes/beta.md) — beta\n"
                      "- [Gamma](notes/gamma.md) — gamma\n- [Gone](notes/gone.md) — gone\n"),
        "_core/profile.md": "# Profile\n\nThe person.\n",
        "_archive/_index.md": "# Archive\n",
        "_archive/_trash/.keep": "",
        "_archive/projects/old.md": "# Old\n\nArchived without a record.\n",
        "notes/alpha.md": note("Alpha", "See [beta](beta.md).\n\n" + BODY * 3),
        "notes/beta.md": note("Beta", f"Sources: `{outside}`\n\n" + BODY * 3),
        "notes/gamma.md": note("Gamma", "Links to [nothing](missing.md).\n"),
        "notes/status.md": "---\nrole: current-status\nupdated: 2026-01-01\n---\n# Status\n\nAll fine.\n",
        "notes/other-status.md": "---\nrole: current-status\nupdated: 2030-01-01\n---\n# Other\n\nAlso.\n",
        "notes/image.png": "not really a picture",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def swap_same_size(path: Path) -> None:
    """Another text of the same size, then the old atime and mtime put back (ctime moves)."""
    st_ = path.stat()
    text = path.read_text(encoding="utf-8")
    flipped = text.replace("(beta.md)", "(zeta.md)") if "(beta.md)" in text else text[:-1] + ("x" if text[-1] != "x" else "y")
    path.write_text(flipped, encoding="utf-8")
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))


def replace_by_twin(path: Path) -> None:
    """`path` replaced (by a rename) with a file of the same size and times, other content."""
    st_ = path.stat()
    text = path.read_text(encoding="utf-8")
    twin = path.with_name(".twin")  # hidden: the scan never sees it
    twin.write_text(text.upper() if text.isascii() else text, encoding="utf-8")
    os.utime(twin, ns=(st_.st_atime_ns, st_.st_mtime_ns))
    os.replace(twin, path)


OPS = st.sampled_from(["edit", "same-size", "touch", "touch-back", "rename", "twin", "delete", "create",
                       "duplicate", "settings", "outside", "day", "version", "corrupt", "garbage", "nothing"])
TARGETS = st.sampled_from(["notes/alpha.md", "notes/beta.md", "notes/gamma.md", "notes/status.md", "_index.md",
                           "_core/profile.md", "_archive/_index.md", "_archive/projects/old.md", "notes/image.png"])
SETTINGS = [Settings(), settings_from_text('ignore = ["PM402"]\n[stale]\ndays = 30\n'),
            settings_from_text('[duplicates]\nthreshold = 0.5\n')]


class World:
    def __init__(self, tmp: Path) -> None:
        self.root, self.cache, self.outside = tmp / "root", tmp / "cache", tmp / "outside.md"
        self.settings = SETTINGS[0]
        self.today = TODAY
        build(self.root, self.outside)

    def record_files(self) -> list[Path]:
        return sorted((self.cache / "records").glob("*.records"))

    def apply(self, op: str, rel: str) -> None:
        path = self.root / rel
        if op in ("edit", "same-size", "touch", "touch-back", "rename", "twin", "delete") and not path.exists():
            op = "create"
        if op == "edit":
            path.write_text(path.read_text(encoding="utf-8") + "\nMore text, and a [link](alpha.md).\n", encoding="utf-8")
        elif op == "same-size":
            swap_same_size(path)
        elif op == "touch":
            os.utime(path, None)
        elif op == "touch-back":
            st_ = path.stat()
            os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns - 86_400 * 400 * 10**9))  # PM501 sees it old
        elif op == "rename":
            path.rename(path.with_name("renamed-" + path.name))
        elif op == "twin":
            replace_by_twin(path)
        elif op == "delete":
            path.unlink()
        elif op == "create":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(note(path.stem.title()), encoding="utf-8")
        elif op == "duplicate":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(note("Copy", BODY * 3), encoding="utf-8")
        elif op == "settings":
            self.settings = SETTINGS[(SETTINGS.index(self.settings) + 1) % len(SETTINGS)]
        elif op == "outside":
            if self.outside.exists():
                self.outside.unlink()
            else:
                self.outside.write_text("# outside\n", encoding="utf-8")
        elif op == "day":
            self.today += dt.timedelta(days=200)
        elif op == "version":
            user_cache._STAMP[:] = [f"another pmem {time.monotonic()}"]
        elif op in ("corrupt", "garbage"):
            for f in self.record_files():
                data = f.read_bytes()
                f.write_bytes(data[: len(data) // 2] if op == "corrupt" else b"\x80\x05garbage" + data[::-1][:100])

    def cold(self) -> tuple:
        return self.result(RootState.scan(self.root, self.settings))

    def warm(self) -> tuple:
        records = Records(self.root, self.settings, folder=str(self.cache))
        state = RootState.scan(self.root, self.settings, restore=records.restore)
        found = self.result(state)
        records.store(state)
        return found

    def result(self, state: RootState) -> tuple:
        analysis = Analysis(state, self.today)
        return analysis.by_path(), state.read_problems(), state.markdown_count()


@pytest.fixture(autouse=True)
def _racy(monkeypatch):
    monkeypatch.setenv("PMEM_CACHE_RACY_SECONDS", str(RACY))
    stamp = list(user_cache._STAMP)
    yield
    user_cache._STAMP[:] = stamp


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(OPS, TARGETS), min_size=1, max_size=5))
def test_a_root_restored_from_records_equals_one_read_from_disk_after_any_change(steps):
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp))
        time.sleep(RACY * 2)
        assert world.warm() == world.cold()
        assert world.record_files(), "stored"
        for op, rel in steps:
            world.apply(op, rel)
            time.sleep(RACY * 2)  # past the racy window: these records may be stored
            assert world.warm() == world.cold(), (op, rel)


def _warm_reads(world: World) -> tuple[int, Records, RootState]:
    before = ReadCount.files
    records = Records(world.root, world.settings, folder=str(world.cache))
    state = RootState.scan(world.root, world.settings, restore=records.restore)
    found = world.result(state)
    reads = ReadCount.files - before
    assert found == world.cold()
    records.store(state)
    return reads, records, state


def test_an_unchanged_root_reads_no_file_and_one_edit_reads_one(tmp_path):
    world = World(tmp_path)
    time.sleep(RACY * 2)
    reads, records, _ = _warm_reads(world)
    assert reads == 9 and records.hits == 0  # every Markdown file, once
    reads, records, state = _warm_reads(world)
    assert reads == 0 and records.misses == 0 and records.hits == len(state.files)
    assert all(isinstance(e, RestoredEntry) for e in state.files.values())
    # No text read, but the two indexes' (kept in the record: the cross-file rules read them).
    assert {e.rel for e in state.files.values() if e.loaded and e.markdown} == {"_index.md", "_archive/_index.md"}
    (world.root / "notes/gamma.md").write_text(note("Gamma", "Now links to [alpha](alpha.md).\n"), encoding="utf-8")
    time.sleep(RACY * 2)
    reads, records, _ = _warm_reads(world)
    assert (reads, records.misses) == (1, 1)


def test_a_file_changed_within_the_racy_window_is_never_recorded(tmp_path, monkeypatch):
    world = World(tmp_path)
    monkeypatch.setenv("PMEM_CACHE_RACY_SECONDS", "60")
    _warm_reads(world)
    reads, records, _ = _warm_reads(world)
    assert records.hits == 0 and reads == 9  # every file changed within the last minute: none kept


def test_two_roots_two_settings_and_two_pmem_versions_never_share_a_record(tmp_path):
    a = World(tmp_path / "a")
    time.sleep(RACY * 2)
    _warm_reads(a)
    b_root = tmp_path / "b" / "root"
    shutil.copytree(a.root, b_root)
    b = World.__new__(World)
    b.root, b.cache, b.outside, b.settings, b.today = b_root, a.cache, a.outside, a.settings, a.today
    time.sleep(RACY * 2)
    _, records, _ = _warm_reads(b)
    assert records.hits == 0 and records.file != Records(a.root, a.settings, folder=str(a.cache)).file
    a.settings = SETTINGS[1]
    _, records, _ = _warm_reads(a)
    assert records.hits == 0
    a.settings = SETTINGS[0]
    user_cache._STAMP[:] = ["a newer pmem"]
    _, records, _ = _warm_reads(a)
    assert records.hits == 0
    assert len(a.record_files()) == 4


@pytest.mark.parametrize("damage", ["empty", "half", "garbage", "other-shape", "wrong-types", "unreadable"])
def test_a_damaged_record_file_is_ignored(tmp_path, damage):
    world = World(tmp_path)
    time.sleep(RACY * 2)
    _warm_reads(world)
    (file,) = world.record_files()
    data = file.read_bytes()
    key = pickle.loads(data)[0]
    file.write_bytes({"empty": b"", "half": data[: len(data) // 2], "garbage": os.urandom(300),
                      "other-shape": pickle.dumps((key, ["not", "a", "dict"])),
                      "wrong-types": pickle.dumps((key, {"notes/alpha.md": 5, "notes/beta.md": (1, 2)})),
                      "unreadable": data}[damage])
    if damage == "unreadable":  # (a mode of 0 stops no root): a folder where the file was
        file.unlink()
        file.mkdir()
    reads, records, _ = _warm_reads(world)  # equals the cold analysis (asserted there)
    assert records.hits == 0 and reads == 9


def test_a_restored_file_read_after_it_changed_is_taken_as_it_is_and_not_kept(tmp_path):
    world = World(tmp_path)
    time.sleep(RACY * 2)
    _warm_reads(world)
    records = Records(world.root, world.settings, folder=str(world.cache))
    state = RootState.scan(world.root, world.settings, restore=records.restore)
    entry = state.files["notes/gamma.md"]
    assert isinstance(entry, RestoredEntry) and not entry.loaded
    replace_by_twin(world.root / "notes/gamma.md")  # same size and times, another file
    assert entry.text == (world.root / "notes/gamma.md").read_text(encoding="utf-8")
    assert entry.stale and not entry.cache
    assert state.refresh("notes/gamma.md") == {"notes/gamma.md"}  # a watcher's refresh sees the change


def test_a_refresh_of_a_restored_file_reads_it_once_and_compares_without_its_old_text(tmp_path):
    world = World(tmp_path)
    time.sleep(RACY * 2)
    _warm_reads(world)
    records = Records(world.root, world.settings, folder=str(world.cache))
    state = RootState.scan(world.root, world.settings, restore=records.restore)
    before = ReadCount.files
    assert state.refresh("notes/beta.md") == set()  # the same file: no change
    assert ReadCount.files == before + 1  # what is on disk now; the restored entry's text is not read


def _units(lines, line: int, col: int) -> tuple[int, int, int]:
    prefix = lines[line][:col] if 0 <= line < len(lines) else ""
    return len(prefix), len(prefix.encode("utf-16-le")) // 2, len(prefix.encode("utf-8", "surrogatepass"))


def test_a_warm_host_scan_reads_no_unchanged_file_and_positions_its_findings_without_them(tmp_path, monkeypatch):
    """The server's warm start (engine/host.scan): restored from the records, it publishes
    every finding in the client's units (UTF-16 or UTF-8 counts of a line's prefix) from the
    shapes of the findings' lines, with no file read."""
    from pmem_lsp.engine import host

    monkeypatch.setenv("PMEM_CACHE_DIR", str(tmp_path / "cache"))
    world = World(tmp_path)
    (world.root / "notes/cjk.md").write_text(note("記憶 😀", "見て [壊れた](无.md) and 😀 [gone](gone-too.md)\n"),
                                             encoding="utf-8")
    time.sleep(RACY * 2)
    cold_state, cold = host.scan(world.root, world.settings)
    before = ReadCount.files
    state, warm = host.scan(world.root, world.settings)
    assert warm.by_path() == cold.by_path()
    published = 0
    for rel, found in warm.final.items():
        if rel not in state.files:
            continue  # a missing file's finding (PM003): at 1:1, no lines
        lines, real = state.files[rel].position_lines(), cold_state.files[rel].position_lines()
        assert len(lines) == len(real)
        for f in found:
            for line, col in ((f.line, f.col), (f.end_line, f.end_col)):
                assert _units(lines, line, col) == _units(real, line, col), (rel, f)
        published += 1
    assert published >= 5 and "notes/cjk.md" in warm.final
    assert ReadCount.files == before, "a warm start reads no unchanged file"
    # Off: every file read again.
    monkeypatch.setenv("PMEM_NO_CACHE", "1")
    host.scan(world.root, world.settings)
    assert ReadCount.files - before == 10


def test_a_few_changed_files_are_read_again_rather_than_every_record_written(tmp_path, monkeypatch):
    world = World(tmp_path)
    time.sleep(RACY * 2)
    _warm_reads(world)
    (file,) = world.record_files()
    stamp = file.stat().st_ino
    (world.root / "notes/gamma.md").write_text(note("Gamma", "Edited.\n"), encoding="utf-8")
    time.sleep(RACY * 2)
    for _ in range(2):
        reads, records, _ = _warm_reads(world)
        assert (reads, records.misses) == (1, 1) and file.stat().st_ino == stamp  # not written
    monkeypatch.setattr(records_module, "MIN_NEW", 1)
    _warm_reads(world)
    assert file.stat().st_ino != stamp  # written now: the edit is recorded
    reads, records, _ = _warm_reads(world)
    assert (reads, records.misses) == (0, 0)


def test_a_restored_file_gone_when_a_check_reads_it_at_last_stops_nothing(tmp_path):
    """Another day makes PM501 and PM504 run again, which reads the restored files: one that
    vanished since the scan is taken as gone, and the analysis goes on."""
    world = World(tmp_path)
    time.sleep(RACY * 2)
    _warm_reads(world)
    records = Records(world.root, world.settings, folder=str(world.cache))
    state = RootState.scan(world.root, world.settings, restore=records.restore)
    (world.root / "notes/gamma.md").unlink()
    (world.root / "notes/beta.md").write_text("# Beta\n\nAnother text now.\n", encoding="utf-8")
    Analysis(state, TODAY + dt.timedelta(days=400)).by_path()  # (what a scan that read them just before says)
    assert state.files["notes/gamma.md"].stale and state.files["notes/gamma.md"].error
    assert state.files["notes/beta.md"].stale  # read as it is now, its record dropped
    records.store(state)
    again = Records(world.root, world.settings, folder=str(world.cache))
    rescanned = RootState.scan(world.root, world.settings, restore=again.restore)
    assert not isinstance(rescanned.files["notes/beta.md"], RestoredEntry)  # its record, if any, is not the file's
    assert "notes/gamma.md" not in rescanned.files


@pytest.mark.parametrize("links", [1, 4])
def test_a_restored_file_changed_when_pm402_reads_it_is_checked_as_it_is_now(tmp_path, links):
    """PM402's targets vanish, so it runs again on a restored file, which reads the file at
    last: the file changed since its record (one link now, or four), and its findings are those
    of the text it has now, never the old links' places or paths on the new text."""
    root = tmp_path / "memory"
    files = {f"notes/n{i}.md": note(f"N{i}") for i in range(20)}
    files["notes/a.md"] = note("A", "See [one](t1.md), [two](t2.md) and [three](t3.md).\n")
    files.update({f"notes/t{i}.md": note(f"T{i}") for i in (1, 2, 3)})
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "_index.md").write_text("# Memory index\n\n" + "".join(f"- [{r}]({r}) — x\n" for r in files), encoding="utf-8")
    cache = tmp_path / "cache"
    settings = Settings()
    time.sleep(RACY * 2)
    for _ in range(2):  # recorded, then restored and recorded again
        records = Records(root, settings, folder=str(cache))
        state = RootState.scan(root, settings, restore=records.restore)
        Analysis(state, TODAY).by_path()
        records.store(state)
    for i in (1, 2, 3):
        (root / f"notes/t{i}.md").unlink()
    records = Records(root, settings, folder=str(cache))
    state = RootState.scan(root, settings, restore=records.restore)
    assert isinstance(state.files["notes/a.md"], RestoredEntry) and not state.files["notes/a.md"].loaded
    now = note("A", "An extra line.\n\n" + " ".join(f"[l{i}](t{i}.md)" for i in range(1, links + 1)) + "\n")
    (root / "notes/a.md").write_text(now, encoding="utf-8")
    found = [(f.line, f.message) for f in Analysis(state, TODAY).all() if f.path == "notes/a.md" and f.code == "PM402"]
    line = now.splitlines().index(" ".join(f"[l{i}](t{i}.md)" for i in range(1, links + 1)))
    assert found == [(line, f"link target `t{i}.md` (resolves to `notes/t{i}.md`) does not exist in the memory root") for i in range(1, links + 1)]


def test_another_compiled_core_or_pmem_environment_is_another_record(tmp_path, monkeypatch):
    world = World(tmp_path)
    time.sleep(RACY * 2)
    _warm_reads(world)
    monkeypatch.setattr(records_module, "native_stamp", lambda: ("/x/pmem_native.so", 1, 2))
    _, records, _ = _warm_reads(world)
    assert records.hits == 0
    monkeypatch.setenv("PMEM_SOMETHING_NEW", "1")
    _, records, _ = _warm_reads(world)
    assert records.hits == 0
    monkeypatch.setenv("PMEM_CACHE_RACY_SECONDS", str(RACY * 1.5))  # where and when to cache: not in the key
    _, records, _ = _warm_reads(world)
    assert records.misses == 0


def test_the_defaults_without_the_model_key_the_records_as_the_models_defaults():
    """A root with no `.pmem.toml` gets the defaults without the settings model
    (settings_defaults.py): its records must be found again by the next process, and shared
    with a run that built the model's defaults."""
    from pmem_lsp.engine.settings_defaults import default_settings

    key = records_module.settings_key(default_settings())
    assert key == records_module.settings_key(default_settings()) == records_module.settings_key(Settings())
    assert key != records_module.settings_key(settings_from_text("[stale]\ndays = 3\n"))
