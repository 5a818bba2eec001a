"""`route` means in `memory_preview` what `--route` means in the CLI (issue 43): a string is the
route's description, false is `--no-route`, true makes it from the first Summary bullet."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pmem_lsp.cli.main import main
from pmem_lsp.mcp import tools
from roots import make_root

NOTE = "# Kiln firing log\n\n## Summary\n\n- Bisque firings run to cone 04.\n- Glaze at cone 6.\n- Ana owns it.\n"


def cli_preview(root: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(NOTE.encode())))
    out = io.BytesIO()
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(out, encoding="utf-8", write_through=True))
    assert main(["--root", str(root), "save", "projects/kiln.md", *args, "--format", "json"]) == 3
    return json.loads(out.getvalue())


def mcp_preview(root: Path, **arguments: object) -> dict:
    return tools.make_preview(root, tools.Previews(), "save", "projects/kiln.md", NOTE, **arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize("cli_args, mcp_args", [
    (("--route", "kiln firings, cone 04"), {"route": "kiln firings, cone 04"}),
    (("--no-route",), {"route": False}),
    ((), {"route": True}),
    ((), {}),
])
def test_route_means_what_the_clis_route_means(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_args, mcp_args):
    root = make_root(tmp_path)
    assert mcp_preview(root, **mcp_args)["preview"] == cli_preview(root, *cli_args, monkeypatch=monkeypatch)["preview"]


def test_a_description_given_twice_differently_is_refused(tmp_path: Path):
    root = make_root(tmp_path)
    with pytest.raises(tools.ToolFailure):
        mcp_preview(root, route="one", description="another")
    assert "kiln firings" in mcp_preview(root, route="kiln firings", description="kiln firings")["preview"]
