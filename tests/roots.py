"""Memory roots on disk for every test folder: the one way tests build them.

`write_root(dir, files)` writes `{relative path: text}` into `dir` and returns it:

- a text value writes (or replaces) that file, making its folders;
- `None` removes a file or folder that is there (a baseline's, say);
- a key ending in `/` creates an empty folder (its value is ignored).

Everything else here builds on it:

- `make_root(tmp_path, changes)` — `tmp_path/memory`: the well-formed `BASELINE` (core,
  lifecycle folders, two active files with summaries) with `changes` written on top. Unless
  the changes name `_index.md`, the index is generated to route every active Markdown file
  of the final tree, so adding `notes/x.md` does not cause a PM202 on its own. The engine,
  CLI and health tests start here.
- `base_files()` — a smaller well-formed root as a dict (core, an index routing
  `projects/alpha.md`, lifecycle structure), for tests that add to it and write it with
  `write_root(tmp_path / "memory", files)`: the end-to-end tests, whose assertions name its
  lines and texts (`summary_file`).
- `demo_copy(dir)` — a copy of `examples/demo-memory`; `navigation_demo(base)` — that copy
  with a few additions for the navigation tests (engine and server).
- Notes several folders share: `CRANES`, `BERTHS` (long enough to be near-duplicates),
  `TRASH_RECORDS`; `edited(text, (old, new)…)`; `git(root, …)` to commit a root.

`tests/engine/realnotes.py` builds realistic roots of its own on purpose: what it expects must
not depend on any helper of these tests.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from pmem_lsp.engine.zones import Zone, zone_of

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo-memory"


def write_root(root: Path, files: dict[str, str | None]) -> Path:
    """Write `files` into `root` (see the module docstring); `root` itself."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        target = root / rel
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        elif text is None:
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return root


# -- the engine's baseline: make_root ----------------------------------------------------------
def summary_block(n: int = 3, heading: str = "## Summary", prefix: str = "Fact") -> str:
    """A summary heading followed by `n` factual bullets."""
    bullets = "".join(f"- {prefix} number {i + 1} about the work.\n" for i in range(n))
    return f"{heading}\n{bullets}"


def active_file(title: str, *, metadata: str = "Status: active\n", summary: str | None = None,
                body: str = "## Context\nSome details that live below the summary.\n") -> str:
    """A well-formed active memory file: title, metadata, summary, body."""
    summary = summary_block() if summary is None else summary
    parts = [f"# {title}\n\n"]
    if metadata:
        parts.append(metadata + "\n")
    if summary:
        parts.append(summary + "\n")
    parts.append(body)
    return "".join(parts)


BASELINE: dict[str, str | None] = {
    "_core/profile.md": "# Profile\n\n## Identity\n- Name: Test Person\n- Based in Gothenburg.\n",
    "_core/preferences.md": "# Preferences\n\n## Communication\n- Be direct and concise.\n",
    "_archive/_trash/": None,
    "_archive/_index.md": "# Archive index\n",
    "projects/alpha.md": active_file("Alpha project"),
    "notes/beta.md": active_file("Beta note", metadata="Updated: 2026-11-01\n"),
}


def route_line(path: str, description: str | None = None) -> str:
    label = Path(path).stem.replace("-", " ").capitalize()
    target = path.replace(" ", "%20")
    return f"- [{label}]({target}) — {description or 'about ' + label.lower()}"


def index_text(paths: Iterable[str]) -> str:
    """`_index.md` routing `paths`, grouped under a heading per top folder."""
    groups: dict[str, list[str]] = {}
    for p in sorted(paths):
        top = p.split("/")[0] if "/" in p else "Other"
        groups.setdefault(top, []).append(p)
    out = ["# Memory index", ""]
    for top, ps in groups.items():
        out.append(f"## {top.capitalize()}")
        out.extend(route_line(p) for p in ps)
        out.append("")
    return "\n".join(out)


