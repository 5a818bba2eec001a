"""What every test folder shares.

The folders: `engine/` (the engine in process), `cli/` (the `pmem` command, in process and as a
subprocess), `server/` (the real server end to end: pytest-lsp and raw stdio clients) and
`editors/` (real Neovim, Emacs, the VS Code extension's build). Roots on disk are built with
`roots.py`; the engine's one-shot analysis is in `engine_helpers.py`.

Markers (pyproject.toml): `slow` is set by hand; `e2e` — a real `pmem-lsp` or `pmem` process, or
a real editor — is set here on everything in `server/` and `editors/`, and by hand on the
tests elsewhere that run `pmem` as a subprocess. So that `-m "not e2e"` (`make test-fast`)
means what it says, a test without the marker that starts a pmem process fails and says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
E2E_FOLDERS = ("server", "editors")
_CACHE = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """The user's cache folder (locks, check records: engine/user_cache.py) is a temporary one
    for the whole run, inherited by every pmem process a test starts: tests never write into
    the real ~/.cache, and a replayed `pmem check` never comes from another run."""
    cache = tempfile.mkdtemp(prefix="pmem-test-cache-")
    config.stash[_CACHE] = cache
    os.environ["XDG_CACHE_HOME"] = cache
    # History stores (engine/history/) go to the user's state folder: a temporary one too, so
    # no test records into the real ~/.local/state.
    os.environ["XDG_STATE_HOME"] = os.path.join(cache, "state")
    os.environ.pop("PMEM_CACHE_DIR", None)
    # The check's cache records are written after the answer by a forked child
    # (engine/cache_writer.py); tests that count or read what a finished pmem wrote would race
    # it, so they run with the records written in place. tests/engine/test_cache_writer.py
    # takes this out and tests the child itself.
    os.environ["PMEM_CACHE_WRITE"] = "foreground"


def pytest_unconfigure(config: pytest.Config) -> None:
    cache = config.stash.get(_CACHE, None)
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            folder = item.path.resolve().relative_to(TESTS).parts[0]
        except ValueError:
            continue
        if folder in E2E_FOLDERS:
            item.add_marker(pytest.mark.e2e)


def _starts_pmem(args) -> bool:
    """`args` (as given to Popen) start the pmem CLI or server: `python -m pmem_lsp…`, the
    `pmem`/`pmem-lsp` scripts, or the crash hook that runs them."""
    argv = [os.fspath(a) for a in args] if isinstance(args, (list, tuple)) else [os.fspath(args)]
    if any(a == "-m" and b.split(".")[0] == "pmem_lsp" for a, b in zip(argv, argv[1:], strict=False)):
        return True
    return any(os.path.basename(a) in ("pmem", "pmem-lsp", "crash_hook.py") for a in argv)


@pytest.fixture(autouse=True)
def _e2e_marker_is_honest(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    if request.node.get_closest_marker("e2e") is not None:
        yield
        return
    real_init = subprocess.Popen.__init__

    def init(self, args, *rest, **kwargs):
        if _starts_pmem(args):
            raise AssertionError(f"{request.node.nodeid} starts a pmem process ({args!r}) but is not marked "
                                 "e2e: add @pytest.mark.e2e so that `make test-fast` leaves it out")
        real_init(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", init)
    yield
