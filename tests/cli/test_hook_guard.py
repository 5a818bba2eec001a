"""The hooks against an agent that reads their messages (issue 25): one test per way past the
guard that the code before it let through.

The tool calls are in the exact shapes Claude Code sends (its hooks reference and the tool
input schemas, looked up for this issue):

- every hook gets `session_id`, `transcript_path`, `cwd`, `permission_mode`,
  `hook_event_name`, `tool_name`, `tool_input` (and `tool_use_id`); PostToolUse adds
  `tool_response`, which for `Write` and `Edit` holds `filePath` and `originalFile` (the text
  before the write; null for a new file) beside the patch;
- `Write`: `{file_path, content}`; `Edit`: `{file_path, old_string, new_string, replace_all?}`,
  where an empty `old_string` creates the file, and an `old_string` typed with straight quotes
  matches the file's curly ones (the client normalises quotes before matching);
  `MultiEdit`: `{file_path, edits: [{old_string, new_string, replace_all?}]}`;
- `NotebookEdit`: `{notebook_path, new_source, cell_id?, cell_type?: "code"|"markdown",
  edit_mode?: "replace"|"insert"|"delete"}`.

`run_hook` is called in this process with the real root on disk: what `pmem hook` runs.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pmem_lsp.cli.hook import run_hook
from roots import active_file, make_root

SECRET = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"  # a GitHub token's shape
PASSWORD = "Xk9#mQ2vLp8zRt4w"
MARKER = "<!-- pmem: allow-secret -->"


def claude(tool: str, tool_input: dict, event: str = "PreToolUse", response: dict | None = None) -> dict:
    call = {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "permission_mode": "default",
            "hook_event_name": event, "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01"}
    if response is not None:
        call["tool_response"] = response
    return call


def hook(root: Path, event: str, call: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_hook(root, event, io.StringIO(json.dumps(call)), out, err)
    return code, out.getvalue(), err.getvalue()


def blocked(root: Path, call: dict) -> str:
    code, out, err = hook(root, "pre-write", call)
    assert code == 2, (call["tool_name"], err)
    assert SECRET not in out + err and SECRET[8:24] not in err and PASSWORD not in err
    return err


def passes(root: Path, call: dict) -> None:
    code, _out, err = hook(root, "pre-write", call)
    assert code == 0, err


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path, {"projects/alpha.md": active_file("Alpha", body="## Context\nThe “kiln” log.\n")})


# -- the allow marker is the person's -------------------------------------------------------
def test_no_message_says_how_to_suppress_a_check(root: Path):
    path = str(root / "notes/keys.md")
    err = blocked(root, claude("Write", {"file_path": path, "content": f"# Keys\n\ntoken: {SECRET}\n"}))
    for word in ("allow-secret", "<!--", "pmem: allow", "ignore", "exclude", "enabled"):
        assert word not in err, word
    toml = claude("Write", {"file_path": str(root / ".pmem.toml"), "content": "[secrets]\nenabled = false\n"})
    err = hook(root, "pre-write", toml)[2]
    assert "allow-secret" not in err and "<!--" not in err


def test_a_write_that_adds_the_allow_marker_beside_a_new_secret_is_refused(root: Path):
    call = claude("Write", {"file_path": str(root / "notes/docs.md"),
                            "content": f"# Docs\n\nexample: `{SECRET}` {MARKER}\n"})
    assert "only the person decides" in blocked(root, call)


def test_a_write_that_marks_an_existing_secret_as_allowed_is_refused(root: Path):
    path = root / "projects/alpha.md"
    path.write_text(active_file("Alpha", body=f"## Context\ntoken: {SECRET}\n"), encoding="utf-8")
    call = claude("Edit", {"file_path": str(path), "old_string": f"token: {SECRET}",
                           "new_string": f"token: {SECRET} {MARKER}"})
    blocked(root, call)


def test_a_secret_the_person_allowed_stays_allowed_when_the_agent_edits_elsewhere(root: Path):
    path = root / "projects/alpha.md"
    path.write_text(active_file("Alpha", body=f"## Context\nexample: `{SECRET}` {MARKER}\nMore.\n"), encoding="utf-8")
    passes(root, claude("Edit", {"file_path": str(path), "old_string": "More.", "new_string": "More details."}))
    passes(root, claude("Write", {"file_path": str(path), "content": path.read_text(encoding="utf-8") + "Later.\n"}))


# -- edits as the client applies them --------------------------------------------------------
def test_an_edit_with_an_empty_old_string_creates_the_file_and_is_judged(root: Path):
    call = claude("Edit", {"file_path": str(root / "notes/new.md"), "old_string": "",
                           "new_string": f"# New\n\ntoken: {SECRET}\n"})
    blocked(root, call)


def test_an_edit_typed_with_straight_quotes_matches_the_files_curly_ones(root: Path):
    call = claude("Edit", {"file_path": str(root / "projects/alpha.md"), "old_string": 'The "kiln" log.',
                           "new_string": f'The "kiln" log. token: {SECRET}'})
    blocked(root, call)


def test_replace_all_and_multiedit_are_applied_as_the_client_does(root: Path):
    path = str(root / "projects/alpha.md")
    edits = [{"old_string": "kiln", "new_string": "oven", "replace_all": True},
             {"old_string": "oven", "new_string": f"oven password: {PASSWORD}"}]
    blocked(root, claude("MultiEdit", {"file_path": path, "edits": edits}))
    blocked(root, claude("Edit", {"file_path": path, "old_string": "log", "new_string": f"log token: {SECRET}",
                                  "replace_all": True}))


def test_an_edit_that_cannot_be_worked_out_is_judged_by_what_it_brings(root: Path):
    call = claude("Edit", {"file_path": str(root / "projects/alpha.md"), "old_string": "not in the file",
                           "new_string": f"token: {SECRET}"})
    blocked(root, call)


def test_notebook_edit_is_judged(root: Path):
    notebook = root / "notes/analysis.ipynb"
    notebook.parent.mkdir(exist_ok=True)
    notebook.write_text(json.dumps({"cells": [], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}), encoding="utf-8")
    call = claude("NotebookEdit", {"notebook_path": str(notebook), "new_source": f"TOKEN = '{SECRET}'",
                                   "cell_type": "code", "edit_mode": "insert"})
    blocked(root, call)
    clean = claude("NotebookEdit", {"notebook_path": str(notebook), "new_source": "print(1)", "cell_id": "a1"})
    passes(root, clean)


# -- disguises ---------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    f"pass\u200bword: {PASSWORD}",          # a zero-width space inside the key
    f"p\u0430ssword: {PASSWORD}",           # a Cyrillic а
    f"\u03a1assword: {PASSWORD}",           # a Greek Ρ
    f"CI uses {SECRET[:12]}\u200d{SECRET[12:]} to push",  # a zero-width joiner inside the token
])
def test_look_alike_and_invisible_characters_do_not_hide_a_secret(root: Path, line: str):
    blocked(root, claude("Write", {"file_path": str(root / "notes/k.md"), "content": f"# K\n\n{line}\n"}))


def test_a_token_split_across_two_lines_is_found(root: Path):
    text = f"# K\n\nCI pushes with {SECRET[:20]}\n{SECRET[20:]} and nothing else.\n"
    blocked(root, claude("Write", {"file_path": str(root / "notes/k.md"), "content": text}))


def test_a_token_as_a_file_name_is_refused(root: Path):
    call = claude("Write", {"file_path": str(root / f"notes/{SECRET}.md"), "content": "# Notes\n\nNothing here.\n"})
    assert "name" in blocked(root, call)


# -- the root's settings ---------------------------------------------------------------------------
@pytest.mark.parametrize("toml, says", [
    ("[secrets]\nenabled = false\n", "secrets check off"),
    ('ignore = ["PM401"]\n', "PM401"),
    ('select = ["PM1"]\n', "stops reporting"),
    ('exclude = ["notes/**"]\n', "excludes"),
    ('[severity]\nPM401 = "hint"\n', "severity of PM401"),
    ('[secrets]\nallow = ["ghp_"]\n', "allows more"),
    ("[core]\nmaxBytes = 999999\n", "core.maxBytes"),
    ('[diagnostics]\nscope = "changes"\n', "narrows"),
])
def test_a_write_that_weakens_the_roots_settings_is_refused(root: Path, toml: str, says: str):
    code, _out, err = hook(root, "pre-write", claude("Write", {"file_path": str(root / ".pmem.toml"), "content": toml}))
    assert code == 2 and says in err, err


def test_the_settings_file_is_guarded_under_any_letter_case(root: Path):
    # One file on a case-insensitive file system (macOS, Windows).
    call = claude("Write", {"file_path": str(root / ".PMEM.toml"), "content": "[secrets]\nenabled = false\n"})
    assert hook(root, "pre-write", call)[0] == 2


def test_settings_that_check_as_much_or_more_pass(root: Path):
    settings = root / ".pmem.toml"
    settings.write_text('ignore = ["PM503"]\n', encoding="utf-8")
    for toml in ('ignore = ["PM503"]\n[stale]\ndays = 30\n', 'ignore = []\n'):
        passes(root, claude("Write", {"file_path": str(settings), "content": toml}))
    edit = claude("Edit", {"file_path": str(settings), "old_string": 'ignore = ["PM503"]', "new_string": "ignore = []"})
    passes(root, edit)
    weaker = claude("Edit", {"file_path": str(settings), "old_string": '"PM503"', "new_string": '"PM503", "PM401"'})
    assert hook(root, "pre-write", weaker)[0] == 2


# -- post-write: what the write broke in the index ---------------------------------------------------
def test_a_write_of_the_index_with_its_routes_gone_is_reported(root: Path):
    index = root / "_index.md"
    before = index.read_text(encoding="utf-8")
    assert "projects/alpha.md" in before
    index.write_text("# Memory index\n", encoding="utf-8")
    call = claude("Write", {"file_path": str(index), "content": "# Memory index\n"}, "PostToolUse",
                  {"type": "update", "filePath": str(index), "content": "# Memory index\n", "originalFile": before,
                   "structuredPatch": []})
    code, out, _err = hook(root, "post-write", call)
    reason = json.loads(out)["reason"]
    assert code == 0 and "projects/alpha.md" in reason and "removed its route" in reason


def _wipe(root: Path, response: dict | None) -> str:
    """An agent's Write that leaves `_index.md` with its heading only, through both hooks."""
    index = root / "_index.md"
    call = claude("Write", {"file_path": str(index), "content": "# Memory index\n"})
    assert hook(root, "pre-write", call)[0] == 0
    index.write_text("# Memory index\n", encoding="utf-8")
    code, out, _err = hook(root, "post-write", {**call, "hook_event_name": "PostToolUse", "tool_response": response})
    assert code == 0 and out, "an index emptied of every route must be reported"
    return json.loads(out)["reason"]


