"""The CLI as an agent's hands (docs/design.md §6.1) and the hooks (§10), end to end: the real
`pmem` process, the exact JSON an agent reads and sends."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from roots import active_file, make_root

SECRET = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"  # a GitHub token's shape
NOTE = ("# Kiln firing log\n\n## Summary\n\n- Bisque firings run to cone 04.\n- Glaze firings run to cone 6.\n"
        "- The kiln sits in the garage.\n\n## Details\nTimes and temperatures.\n")


pytestmark = pytest.mark.e2e  # every test here runs `pmem` as a subprocess


def pmem(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args],
                          input=stdin if stdin is not None else "", capture_output=True, text=True, timeout=120)


def as_json(result: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(result.stdout)


def digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): ("dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest())
            for p in sorted(root.rglob("*"))}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})


# -- reading -------------------------------------------------------------------------------
def test_status_and_rules_have_a_json_form(root: Path):
    status = pmem(root, "status", "--format", "json")
    assert status.returncode == 0
    data = as_json(status)
    assert data["root"] == str(root) and "projects/alpha.md" in [r["path"] for r in data["routes"]]
    rules = as_json(pmem(root, "rules", "--format", "json"))
    assert {"code": "PM102", "name": "summary-bullet-count"}.items() <= next(r for r in rules if r["code"] == "PM102").items()


def test_status_json_masks_a_secret_in_a_route_description(root: Path):
    index = (root / "_index.md").read_text(encoding="utf-8")
    (root / "_index.md").write_text(index.replace("- [Alpha](projects/alpha.md)", f"- [Alpha](projects/alpha.md) — token {SECRET}"), encoding="utf-8")
    out = pmem(root, "status", "--format", "json").stdout
    assert SECRET not in out and SECRET[8:] not in out


def test_check_some_paths_reports_only_those_files(root: Path):
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes/short.md").write_text("# Short\n\n## Summary\n\n- One.\n- Two.\n", encoding="utf-8")
    (root / "projects/bad.md").write_text("# Bad\n\n## Summary\n\n- One.\n", encoding="utf-8")
    whole = as_json(pmem(root, "check", "--format", "json"))
    assert {"notes/short.md", "projects/bad.md"} <= {d["path"] for d in whole["diagnostics"]}
    some = pmem(root, "check", "notes/short.md", "--format", "json")
    data = as_json(some)
    assert {d["path"] for d in data["diagnostics"]} == {"notes/short.md"} and data["files"] == 1
    assert "PM202" in {d["code"] for d in data["diagnostics"]}, "cross-file rules still read the whole root"
    # An absolute path works too; one outside the root is an error, not a silent pass.
    assert as_json(pmem(root, "check", str(root / "notes/short.md"), "--format", "json"))["files"] == 1
    outside = pmem(root, "check", "/etc/hostname")
    assert outside.returncode == 2 and "not inside the memory root" in outside.stderr
    missing = pmem(root, "check", "notes/nothing-here.md")
    assert missing.returncode == 2 and "not a file" in missing.stderr


def test_check_stdin_filename_checks_a_proposed_text_and_writes_nothing(root: Path):
    before = digest(root)
    proposed = f"# Deploy\n\n## Summary\n\n- Uses a token.\n- Deploys on push.\n- Runs nightly.\n\n## Secrets\ngithub_token = {SECRET}\n"
    result = pmem(root, "check", "--stdin-filename", "projects/deploy.md", "--format", "json", stdin=proposed)
    data = as_json(result)
    assert result.returncode == 1
    assert [(d["path"], d["code"], d["line"]) for d in data["diagnostics"]] == [
        ("projects/deploy.md", "PM202", 1), ("projects/deploy.md", "PM401", 10)]
    assert SECRET not in result.stdout + result.stderr and SECRET[8:] not in result.stdout
    assert digest(root) == before


# -- writing: preview, token, apply ---------------------------------------------------------
def test_save_previews_then_applies_exactly_that_preview_with_the_token(root: Path):
    before = digest(root)
    shown = pmem(root, "save", "projects/kiln.md", "--format", "json", stdin=NOTE)
    assert shown.returncode == 3, shown.stderr
    preview = as_json(shown)
    assert preview["applied"] is False and preview["operation"] == "save" and preview["path"] == "projects/kiln.md"
    assert [c["kind"] for c in preview["changes"]] == ["create", "update"]
    assert "+- Bisque firings run to cone 04." in preview["changes"][0]["diff"]
    assert preview["findings"] == [] and preview["token"].startswith("save-")
    assert digest(root) == before, "a preview writes nothing"

    applied = pmem(root, "save", "projects/kiln.md", "--format", "json", "--token", preview["token"], stdin=NOTE)
    assert applied.returncode == 0, applied.stdout
    assert as_json(applied) == {"applied": True, "operation": "save", "path": "projects/kiln.md",
                                "outcome": "saved projects/kiln.md and routed it",
                                "done": ["created projects/kiln.md", "updated _index.md"]}
    assert (root / "projects/kiln.md").read_text(encoding="utf-8") == NOTE
    assert "- [Kiln firing log](projects/kiln.md) — Bisque firings run to cone 04." in (root / "_index.md").read_text(encoding="utf-8")

    again = pmem(root, "save", "projects/kiln.md", "--format", "json", "--token", preview["token"], stdin=NOTE)
    assert again.returncode == 2 and as_json(again)["error"]["kind"] == "stale-preview"


def test_a_token_is_stale_when_the_file_changed_or_the_content_differs(root: Path):
    new = active_file("Alpha", body="## Context\nRewritten by the agent.\n")
    token = as_json(pmem(root, "save", "projects/alpha.md", "--format", "json", stdin=new))["token"]
    other = pmem(root, "save", "projects/alpha.md", "--format", "json", "--token", token, stdin=new + "More.\n")
    assert other.returncode == 2 and as_json(other)["error"]["kind"] == "stale-preview"
    (root / "projects/alpha.md").write_text(active_file("Alpha", body="## Context\nThe person's edit.\n"), encoding="utf-8")
    edited = digest(root)
    stale = pmem(root, "save", "projects/alpha.md", "--format", "json", "--token", token, stdin=new)
    assert stale.returncode == 2
    answer = as_json(stale)
    assert set(answer) == {"applied", "error"} and answer["applied"] is False and answer["error"]["kind"] == "stale-preview"
    assert "files it reads or writes changed" in answer["error"]["message"]
    assert "nothing was written" in answer["error"]["message"]
    assert digest(root) == edited


@pytest.mark.parametrize("path, text, kind", [
    ("notes/keys.md", f"# Keys\n\ngithub_token = {SECRET}\n", "no-secrets"),
    ("_archive/projects/alpha.md", NOTE, "protected-path"),
    ("_index.md", "# Memory index\n", "protected-path"),
    (".git/notes.md", NOTE, "protected-path"),
])
def test_save_refusals_exit_2_with_the_reason_and_write_nothing(root: Path, path: str, text: str, kind: str):
    before = digest(root)
    for fmt in ("json", "text"):
        result = pmem(root, "save", path, "--format", fmt, "--yes", stdin=text)
        assert result.returncode == 2
        assert SECRET not in result.stdout + result.stderr and SECRET[8:] not in result.stdout + result.stderr
        if fmt == "json":
            assert as_json(result)["error"]["kind"] == kind and as_json(result)["applied"] is False
        else:
            assert f"({kind})" in result.stderr
    assert digest(root) == before


def test_text_mode_without_a_terminal_prints_the_token_command_that_applies_it(root: Path):
    result = pmem(root, "archive", "projects/alpha.md", "--reason", "shipped")
    assert result.returncode == 3 and "move: projects/alpha.md → _archive/projects/alpha.md" in result.stdout
    command = next(line.strip() for line in result.stderr.splitlines() if line.strip().startswith("pmem "))
    args = command.split()[1:]  # the paths here have no spaces
    assert args[-2] == "--token" and "archive" in args and "--reason" in args
    applied = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True, text=True)
    assert applied.returncode == 0 and (root / "_archive/projects/alpha.md").is_file()


@pytest.mark.parametrize("args, stdin", [(("archive", "projects/alpha.md"), None),
                                         (("save", "notes/kiln.md"), NOTE)])
def test_what_an_agent_reads_of_a_preview_never_offers_yes(root: Path, args: tuple[str, ...], stdin: str | None):
    """The skill tells agents never to pass `--yes`; the preview they read must not suggest it."""
    for fmt in ((), ("--format", "json")):
        result = pmem(root, *args, *fmt, stdin=stdin)
        assert result.returncode == 3
        said = result.stdout + result.stderr
        if fmt:
            assert json.loads(result.stdout)["token"], "the JSON preview hands out its token"
        else:
            assert "--token" in result.stderr
        assert "--yes" not in said and " -y" not in said


def test_route_add_titles_a_note_as_its_front_matter_or_name_says(tmp_path: Path):
    """The trial's shapes through `pmem route add`: an agent file's front matter, an Obsidian note
    whose first heading comes later, and a root-level name with spaces in an index of bare paths."""
    root = make_root(tmp_path, {
        "_index.md": "# Index\n\n- projects/alpha.md — the alpha project\n- notes/a b.md — a note\n",
        "notes/a b.md": active_file("A b"),
        "agents/amp.agent.md": "---\nname: Amplitude Experiment Implementation\n"
                               "description: 'Implements experiments: the ''Amplitude'' way'\n---\n\n## Steps\n",
        "Q6/Import.md": "[[Elixir]] notas\n\n# 1.Definición\nTexto.\n",
        "Idea con espacios.md": "Una idea.\n",
    })
    expected = {"agents/amp.agent.md": "+- agents/amp.agent.md — Implements experiments: the 'Amplitude' way",
                "Q6/Import.md": "+- Q6/Import.md — Import",
                "Idea con espacios.md": "+- `Idea con espacios.md` — Idea con espacios"}
    for rel, line in expected.items():
        shown = as_json(pmem(root, "route", "add", rel, "--format", "json"))
        assert line in shown["changes"][0]["diff"].splitlines(), shown["changes"][0]["diff"]


def test_route_add_and_health_command_lines(root: Path):
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes/loose.md").write_text(active_file("Loose ends"), encoding="utf-8")
    shown = as_json(pmem(root, "route", "add", "notes/loose.md", "--description", "odds and ends", "--format", "json"))
    assert shown["changes"][0]["path"] == "_index.md" and "+- [Loose ends](notes/loose.md) — odds and ends" in shown["changes"][0]["diff"]
    applied = pmem(root, "route", "add", "notes/loose.md", "--description", "odds and ends", "--format", "json",
                   "--token", shown["token"])
    assert applied.returncode == 0 and as_json(applied)["outcome"] == "routed notes/loose.md"
    nothing = pmem(root, "route", "add", "notes/loose.md", "--format", "json")
    assert nothing.returncode == 0 and as_json(nothing)["token"] is None

    (root / "projects/done.md").write_text(active_file("Done", metadata="Status: done\n"), encoding="utf-8")
    health = as_json(pmem(root, "health", "--format", "json"))
    item = next(i for i in health["items"] if i["path"] == "projects/done.md")
    assert item["command"][:3] == ["pmem", "archive", "projects/done.md"]
    # The command line runs as it is (it previews, exit 3).
    run = pmem(root, *item["command"][1:], "--format", "json")
    assert run.returncode == 3 and as_json(run)["operation"] == "archive"


# -- hooks -----------------------------------------------------------------------------------
def hook(root: Path, event: str, call: dict | str) -> subprocess.CompletedProcess[str]:
    return pmem(root, "hook", event, stdin=call if isinstance(call, str) else json.dumps(call))


def claude(tool: str, tool_input: dict, event: str = "PreToolUse") -> dict:
    """A tool call as Claude Code sends it to a hook."""
    return {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "permission_mode": "default",
            "hook_event_name": event, "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01"}


def test_pre_write_blocks_a_new_secret_in_write_edit_and_multiedit(root: Path):
    path = str(root / "projects/alpha.md")
    calls = [
        claude("Write", {"file_path": str(root / "notes/keys.md"), "content": f"# Keys\n\ngithub_token = {SECRET}\n"}),
        claude("Edit", {"file_path": path, "old_string": "Some details", "new_string": f"token: {SECRET}\nSome details"}),
        claude("MultiEdit", {"file_path": path, "edits": [
            {"old_string": "Some details", "new_string": "Details"},
            {"old_string": "Details", "new_string": f"Details; password: {SECRET}", "replace_all": True}]}),
    ]
    for call in calls:
        result = hook(root, "pre-write", call)
        assert result.returncode == 2, (call["tool_name"], result.stderr)
        assert "likely GitHub token" in result.stderr or "likely password" in result.stderr
        assert SECRET not in result.stderr + result.stdout and SECRET[8:] not in result.stderr


def test_pre_write_lets_clean_writes_and_unrelated_edits_through(root: Path):
    path = root / "projects/alpha.md"
    assert hook(root, "pre-write", claude("Write", {"file_path": str(path), "content": NOTE})).returncode == 0
    # A secret the file already holds is not this write's doing (PM401 reports it).
    path.write_text(active_file("Alpha", body=f"## Context\ngithub_token = {SECRET}\n"), encoding="utf-8")
    edit = claude("Edit", {"file_path": str(path), "old_string": "## Context", "new_string": "## Background"})
    assert hook(root, "pre-write", edit).returncode == 0
    # A value the person allowed (in their editor) stays allowed when the agent writes around it.
    (root / "notes").mkdir(exist_ok=True)
    docs = root / "notes/docs.md"
    docs.write_text(f"# Docs\n\nexample: `{SECRET}` <!-- pmem: allow-secret -->\n", encoding="utf-8")
    allowed = claude("Write", {"file_path": str(docs), "content": docs.read_text(encoding="utf-8") + "More.\n"})
    assert hook(root, "pre-write", allowed).returncode == 0


def test_pre_write_blocks_direct_writes_into_the_archive(root: Path):
    for rel in ("_archive/_index.md", "_archive/projects/alpha.md", "_archive/_trash/x.md"):
        result = hook(root, "pre-write", claude("Write", {"file_path": str(root / rel), "content": "# X\n"}))
        assert result.returncode == 2 and "pmem archive" in result.stderr


def test_hooks_ignore_files_outside_the_root_and_tools_that_do_not_write(root: Path, tmp_path: Path):
    outside = claude("Write", {"file_path": str(tmp_path / "elsewhere.md"), "content": f"token: {SECRET}"})
    for event in ("pre-write", "post-write"):
        result = hook(root, event, outside)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    read = claude("Read", {"file_path": str(root / "projects/alpha.md")})
    assert hook(root, "pre-write", read).returncode == 0


@pytest.mark.parametrize("call, says", [
    ("not json", "not JSON"),
    ("[" * 300_000 + "]" * 300_000, "nested too deeply"),
    ('{"tool_input": ' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
    ("[1, 2]", "not a JSON object"),
    (json.dumps({"tool_name": "Write"}), "no `tool_input` object"),
    (json.dumps({"tool_name": "Edit", "tool_input": {"file_path": "ROOT/projects/alpha.md", "old_string": 1}}),
     "old_string"),
])
def test_malformed_hook_input_is_a_message_never_a_block_or_a_traceback(root: Path, call: str, says: str):
    result = hook(root, "pre-write", call.replace("ROOT", str(root)))
    assert result.returncode == 1 and says in result.stderr and "Traceback" not in result.stderr


def test_post_write_tells_the_agent_what_its_write_broke(root: Path):
    (root / "notes").mkdir(exist_ok=True)
    short = root / "notes/short.md"
    short.write_text("# Short\n\n## Summary\n\n- One fact.\n- Two facts.\n", encoding="utf-8")
    result = hook(root, "post-write", claude("Write", {"file_path": str(short), "content": short.read_text()}, "PostToolUse"))
    answer = as_json(result)
    assert result.returncode == 0 and answer["decision"] == "block"
    assert "PM102" in answer["reason"] and "PM202" in answer["reason"]

    index = root / "_index.md"
    text = index.read_text(encoding="utf-8")
    index.write_text(text + "- [Gone](projects/gone.md) — a route to nothing\n", encoding="utf-8")
    edit = claude("Edit", {"file_path": str(index), "old_string": "x", "new_string": "- [Gone](projects/gone.md) — a route to nothing"},
                  "PostToolUse")
    answer = as_json(hook(root, "post-write", edit))
    assert "PM201" in answer["reason"] and "projects/gone.md" in answer["reason"]

    clean = claude("Write", {"file_path": str(root / "projects/alpha.md"), "content": ""}, "PostToolUse")
    result = hook(root, "post-write", clean)
    assert (result.returncode, result.stdout) == (0, "")


# -- no secret echoed back: settings errors, paths in a write's JSON -------------------------
def shapes(secret: str) -> tuple[str, ...]:
    return secret, secret.upper(), secret.replace("_", ""), secret[8:24], secret[8:24].upper()


@pytest.mark.parametrize("toml", [f'[severity]\n{SECRET} = "error"\n', f'select = ["PM1", "{SECRET}"]\n',
                                  f"{SECRET} = 1\n"])
def test_a_settings_error_never_quotes_a_secret_in_check_or_the_hooks(root: Path, toml: str):
    (root / ".pmem.toml").write_text(toml, encoding="utf-8")
    said = []
    checked = pmem(root, "check")
    assert checked.returncode == 2 and ".pmem.toml" in checked.stderr
    said.append(checked.stdout + checked.stderr)
    for call in ({"file_path": str(root / "notes/x.md"), "content": "# X\n\nA note.\n"},
                 {"file_path": str(root / ".pmem.toml"), "content": toml + "\n"}):
        for event, name in (("pre-write", "PreToolUse"), ("post-write", "PostToolUse")):
            done = pmem(root, "hook", event, stdin=json.dumps({"hook_event_name": name, "tool_name": "Write",
                                                                "tool_input": call, "cwd": str(root)}))
            said.append(done.stdout + done.stderr)
    assert any(".pmem.toml" in text for text in said[1:]), "the hooks name the problem"
    for text in said:
        for shape in shapes(SECRET):
            assert shape not in text, text


def test_a_write_s_json_and_refusals_mask_a_secret_in_a_path(tmp_path: Path):
    root = make_root(tmp_path, {f"notes/{SECRET}/x.md": active_file("X")})
    rel = f"notes/{SECRET}/x.md"
    outputs = [pmem(root, "archive", rel, "--format", "json"), pmem(root, "archive", rel, "--format", "json", "--yes")]
    assert outputs[0].returncode == 3 and outputs[1].returncode == 0
    previewed = as_json(outputs[0])
    first, end = json.JSONDecoder().raw_decode(outputs[1].stdout)  # --yes: the preview, then the outcome
    applied = json.loads(outputs[1].stdout[end:])
    assert first["changes"] == previewed["changes"]
    assert previewed["token"] and previewed["changes"][0]["kind"] == "move" and applied["done"]
    assert (root / "_archive" / rel).is_file()
    outputs += [pmem(root, "archive", rel), pmem(root, "archive", rel, "--format", "json"),
                pmem(root, "recover", rel, "--format", "json")]
    assert outputs[2].returncode == 2 and "does not exist" in outputs[2].stderr
    for done in outputs:
        for shape in shapes(SECRET):
            assert shape not in done.stdout + done.stderr, done.stdout + done.stderr
