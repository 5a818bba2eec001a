"""The check cache never hides a change (issue 18; pmem_lsp/cli/check_cache.py).

`pmem check` (the process: the cache is on by default) is run after each of a random series
of changes to a small root — edits, edits of the same size with the mtime put back, touches,
renames, a file replaced by another of the same size and times, deletions, new files, a new
`.pmem.toml`, a source pointer's outside file appearing or vanishing, the per-file records
damaged — and its stdout, stderr and exit status must be those of a cold run (`--no-cache`).
An unchanged root is replayed. A changed one is checked with the per-file records
(engine/entry_cache.py), which the property damages too; tests/engine/test_records.py holds the
records' own property, with settings, days and pmem versions changing as well.

Every run gets its own XDG_CACHE_HOME (and PMEM_CACHE_DIR) in a temporary folder: nothing is
written to the real ~/.cache. The racy window is shortened so results are stored in a test.
The property runs `pmem`'s `main()` in this process exactly as the `pmem` script does (no
arguments: `sys.argv`, the working folder, the environment) — a process start per run made it
the slowest test of the suite; the other tests run the real `pmem` process.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import io
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmem_lsp.cli.main import main
from pmem_lsp.engine.cache_writer import wait_for_writers
from pmem_lsp.engine.root_state import ReadCount

e2e = pytest.mark.e2e  # runs `pmem` as a process (tests/conftest.py)

RACY = 0.02  # seconds; the default is 2 s


def note(title: str, body: str = "") -> str:
    return f"# {title}\n\nStatus: active\n\n## Summary\n- {title} in one line.\n\n{body}"


def build(root: Path, outside: Path) -> None:
    files = {
        "_index.md": "# Index\n\n- [Alpha](notes/alpha.md) — alpha\n- [Beta](notes/beta.md) — beta\n",
        "_core/identity.md": "# Identity\n\nThe agent.\n",
        "notes/alpha.md": note("Alpha", "See [beta](beta.md).\n"),
        "notes/beta.md": note("Beta", f"Sources: `{outside}`\n"),
        "notes/gamma.md": note("Gamma", "Links to [nothing](missing.md).\n"),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def run(root: Path, cache: Path, *extra: str, racy: float = RACY, env_extra: dict | None = None) -> tuple[str, str, int]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PMEM_CACHE_DIR": str(cache / "pmem"),
           "PMEM_CACHE_RACY_SECONDS": str(racy), **(env_extra or {})}
    env.pop("PMEM_NO_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check",
                           "--format", "json", *extra], capture_output=True, text=True, env=env, cwd=root, timeout=120)
    wait_for_writers(str(cache))  # the records are written by a child after the answer (cache_writer.py)
    return done.stdout, done.stderr, done.returncode


def run_in_process(root: Path, cache: Path, *extra: str) -> tuple[str, str, int]:
    """`run`, through `main()` in this process: what a `pmem` process would print and return.
    What `main()` sets for its process (redaction hooks, the collector's thresholds) and what
    the run needs (argv, working folder, environment) are put back afterwards."""
    env = {"XDG_CACHE_HOME": str(cache), "PMEM_CACHE_DIR": str(cache / "pmem"), "PMEM_CACHE_RACY_SECONDS": str(RACY)}
    saved_env = {k: os.environ.get(k) for k in (*env, "PMEM_NO_CACHE")}
    saved = (sys.argv, sys.excepthook, threading.excepthook, gc.get_threshold(), os.getcwd())
    handlers = [h for h in (logging.lastResort, *logging.getLogger().handlers) if h is not None]
    filters = [list(h.filters) for h in handlers]
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.update(env)
        os.environ.pop("PMEM_NO_CACHE", None)
        os.chdir(root)
        sys.argv = ["pmem", "--root", str(root), "check", "--format", "json", *extra]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main()
        wait_for_writers(str(cache))
    finally:
        sys.argv, sys.excepthook, threading.excepthook, thresholds, cwd = saved
        gc.set_threshold(*thresholds)
        os.chdir(cwd)
        for handler, kept in zip(handlers, filters, strict=True):
            handler.filters = kept
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out.getvalue(), err.getvalue(), status


def swap_same_size(path: Path) -> None:
    """Another text of the same size, then the old atime and mtime put back (ctime moves)."""
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    if "(beta.md)" in text:  # a link that works becomes a broken one (PM402): a visible change
        flipped = text.replace("(beta.md)", "(zeta.md)")
    elif "one line" in text:
        flipped = text.replace("one line", "1 lines!")
    else:
        flipped = text[:-1] + ("x" if text[-1] != "x" else "y")
    assert len(flipped.encode()) == len(text.encode())
    path.write_text(flipped, encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def replace_by_twin(root: Path, rel: str) -> None:
    """`rel` replaced (by a rename) with a file of the same size and times, other content."""
    path = root / rel
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    twin = path.with_name(".twin")  # hidden: the scan never sees it
    twin.write_text(text.upper()[: len(text)] if text.isascii() else text, encoding="utf-8")
    os.utime(twin, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(twin, path)


OPS = st.sampled_from(["edit", "same-size", "touch", "touch-back", "rename", "twin", "delete", "create",
                       "settings", "outside", "records", "nothing"])
TARGETS = st.sampled_from(["notes/alpha.md", "notes/beta.md", "notes/gamma.md", "_index.md", "_core/identity.md"])


def apply(op: str, rel: str, root: Path, outside: Path) -> str:
    """Make the change; the one made (a change to a file that is not there creates it).
    (What a changed root reads is held by `test_a_check_after_one_edit_reads_that_file_only`
    and tests/engine/test_records.py: a fact one file's change flips can make another file's
    check run again, and read it, which a count here could not tell from a hidden read.)"""
    path = root / rel
    if op == "records":  # the per-file records damaged (cut in half): ignored, never wrong
        for record in root.parent.glob("cache/pmem/records/*.records"):
            record.write_bytes(record.read_bytes()[: record.stat().st_size // 2])
        return op
    if op != "create" and not path.exists():
        op = "create"
    if op == "edit":
        path.write_text(path.read_text(encoding="utf-8") + "\nMore text.\n", encoding="utf-8")
    elif op == "same-size":
        swap_same_size(path)
    elif op == "touch":
        os.utime(path, None)
    elif op == "touch-back":
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 86_400 * 400 * 10**9))  # PM501 sees old files
    elif op == "rename":
        path.rename(path.with_name("renamed-" + path.name))
    elif op == "twin":
        replace_by_twin(root, rel)
    elif op == "delete":
        path.unlink()
    elif op == "create":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note(path.stem.title()), encoding="utf-8")
    elif op == "settings":
        toml = root / ".pmem.toml"
        toml.write_text('ignore = ["PM402"]\n' if not toml.exists() or "PM402" not in toml.read_text() else "", encoding="utf-8")
    elif op == "outside":
        if outside.exists():
            outside.unlink()
        else:
            outside.write_text("# outside\n", encoding="utf-8")
    return op


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(OPS, TARGETS), min_size=1, max_size=4))
def test_a_cached_check_equals_a_cold_one_after_any_change(steps):
    with tempfile.TemporaryDirectory() as tmp:
        root, cache, outside = Path(tmp, "root"), Path(tmp, "cache"), Path(tmp, "outside.md")
        build(root, outside)
        time.sleep(RACY * 2)
        first = run_in_process(root, cache)
        assert first == run_in_process(root, cache, "--no-cache")
        records = list((cache / "pmem").glob("*.check"))
        assert records, "the in-process run uses the cache as the process does"
        stamp = records[0].stat().st_ino
        assert run_in_process(root, cache) == first and records[0].stat().st_ino == stamp  # replayed, not stored again
        assert list((cache / "pmem" / "records").glob("*.records")), "and the per-file records"
        for op, rel in steps:
            apply(op, rel, root, outside)
            time.sleep(RACY * 2)  # past the racy window: this result may be stored
            cached = run_in_process(root, cache)
            assert cached == run_in_process(root, cache, "--no-cache"), (op, rel)
            assert run_in_process(root, cache) == cached  # and replayed (or checked) again: the same


@e2e
def test_an_unchanged_root_is_replayed_and_a_change_within_the_same_tick_is_not_stored():
    with tempfile.TemporaryDirectory() as tmp:
        root, cache, outside = Path(tmp, "root"), Path(tmp, "cache"), Path(tmp, "outside.md")
        build(root, outside)
        time.sleep(RACY * 2)
        first = run(root, cache)
        records = list((cache / "pmem").glob("*.check"))
        assert len(records) == 1, "stored outside the root, in the cache folder"
        assert not [p for p in root.rglob("*") if "cache" in p.name]
        stamp = records[0].stat().st_ino
        assert run(root, cache) == first
        assert records[0].stat().st_ino == stamp  # replayed: not stored again
        # A change within the racy window before the run (a minute here): the result is
        # right and not stored, as a change in the same clock tick could not be told apart.
        swap_same_size(root / "notes/alpha.md")
        changed = run(root, cache, racy=60)
        assert changed != first and changed == run(root, cache, "--no-cache")
        assert records[0].stat().st_ino == stamp
        # Past the window it is stored, and replayed.
        assert run(root, cache) == changed
        assert records[0].stat().st_ino != stamp


@e2e
def test_no_cache_and_pmem_no_cache_never_store():
    with tempfile.TemporaryDirectory() as tmp:
        root, cache, outside = Path(tmp, "root"), Path(tmp, "cache"), Path(tmp, "outside.md")
        build(root, outside)
        time.sleep(RACY * 2)
        run(root, cache, "--no-cache")
        os.environ["PMEM_NO_CACHE"] = "1"
        try:
            env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PMEM_CACHE_DIR": str(cache / "pmem"),
                   "PMEM_CACHE_RACY_SECONDS": str(RACY)}
            subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "check"],
                           capture_output=True, env=env, check=False, timeout=120)
        finally:
            del os.environ["PMEM_NO_CACHE"]
        assert not (cache / "pmem").exists()


def test_the_cache_folder_follows_xdg_and_pmem_cache_dir(monkeypatch):
    from pmem_lsp.cli.check_cache import cache_dir

    monkeypatch.delenv("PMEM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert cache_dir() == "/x/cache/pmem"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "/home/someone")
    assert cache_dir() == "/home/someone/.cache/pmem"
    monkeypatch.setenv("PMEM_CACHE_DIR", "/y")
    assert cache_dir() == "/y"


@e2e
def test_the_time_zone_and_home_are_in_the_key():
    """PM501 turns an mtime into a local day (TZ); PM403 expands `~/` (HOME). Either may
    change between two runs on an unchanged root, and a replay must follow."""
    with tempfile.TemporaryDirectory() as tmp:
        root, cache, outside = Path(tmp, "root"), Path(tmp, "cache"), Path(tmp, "outside.md")
        build(root, outside)
        home_a, home_b = Path(tmp, "home-a"), Path(tmp, "home-b")
        (home_a / "proj").mkdir(parents=True)
        (home_a / "proj/raw.csv").write_text("x\n", encoding="utf-8")
        home_b.mkdir()
        gamma = root / "notes/gamma.md"
        gamma.write_text(note("Gamma", "Source: `~/proj/raw.csv`\n"), encoding="utf-8")
        # 20:00 UTC is the next day in Tokyo (UTC+9, no summer time): 200 days back, the file is
        # stale in both zones, and PM501 names another date and count of days in each.
        day = dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=200)
        stamp = dt.datetime(day.year, day.month, day.day, 20, tzinfo=dt.timezone.utc).timestamp()
        os.utime(root / "notes/alpha.md", (stamp, stamp))
        time.sleep(RACY * 2)
        for env in ({"TZ": "UTC", "HOME": str(home_a)}, {"TZ": "Asia/Tokyo", "HOME": str(home_a)},
                    {"TZ": "Asia/Tokyo", "HOME": str(home_b)}):
            cached = run(root, cache, env_extra=env)
            assert cached == run(root, cache, "--no-cache", env_extra=env), env
        utc = run(root, cache, env_extra={"TZ": "UTC", "HOME": str(home_a)})
        tokyo = run(root, cache, env_extra={"TZ": "Asia/Tokyo", "HOME": str(home_a)})
        moved = run(root, cache, env_extra={"TZ": "Asia/Tokyo", "HOME": str(home_b)})
        # The same mtime falls on another local day (PM501's count of days), and `~/proj/raw.csv`
        # is gone with the other HOME (PM403): replaying one run for the other would be wrong.
        assert _pm501(utc[0]) and _pm501(tokyo[0]) and _pm501(utc[0]) != _pm501(tokyo[0])
        assert _codes(moved[0]).count("PM403") == _codes(tokyo[0]).count("PM403") + 1


def _pm501(out: str) -> list[str]:
    import json

    return [d["message"] for d in json.loads(out)["diagnostics"] if d["code"] == "PM501"]


def _codes(out: str) -> list[str]:
    import json

    return [d["code"] for d in json.loads(out)["diagnostics"]]


def run_health(root: Path, cache: Path, *extra: str) -> tuple[str, str, int]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PMEM_CACHE_DIR": str(cache / "pmem"),
           "PMEM_CACHE_RACY_SECONDS": str(RACY)}
    env.pop("PMEM_NO_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "health", *extra],
                          capture_output=True, text=True, env=env, cwd=root, timeout=120)
    wait_for_writers(str(cache))
    return done.stdout, done.stderr, done.returncode


@e2e
def test_health_is_cached_like_check():
    """Issue 26: `pmem health` on an unchanged root is replayed, a change is not."""
    with tempfile.TemporaryDirectory() as tmp:
        root, cache, outside = Path(tmp, "root"), Path(tmp, "cache"), Path(tmp, "outside.md")
        build(root, outside)
        old = time.time() - 200 * 86400
        os.utime(root / "notes/gamma.md", (old, old))  # stale: a health item
        time.sleep(RACY * 2)
        first = run_health(root, cache, "--format", "json")
        assert first[2] == 0 and '"notes/gamma.md"' in first[0]
        records = list((cache / "pmem").glob("*.check"))
        assert len(records) == 1
        stamp = records[0].stat().st_ino
        assert run_health(root, cache, "--format", "json") == first
        assert records[0].stat().st_ino == stamp  # replayed, not stored again
        text = run_health(root, cache)
        assert text != first and len(list((cache / "pmem").glob("*.check"))) == 2  # another command line
        os.utime(root / "notes/gamma.md")  # no longer stale
        time.sleep(RACY * 2)
        changed = run_health(root, cache, "--format", "json")
        assert '"notes/gamma.md"' not in changed[0]
        assert changed == run_health(root, cache, "--format", "json", "--no-cache")


def test_a_check_after_one_edit_reads_that_file_only():
    """The per-file records: the whole-run record misses, every other file is restored."""
    with tempfile.TemporaryDirectory() as tmp:
        root, cache, outside = Path(tmp, "root"), Path(tmp, "cache"), Path(tmp, "outside.md")
        build(root, outside)
        time.sleep(RACY * 2)
        run_in_process(root, cache)
        (root / "notes/gamma.md").write_text(note("Gamma", "Now links to [alpha](alpha.md).\n"), encoding="utf-8")
        time.sleep(RACY * 2)
        before = ReadCount.files
        cached = run_in_process(root, cache)
        assert ReadCount.files - before == 1
        assert cached == run_in_process(root, cache, "--no-cache") and "missing.md" not in cached[0]


@pytest.mark.parametrize("change", ["delete", "create", "rename", "edit", "none"])
def test_a_first_run_stores_nothing_when_the_root_changed_during_its_check(change, monkeypatch):
    """With no record yet, the walk before the check is left out (issue 44: the first run after
    `--no-cache` costs a cold check); the record is stored only if nothing of the tree changed
    since the run began — here the change falls between the start and the store, as another
    program's write during the check would."""
    from pmem_lsp.cli.check_cache import CheckCache

    with tempfile.TemporaryDirectory() as tmp:
        root, cache, outside = Path(tmp, "root"), Path(tmp, "cache"), Path(tmp, "outside.md")
        build(root, outside)
        time.sleep(RACY * 2)
        monkeypatch.setenv("PMEM_CACHE_DIR", str(cache / "pmem"))
        monkeypatch.setenv("PMEM_CACHE_RACY_SECONDS", str(RACY))
        monkeypatch.setenv("PMEM_CACHE_WRITE", "foreground")
        first = CheckCache(str(root), ["check"])
        assert first.first and first.lookup() is None
        time.sleep(RACY * 2)  # the change comes after the run began, past the racy window
        note = root / "notes" / "alpha.md"
        if change == "delete":
            note.unlink()
        elif change == "create":
            (root / "notes" / "new.md").write_text("# New\n", encoding="utf-8")
        elif change == "rename":
            note.rename(note.with_name("beta2.md"))
        elif change == "edit":
            note.write_text(note.read_text(encoding="utf-8") + "x\n", encoding="utf-8")
        first.store("out", "", 0, [])
        stored = list((cache / "pmem").glob("*.check"))
        assert bool(stored) == (change == "none"), (change, stored)
        if stored:  # the record stands for the tree as it is: the next run replays it
            assert CheckCache(str(root), ["check"]).lookup() == ("out", "", 0)