def test_a_write_that_removes_every_route_names_each_without_the_clients_original(root: Path):
    """The client sends no `originalFile` (a Write over the file): pre-write kept the index it
    saw for this call, so post-write still names every route the write removed, and says first
    that the index routes nothing now."""
    routed = [r for r in ("projects/alpha.md",) if r in (root / "_index.md").read_text(encoding="utf-8")]
    reason = _wipe(root, {"type": "update", "filePath": str(root / "_index.md"), "content": "# Memory index\n"})
    assert "routes no file at all" in reason.splitlines()[1]
    assert routed and all(f"{r}: PM202" in reason for r in routed)


def test_an_index_left_without_routes_is_an_error_even_when_nothing_says_what_it_held(root: Path):
    index = root / "_index.md"
    index.write_text("# Memory index\n", encoding="utf-8")
    call = claude("Write", {"file_path": str(index), "content": "# Memory index\n"}, "PostToolUse")
    code, out, _err = hook(root, "post-write", {**call, "tool_use_id": "toolu_never_seen"})
    assert code == 0 and "routes no file at all" in json.loads(out)["reason"]


def test_an_index_without_routes_in_a_root_without_active_files_is_no_news(tmp_path: Path):
    root = make_root(tmp_path, {})
    for rel in [p.relative_to(root).as_posix() for p in root.rglob("*.md")]:
        if not rel.startswith(("_core/", "_archive/")) and rel != "_index.md":
            (root / rel).unlink()
    index = root / "_index.md"
    index.write_text("# Memory index\n", encoding="utf-8")
    call = claude("Write", {"file_path": str(index), "content": "# Memory index\n"}, "PostToolUse")
    code, out, _err = hook(root, "post-write", call)
    assert (code, out) == (0, "")


