"""The engine stays free of the editor protocol (DESIGN §9): no pygls or lsprotocol anywhere in it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "pmem_lsp" / "engine"
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
