"""editors/helix: no Helix can be installed here, so its configuration is checked by reading it
as Helix 23.10 does (TOML), against the keys that version defines, the server's command and the
settings schema; and the README's snippet must say the same as the file."""

from __future__ import annotations

import re
import sys

from pmem_lsp.engine.settings import Settings
from roots import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

HELIX = REPO / "editors" / "helix"
# Helix 23.10's keys (book: "Language configuration"): a server's table, a language's entry.
SERVER_KEYS = {"command", "args", "config", "timeout", "environment", "required-root-patterns"}
LANGUAGE_KEYS = {"name", "scope", "file-types", "roots", "language-servers", "auto-format", "comment-token",
                 "indent", "formatter", "injection-regex", "shebangs", "grammar", "text-width", "soft-wrap",
                 "workspace-lsp-roots", "persistent-diagnostic-sources", "debugger", "rulers"}


def config() -> dict:
    return tomllib.loads((HELIX / "languages.toml").read_text(encoding="utf-8"))


def test_languages_toml_uses_helix_23_10_keys_and_starts_pmem_lsp_for_markdown():
    data = config()
    assert set(data) == {"language-server", "language"}
    server = data["language-server"]["pmem-lsp"]
    assert set(server) <= SERVER_KEYS
    # The command `pip install`/`pipx install` put on PATH (pyproject's console scripts).
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert server["command"] == "pmem-lsp" and "pmem-lsp" in scripts
    # `config` is what Helix sends as initializationOptions and answers workspace/configuration with.
    Settings.model_validate(server["config"]["pmem"])
    [markdown] = data["language"]
    assert set(markdown) <= LANGUAGE_KEYS and "language-server" not in markdown  # the pre-23.10 key
    assert markdown["name"] == "markdown"
    assert "pmem-lsp" in markdown["language-servers"]
    assert set(markdown["language-servers"]) - set(data["language-server"]) <= {"marksman"}  # Helix's own default
    # Not `_index.md`: `_archive/` has one too, and an archived file belongs to the memory root.
    assert markdown["roots"] == ["_core"]


def test_readme_snippet_says_what_the_file_says_and_names_the_minimum_version():
    readme = (HELIX / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"```toml\n(.*?)```", readme, re.S)
    assert snippet is not None
    assert tomllib.loads(snippet.group(1)) == config()
    assert "Helix 23.10 or later" in readme
    assert "Helix 23.10 or later" in (HELIX / "languages.toml").read_text(encoding="utf-8")
