"""The list of what the native core mirrors (pmem_lsp/engine/native_mirrors.py and .json) against
the Python code as it is, and the core stepping aside where a build does not match (docs/native.md,
"When the Python side changes"). No Rust is needed: these run on every machine, so a changed
mirrored function fails `make test` everywhere, not only where the core is built.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pmem_lsp.engine import native, native_mirrors


def test_every_mirrored_python_function_is_as_the_core_was_checked_against() -> None:
    """A function, pattern or table the core mirrors changed. Check its Rust twin (named below)
    against the new Python, then run `python -m pmem_lsp.engine.native_mirrors` (it writes the
    new digest into native_mirrors.json), set WRITTEN_FOR_<GROUP> in native/src/lib.rs to that
    digest and rebuild (make native). With the JSON written and the Rust not, a built core steps
    aside for that group: the pure-Python path runs there, never wrong."""
    now = native_mirrors.current_digests()
    committed = native_mirrors.committed_digests()
    assert set(committed) == set(now), "native_mirrors.json lists other groups: run python -m pmem_lsp.engine.native_mirrors"
    changed = [group for group in now if now[group] != committed[group]]
    assert not changed, "\n".join(
        f"the Python code of '{group}' changed (used by {native_mirrors.MIRRORS[group][1]}): "
        f"check its Rust twin, {native_mirrors.MIRRORS[group][0]}" for group in changed)


def test_the_json_names_what_the_list_names() -> None:
    data = json.loads(native_mirrors.JSON_PATH.read_text(encoding="utf-8"))
    for group, (rust, used_by, names) in native_mirrors.MIRRORS.items():
        assert data[group]["python"] == list(names) and data[group]["rust"] == rust and data[group]["used_by"] == used_by


def test_every_name_resolves_and_counts() -> None:
    """A renamed function must not vanish from its group silently: each name resolves, and a
    change to any one changes the group's digest."""
    for group, (_, _, names) in native_mirrors.MIRRORS.items():
        for name in names:
            text = native_mirrors._text(native_mirrors.resolve(name))
            assert text and " at 0x" not in text, (group, name, text[:200])  # no address: the same in every process


def fake_core(tmp_path: Path, stale: str | None) -> Path:
    """A stand-in `pmem_native` of the expected version, written for the committed digests
    except `stale`'s."""
    digests = native_mirrors.committed_digests()
    lines = [f"VERSION = {native.EXPECTED!r}"] + [f"def {name}(*a): raise AssertionError" for name in native.FUNCTIONS]
    lines += [f"WRITTEN_FOR_{g.upper()} = {('0' * 64 if g == stale else d)!r}" for g, d in digests.items()]
    (tmp_path / "pmem_native.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def engine_state(tmp_path: Path, stale: str | None, **env: str) -> dict[str, object]:
    code = ("import json; from pmem_lsp.engine import native; from pmem_lsp.engine.rules import summary, secrets;"
            "print(json.dumps({'core': native.CORE is not None, 'stale': native.STALE, 'summary': summary._CORE_VERDICT,"
            "'secrets': secrets._NATIVE is not None, 'describe': native.describe()}))")
    environ = {**os.environ, "PYTHONPATH": str(fake_core(tmp_path, stale)), **env}
    out = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


@pytest.mark.e2e
def test_a_build_written_for_other_python_code_steps_aside_for_that_group_only(tmp_path: Path) -> None:
    state = engine_state(tmp_path, "summary")
    assert state["core"] and state["stale"] == ["summary"]
    assert state["summary"] is False, "summary.py must not trust the core's summary_clean verdict"
    assert state["secrets"] is True
    assert "pure-Python path for summary" in str(state["describe"])
    whole = engine_state(tmp_path, None)
    assert whole["stale"] == [] and whole["summary"] is True and whole["describe"] == f"native core {native.EXPECTED}"


@pytest.mark.e2e
@pytest.mark.parametrize(("env", "why"), [({"PMEM_NATIVE": "0"}, "turned off by PMEM_NATIVE")])
def test_pmem_version_says_which_engine_and_why(tmp_path: Path, env: dict[str, str], why: str) -> None:
    pmem = [sys.executable, "-m", "pmem_lsp.cli.main", "--version"]
    environ = {**os.environ, "PYTHONPATH": str(fake_core(tmp_path, "secrets"))}
    stale = subprocess.run(pmem, env=environ, capture_output=True, text=True, check=True).stdout
    assert stale.startswith("pmem ") and "pure-Python path for secrets" in stale, stale
    off = subprocess.run(pmem, env={**environ, **env}, capture_output=True, text=True, check=True).stdout
    assert off.startswith("pmem ") and f"pure-Python engine: {why}" in off, off
    (tmp_path / "pmem_native.py").unlink()
    if importlib.util.find_spec("pmem_native") is None:  # else a real build is installed here
        missing = subprocess.run(pmem, env=environ, capture_output=True, text=True, check=True).stdout
        assert "pure-Python engine: the native core is not installed" in missing, missing
