"""The engine stays free of the editor protocol (docs/design.md §9): no pygls or lsprotocol anywhere in it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "pmem_lsp" / "engine"
FORBIDDEN = ("pygls", "lsprotocol")


def test_no_engine_module_imports_the_protocol():
    offenders = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_importing_the_engine_and_cli_check_loads_no_protocol_module():
    code = ("import sys, pmem_lsp.engine.analysis, pmem_lsp.engine.host, pmem_lsp.cli.check;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


REPO = ENGINE.parent.parent
# How the founding documents were cited before they were copied into docs/ (spelt in two
# parts so that this file does not cite them itself).
OUTSIDE = ("DESIGN" + " §", "DESIGN" + ".md", "shared/" + "spec", "shared/" + "DESIGN")
ARCHITECTURE = REPO / "docs" / "architecture.md"


def test_the_code_map_names_every_engine_server_and_cli_module():
    """docs/architecture.md is the code map: a module it does not mention is one the next
    person cannot find (navigation/ and secrets/ are described as folders)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    unnamed = []
    for layer in ("engine", "engine/lifecycle", "server", "cli", "mcp"):
        for path in sorted((REPO / "pmem_lsp" / layer).glob("*.py")):
            if path.name != "__init__.py" and f"`{path.name}`" not in text and f"{path.stem}." not in text:
                unnamed.append(f"{layer}/{path.name}")
    assert unnamed == []


def test_nothing_in_the_repository_cites_a_document_outside_it():
    """The product design and the format spec are in docs/; citations point there."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    offenders = []
    for name in tracked.splitlines():
        path = REPO / name
        if path.suffix not in (".py", ".md", ".lua", ".ts", ".mjs", ".sh", ".el", ".json", ".toml") \
                or name in ("docs/design.md",) or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(citation in text for citation in OUTSIDE):
            offenders.append(name)
    assert offenders == []


def test_module_names_are_unique_across_the_package():
    """A file name says what the module holds (docs/architecture.md, issue 41): no two modules of
    the package share one, so `early.py` can never mean three things again."""
    package = Path(__file__).resolve().parents[2] / "pmem_lsp"
    seen: dict[str, list[str]] = {}
    for path in package.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(path.name, []).append(path.relative_to(package).as_posix())
    assert {name: places for name, places in seen.items() if len(places) > 1} == {}
