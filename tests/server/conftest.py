"""Fixtures of the server's end-to-end tests.

- `client` — a pytest-lsp client talking to a fresh `pmem-lsp` process, for one test. The test
  starts the session itself (`lsp_helpers.start(client, root, profile, settings)`), so it picks
  its root, client profile and settings; the session is shut down after the test. For every
  test that changes files, buffers, roots or settings.
- `shared` — one `pmem-lsp` process for a whole module, for tests that only read: hover,
  links, symbols, completion, references, reading diagnostics, refused commands. A module using
  it defines a module-scoped `shared_root` fixture (the root the session opens) and may
  override `shared_options` (the keyword arguments of `start`: profile, settings). `shared`
  gives a `Session` — the client, the root, the initialize result and a `DiskClient` whose
  answer and records are reset before each test. What the client accumulates (diagnostics,
  messages, log messages) is the whole module's: a test compares what arrived after it began.

Event loops: pytest-asyncio runs each module's tests and fixtures in one loop per module
(`asyncio_default_*_loop_scope` in pyproject.toml), which module-scoped clients need.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import SERVER, DiskClient, Session, start
from pytest_lsp import LanguageClient


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def shared_options() -> dict:
    """`start`'s keyword arguments for the module's shared session (profile, settings)."""
    return {}


@pytest_lsp.fixture(config=SERVER, scope="module")
async def shared_client(lsp_client: LanguageClient, shared_root: Path, shared_options: dict):
    result = await start(lsp_client, shared_root, **shared_options)
    encoding = str(result.capabilities.position_encoding or "utf-16")
    lsp_client.pmem_session = Session(lsp_client, shared_root, result, DiskClient(lsp_client, None, encoding))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def shared(shared_client: LanguageClient) -> Session:
    session: Session = shared_client.pmem_session
    session.ui.answer = None
    session.ui.requests.clear()
    session.ui.edits.clear()
    return session
