"""Secrets in file names (`secrets.find_in_name`, `mask_name`, `mask_text` on paths) and PM401
on a file's name and on the paths an index line names: the review after issue 25 found a
key-named value in a name (`notes/password=…md`) passing every surface."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_helpers import findings, only
from pmem_lsp.engine.lifecycle.safety import Refusal, refuse_secret
from pmem_lsp.engine.secrets import find_in_name, mask_name, mask_text
from roots import active_file, make_root

PASSWORD = "Zx9!kq2Lm8Pw"
AWS = "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLQKEY9"
TOKEN = "ghp_" + "x8Kd93LmQp2ZrT7vNw4YbH6sJc1FgA5eUo0i"


@pytest.mark.parametrize("path, kind, value", [
    (f"notes/password={PASSWORD}.md", "password", PASSWORD),
    (f"notes/AWS_SECRET_ACCESS_KEY={AWS}.md", "AWS secret access key", AWS),
    (f"notes/{TOKEN}.md", "GitHub token", TOKEN),
    (f"a/b/db-password={PASSWORD}/x.md", "password", PASSWORD),
])
def test_a_secret_in_a_path_is_found_where_it_is(path: str, kind: str, value: str):
    found = find_in_name(path)
    assert [m.kind for m in found] == [kind]
    assert path[found[0].start:found[0].end] == value  # the extension is not part of the value
    assert value not in mask_name(path) and mask_name(path).endswith(path[found[0].end:])


@pytest.mark.parametrize("path", [
    "notes/password-rotation.md", "notes/api_key=where-it-lives.md", "projects/token=refresh-flow.md",
    "notes/secret:santa-2025.md", "_core/preferences.md", "notes/keys/ssh.md", "notes/auth=oauth2.md",
])
def test_names_that_only_mention_a_secret_are_not_one(path: str):
    assert find_in_name(path) == []


def test_refuse_secret_reads_a_path_as_a_path():
    with pytest.raises(Refusal):
        refuse_secret("file name", f"notes/password={PASSWORD}.md", path=True)
    refuse_secret("file name", "notes/password-rotation.md", path=True)


def test_mask_text_masks_a_secret_in_the_paths_it_shows():
    text = (f"notes/password={PASSWORD}.md:1:1: PM401 secret\n"
            f"- [notes/password={PASSWORD}.md](notes/password={PASSWORD}.md) — pw\n"
            "- projects/token=refresh-flow.md: kept as it is\n")
    shown = mask_text(text)
    assert PASSWORD not in shown and "PM401 secret" in shown
    assert "projects/token=refresh-flow.md: kept as it is" in shown


def test_pm401_reports_a_file_whose_name_holds_a_secret(tmp_path: Path):
    name = f"notes/password={PASSWORD}.md"
    root = make_root(tmp_path, {name: active_file("Pw"), "notes/password-rotation.md": active_file("Rot")})
    on_name = [f for f in only(findings(root), "PM401") if f.path != "_index.md"]
    assert [(f.path, f.line, (f.data or {}).get("in")) for f in on_name] == [(name, 0, "name")]
    assert PASSWORD not in on_name[0].message


def test_pm401_reports_a_secret_in_a_routes_target_and_not_in_plain_routes(tmp_path: Path):
    name = f"notes/password={PASSWORD}.md"
    index = ("# Index\n\n- [Alpha](projects/alpha.md) — the token: rotates weekly\n"
             f"- [pw](<{name}>) — password notes\n"
             "- [Keys](notes/api-key-rotation.md) — key: where the keys live\n"
             "- [Docs](https://example.com/docs/token=intro) — the token docs\n")
    root = make_root(tmp_path, {"_index.md": index, "projects/alpha.md": active_file("Alpha"),
                                name: active_file("Pw"), "notes/api-key-rotation.md": active_file("Keys")})
    on_index = [f for f in only(findings(root), "PM401") if f.path == "_index.md"]
    assert [f.line for f in on_index] == [3], on_index
    line = index.split("\n")[3]
    assert line[on_index[0].col:on_index[0].end_col] == PASSWORD