def test_an_edit_that_deletes_one_route_is_reported(root: Path):
    index = root / "_index.md"
    before = index.read_text(encoding="utf-8")
    line = next(ln for ln in before.splitlines() if "projects/alpha.md" in ln)
    index.write_text(before.replace(line + "\n", ""), encoding="utf-8")
    call = claude("Edit", {"file_path": str(index), "old_string": line + "\n", "new_string": ""}, "PostToolUse")
    code, out, _err = hook(root, "post-write", call)
    reason = json.loads(out)["reason"]
    assert "projects/alpha.md" in reason and "PM202" in reason
    # Only the route this write removed: the other files' routes are no news.
    assert reason.count("removed its route") == 1


def test_post_write_of_a_note_knows_its_route_from_a_narrow_look_at_the_index(root: Path):
    # Only the index lines that can route the file are read for it: whatever form the route
    # takes, the narrow look says what the whole-root check says.
    from pmem_lsp.engine.checking import check_files
    from pmem_lsp.engine.settings import resolve_settings

    note = root / "projects/sub/kiln.md"
    note.parent.mkdir(parents=True)
    note.write_text(active_file("Kiln"), encoding="utf-8")
    index = root / "_index.md"
    base = index.read_text(encoding="utf-8")
    call = claude("Write", {"file_path": str(note), "content": note.read_text(encoding="utf-8")}, "PostToolUse")
    seen = set()
    for routes in ("- `projects/sub/kiln.md` — kiln\n", "- [Kiln](projects/sub/kiln.md) — kiln\n",
                   "- [Kiln](<projects/sub/kiln.md>) — kiln\n", "- [Sub](projects/sub/) — the sub folder\n",
                   "- `projects/sub/` — the sub folder\n", "- [Other](projects/sub/kiln.md.bak) — not it\n",
                   "- [K](projects/sub/kilns.md) — no\n", ""):
        index.write_text(base + routes, encoding="utf-8")
        _code, out, _err = hook(root, "post-write", call)
        whole = check_files(root, resolve_settings(root), ["projects/sub/kiln.md"]).findings
        assert ("PM202" in out) is any(f.code == "PM202" for f in whole), routes
        seen.add("PM202" in out)
    assert seen == {True, False}, "both answers were met"


