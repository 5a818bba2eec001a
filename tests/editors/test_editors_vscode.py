"""The VS Code extension in editors/vscode: its settings follow the schema, and it builds,
passes its unit tests and packages into a .vsix (`npm ci`, `npm run build`, `npm test`,
`npm run package`), so `make test` covers it on a machine with Node and npm."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "editors" / "vscode"
NPM = shutil.which("npm")
CLIENT_ONLY = {"pmem.server.path", "pmem.server.python", "pmem.trace.server"}


def schema_leaves(schema: dict) -> dict[str, dict]:
    leaves = {}
    for name, node in schema["properties"].items():
        ref = node.get("$ref")
        target = schema["$defs"][ref.rsplit("/", 1)[-1]] if ref else None
        if target and "properties" in target:
            for sub, leaf in target["properties"].items():
                leaves[f"pmem.{name}.{sub}"] = leaf
        else:
            leaves[f"pmem.{name}"] = node
    return leaves


def test_contributed_configuration_is_the_settings_schema():
    """The check that needs no npm: every setting the server knows is in package.json with the
    schema's default and description, plus only the extension's own settings."""
    committed = json.loads((REPO / "schemas" / "settings.schema.json").read_text(encoding="utf-8"))
    props = json.loads((EXT / "package.json").read_text(encoding="utf-8"))["contributes"]["configuration"]["properties"]
    leaves = schema_leaves(committed)
    assert set(props) - CLIENT_ONLY == set(leaves), "run `make schemas` (or `npm run configuration` in editors/vscode)"
    for key, leaf in leaves.items():
        assert props[key]["markdownDescription"] == leaf["description"], key
        if "default" in leaf:
            assert props[key]["default"] == leaf["default"], key
        if "type" in leaf:
            assert props[key]["type"] == leaf["type"], key
        for bound in ("minimum", "maximum"):
            assert props[key].get(bound) == leaf.get(bound), (key, bound)


def test_palette_commands_do_not_shadow_the_servers_commands():
    """vscode-languageclient registers the server's commands (`pmem.archive`, …) under their own
    names; the palette commands must use other ids or activation fails."""
    pkg = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
    ids = [c["command"] for c in pkg["contributes"]["commands"]]
    titles = {c["title"] for c in pkg["contributes"]["commands"]}
    assert not [i for i in ids if i.startswith("pmem.")]
    assert {"Status", "Health", "Upgrade", "Check root"} <= titles
    assert {c["category"] for c in pkg["contributes"]["commands"]} == {"Persistent Memory"}
    assert {"workspaceContains:_index.md", "workspaceContains:_core/**", "onLanguage:markdown"} <= set(
        pkg["activationEvents"])


def npm(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([NPM, *args], cwd=EXT, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"npm {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.mark.skipif(NPM is None, reason="npm is not installed")
def test_extension_builds_passes_its_unit_tests_and_packages():
    for old in EXT.glob("*.vsix"):
        old.unlink()
    npm("ci", "--no-audit", "--no-fund", "--prefer-offline")
    npm("run", "build")  # configuration --check, tsc --noEmit, esbuild
    tested = npm("test")  # node --test: server resolution, settings, roots, configuration, the bundle
    assert "# fail 0" in tested.stdout and "# pass " in tested.stdout, tested.stdout[-2000:]
    npm("run", "package")
    pkg = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
    vsix = EXT / f"{pkg['name']}-{pkg['version']}.vsix"
    with zipfile.ZipFile(vsix) as z:
        names = set(z.namelist())
        packaged = json.loads(z.read("extension/package.json"))
    assert {"extension/package.json", "extension/dist/extension.js", "extension/readme.md"} <= names
    assert not [n for n in names if "node_modules" in n or n.startswith("extension/src/") or n.endswith(".map")]
    assert packaged["contributes"]["configuration"] == pkg["contributes"]["configuration"]
    assert packaged["main"] == "./dist/extension.js"