def make_root(tmp_path: Path, changes: dict[str, str | None] | None = None, *,
              baseline: bool = True) -> Path:
    """`tmp_path/memory`: the baseline with `changes` applied (see the module docstring)."""
    root = tmp_path / "memory"
    root.mkdir(parents=True)
    changes = dict(changes or {})
    tree: dict[str, str | None] = dict(BASELINE) if baseline else {}
    write_root(root, tree)
    write_root(root, {k: v for k, v in changes.items() if k != "_index.md"})
    if "_index.md" in changes:
        write_root(root, {"_index.md": changes["_index.md"]})
    elif baseline:
        active = [p.relative_to(root).as_posix() for p in root.rglob("*.md")
                  if p.is_file() and zone_of(p.relative_to(root).as_posix()) is Zone.ACTIVE]
        (root / "_index.md").write_text(index_text(active), encoding="utf-8")
    return root


# -- the end-to-end tests' root: base_files ----------------------------------------------------
def summary_file(title: str, bullets: int = 4, extra: str = "") -> str:
    items = "\n".join(f"- fact number {i + 1} about {title.lower()}" for i in range(bullets))
    return f"# {title}\n\nStatus: active\n\n## Summary\n{items}\n\n## Details\n\nBody text.\n{extra}"


def base_files() -> dict[str, str]:
    """A well-formed root: core, index routing every active file, lifecycle structure."""
    return {
        "_core/profile.md": "# Profile\n\nName: Test Person\n",
        "_core/preferences.md": "# Preferences\n\n- short answers\n",
        "_index.md": "# Memory index\n\n## Projects\n- [Alpha](projects/alpha.md) — the alpha project\n",
        "projects/alpha.md": summary_file("Alpha"),
        "_archive/_trash/": "",
        "_archive/_index.md": "# Archive index\n",
    }


# -- the demo memory -----------------------------------------------------------------------------
def demo_copy(root: Path) -> Path:
    """A copy of `examples/demo-memory` at `root` (which must not exist yet)."""
    shutil.copytree(DEMO, root)
    return root


# What navigation_demo adds to the demo (the secret is a fake in a real token shape).
TOKEN = "ghp_R7x2Kq9LmZ4vB8nW1cYt5pJ3sD6fH0gE2aUk"

A_NOTE = """# A project

Status: active

## Summary
- The a project keeps its facts here.
- It links to [the retail pipeline](retail-pipeline.md).
- Third fact about a.
"""

TRASH_RECORD = """
## notes/old-recipes.md
- status: trashed
- original: notes/old-recipes.md
- location: _archive/_trash/notes/old-recipes.md
- index-line: - [Old recipes](notes/old-recipes.md) — recipes from 2024
- archived: 2026-10-01
- reason: replaced by the recipe search
- deleted: 2026-11-20
- recover-by: 2026-12-20
"""

SECRET_NOTE = f"""# Deploy keys

## Summary
- Deploy token: {TOKEN}
- Rotated every quarter.
- Kept for the CI job.
"""


def add(root: Path, rel: str, text: str, append: bool = False) -> None:
    """Write `text` to `rel`, or append it to what is there."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if append else ""
    path.write_text(old + text, encoding="utf-8")


def navigation_demo(base: Path) -> Path:
    """The demo memory, plus: `projects/a.md` (routed, linked from two other files), a trashed
    record with its file, and a routed note holding a secret."""
    root = demo_copy(base / "memory")
    add(root, "projects/a.md", A_NOTE)
    index = (root / "_index.md").read_text(encoding="utf-8")
    index = index.replace("\n## Notes\n", "- [A project](projects/a.md) — the a project\n\n## Notes\n")
    add(root, "_index.md", index + "- [Deploy keys](notes/keys.md) — CI deploy keys\n")
    add(root, "notes/airflow-tips.md", "- [The a project](../projects/a.md)\n", append=True)
    add(root, "projects/recipe-search.md", "\nSee also [a](a.md#summary).\n", append=True)
    add(root, "_archive/_index.md", TRASH_RECORD, append=True)
    add(root, "_archive/_trash/notes/old-recipes.md", "# Old recipes\n\nPancakes and waffles.\n")
    add(root, "notes/keys.md", SECRET_NOTE)
    return root


# -- notes several folders share ------------------------------------------------------------
CRANES = """# Harbour crane dashboard

