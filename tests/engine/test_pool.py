"""The per-file work in several processes (engine/pool.py): the same findings and the same
`pmem check` output as in one process, on a generated root and on the real-notes fixtures; the
workers really do the work; a worker that fails, or a process that cannot fork safely, only
makes the check slower."""

from __future__ import annotations

import io
import os
import sys
import threading
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import realnotes as rn

from engine_helpers import TODAY, scan
from pmem_lsp.cli.main import main
from pmem_lsp.engine import pool
from pmem_lsp.engine.analysis import Analysis
from pmem_lsp.engine.root_state import RootState
from pmem_lsp.engine.rules.source_paths import checked_outside_paths
from roots import demo_copy

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from generate_root import generate

pytestmark = pytest.mark.skipif(not pool.can_fork(), reason="the pool forks (Linux only)")

FIXTURES: dict[str, Callable[[Path], Path]] = {
    "demo": lambda d: demo_copy(d),
    "obsidian": lambda d: rn.obsidian_vault(d).root,
    "cline-zh": lambda d: rn.cline_memory_bank(d, "zh").root,
    "templates": lambda d: rn.template_collection(d, 60).root,
    "journal-500": lambda d: rn.templated_journal(d, 500).root,
    "foam": lambda d: rn.foam_vault(d).root,
}


def check_json(root: Path, jobs: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """`pmem check --format json --no-cache` with PMEM_JOBS=`jobs`: (status, stdout, stderr)."""
    monkeypatch.setenv("PMEM_JOBS", jobs)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["--root", str(root), "check", "--format", "json", "--no-cache"])
    return status, out.getvalue(), err.getvalue()


def parsed_here(state: RootState) -> int:
    """Files whose text this process parsed (a worker's parse stays in the worker)."""
    return sum(1 for e in state.files.values() if e._doc is not None)


def markdown_texts(state: RootState) -> int:
    return sum(1 for e in state.files.values() if e.markdown and e.text is not None)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("generated") / "root", 600)


def test_check_json_is_byte_identical_on_a_generated_root(generated: Path, monkeypatch):
    serial = check_json(generated, "1", monkeypatch)
    assert serial[0] == 1 and '"PM401"' in serial[1] and '"PM102"' in serial[1]  # findings to compare
    for jobs in ("2", "3", "7"):
        assert check_json(generated, jobs, monkeypatch) == serial, jobs


def test_the_workers_do_the_per_file_work(generated: Path):
    state = scan(generated)
    analysis = Analysis(state, TODAY, jobs=3)
    serial = Analysis(scan(generated), TODAY)
    assert analysis.all() == serial.all()
    assert analysis.work == serial.work  # the workers' counts come back too
    texts = markdown_texts(state)
    # This process parsed its own share and the two indexes; the workers' shares it did not.
    assert parsed_here(state) < texts * 0.5
    assert parsed_here(serial.state) == texts


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_the_same_findings_on_real_shaped_roots(tmp_path: Path, fixture: str, monkeypatch):
    root = FIXTURES[fixture](tmp_path / "memory")
    serial_state = scan(root)
    serial = Analysis(serial_state, TODAY).all()
    state = scan(root)
    assert Analysis(state, TODAY, jobs=4).all() == serial
    assert parsed_here(state) < markdown_texts(state)
    # The check cache keys a replay on the outside paths PM403 asked about: the same ones.
    assert sorted(checked_outside_paths(state)) == sorted(checked_outside_paths(serial_state))
    OUTSIDE[fixture] = len(checked_outside_paths(state))
    assert check_json(root, "3", monkeypatch) == check_json(root, "1", monkeypatch)


OUTSIDE: dict[str, int] = {}


def test_some_fixture_points_outside():
    """The comparison above saw outside paths (runs after it: the same module, in order)."""
    assert len(OUTSIDE) == len(FIXTURES) and any(OUTSIDE.values()), OUTSIDE


def test_selected_rules_only(generated: Path):
    for select in (["PM2", "PM3"], ["PM401"], ["PM503", "PM501"], ["PM402", "PM403"]):
        overrides = {"select": select}
        assert (Analysis(scan(generated, overrides), TODAY, jobs=2).all()
                == Analysis(scan(generated, overrides), TODAY).all()), select


def _dies(*_args: object) -> int:
    os._exit(3)


def _unpicklable(share, fill, work, write):
    for entry in share:
        entry.cache["not picklable"] = lambda: None
    return ORIGINAL_WORKER(share, fill, work, write)


ORIGINAL_WORKER = pool._worker


