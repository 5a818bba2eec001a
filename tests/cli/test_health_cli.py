"""`pmem health` and `pmem status` as a user runs them: real processes, real roots; the tree is
left byte for byte as it was, expired trash is listed apart, and status never reads `_archive/`."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from roots import CRANES, DEMO, TRASH_RECORDS, active_file, edited, git, make_root

DAY = 86400.0


def pmem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


def digest(root: Path) -> dict[str, str]:
    """Every file under the root (hidden ones and `.git/` included) and its hash, plus modes."""
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        key = p.relative_to(root).as_posix()
        out[key] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else f"dir {oct(st.st_mode)}"
    return out


def older(root: Path, rel: str, days: int) -> None:
    when = time.time() - days * DAY
    os.utime(root / rel, (when, when))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    today = dt.date.today()
    records = (TRASH_RECORDS.replace("2026-10-01", (today - dt.timedelta(days=3)).isoformat())
               .replace("2026-12-20", (today + dt.timedelta(days=20)).isoformat()))
    root = make_root(tmp_path, {
        "projects/cranes.md": CRANES,
        "notes/cranes-copy.md": edited(CRANES, ("fifteen", "five")),
        "projects/done.md": active_file("Done project", metadata="Status: shipped\n"),
        "_archive/_trash/projects/ancient.md": active_file("Ancient"),
        "_archive/_trash/projects/recent.md": active_file("Recent"),
        "_archive/_index.md": records,
    })
    older(root, "projects/cranes.md", 5)
    older(root, "notes/beta.md", 150)
    return root


@pytest.mark.e2e
def test_health_text_is_a_numbered_proposal_with_trash_apart(root: Path):
    before = digest(root)
    result = pmem("--root", str(root), "health")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    since = dt.date.fromtimestamp(time.time() - 150 * DAY).isoformat()
    assert lines[0] == f"Memory health: {root} ({dt.date.today().isoformat()})"
    assert lines[1] == ("Proposal: 4 items (1 duplicate, 1 concluded, 1 stale, 1 original) — "
                        "nothing changes until you confirm each one.")
    assert lines[2:10] == [
        "Duplicates — archive the copy (1):",
        "  1. delete: notes/cranes-copy.md — duplicate of projects/cranes.md; archive it first, delete it from the archive later",
        "Concluded — archive (1):",
        "  2. archive: projects/done.md — concluded: Status: shipped",
        "Stale — archive, the longest unchanged first (1):",
        f"  3. archive: notes/beta.md — stale: unchanged since {since}",
        "Keep active — the copy a duplicate duplicates (1):",
        "  4. keep active: projects/cranes.md — the copy to keep: notes/cranes-copy.md duplicates it",
    ]
    trash = lines.index("Expired trash — permanent removal needs its own confirmation (`pmem purge PATH`):")
    assert trash > 10
    assert lines[trash + 1:] == ["  - _archive/_trash/projects/ancient.md (was projects/ancient.md): "
                                 f"recover-by {(dt.date.today() - dt.timedelta(days=3)).isoformat()}, expired 3 days ago"]
    assert digest(root) == before


@pytest.mark.e2e
def test_health_json(root: Path):
    data = json.loads(pmem("--root", str(root), "health", "--format", "json").stdout)
    assert data["root"] == str(root) and data["lifecycleReady"] is True
    assert [(i["number"], i["proposal"], i["path"], i["signals"]) for i in data["items"]] == [
        (1, "delete", "notes/cranes-copy.md", ["PM503"]), (2, "archive", "projects/done.md", ["PM502"]),
        (3, "archive", "notes/beta.md", ["PM501"]), (4, "keep active", "projects/cranes.md", [])]
    assert [i["group"] for i in data["items"]] == ["duplicate", "concluded", "stale", "original"]
    assert [(g["group"], g["count"]) for g in data["groups"]] == [
        ("duplicate", 1), ("concluded", 1), ("stale", 1), ("original", 1)]
    # A command line an agent or a person runs (it previews and asks first), not a server command.
    assert data["items"][0]["command"] == ["pmem", "archive", "notes/cranes-copy.md", "--reason",
                                           "duplicate of projects/cranes.md"]
    assert data["items"][3]["command"] is None
    assert data["expiredTrash"] == [{
        "path": "_archive/_trash/projects/ancient.md", "original": "projects/ancient.md",
        "recoverBy": (dt.date.today() - dt.timedelta(days=3)).isoformat(), "daysExpired": 3,
        "command": ["pmem", "purge", "_archive/_trash/projects/ancient.md"]}]


@pytest.mark.e2e
def test_health_all_lists_what_the_bounded_text_counts(root: Path):
    for i in range(14):
        (root / f"notes/old{i:02}.md").write_text(f"# Old {i}\n\nSomething kept for later, number {i}.\n")
        older(root, f"notes/old{i:02}.md", 200 + i)
    short = pmem("--root", str(root), "health").stdout
    full = pmem("--root", str(root), "health", "--all").stdout
    assert "Stale — archive, the longest unchanged first (15):" in short
    assert "  … and 5 more" in short and "`pmem health --all` lists every item" in short
    assert sum(": notes/old" in line for line in short.splitlines()) == 10
    lines = short.splitlines()
    first = lines[lines.index("Stale — archive, the longest unchanged first (15):") + 1]
    assert "archive: notes/old13.md" in first  # the longest unchanged first
    assert sum(": notes/old" in line for line in full.splitlines()) == 14 and "more" not in full
    data = json.loads(pmem("--root", str(root), "health", "--format", "json").stdout)
    assert sum(i["path"].startswith("notes/old") for i in data["items"]) == 14


@pytest.mark.e2e
def test_health_and_status_leave_a_git_root_byte_for_byte_unchanged(root: Path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "all", when=dt.datetime(2026, 1, 5, 12))
    os.utime(root / "projects/done.md")  # stat-dirty: a careless `git status` would rewrite the index
    before = digest(root)
    health = pmem("--root", str(root), "health")
    status = pmem("--root", str(root), "status")
    assert health.returncode == status.returncode == 0
    assert digest(root) == before
    assert "stale: unchanged since 2026-01-05" in health.stdout  # the commit date, not the mtime


@pytest.mark.e2e
def test_health_on_the_demo_proposes_nothing():
    result = pmem("--root", str(DEMO), "health")
    assert result.returncode == 0
    assert result.stdout.splitlines()[1:] == ["No candidates: no active file is stale, concluded or a duplicate.",
                                              "Expired trash: none."]


@pytest.mark.e2e
def test_health_refuses_a_missing_root(tmp_path: Path):
    result = pmem("--root", str(tmp_path / "nope"), "health")
    assert result.returncode == 2 and "does not exist" in result.stderr


@pytest.mark.e2e
def test_status_lists_counts_and_routes(root: Path):
    before = digest(root)
    result = pmem("--root", str(root), "status")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == f"Memory root: {root}"
    assert lines[1].startswith("Core: 2 files, ")
    assert lines[2].startswith("Active: 5 routed files, ")
    assert lines[3].startswith("All active files: 5, ") and "tokens)" in lines[3]
    assert "  notes/cranes-copy.md — about cranes copy" in lines
    assert digest(root) == before


def test_status_never_reads_the_archive(root: Path, monkeypatch):
    from pmem_lsp.cli.status import run_status

    (root / "notes/loose.md").write_text(active_file("Loose"))
    real_scandir, real_open, real_stat = os.scandir, open, os.stat
    seen: list[str] = []

    def guarded(real):
        def call(path, *a, **kw):
            if "_archive" in os.fspath(path):
                seen.append(os.fspath(path))
                raise PermissionError(13, "unreadable", os.fspath(path))
            return real(path, *a, **kw)
        return call

    monkeypatch.setattr(os, "scandir", guarded(real_scandir))
    monkeypatch.setattr(os, "stat", guarded(real_stat))
    monkeypatch.setattr("builtins.open", guarded(real_open))
    out = io.StringIO()
    assert run_status(root, "text", out) == 0
    monkeypatch.undo()
    assert seen == []
    text = out.getvalue()
    assert "Not routed: 1 active file, " in text and "notes/loose.md" in text
    assert "All active files: 6, " in text


TOKEN = "ghp_" + "J7QX2M4RZ8KD5N3VJ7QX2M4RZ8KD5N3Vabcd"  # a GitHub token's shape


@pytest.mark.e2e
def test_health_json_commands_name_real_files_or_say_why_there_is_none(root: Path):
    bad, newline, secret, spaced = (os.fsdecode(b"notes/bad\xffname.md"), "notes/new\nline.md",
                                    f"notes/{TOKEN}.md", "notes/with space.md")
    for i, rel in enumerate((bad, newline, secret, spaced)):
        (root / rel).write_text(active_file(f"Odd name {i}"))
        older(root, rel, 150)
    out = pmem("--root", str(root), "health", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert TOKEN not in out.stdout
    items = {i["path"]: i for i in json.loads(out.stdout)["items"]}
    # Paths as `check` and `status` show them (names.shown), never a raw line break.
    assert "notes/bad\\xffname.md" in items and "notes/new\\x0aline.md" in items
    checked = json.loads(pmem("--root", str(root), "check", "--format", "json").stdout)
    assert "notes/new\\x0aline.md" in {d["path"] for d in checked["diagnostics"]}
    for shown_path in ("notes/bad\\xffname.md", "notes/new\\x0aline.md"):
        item = items[shown_path]
        assert item["command"] is None and "no command can name this file" in item["note"], item
    assert "not valid UTF-8" in items["notes/bad\\xffname.md"]["note"]
    masked = [i for p, i in items.items() if p.startswith("notes/ghp_")]
    assert len(masked) == 1 and masked[0]["command"] is None and "secret" in masked[0]["note"]
    # A name that can be carried gets the command that works: it previews the archive of that file.
    argv = items[spaced]["command"]
    assert argv[:3] == ["pmem", "archive", spaced] and "note" not in items[spaced]
    ran = pmem("--root", str(root), *argv[1:])
    assert f"Archive {spaced}" in ran.stdout, ran.stdout + ran.stderr
