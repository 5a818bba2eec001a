"""One fixture per rule code, as ruff keeps them (issue 41, "a rule is a unit you can find").

`tests/rules/PMxxx/` is the fixture of rule PMxxx:

- `root/` — the files of a memory root as they are on disk, laid over `tests/rules/_base/` (a
  minimal root without findings: core, an index without routes, the archive index; the runner
  adds the empty `_archive/_trash/` folder git cannot hold). A file in `root/` replaces the
  base's file of that path; a fixture that adds active notes writes its own `_index.md`.
- `remove.txt` (optional) — base paths to leave out, one a line (`_archive/_trash/` included).
- `mtimes.json` (optional) — `{path: "YYYY-MM-DD"}`, the modification day of a file. Every
  other file gets `TODAY`'s, so a fixture never turns stale as the calendar moves on.
- `expected.txt` — every finding `pmem check` reports for that root (all codes, so a false
  alarm of another rule shows), one line each in `pmem check`'s text form, sorted. It holds at
  least one finding of the fixture's own code; where cheap, the root also holds a near miss
  that must not fire.

The engine runs in process, on `TODAY` (engine_helpers). `PMEM_UPDATE_FIXTURES=1` rewrites
every `expected.txt` instead of comparing: review the diff before committing it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pytest

from engine_helpers import TODAY, findings
from pmem_lsp.cli.check import _line as check_line  # `pmem check`'s own text line
from pmem_lsp.engine.catalogue import RULES

HERE = Path(__file__).resolve().parent
BASE = HERE / "_base"
BASE_DIRS = ("_archive/_trash/",)
UPDATE = os.environ.get("PMEM_UPDATE_FIXTURES") == "1"

# Codes that cannot be shown by a root of files alone, each with its reason. Keep it short:
# a code here is a rule nobody can find an example of.
NO_FIXTURE: dict[str, str] = {
    "PM210": "compares `_index.md` with the history store, outside the root: tests/engine/test_rules_vanished.py",
    "PM308": "compares `_archive/_index.md` with the history store, outside the root: "
             "tests/engine/test_rules_vanished.py",
}


def fixture_codes() -> list[str]:
    return sorted(p.name for p in HERE.iterdir() if p.is_dir() and p.name.startswith("PM"))


def _day_stamp(day: dt.date) -> float:
    return dt.datetime.combine(day, dt.time(12)).timestamp()


def build_root(fixture: Path, target: Path) -> Path:
    """The fixture's root at `target`: the base, less `remove.txt`, with `root/` over it."""
    shutil.copytree(BASE, target)
    for folder in BASE_DIRS:
        (target / folder).mkdir(parents=True, exist_ok=True)
    remove = fixture / "remove.txt"
    if remove.exists():
        for rel in filter(None, (line.strip() for line in remove.read_text(encoding="utf-8").splitlines())):
            path = target / rel.rstrip("/")
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
    if (fixture / "root").is_dir():
        shutil.copytree(fixture / "root", target, dirs_exist_ok=True)
    mtimes_file = fixture / "mtimes.json"
    mtimes = json.loads(mtimes_file.read_text(encoding="utf-8")) if mtimes_file.exists() else {}
    for path in sorted(target.rglob("*"), reverse=True):  # files before their folders
        rel = path.relative_to(target).as_posix()
        when = _day_stamp(dt.date.fromisoformat(mtimes[rel]) if rel in mtimes else TODAY)
        os.utime(path, (when, when), follow_symlinks=False)
    return target


def report(root: Path) -> str:
    """The findings as `pmem check` prints them, sorted, one a line."""
    return "".join(sorted(check_line(f) for f in findings(root)))


@pytest.mark.parametrize("code", fixture_codes())
def test_fixture(code: str, tmp_path: Path) -> None:
    fixture = HERE / code
    root = build_root(fixture, tmp_path / "memory")
    got = report(root)
    expected_file = fixture / "expected.txt"
    if UPDATE:
        expected_file.write_text(got, encoding="utf-8")
    expected = expected_file.read_text(encoding="utf-8") if expected_file.exists() else ""
    assert got == expected, (f"{code}: the findings differ from tests/rules/{code}/expected.txt; if the new "
                             "ones are right, rewrite it with PMEM_UPDATE_FIXTURES=1 and review the diff")
    assert f": {code} " in got, f"{code}: the fixture shows no finding of its own code"


def test_every_rule_has_a_fixture() -> None:
    have = set(fixture_codes())
    missing = sorted(set(RULES) - have - set(NO_FIXTURE))
    assert not missing, f"rule codes without a fixture folder tests/rules/PMxxx/: {', '.join(missing)}"


def test_every_fixture_is_a_rule() -> None:
    unknown = sorted((set(fixture_codes()) | set(NO_FIXTURE)) - set(RULES))
    assert not unknown, f"fixture folders or skips for codes the catalogue does not have: {', '.join(unknown)}"


def test_skips_have_no_fixture() -> None:
    both = sorted(set(NO_FIXTURE) & set(fixture_codes()))
    assert not both, f"codes both skipped and with a fixture (drop the skip): {', '.join(both)}"
