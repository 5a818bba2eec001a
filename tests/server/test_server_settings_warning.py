"""Settings the server cannot use are said once, in one message that says what is wrong and what
the server does instead (a `.pmem.toml` that is a folder used to give two contradictory
warnings: "using the root's own settings", then "using defaults")."""

from __future__ import annotations

from pathlib import Path

from lsp_helpers import codes, start, wait_for
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from roots import base_files, summary_file, write_root


def _warnings(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.type == lsp.MessageType.Warning]


def _configured(client: LanguageClient) -> int:
    return sum(1 for m in client.log_messages if m.message.startswith("pmem: memory roots: "))


async def test_a_settings_file_that_is_a_folder_is_one_clear_warning_said_once(client: LanguageClient, tmp_path: Path):
    files = base_files()
    files["projects/two.md"] = summary_file("Two", bullets=2)
    files["_index.md"] += "- [Two](projects/two.md) — second\n"
    root = write_root(tmp_path / "memory", files)
    (root / ".pmem.toml").mkdir()
    await start(client, root, settings={"severity": {"PM102": "error"}})
    await wait_for(client, lambda: "PM102" in codes(client, root / "projects/two.md"))
    await wait_for(client, lambda: bool(_warnings(client)))
    (warning,) = _warnings(client)
    assert warning.startswith(f"pmem: {root / '.pmem.toml'}: cannot be read (a folder, not a file). ")
    assert "checked with the default settings" in warning and "refuses to change anything" in warning
    assert "own settings" not in warning
    # What it says is what happens: defaults (the editor's severity is not applied on top) …
    (diagnostic,) = [d for d in client.diagnostics[(root / "projects/two.md").as_uri()] if d.code == "PM102"]
    assert diagnostic.severity == lsp.DiagnosticSeverity.Warning
    # … and a write is refused with the settings' reason.
    try:
        await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="pmem.upgrade", arguments=[{}]))
    except Exception as exc:  # the refusal is a JSON-RPC error
        assert "settings cannot be used" in str(exc)
    else:
        raise AssertionError("pmem.upgrade was not refused")
    # The roots configured again (a settings change): not said again.
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"pmem": {}}))
    await wait_for(client, lambda: _configured(client) >= 2)
    assert len(_warnings(client)) == 1


async def test_editor_settings_that_cannot_be_used_are_one_warning(client: LanguageClient, tmp_path: Path):
    root = write_root(tmp_path / "memory", base_files())
    (root / ".pmem.toml").write_text('[severity]\nPM003 = "hint"\n', encoding="utf-8")
    await start(client, root, settings={"core": {"maxBites": 3}})
    await wait_for(client, lambda: bool(_warnings(client)) and _configured(client) >= 1)
    (warning,) = _warnings(client)
    assert warning == (f"pmem: editor settings: core.maxBites: Extra inputs are not permitted; "
                       f"the editor's pmem settings are not used for {root}: its own settings are")