# -- post-write speaks of what this write did (issue 43) --------------------------------------
OLD_PROBLEM = "# Old\n\n## Summary\n\n- One fact.\n- Two facts.\n\nSee [gone](gone.md).\n"  # PM102 and PM402 already


@pytest.mark.parametrize("client_sends_original", [True, False])
def test_post_write_reports_what_the_write_brought_in_not_older_problems(root: Path, client_sends_original: bool):
    note = root / "notes" / "old.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(OLD_PROBLEM, encoding="utf-8")
    after = OLD_PROBLEM + "\nAnd [another](missing-too.md).\n"  # one new broken link; the old ones stay
    call = claude("Write", {"file_path": str(note), "content": after})
    assert hook(root, "pre-write", call)[0] == 0
    note.write_text(after, encoding="utf-8")
    response = {"type": "update", "filePath": str(note), "content": after}
    if client_sends_original:
        response["originalFile"] = OLD_PROBLEM
    code, out, _err = hook(root, "post-write", {**call, "hook_event_name": "PostToolUse", "tool_response": response})
    reason = json.loads(out)["reason"]
    assert code == 0 and "missing-too.md" in reason
    assert "PM102" not in reason and "gone.md" not in reason, "older problems are not this write's news"


def test_a_write_that_brings_in_nothing_new_gets_no_answer(root: Path):
    note = root / "notes" / "old.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text(OLD_PROBLEM, encoding="utf-8")
    after = OLD_PROBLEM.replace("Two facts.", "Two facts, reworded.")
    call = claude("Write", {"file_path": str(note), "content": after})
    assert hook(root, "pre-write", call)[0] == 0
    note.write_text(after, encoding="utf-8")
    code, out, _err = hook(root, "post-write", {**call, "hook_event_name": "PostToolUse",
                                                 "tool_response": {"type": "update", "filePath": str(note)}})
    assert (code, out) == (0, "")
