"""The agent guards against the ways past them a review found (after issue 25): a key-named
secret in a file's name, a token as the name of a file routed or checked, a `.pmem.toml`
switched off in two steps, `_archive/` under another letter case, and a memory root that is
not the configured one.

The hook payloads are Claude Code's PreToolUse shape (tests/cli/test_hook_guard.py), passed
to `run_hook` in this process; the CLI surfaces run `pmem` as a subprocess (marked e2e).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pmem_lsp.cli.hook import answer_outside, run_hook
from roots import active_file, make_root

PASSWORD_NAME = "notes/password=Zx9!kq2Lm8Pw.md"
AWS_NAME = "notes/AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLQKEY9.md"
TOKEN = "ghp_" + "x8Kd93LmQp2ZrT7vNw4YbH6sJc1FgA5eUo0i"
TOKEN_NAME = f"notes/{TOKEN}.md"
VALUES = ("Zx9!kq2Lm8Pw", "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLQKEY9", TOKEN)
GITHUB = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"


def write_call(path: Path | str, content: str) -> dict:
    return {"session_id": "abc123", "cwd": "/tmp", "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": str(path), "content": content}}


def pre_write(root: Path, call: dict) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_hook(root, "pre-write", io.StringIO(json.dumps(call)), out, err)
    return code, out.getvalue() + err.getvalue()


def pmem(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args],
                          input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})


def no_value_in(text: str) -> None:
    for value in VALUES:
        assert value not in text


# -- 1. a key-named secret in a file's name ---------------------------------------------------
@pytest.mark.parametrize("name", [PASSWORD_NAME, AWS_NAME])
def test_pre_write_refuses_a_key_named_secret_in_the_file_name(root: Path, name: str):
    code, said = pre_write(root, write_call(root / name, "# T\n"))
    assert code == 2 and "name" in said, said
    no_value_in(said)


def test_the_same_name_words_without_a_value_pass(root: Path):
    for name in ("notes/password-rotation.md", "notes/api_key=where-it-lives.md", "notes/token=refresh-flow.md"):
        assert pre_write(root, write_call(root / name, "# T\n"))[0] == 0, name


@pytest.mark.e2e
@pytest.mark.parametrize("name", [PASSWORD_NAME, AWS_NAME])
def test_save_refuses_a_key_named_secret_in_the_file_name(root: Path, name: str):
    index = (root / "_index.md").read_text(encoding="utf-8")
    result = pmem(root, "save", name, "--yes", stdin="# T\n")
    assert result.returncode != 0 and "file name" in result.stderr, result.stderr
    no_value_in(result.stdout + result.stderr)
    assert not (root / name).exists() and (root / "_index.md").read_text(encoding="utf-8") == index


# -- 2. a token as the name of a file made by a shell write ------------------------------------------
@pytest.mark.e2e
@pytest.mark.parametrize("name", [TOKEN_NAME, PASSWORD_NAME])
def test_route_add_refuses_a_file_whose_name_is_a_secret(root: Path, name: str):
    (root / name).write_text("# T\n", encoding="utf-8")
    index = (root / "_index.md").read_text(encoding="utf-8")
    result = pmem(root, "route", "add", name, "--yes")
    assert result.returncode != 0 and "file name" in result.stderr, result.stderr
    no_value_in(result.stdout + result.stderr)
    assert (root / "_index.md").read_text(encoding="utf-8") == index


@pytest.mark.e2e
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_check_reports_a_token_as_a_file_name_and_never_prints_it(root: Path, fmt: str):
    (root / TOKEN_NAME).write_text("# T\n", encoding="utf-8")
    result = pmem(root, "check", "--format", fmt)
    no_value_in(result.stdout + result.stderr)
    assert "PM401" in result.stdout and "ghp_…" in result.stdout, result.stdout


@pytest.mark.e2e
def test_check_reports_a_route_whose_target_holds_a_key_named_secret(root: Path):
    (root / PASSWORD_NAME).write_text("# T\n", encoding="utf-8")
    with (root / "_index.md").open("a", encoding="utf-8") as index:
        index.write(f"- [{PASSWORD_NAME}]({PASSWORD_NAME}) — pw notes\n")
    data = json.loads(pmem(root, "check", "--format", "json").stdout)
    on_index = [d for d in data["diagnostics"] if d["path"] == "_index.md" and d["code"] == "PM401"]
    assert on_index, data["diagnostics"]
    no_value_in(json.dumps(data))


@pytest.mark.e2e
def test_the_archive_previews_findings_mask_a_token_in_a_path(root: Path):
    (root / TOKEN_NAME).write_text("# T\n\nSee [alpha](../projects/alpha.md).\n", encoding="utf-8")
    result = pmem(root, "archive", "projects/alpha.md", "--format", "json")
    data = json.loads(result.stdout)
    assert data["findings"], data
    no_value_in(result.stdout)


# -- 3. a `.pmem.toml` switched off in two steps -------------------------------------------------
STRICT = '[severity]\nPM202 = "error"\n\n[core]\nmaxBytes = 4096\n'


def test_an_invalid_settings_text_is_refused_and_cannot_be_a_lower_baseline(root: Path):
    settings = root / ".pmem.toml"
    settings.write_text(STRICT, encoding="utf-8")
    assert pre_write(root, write_call(settings, "# defaults\n"))[0] == 2
    code, said = pre_write(root, write_call(settings, STRICT + "x = 1\n"))  # an unknown key
    assert code == 2 and "not valid settings" in said and "x" in said, said
    # Had step one happened (a shell write, say), the invalid file is no baseline either.
    settings.write_text(STRICT + "x = 1\n", encoding="utf-8")
    code, said = pre_write(root, write_call(settings, "# defaults\n"))
    assert code == 2 and "current settings are not valid" in said, said


def test_valid_settings_as_strict_still_pass(root: Path):
    settings = root / ".pmem.toml"
    settings.write_text(STRICT, encoding="utf-8")
    assert pre_write(root, write_call(settings, STRICT + "\n[stale]\ndays = 30\n"))[0] == 0


# -- 4. `_archive/` under another letter case ---------------------------------------------------------
@pytest.mark.parametrize("rel", ["_ARCHIVE/_index.md", "_Archive/notes/x.md", "_archive/_TRASH/y.md"])
def test_the_archive_is_guarded_under_any_letter_case(root: Path, rel: str):
    code, said = pre_write(root, write_call(root / rel, "# x\n"))
    assert code == 2 and "_archive/" in said, said


# -- 5. a memory root that is not the configured one ----------------------------------------------------
def test_a_folder_that_looks_like_a_memory_root_is_guarded_too(root: Path, tmp_path: Path):
    other = tmp_path / "x"
    (other / "notes").mkdir(parents=True)
    (other / "_index.md").write_text("# Index\n", encoding="utf-8")
    call = write_call(other / "notes/t.md", f"# T\n\nCI pushes with {GITHUB}.\n")
    # The configured root is another one (PMEM_ROOT unset: `~/.persistent-memory` or `root`).
    assert answer_outside(str(root), json.dumps(call)) is None  # not answered by the fast path
    code, said = pre_write(root, call)
    assert code == 2 and GITHUB not in said, said


def test_a_file_in_no_memory_root_still_passes_fast(root: Path, tmp_path: Path):
    (tmp_path / "project/src").mkdir(parents=True)
    call = write_call(tmp_path / "project/src/t.md", f"# T\n\n{GITHUB}\n")
    assert answer_outside(str(root), json.dumps(call)) == 0
    assert pre_write(root, call)[0] == 0
