"""The cache writer (engine/cache_writer.py): a record written after the answer, by a forked
child that holds none of the caller's pipes, and read only once it is whole."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pmem_lsp.engine.cache_writer import no_writer_busy, wait_for_writers

# A process that writes `record` through `write_after_answer`; its writer waits for `go` (the
# test creates it only after the process has ended and its output pipe closed), then writes.
SCRIPT = """
import os, sys, time
from pmem_lsp.engine.cache_writer import write_after_answer
record, go = sys.argv[1], sys.argv[2]

def write():
    for _ in range(6000):  # at most a minute: a test that never says go fails, it does not hang
        if os.path.exists(go):
            break
        time.sleep(0.01)
    os.makedirs(os.path.dirname(record), exist_ok=True)
    with open(record + ".tmp", "w") as fh:
        fh.write("whole")
    os.replace(record + ".tmp", record)

write_after_answer(record, write)
print("answered", flush=True)
"""

needs_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the writer forks on Linux only")


def _answer(tmp_path: Path, env_extra: dict | None = None) -> tuple[subprocess.CompletedProcess[str], str, Path]:
    record, go = str(tmp_path / "cache" / "one.check"), tmp_path / "go"
    env = {k: v for k, v in os.environ.items() if k != "PMEM_CACHE_WRITE"}
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, "-c", SCRIPT, record, str(go)], capture_output=True, text=True,
                          env=env, timeout=120)
    return done, record, go


@needs_fork
def test_the_caller_has_the_answer_before_the_record_is_written(tmp_path: Path):
    done, record, go = _answer(tmp_path)
    # Had the writer kept the output pipe, `run` would have waited for it, and it waits for `go`.
    assert done.returncode == 0 and done.stdout == "answered\n", done.stderr
    go.touch()
    with no_writer_busy(record):  # the writer is busy or done: after this, the record is whole
        assert Path(record).read_text() == "whole"


@needs_fork
def test_waiting_for_writers_of_a_folder(tmp_path: Path):
    done, record, go = _answer(tmp_path)
    assert done.returncode == 0
    go.touch()
    wait_for_writers(str(tmp_path / "cache"))
    assert Path(record).read_text() == "whole"


def test_foreground_writes_before_the_answer(tmp_path: Path):
    (tmp_path / "go").touch()  # nothing to wait for: written in place, before the answer
    done, record, _go = _answer(tmp_path, {"PMEM_CACHE_WRITE": "foreground"})
    assert done.returncode == 0, done.stderr
    assert Path(record).read_text() == "whole"
    assert not Path(record + ".lock").exists()  # never written in the background: no lock


def test_a_record_never_written_in_the_background_needs_no_lock(tmp_path: Path):
    record = tmp_path / "plain.check"
    record.write_text("x")
    with no_writer_busy(str(record)):
        assert record.read_text() == "x"
    assert not Path(str(record) + ".lock").exists()
