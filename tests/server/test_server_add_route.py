"""End to end: `pmem.addRoute` routes a file by path with the PM202 quick fix's edit
(docs/design.md §5), and refuses what it cannot route."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import DiskClient, Session, codes, start, wait_for
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root


async def add_route(client: LanguageClient, args):
    return await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command="pmem.addRoute", arguments=[args]))


async def test_add_route_routes_the_file_and_clears_pm202(client: LanguageClient, tmp_path: Path):
    files = base_files()
    files["notes/new.md"] = summary_file("New idea")
    root = write_root(tmp_path / "memory", files)
    await start(client, root)
    DiskClient(client, answer=None)
    note = root / "notes/new.md"
    await wait_for(client, lambda: "PM202" in codes(client, note))

    assert (await add_route(client, {"path": "notes/new.md"})) == {"applied": True}
    index = (root / "_index.md").read_text(encoding="utf-8")
    assert "- [New idea](notes/new.md) — fact number 1 about new idea\n" in index
    assert index.startswith(base_files()["_index.md"])  # added, nothing else touched
    await wait_for(client, lambda: "PM202" not in codes(client, note))

    with pytest.raises(JsonRpcException) as again:
        await add_route(client, {"path": "notes/new.md"})
    assert again.value.code == -32803 and "routed already" in str(again.value)


@pytest.fixture(scope="module")
def shared_root(tmp_path_factory) -> Path:
    """The refusals share one server, on a root they leave as it is."""
    return write_root(tmp_path_factory.mktemp("shared") / "memory", base_files())


@pytest.mark.parametrize("args, code", [
    ({"path": "../outside.md"}, -32803),
    ({"path": "_core/profile.md"}, -32803),
    ({"path": "notes/missing.md"}, -32803),
    ({"bogus": 1}, -32602),
    ("notes/new.md", -32602),
])
async def test_add_route_refuses_what_it_cannot_route(shared: Session, args, code):
    before = (shared.root / "_index.md").read_bytes()
    with pytest.raises(JsonRpcException) as refused:
        await add_route(shared.client, args)
    assert refused.value.code == code
    assert (shared.root / "_index.md").read_bytes() == before