@pytest.mark.parametrize("broken", [_dies, _unpicklable], ids=["worker exits", "cache not picklable"])
def test_a_failing_worker_leaves_the_work_to_this_process(generated: Path, monkeypatch, broken):
    serial = Analysis(scan(generated), TODAY).all()
    monkeypatch.setattr(pool, "_worker", broken)
    state = scan(generated)
    assert Analysis(state, TODAY, jobs=2).all() == serial
    assert parsed_here(state) == markdown_texts(state)  # the worker's share was done here


def test_no_fork_beside_another_thread(generated: Path):
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        state = scan(generated)
        serial = Analysis(scan(generated), TODAY).all()
        assert Analysis(state, TODAY, jobs=2).all() == serial
        assert parsed_here(state) == markdown_texts(state)
    finally:
        stop.set()
        other.join()


def test_a_bad_pmem_jobs_is_one_process_and_says_so(generated: Path, monkeypatch):
    status, out, err = check_json(generated, "many", monkeypatch)
    assert (status, out) == check_json(generated, "1", monkeypatch)[:2]
    assert "PMEM_JOBS='many' is not a number of processes; checking in one" in err


@pytest.mark.parametrize(("env", "files", "cpus", "busy", "jobs"), [
    ({}, 10_000, 2, 0.0, 2), ({}, 10_000, 32, 0.0, 10), ({}, 1_999, 8, 0.0, 1), ({}, 2_000, 8, 0.0, 2),
    ({}, 50_000, 1, 0.0, 1),
    # A loaded machine: the load average per core says how many cores are someone else's.
    ({}, 10_000, 2, 0.5, 2), ({}, 10_000, 2, 0.75, 1), ({}, 10_000, 2, 2.0, 1), ({}, 10_000, 8, 0.5, 5),
    ({"PMEM_JOBS": "1"}, 10_000, 8, 0.0, 1), ({"PMEM_JOBS": "auto"}, 10_000, 8, 0.0, 8),
    ({"PMEM_JOBS": "0"}, 5, 8, 0.0, 1), ({"PMEM_JOBS": "3"}, 5, 1, 3.0, 3), ({"PMEM_JOBS": " 2 "}, 5, 1, 0.0, 2),
])
def test_how_many_processes(monkeypatch, env, files, cpus, busy, jobs):
    monkeypatch.setattr(pool, "_NATIVE", None)  # the pure engine's thresholds
    monkeypatch.setattr(pool, "cores", lambda: cpus)
    monkeypatch.setattr(pool, "busy", lambda: busy)
    assert pool.jobs_for(files, env) == (jobs, None)


@pytest.mark.parametrize(("files", "jobs"), [(10_000, 1), (19_999, 1), (20_000, 2), (50_000, 2)])
def test_with_the_native_core_only_a_larger_root_is_pooled(monkeypatch, files, jobs):
    monkeypatch.setattr(pool, "_NATIVE", object())
    monkeypatch.setattr(pool, "cores", lambda: 2)
    monkeypatch.setattr(pool, "busy", lambda: 0.0)
    assert pool.jobs_for(files, {}) == (jobs, None)
    assert pool.jobs_for(files, {"PMEM_JOBS": "2"}) == (2, None)  # asked for: whatever the root


@pytest.mark.parametrize("raw", ["-1", "two", "1.5"])
def test_pmem_jobs_that_is_no_number(raw):
    assert pool.jobs_for(10_000, {"PMEM_JOBS": raw}) == (1, f"PMEM_JOBS={raw!r} is not a number of processes; "
                                                           "checking in one")


def test_auto_pools_a_large_root(generated: Path, monkeypatch):
    """The threshold, lowered for a test-sized root: `pmem check` forks on its own."""
    monkeypatch.setattr(pool, "MIN_FILES", 100)
    monkeypatch.setattr(pool, "MIN_FILES_NATIVE", 100)
    monkeypatch.setattr(pool, "FILES_PER_JOB", 100)
    monkeypatch.setattr(pool, "cores", lambda: 2)
    monkeypatch.setattr(pool, "busy", lambda: 0.0)
    forked: list[int] = []
    real_warm = pool.warm

    def counting(entries, fill, jobs, work=None, here=None):
        forked.append(jobs)
        return real_warm(entries, fill, jobs, work, here)

    monkeypatch.setattr(pool, "warm", counting)
    monkeypatch.delenv("PMEM_JOBS", raising=False)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        main(["--root", str(generated), "check", "--format", "json", "--no-cache"])
    assert forked == [2]
    assert out.getvalue() == check_json(generated, "1", monkeypatch)[1]