Status: active
Updated: 2026-10-02

## Summary
- Client: the Gothenburg container terminal; dashboards for crane cycle times and vessel dwell.
- Data comes from the terminal operating system export every fifteen minutes over SFTP.
- Decision: Power BI on the shared capacity, because the port already licenses it.

## Context
The terminal manager wants to see which cranes fall behind during the night shift and why
vessels wait at berth longer than planned. The first version covers the two container berths
on the north quay; the ro-ro berths follow once the data has been checked with the planners.

Crane cycle time is measured from spreader lock to spreader lock, and the export marks each
move with the crane number, the vessel call and the operator's shift code. Gaps longer than
ten minutes are breaks or breakdowns; the maintenance log tells which, a day later.

## Decisions
- Times are stored in UTC and shown in local time, so the night shift reads one timeline.
- Vessel calls are keyed on the call number, never on the vessel name, which changes.
- A move without a crane number is kept and counted apart, not dropped silently.

## Open questions
- Whether the crane telemetry can be joined to the shift roster without personal data.
- How long raw exports must be kept under the port's retention policy for operations data.
"""

BERTHS = """# Berth planning model

Status: active

## Summary
- Forecasts berth occupancy for the next fourteen days from the published vessel schedule.
- Built as a small Python package with a command-line entry point for the planners.
- The planners compare it weekly with what happened, and tune the buffer per shipping line.

## Context
Berth planning at the terminal is done in a spreadsheet that the planners update by hand
when a shipping line announces a delay. The model reads the same announcements from the
line's schedule feed and proposes a plan, which the planners accept or change.

A vessel's stay is estimated from its expected moves and the cranes the terminal can give
it; the estimate is widened by a buffer that depends on how punctual the line has been over
the last quarter. Conflicts are shown as overlapping bars, one row per berth.

## Decisions
- The model proposes, the planners decide; nothing is published without their approval.
- Schedules are fetched once an hour; a failed fetch keeps yesterday's plan visible.
- Buffers are per shipping line and reviewed every quarter with the terminal manager.
"""

TRASH_RECORDS = """# Archive index

## projects/ancient.md
- status: trashed
- original: projects/ancient.md
- location: _archive/_trash/projects/ancient.md
- index-line: - [Ancient](projects/ancient.md) — long gone
- archived: 2026-08-01
- reason: finished
- deleted: 2026-09-01
- recover-by: 2026-10-01

## projects/recent.md
- status: trashed
- original: projects/recent.md
- location: _archive/_trash/projects/recent.md
- index-line: - [Recent](projects/recent.md) — gone lately
- archived: 2026-11-01
- reason: finished
- deleted: 2026-11-20
- recover-by: 2026-12-20
"""


def edited(text: str, *pairs: tuple[str, str]) -> str:
    """`text` with each `old` replaced by `new` once (each must be there)."""
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new, 1)
    return text


def git(root: Path, *args: str, when: dt.datetime | None = None) -> None:
    """Run `git` in `root` as a fixed author, committing at `when` if given."""
    env = dict(os.environ, GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@example.com")
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when.strftime("%Y-%m-%dT%H:%M:%S")
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def remove_tree(path: Path) -> None:
    """`shutil.rmtree` without recursion: a folder nested thousands deep (a test of deep
    nesting) would make rmtree, and pytest's own clean-up of old temporary folders, raise
    RecursionError."""
    top = os.fspath(path)
    if not os.path.lexists(top):
        return
    stack = [(top, False)]
    while stack:
        folder, listed = stack.pop()
        try:
            if listed:
                os.rmdir(folder)
                continue
            stack.append((folder, True))
            with os.scandir(folder) as it:
                for de in it:
                    if de.is_dir(follow_symlinks=False):
                        stack.append((de.path, False))
                    else:
                        os.unlink(de.path)
        except FileNotFoundError:
            continue  # removed meanwhile
