"""Ways past the pre-write hook a second review found (an agent that reads pmem's messages and
retries), one test per way, each failing on the code before its fix: a root that is not
configured shadowed by its own `_archive/`, writes through symbolic links, a secret
completed by an edit of a file over the analysis cap, a token in a path echoed by
post-write, and `.pmem.toml` changes that weaken checks.

The payloads are Claude Code's PreToolUse/PostToolUse shapes (tests/cli/test_hook_guard.py
lists them), passed to `run_hook` in this process with real files on disk; the one test that
runs `pmem hook` as the plugin does (no root configured, `HOME` empty) is marked e2e.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pmem_lsp.cli.hook import answer_outside, run_hook
from roots import active_file, make_root

GITHUB = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"  # a GitHub token's shape


def call(tool: str, tool_input: dict, event: str = "PreToolUse", response: dict | None = None) -> dict:
    out = {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "permission_mode": "default",
           "hook_event_name": event, "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01"}
    if response is not None:
        out["tool_response"] = response
    return out


def write(path: Path | str, content: str) -> dict:
    return call("Write", {"file_path": str(path), "content": content})


def edit(path: Path | str, old: str, new: str) -> dict:
    return call("Edit", {"file_path": str(path), "old_string": old, "new_string": new, "replace_all": False})


def hook(root: Path, event: str, payload: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_hook(root, event, io.StringIO(json.dumps(payload)), out, err)
    return code, out.getvalue(), err.getvalue()


def pre(root: Path, payload: dict) -> tuple[int, str]:
    code, out, err = hook(root, "pre-write", payload)
    return code, out + err


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    return make_root(tmp_path, {"notes/n.md": active_file("N"), "notes/old.md": active_file("Old")})


# -- 1. no root configured: `_archive/` (or `_core/`, `projects/x/`) must not shadow the root ------------
ARCHIVE_WRITES = [("_archive/_index.md", ""), ("_archive/_trash/notes/x.md", "# X\n"),
                  ("_archive/notes/old.md", "# Old\n"), ("_ARCHIVE/_index.md", ""),
                  ("_archive/deep/er/still.md", "# S\n")]


@pytest.mark.parametrize(("rel", "content"), ARCHIVE_WRITES)
def test_the_archive_is_guarded_when_no_root_is_configured(memory: Path, tmp_path: Path, rel: str, content: str):
    (memory / "_archive/deep/er").mkdir(parents=True, exist_ok=True)
    unconfigured = tmp_path / "nowhere/.persistent-memory"  # what `~` gives with HOME empty: no root there
    payload = write(memory / rel, content)
    assert answer_outside(str(unconfigured), json.dumps(payload)) is None
    configured = pre(memory, payload)
    assert configured[0] == 2, configured
    code, said = pre(unconfigured, payload)
    assert code == 2 and "_archive/" in said, said


@pytest.mark.parametrize("folder", ["_core", "projects/p", "_archive"])
def test_a_folder_of_the_root_holding_an_index_does_not_shadow_the_root(memory: Path, tmp_path: Path, folder: str):
    unconfigured = tmp_path / "nowhere"
    (memory / folder).mkdir(parents=True, exist_ok=True)
    if folder != "_archive":
        (memory / folder / "_index.md").write_text("# An index of its own\n", encoding="utf-8")
    # The nested folder's own settings would check nothing: the root's still hold.
    (memory / folder / ".pmem.toml").write_text("[secrets]\nenabled = false\n", encoding="utf-8")
    code, said = pre(unconfigured, write(memory / folder / "t.md", f"# T\n\nCI uses {GITHUB}.\n"))
    assert code == 2 and GITHUB not in said, said


def test_an_archive_folder_in_another_letter_case_does_not_shadow_the_root(memory: Path, tmp_path: Path):
    # What a case-insensitive file system shows as `_archive/`: a folder of its own here.
    (memory / "_Archive/notes").mkdir(parents=True)
    (memory / "_Archive/_index.md").write_text("# Archive\n", encoding="utf-8")
    for rel in ("_Archive/notes/x.md", "_Archive/_index.md"):
        code, said = pre(tmp_path / "nowhere", write(memory / rel, ""))
        assert code == 2 and "_archive/" in said, (rel, said)


def test_a_note_of_a_root_that_is_not_configured_still_passes(memory: Path, tmp_path: Path):
    code, said = pre(tmp_path / "nowhere", write(memory / "notes/n.md", active_file("N2")))
    assert code == 0, said


@pytest.mark.e2e
def test_the_plugins_plain_hook_command_guards_the_archive_with_home_empty(memory: Path, tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("PMEM_ROOT", "PERSISTENT_MEMORY_HOME")}
    env["HOME"] = ""
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "hook", "pre-write"],
                          input=json.dumps(write(memory / "_archive/_index.md", "")), capture_output=True,
                          text=True, timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert (memory / "_archive/_index.md").read_text(encoding="utf-8").strip()  # and so nothing lost


# -- 2. a write through a symbolic link is judged where it lands -------------------------------------------
def link(at: Path, to: Path | str) -> Path:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(to)
    return at


def test_a_link_outside_to_the_roots_settings_is_a_settings_write(memory: Path, tmp_path: Path):
    (memory / ".pmem.toml").write_text("[stale]\ndays = 30\n", encoding="utf-8")
    at = link(tmp_path / "outside/settings.toml", memory / ".pmem.toml")
    code, said = pre(memory, write(at, 'ignore = ["PM401"]\n\n[stale]\ndays = 30\n'))
    assert code == 2 and "PM401" in said, said


def test_a_link_outside_to_the_archive_records_is_an_archive_write(memory: Path, tmp_path: Path):
    at = link(tmp_path / "outside/records.md", memory / "_archive/_index.md")
    code, said = pre(memory, write(at, ""))
    assert code == 2 and "_archive/" in said, said
    # No root configured either.
    assert pre(tmp_path / "nowhere", write(at, ""))[0] == 2


@pytest.mark.parametrize("how", ["Write", "Edit"])
def test_a_link_outside_to_a_note_is_judged_as_the_note(memory: Path, tmp_path: Path, how: str):
    at = link(tmp_path / "outside/filelink.md", memory / "notes/n.md")
    payload = (write(at, f"# N\n\nCI uses {GITHUB}.\n") if how == "Write"
               else edit(at, "Some details", f"Token {GITHUB}; some details"))
    for configured in (memory, tmp_path / "nowhere"):
        code, said = pre(configured, payload)
        assert code == 2 and GITHUB not in said, said
    assert answer_outside(str(memory), json.dumps(payload)) is None


@pytest.mark.parametrize(("name", "to", "content", "says"),
                         [("notes/ai.md", "../_archive/_index.md", "", "_archive/"),
                          ("notes/settings.md", "../.pmem.toml", '[secrets]\nenabled = false\n', "secrets")])
def test_a_link_inside_the_root_is_guarded_by_its_targets_zone(memory: Path, name: str, to: str, content: str,
                                                                 says: str):
    (memory / ".pmem.toml").write_text("[stale]\ndays = 30\n", encoding="utf-8")
    at = link(memory / name, to)
    code, said = pre(memory, write(at, content))
    assert code == 2 and says in said, said


def test_a_dangling_link_is_judged_where_the_write_would_land(memory: Path, tmp_path: Path):
    inside = link(memory / "notes/new.md", "../_archive/notes/new.md")
    code, said = pre(memory, write(inside, "# New\n"))
    assert code == 2 and "_archive/" in said, said
    outside = link(tmp_path / "outside/new.md", memory / "_archive/notes/fresh.md")
    assert pre(memory, write(outside, "# Fresh\n"))[0] == 2


def test_a_link_to_a_file_outside_any_root_passes(memory: Path, tmp_path: Path):
    (tmp_path / "elsewhere").mkdir()
    at = link(tmp_path / "outside/plain.md", tmp_path / "elsewhere/plain.md")
    payload = write(at, f"# P\n\n{GITHUB}\n")
    assert answer_outside(str(memory), json.dumps(payload)) == 0
    assert pre(memory, payload)[0] == 0


# -- 3. a file over the analysis cap: a secret completed by an edit is found --------------------------------
HALF, REST = "AKIAZ7Q3R9", "T2M4K8W6PX"  # an AWS key id's shape, in two parts


def big_note(memory: Path) -> Path:
    filler = "".join(f"Line {i} of the crane log: the berth was clear and the wind was low.\n"
                     for i in range(48_000))
    assert len(filler) > 3_000_000
    text = f"# big\n\n{filler}key {HALF}\n"
    path = memory / "notes/big.md"
    payload = write(path, text)
    assert pre(memory, payload)[0] == 0  # half a key is no key
    path.write_text(text, encoding="utf-8")  # as the client writes it
    return path


def test_an_edit_that_completes_a_secret_past_the_cap_is_refused(memory: Path):
    path = big_note(memory)
    code, said = pre(memory, edit(path, "R9\n", f"R9{REST}\n"))
    assert code == 2 and HALF + REST not in said and "AWS" in said, said
    assert "line 48003" in said, said  # where it lands, counted in the whole file


def test_a_multiedit_that_completes_a_secret_past_the_cap_is_refused(memory: Path):
    path = big_note(memory)
    payload = call("MultiEdit", {"file_path": str(path), "edits": [
        {"old_string": "# big\n", "new_string": "# Big\n"},
        {"old_string": f"key {HALF}", "new_string": f"key {HALF}{REST[:4]}"},
        {"old_string": f"{REST[:4]}\n", "new_string": f"{REST}\n"}]})
    code, said = pre(memory, payload)
    assert code == 2 and HALF + REST not in said, said


def test_an_edit_past_the_cap_beside_a_secret_already_there_passes(memory: Path):
    path = big_note(memory)
    path.write_text(path.read_text(encoding="utf-8").replace(HALF, HALF + REST), encoding="utf-8")
    assert pre(memory, edit(path, "key ", "aws key "))[0] == 0  # it adds no secret


# -- 4. post-write shows a path as `pmem check` does: a token in it masked ----------------------------------
def test_post_write_masks_a_token_in_the_written_files_path(memory: Path):
    rel = f"notes/{GITHUB}/x.md"
    (memory / rel).parent.mkdir(parents=True)
    (memory / rel).write_text("# X\n\nNo summary, and no route.\n", encoding="utf-8")
    payload = call("Write", {"file_path": str(memory / rel), "content": "# X\n\nNo summary, and no route.\n"},
                   event="PostToolUse", response={"filePath": str(memory / rel), "originalFile": None})
    code, out, err = hook(memory, "post-write", payload)
    assert code == 0 and out, err
    reason = json.loads(out)["reason"]
    assert GITHUB not in out + err and GITHUB[4:20] not in reason, reason
    assert "ghp_… (40 characters)" in reason, reason


# -- 5. `.pmem.toml`: every raised limit weakens, and a secret in it is refused ---------------------------
def numeric_settings() -> list[tuple[str, str, object]]:
    """(section, key, default) of every number the settings model holds, read from the model
    (a limit added later is covered by this test without a line here)."""
    from pydantic import BaseModel

    from pmem_lsp.engine.settings import Settings

    out = []
    for name, field in Settings.model_fields.items():
        default = field.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            for key, inner in type(default).model_fields.items():
                value = getattr(default, key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    out.append((field.alias or name, inner.alias or key, value))
    return out


def test_the_settings_model_has_the_limits_the_review_named():
    named = {(s, k) for s, k, _v in numeric_settings()}
    assert {("status", "days"), ("stale", "days"), ("largeFile", "kb"), ("duplicates", "threshold")} <= named


@pytest.mark.parametrize(("section", "key", "default"), numeric_settings())
def test_raising_any_limit_of_the_settings_is_refused(memory: Path, section: str, key: str, default: object):
    raised = 1.0 if isinstance(default, float) else 100000
    settings = memory / ".pmem.toml"
    code, said = pre(memory, write(settings, f"[{section}]\n{key} = {raised}\n"))
    assert code == 2 and f"{section}.{key}" in said, said
    lowered = 0.5 if isinstance(default, float) else 1
    assert pre(memory, write(settings, f"[{section}]\n{key} = {lowered}\n"))[0] == 0  # checks more


def test_the_status_days_raised_by_an_edit_is_refused(memory: Path):
    settings = memory / ".pmem.toml"
    settings.write_text("[status]\ndays = 14\n", encoding="utf-8")
    code, said = pre(memory, edit(settings, "days = 14", "days = 100000"))
    assert code == 2 and "status.days" in said, said


def test_a_secret_in_a_comment_of_valid_settings_is_refused(memory: Path):
    settings = memory / ".pmem.toml"
    settings.write_text("[stale]\ndays = 30\n", encoding="utf-8")
    code, said = pre(memory, edit(settings, "days = 30\n", f"days = 30\n# deploy token: {GITHUB}\n"))
    assert code == 2 and GITHUB not in said and "line 3" in said, said
    code, said = pre(memory, write(settings, f"# {GITHUB}\n[stale]\ndays = 30\n"))
    assert code == 2 and GITHUB not in said, said
    # A comment without a secret still passes; one the file already held does not block.
    assert pre(memory, write(settings, "# the person's settings\n[stale]\ndays = 30\n"))[0] == 0
    settings.write_text(f"# {GITHUB}\n[stale]\ndays = 30\n", encoding="utf-8")
    assert pre(memory, edit(settings, "days = 30", "days = 20"))[0] == 0


def test_a_root_reached_through_a_folder_link_is_judged_once(memory: Path, tmp_path: Path):
    from pmem_lsp.cli.hook import guarded_roots

    via = link(tmp_path / "via", memory)
    at = link(via / "notes/l.md", "n.md")  # a file link in the root, reached through a folder link
    assert [rel for _root, rel in guarded_roots(tmp_path / "nowhere", at)] == ["notes/l.md", "notes/n.md"]
    assert [rel for _root, rel in guarded_roots(tmp_path / "nowhere", via / "notes/n.md")] == ["notes/n.md"]


# -- a check that outlasts the client's timeout ------------------------------------------
@pytest.mark.e2e
def test_a_write_too_slow_to_check_is_blocked_not_let_through(memory: Path):
    """Claude Code lets a write through when its hook times out (10 s in the plugin's
    hooks.json): megabytes of markup glued between letters, read as rendered, could outlast it
    with a key inside. The watchdog blocks first; here its deadline is made tiny against a
    write that takes far longer to read."""
    content = "# Big\n\n" + "a*" * 400_000 + GITHUB + "\n"
    payload = json.dumps(write(memory / "notes/big.md", content))
    env = {**os.environ, "PMEM_ROOT": str(memory), "PMEM_HOOK_DEADLINE": "0.05"}
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "hook", "pre-write"], input=payload,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done
    assert "could not be checked within 0.05 s" in done.stderr and GITHUB not in done.stderr
    assert not (memory / "notes/big.md").exists()
    # The same write with the usual deadline is judged on what it holds: the key.
    env["PMEM_HOOK_DEADLINE"] = "60"
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "hook", "pre-write"], input=payload,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and "could not be checked" not in done.stderr and "GitHub" in done.stderr, done
