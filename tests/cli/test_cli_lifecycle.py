"""`pmem upgrade|archive|delete|recover|purge|init` as a user runs them (docs/design.md §6).

Preview always; act only with `--yes` or an interactive "y"; exit 3 with nothing changed on
a non-interactive stdin without `--yes`; refusals exit 2 with the reason on stderr.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pmem_lsp.cli.writes import run_write
from pmem_lsp.engine.lifecycle.preview import Request
from roots import DEMO, base_files, demo_copy, summary_file, write_root

AI = "_archive/_index.md"
ROUTE = "- [Alpha](projects/alpha.md) — the alpha project"


def pmem(*args: str, stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True, text=True,
                          stdin=stdin, timeout=60)


def digest(top: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            out[p.relative_to(top).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    files = base_files()
    files["projects/beta.md"] = summary_file("Beta")
    files["_index.md"] += "- [Beta](projects/beta.md) — the beta project\n"
    return write_root(tmp_path / "memory", files)


def archived(root: Path, original: str = "projects/old.md", trashed: str | None = None) -> Path:
    """Add an archived (or, with `trashed` = its deletion date, trashed) file and its record."""
    location = ("_archive/_trash/" if trashed else "_archive/") + original
    (root / location).parent.mkdir(parents=True, exist_ok=True)
    (root / location).write_text(summary_file("Old"), encoding="utf-8")
    record = (f"\n## {original}\n- status: {'trashed' if trashed else 'archived'}\n- original: {original}\n"
              f"- location: {location}\n- index-line: - [Old]({original}) — the old one\n- archived: 2020-01-01\n"
              f"- reason: done\n")
    if trashed:
        deleted = dt.date.fromisoformat(trashed)
        record += f"- deleted: {trashed}\n- recover-by: {(deleted + dt.timedelta(days=30)).isoformat()}\n"
    with open(root / AI, "a", encoding="utf-8") as fh:
        fh.write(record)
    return root


# -- the round trip ----------------------------------------------------------------------------------
@pytest.mark.e2e
def test_round_trip_with_yes(root: Path):
    data = (root / "projects/alpha.md").read_bytes()
    index = (root / "_index.md").read_text(encoding="utf-8")
    archive_index = (root / AI).read_bytes()

    result = pmem("--root", str(root), "archive", "projects/alpha.md", "--reason", "shipped", "--yes")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Archive projects/alpha.md\n")
    assert "  move: projects/alpha.md → _archive/projects/alpha.md" in result.stdout
    assert f"    {ROUTE}" in result.stdout
    assert "Done: archived projects/alpha.md" in result.stdout
    assert (root / "_archive/projects/alpha.md").read_bytes() == data
    record = (root / AI).read_text(encoding="utf-8")
    today = dt.date.today()
    assert f"- index-line: {ROUTE}\n" in record and "- reason: shipped\n" in record
    assert f"- archived: {today.isoformat()}\n" in record

    result = pmem("--root", str(root), "delete", "projects/alpha.md", "-y")
    assert result.returncode == 0, result.stderr
    recover_by = (today + dt.timedelta(days=30)).isoformat()
    assert f"recover by {recover_by}" in result.stdout
    assert (root / "_archive/_trash/projects/alpha.md").read_bytes() == data
    assert f"- recover-by: {recover_by}\n" in (root / AI).read_text(encoding="utf-8")

    result = pmem("--root", str(root), "recover", "_archive/_trash/projects/alpha.md", "--yes")
    assert result.returncode == 0, result.stderr
    assert "restore the saved route line exactly" in result.stdout and ROUTE in result.stdout
    assert (root / "projects/alpha.md").read_bytes() == data
    assert (root / "_index.md").read_text(encoding="utf-8") == index  # the line back where it was
    assert (root / AI).read_bytes() == archive_index
    check = pmem("--root", str(root), "check", "--fail-on", "warning")
    assert check.returncode == 0, check.stdout


@pytest.mark.e2e
def test_a_file_archived_without_a_route_comes_back_without_one_unless_add_route(root: Path):
    index = (root / "_index.md").read_text(encoding="utf-8")
    unrouted = index.replace("- [Beta](projects/beta.md) — the beta project\n", "")
    (root / "_index.md").write_text(unrouted, encoding="utf-8")
    assert pmem("--root", str(root), "archive", "projects/beta.md", "--yes").returncode == 0
    shown = pmem("--root", str(root), "recover", "projects/beta.md")
    assert shown.returncode == 3
    assert "the file had no route when it was archived; none is added" in shown.stdout
    assert "recover with --add-route (the editor's \"and add a route\" action, or `add_route` in MCP); it would add this PROPOSED route:" in shown.stdout
    done = pmem("--root", str(root), "recover", "projects/beta.md", "--yes")
    assert done.returncode == 0, done.stderr
    assert (root / "_index.md").read_text(encoding="utf-8") == unrouted
    assert pmem("--root", str(root), "archive", "projects/beta.md", "--yes").returncode == 0
    added = pmem("--root", str(root), "recover", "projects/beta.md", "--add-route", "--yes")
    assert added.returncode == 0, added.stderr
    assert "add this PROPOSED route (asked for: the file had none when archived)" in added.stdout
    assert "(projects/beta.md)" in (root / "_index.md").read_text(encoding="utf-8")
    # The agent's two steps bind the choice: the token of the plain preview adds no route.
    assert pmem("--root", str(root), "archive", "projects/beta.md", "--yes").returncode == 0
    (root / "_index.md").write_text(unrouted, encoding="utf-8")
    preview = json.loads(pmem("--root", str(root), "recover", "projects/beta.md", "--format", "json").stdout)
    wrong = pmem("--root", str(root), "recover", "projects/beta.md", "--add-route", "--token", preview["token"])
    assert wrong.returncode == 2 and (root / "_archive/projects/beta.md").is_file()


@pytest.mark.e2e
def test_round_trip_on_a_copy_of_the_demo(tmp_path: Path):
    root = tmp_path / "demo"
    demo_copy(root)
    before = digest(root)
    for args in (("archive", "projects/recipe-search.md"), ("delete", "projects/recipe-search.md"),
                 ("recover", "projects/recipe-search.md"), ("delete", "projects/ferry-ticket-etl.md"),
                 ("recover", "projects/ferry-ticket-etl.md"), ("archive", "projects/ferry-ticket-etl.md", "--reason",
                                                               "project finished and handed over")):
        result = pmem("--root", str(root), *args, "--yes")
        assert result.returncode == 0, (args, result.stderr)
    after = digest(root)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    # the index lines are the same set; only the trash folders made on the way are new
    assert changed <= {"_index.md", AI, "_archive/_trash/projects"}
    assert sorted((root / "_index.md").read_text(encoding="utf-8").splitlines()) == \
        sorted((DEMO / "_index.md").read_text(encoding="utf-8").splitlines())


# -- no confirmation, no change ---------------------------------------------------------------------
@pytest.mark.e2e
@pytest.mark.parametrize("args", [
    ("archive", "projects/alpha.md"), ("archive", "projects/alpha.md", "--reason", "r"),
    ("delete", "projects/old.md"), ("recover", "projects/old.md"), ("purge", "projects/gone.md"), ("upgrade",),
])
def test_non_interactive_stdin_without_yes_exits_3_and_changes_nothing(root: Path, args):
    archived(root)
    archived(root, "projects/gone.md", trashed="2020-01-01")  # long expired: purge would apply
    if args == ("upgrade",):
        shutil.rmtree(root / "_archive/_trash")
    before = digest(root)
    result = pmem("--root", str(root), *args)
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert result.stdout.strip()  # the preview was printed
    # The token command, never --yes: an agent reads this (the skill tells it never to pass --yes).
    assert "--token" in result.stderr and "--yes" not in result.stderr and "Nothing was changed" in result.stderr
    assert digest(root) == before


@pytest.mark.e2e
def test_upgrade_with_nothing_to_do_exits_0_without_asking(root: Path):
    before = digest(root)
    result = pmem("--root", str(root), "upgrade")
    assert result.returncode == 0 and "nothing to do" in result.stdout
    assert digest(root) == before


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("answer,applied", [("y\n", True), ("Y\n", True), ("yes\n", True), ("n\n", False),
                                            ("\n", False), ("", False), ("no\n", False), ("maybe\n", False)])
def test_interactive_answer(root: Path, answer, applied):
    before = digest(root)
    out, err = io.StringIO(), io.StringIO()
    code = run_write(root, Request("archive", "projects/alpha.md", "done"), stdin=FakeTTY(answer), out=out, err=err)
    assert code == 0, err.getvalue()
    assert "Archive? [y/N] " in out.getvalue()
    assert (root / "_archive/projects/alpha.md").exists() == applied
    assert (root / "projects/alpha.md").exists() == (not applied)
    if not applied:
        assert "Cancelled; nothing was changed." in out.getvalue()
        assert digest(root) == before


def test_interactive_confirmation_actions_per_operation(root: Path):
    archived(root)
    for op, path, action in (("delete", "projects/old.md", "Delete"), ("recover", "projects/old.md", "Recover")):
        out = io.StringIO()
        assert run_write(root, Request(op, path, None), stdin=FakeTTY("y\n"), out=out, err=io.StringIO()) == 0
        assert f"{action}? [y/N] " in out.getvalue()
    assert (root / "projects/old.md").is_file()


@pytest.mark.e2e
def test_interactive_y_through_a_real_terminal(root: Path):
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "archive",
                                 "projects/alpha.md"], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        os.write(master, b"y\n")
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 0, stderr
    assert "Archive? [y/N]" in stdout and "Done: archived projects/alpha.md" in stdout
    assert (root / "_archive/projects/alpha.md").is_file()


def test_a_change_between_the_preview_and_the_answer_is_refused(root: Path):
    class EditingTTY(FakeTTY):
        def readline(self, *args):
            index = root / "_index.md"
            index.write_text(index.read_text(encoding="utf-8").replace("the alpha project", "edited"), encoding="utf-8")
            return "y\n"

    err = io.StringIO()
    code = run_write(root, Request("archive", "projects/alpha.md", None), stdin=EditingTTY(), out=io.StringIO(), err=err)
    assert code == 2 and "changed-since-preview" in err.getvalue()
    assert (root / "projects/alpha.md").is_file() and not (root / "_archive/projects").exists()


# -- refusals ------------------------------------------------------------------------------------------
@pytest.mark.e2e
@pytest.mark.parametrize("args,reason", [
    (("archive", "../outside.md"), "contains `..`"),
    (("archive", "/etc/passwd"), "absolute"),
    (("archive", "~/notes.md"), "home"),
    (("delete", "C:\\x.md"), "backslash"),
    (("archive", "_core/profile.md"), "protected"),
    (("archive", "_index.md"), "protected index"),
    (("recover", "_archive/_index.md"), "protected index"),
    (("purge", "_archive/_trash"), "lifecycle folder"),
    (("delete", "projects/alpha.md"), "archive it first"),
    (("archive", "projects/missing.md"), "does not exist"),
    (("recover", "projects/never.md"), "no record"),
    (("purge", "projects/old.md"), "not in the trash"),
    (("purge", "projects/fresh.md"), "can still be recovered until"),
])
def test_refusals_exit_2_with_the_reason_and_change_nothing(root: Path, args, reason):
    archived(root)
    archived(root, "projects/fresh.md", trashed=dt.date.today().isoformat())
    before = digest(root)
    for extra in ((), ("--yes",)):
        result = pmem("--root", str(root), *args, *extra)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert reason in result.stderr and result.stderr.startswith("pmem: refused (")
        assert result.stdout == ""
    assert digest(root) == before


@pytest.mark.e2e
def test_recover_onto_an_occupied_path_is_refused(root: Path):
    archived(root)
    (root / "projects/old.md").write_text("# Someone else\n", encoding="utf-8")
    before = digest(root)
    result = pmem("--root", str(root), "recover", "_archive/projects/old.md", "--yes")
    assert result.returncode == 2 and "occupied" in result.stderr and "no-overwrite" in result.stderr
    assert digest(root) == before


@pytest.mark.e2e
def test_no_lifecycle_structure_refuses_and_points_to_upgrade(tmp_path: Path):
    files = {k: v for k, v in base_files().items() if not k.startswith("_archive")}
    root = write_root(tmp_path / "memory", files)
    before = digest(root)
    for args in (("archive", "projects/alpha.md"), ("delete", "projects/alpha.md"), ("recover", "projects/x.md"),
                 ("purge", "projects/x.md")):
        result = pmem("--root", str(root), *args, "--yes")
        assert result.returncode == 2
        if args[0] != "delete":  # delete of an active file says "archive it first"
            assert "upgrade" in result.stderr, (args, result.stderr)
    assert digest(root) == before
    result = pmem("--root", str(root), "upgrade", "--yes")
    assert result.returncode == 0, result.stderr
    assert (root / "_archive/_trash").is_dir() and (root / AI).read_text(encoding="utf-8") == "# Archive index\n"
    after = digest(root)
    assert {k: v for k, v in after.items() if not k.startswith("_archive")} == before
    assert pmem("--root", str(root), "archive", "projects/alpha.md", "--yes").returncode == 0


@pytest.mark.e2e
def test_a_missing_root_is_an_error_not_a_creation(tmp_path: Path):
    result = pmem("--root", str(tmp_path / "nope"), "archive", "projects/a.md", "--yes")
    assert result.returncode == 2 and "does not exist" in result.stderr
    assert not (tmp_path / "nope").exists()


# -- init ------------------------------------------------------------------------------------------------
@pytest.mark.e2e
def test_init_creates_the_structure_in_a_new_folder(tmp_path: Path):
    new = tmp_path / "fresh" / "memory"
    result = pmem("--root", str(new), "init")
    assert result.returncode == 3 and not new.exists()  # previewed only
    assert str(new) in result.stdout and "  _core/profile.md (to fill in)\n" in result.stdout
    result = pmem("--root", str(new), "init", "--yes")
    assert result.returncode == 0, result.stderr
    for folder in ("_core", "_archive", "_archive/_trash"):
        assert (new / folder).is_dir()
    assert (new / "_index.md").is_file() and (new / AI).is_file()
    assert new.stat().st_mode & 0o777 == 0o700  # a new root is private: only its owner reads it
    for core in ("_core/profile.md", "_core/preferences.md"):
        assert (new / core).read_text(encoding="utf-8").startswith("# ")
    check = pmem("--root", str(new), "check", "--format", "json")
    assert check.returncode == 0
    assert json.loads(check.stdout)["diagnostics"] == []  # a fresh root checks clean (no PM003)


@pytest.mark.e2e
def test_init_works_in_an_existing_empty_folder(tmp_path: Path):
    new = tmp_path / "empty"
    new.mkdir(mode=0o755)
    new.chmod(0o755)
    assert pmem("--root", str(new), "init", "--yes").returncode == 0
    assert (new / "_index.md").is_file()
    assert new.stat().st_mode & 0o777 == 0o755  # an existing folder keeps its permissions


@pytest.mark.e2e
@pytest.mark.parametrize("existing", ["root", "demo"])
def test_init_refuses_on_an_existing_root(root: Path, tmp_path: Path, existing):
    if existing == "demo":
        root = tmp_path / "demo"
        demo_copy(root)
    before = digest(root)
    result = pmem("--root", str(root), "init", "--yes")
    assert result.returncode == 2 and "already a memory root" in result.stderr
    assert digest(root) == before


def test_init_interactive_no_creates_nothing(tmp_path: Path):
    new = tmp_path / "new"
    out = io.StringIO()
    assert run_write(new, Request("init", None, None), stdin=FakeTTY("n\n"), out=out, err=io.StringIO()) == 0
    assert "Create? [y/N]" in out.getvalue() and not new.exists()


@pytest.mark.e2e
def test_ctrl_c_at_the_prompt_cancels_without_a_traceback(root: Path):
    """SIGINT while `pmem archive` waits for its answer, through a real terminal."""
    import select
    import signal

    before = digest(root)
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "archive",
                                 "projects/alpha.md"], stdin=slave, stdout=slave, stderr=subprocess.PIPE)
        seen = b""
        while b"[y/N]" not in seen:
            ready, _, _ = select.select([master], [], [], 30)
            assert ready, f"no prompt; got {seen!r}"
            seen += os.read(master, 4096)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        seen += os.read(master, 4096) if select.select([master], [], [], 1)[0] else b""
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 0, stderr
    assert b"Traceback" not in stderr and b"Cancelled; nothing was changed." in seen
    assert digest(root) == before


@pytest.mark.e2e
def test_the_cli_records_where_an_archive_came_from(root: Path):
    assert pmem("--root", str(root), "archive", "projects/alpha.md", "--yes").returncode == 0
    assert "- reason: archived with `pmem archive`" in (root / "_archive/_index.md").read_text(encoding="utf-8")


@pytest.mark.e2e
def test_purge_leaves_no_empty_folder_in_the_trash(tmp_path: Path):
    root = demo_copy(tmp_path / "memory")
    rel = "projects/ferry-ticket-etl.md"
    assert (root / "_archive" / rel).is_file()  # archived in the demo
    done = pmem("--root", str(root), "delete", rel, "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    index = root / "_archive/_index.md"
    recover_by = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    assert recover_by in index.read_text()
    index.write_text(index.read_text().replace(recover_by, "2020-01-01"))
    done = pmem("--root", str(root), "purge", rel, "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (root / "_archive/_trash/projects").exists()
    assert (root / "_archive/_trash").is_dir() and (root / "_archive").is_dir()


# -- --yes under contention ---------------------------------------------------------------------------
@pytest.mark.parametrize("yes", [True, False], ids=["yes", "prompt-yes"])
def test_yes_plans_under_the_lock_and_a_prompt_holds_to_what_was_shown(root: Path, monkeypatch, yes: bool):
    """Another pmem process rewrites the route line between this run's preview and its lock
    (a concurrent `migrate`, say). With `--yes` nobody was shown a preview: the plan made under
    the lock is carried out, and the route goes whatever its wording. It used to be refused
    with "review the new preview and confirm again". A person who answered a prompt saw the old
    line: that is still refused, with nothing changed."""
    import pmem_lsp.cli.writes as writes

    real = writes.preview

    def then_another_writer(*args, **kwargs):
        shown = real(*args, **kwargs)
        index = root / "_index.md"
        index.write_text(index.read_text(encoding="utf-8").replace("— the beta project", "— beta, reworded"),
                         encoding="utf-8")
        return shown

    monkeypatch.setattr(writes, "preview", then_another_writer)
    out, err = io.StringIO(), io.StringIO()
    if yes:
        code = run_write(root, Request("archive", "projects/beta.md", "done"), yes=True, out=out, err=err)
        assert code == 0, err.getvalue()
        assert (root / "_archive/projects/beta.md").is_file()
        assert "projects/beta.md" not in (root / "_index.md").read_text(encoding="utf-8")
        return
    primary, replica = pty.openpty()
    os.write(primary, b"y\n")
    with open(replica, encoding="utf-8", closefd=True) as terminal:
        code = run_write(root, Request("archive", "projects/beta.md", "done"), stdin=terminal, out=out, err=err)
    os.close(primary)
    assert code == 2 and "changed since the preview" in err.getvalue(), err.getvalue()
    assert (root / "projects/beta.md").is_file() and not (root / "_archive/projects/beta.md").exists()
