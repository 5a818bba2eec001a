"""The lifecycle safety contract (docs/design.md §3) under generated hostile paths.

One memory root is built per module, with symbolic links that lead out of the root (to a file,
to a folder, to the root's parent) and inside it (to an active file, to a folder, to `_core/`),
a loop, a dangling link, and archive records whose locations were written by a hostile agent.
Hypothesis then throws paths at `validate_target`, `resolve_inside`, every operation's planner
and the CLI entry point, and checks that nothing outside the root (or through a link, or in a
protected zone) is ever accepted, and that a refusal changes nothing on disk.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
import re
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pmem_lsp.cli.writes import run_write
from pmem_lsp.engine.lifecycle.fs_applier import run_steps
from pmem_lsp.engine.lifecycle.operations import context, make_plan
from pmem_lsp.engine.lifecycle.plan import MakeDir, Move, Remove, WriteText
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.safety import (
    NOT_RELATIVE,
    OUTSIDE_ROOT,
    PROTECTED,
    Refusal,
    resolve_inside,
    validate_relative,
    validate_target,
)
from pmem_lsp.engine.zones import Zone, zone_of
from roots import active_file, make_root

TODAY = dt.date(2026, 12, 1)
OPS = ("archive", "delete", "recover", "purge")

ARCHIVE_INDEX_TEXT = """# Archive index

## projects/old.md
- status: archived
- original: projects/old.md
- location: _archive/projects/old.md
- index-line: - [Old](projects/old.md) — the old project
- archived: 2026-10-01
- reason: finished

## notes/gone.md
- status: trashed
- original: notes/gone.md
- location: _archive/_trash/notes/gone.md
- index-line: - [Gone](notes/gone.md) — a gone note
- archived: 2026-09-01
- reason: finished
- deleted: 2026-09-02
- recover-by: 2026-10-02

## projects/out.md
- status: archived
- original: projects/out.md
- location: _archive/projects/out.md
- index-line: - [Out](projects/out.md) — a link that leads out
- archived: 2026-10-01
- reason: hostile

## projects/evil-core.md
- status: archived
- original: projects/evil-core.md
- location: _core/profile.md
- index-line:
- archived: 2026-10-01
- reason: hostile

## projects/evil-index.md
- status: trashed
- original: projects/evil-index.md
- location: _archive/_trash/../../_index.md
- index-line:
- archived: 2026-10-01
- reason: hostile
- deleted: 2026-10-01
- recover-by: 2026-10-02

## projects/evil-active.md
- status: archived
- original: projects/evil-active.md
- location: projects/alpha.md
- index-line:
- archived: 2026-10-01
- reason: hostile

## projects/evil-outside.md
- status: archived
- original: projects/evil-outside.md
- location: ../outside/secret.md
- archived: 2026-10-01
- reason: hostile

## projects/evil-hidden.md
- status: archived
- original: projects/evil-hidden.md
- location: _archive/.git/config
- archived: 2026-10-01
- reason: hostile

## projects/back-to-core.md
- status: archived
- original: _core/preferences.md
- location: _archive/projects/back-to-core.md
- archived: 2026-10-01
- reason: hostile original
"""


def build_hostile_root(base: Path) -> Path:
    root = make_root(base, {
        "projects/old.md": None,
        "_archive/projects/old.md": active_file("Old"),
        "_archive/_trash/notes/gone.md": active_file("Gone"),
        "_archive/projects/back-to-core.md": active_file("Back"),
        "_archive/_index.md": ARCHIVE_INDEX_TEXT,
        ".git/config": "[core]\n",
        "notes/.hidden.md": "# Hidden\n",
    })
    outside = base / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.md").write_text("# Secret\n")
    (outside / "dir" / "x.md").write_text("# X\n")
    links = {
        "projects/out_link.md": outside / "secret.md",  # a file link out of the root
        "projects/out_dir": outside / "dir",  # a folder link out of the root
        "up": Path(".."),  # the root's parent
        "notes/in_link.md": Path("../projects/alpha.md"),  # a file link inside the root
        "notes/in_dir": Path("../projects"),  # a folder link inside the root
        "notes/core_link": Path("../_core"),  # a folder link into a protected zone
        "notes/core_file.md": Path("../_core/profile.md"),  # a file link to a protected file
        "notes/index_link.md": Path("../_index.md"),
        "notes/loop.md": Path("loop.md"),  # a link to itself
        "notes/dangling.md": Path("/nonexistent-pmem-test/zzz.md"),
        "_archive/projects/out.md": outside / "secret.md",  # an "archived" file that is a link out
        "_archive/_trash/projects/in.md": Path("../../../projects/alpha.md"),
        "_archive/linked": outside / "dir",
    }
    for rel, target in links.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
    return root


def tree_digest(top: Path) -> str:
    """Every entry under `top` (links not followed): its path, kind and bytes or link target."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            h.update(str(p.relative_to(top)).encode("utf-8", "surrogateescape") + b"\0")
            if p.is_symlink():
                h.update(b"L" + os.readlink(p).encode("utf-8", "surrogateescape"))
            elif p.is_file():
                h.update(b"F" + p.read_bytes())
            else:
                h.update(b"D")
            h.update(b"\0")
    return h.hexdigest()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("safety")
    return build_hostile_root(base), base


# -- generated paths --------------------------------------------------------------
LOOKALIKES = ["\uff0f", "\u2215", "\u2044", "\u29f8", "\uff3c", "\u2216", "\ufe68", "\u2024", "\u2025", "\u2026",
              "\uff0e", "\ufe52", "\uff61", "\ufe55", "\u2236", "\ua789"]
CONTROLS = ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x85", "\t", "\n", "\r", "\u200b", "\u200d", "\u202e",
            "\u2028", "\u2029", "\ufeff"]
NAMES = ["projects", "notes", "alpha.md", "beta.md", "old.md", "gone.md", "out.md", "in.md", "x.md",
         "_core", "profile.md", "preferences.md", "_index.md", "_archive", "_trash", ".git", "config", ".hidden.md",
         "out_link.md", "out_dir", "up", "outside", "secret.md", "dir", "in_link.md", "in_dir", "core_link",
         "core_file.md", "index_link.md", "loop.md", "dangling.md", "linked",
         "evil-core.md", "evil-index.md", "evil-active.md", "evil-outside.md", "evil-hidden.md", "back-to-core.md",
         "..", ".", "", "...", ". ", ".. ", "~", "~user", "~root", "$HOME", "${HOME}", "$USERPROFILE",
         "%USERPROFILE%", "%HOMEPATH%", "C:", "c:", "C:x", "file:", "\\\\host\\share", "%2e%2e", "..%2f",
         "_CORE", "_Index.md", "_Archive", "_TRASH"]
SEPARATORS = ["/", "/", "/", "//", "/./", "\\", "\uff0f", "\u2215"]
PREFIXES = ["", "", "", "/", "./", "~/", "~user/", "$HOME/", "${HOME}/", "%USERPROFILE%\\", "%USERPROFILE%/",
            "C:", "C:\\", "C:/", "\\\\host\\share\\", "//host/share/", "\\", " ", "../", "file:///"]
SUFFIXES = ["", "", "", "/", "\x00", "\n", " ", "/..", "/.", "\\"]


@st.composite
def hostile_paths(draw) -> str:
    segments = draw(st.lists(st.one_of(st.sampled_from(NAMES),
                                       st.text(alphabet="ab._-~$%:", min_size=1, max_size=4)),
                             min_size=1, max_size=5))
    path = segments[0]
    for seg in segments[1:]:
        path += draw(st.sampled_from(SEPARATORS)) + seg
    path = draw(st.sampled_from(PREFIXES)) + path + draw(st.sampled_from(SUFFIXES))
    for _ in range(draw(st.integers(0, 2))):  # splice in a look-alike or a control character
        ch = draw(st.sampled_from(LOOKALIKES + CONTROLS))
        at = draw(st.integers(0, len(path)))
        path = path[:at] + ch + path[at:]
    return path


REAL_PATHS = ["projects/alpha.md", "notes/beta.md", "projects/old.md", "notes/gone.md", "_archive/projects/old.md",
              "_archive/_trash/notes/gone.md", "projects/out.md", "_archive/projects/out.md", "projects/out_link.md",
              "projects/out_dir/x.md", "up/outside/secret.md", "up/memory/projects/alpha.md", "notes/in_link.md",
              "notes/in_dir/alpha.md", "notes/core_link/profile.md", "notes/core_file.md", "notes/index_link.md",
              "notes/loop.md", "notes/dangling.md", "_archive/_trash/projects/in.md", "_archive/linked/x.md",
              "_core/profile.md", "_index.md", "_archive/_index.md", ".git/config", "notes/.hidden.md",
              "projects/evil-core.md", "projects/evil-index.md", "projects/evil-active.md", "projects/evil-outside.md",
              "projects/evil-hidden.md", "_archive/projects/back-to-core.md", "projects/new.md"]


@st.composite
def near_valid_paths(draw) -> str:
    """A real path of the hostile root, often untouched, else with one or two small mutations."""
    path = draw(st.sampled_from(REAL_PATHS))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2]))):
        kind = draw(st.sampled_from(["prefix", "suffix", "separator", "dotdot", "char", "case"]))
        slashes = [i for i, c in enumerate(path) if c == "/"]
        if kind == "prefix":
            path = draw(st.sampled_from(PREFIXES)) + path
        elif kind == "suffix":
            path += draw(st.sampled_from(SUFFIXES))
        elif kind == "separator" and slashes:
            at = draw(st.sampled_from(slashes))
            path = path[:at] + draw(st.sampled_from(SEPARATORS)) + path[at + 1:]
        elif kind == "dotdot" and slashes:
            at = draw(st.sampled_from(slashes))
            path = path[:at] + draw(st.sampled_from(["/..", "/../..", "/./..", "/x/../.."])) + path[at:]
        elif kind == "char":
            at = draw(st.integers(0, len(path)))
            path = path[:at] + draw(st.sampled_from(LOOKALIKES + CONTROLS)) + path[at:]
        elif kind == "case":
            path = path.upper() if draw(st.booleans()) else path.title()
    return path


ANY_PATH = st.one_of(near_valid_paths(), near_valid_paths(), hostile_paths(), st.text(max_size=12))

_HOME = re.compile(r"^(~|\$|%[A-Za-z_]+%)")
_DRIVE = re.compile(r"^[A-Za-z]:")


def must_be_refused(raw: str) -> bool:
    """Independent of the implementation: what point 1 of the contract rejects outright."""
    if not raw.strip() or raw != raw.strip():
        return True
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in raw):
        return True
    if "\\" in raw or any(c in LOOKALIKES for c in raw):
        return True
    if raw.startswith("/") or _HOME.match(raw) or re.search(r"%[A-Za-z_]+%", raw) or _DRIVE.match(raw):
        return True
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    return not parts or ".." in parts


def is_protected(rel: str) -> bool:
    """Point 4, with zones spelled out here rather than taken from the code under test."""
    parts = rel.split("/")
    folded = rel.lower()
    if any(p.startswith(".") for p in parts):
        return True
    if folded.split("/")[0] == "_core" or folded in ("_index.md", "_archive/_index.md", "_archive", "_archive/_trash"):
        return True
    return False


def assert_safe_relative(root: Path, rel: str) -> None:
    """An accepted path: relative, inside the root once resolved, through no link at all."""
    assert rel and not rel.startswith("/") and "\\" not in rel
    assert ".." not in rel.split("/")
    assert not any(unicodedata.category(c) in ("Cc", "Cf") for c in rel)
    real_root = os.path.realpath(root)
    real = os.path.realpath(root / rel)
    assert os.path.commonpath([real_root, real]) == real_root, f"{rel!r} resolves to {real}"
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        assert not os.path.islink(root.joinpath(*parts[:i])), f"{rel!r} goes through a link"


def assert_plan_safe(root: Path, plan) -> None:
    for step in plan.steps:
        if isinstance(step, Move):
            for rel in (step.source, step.destination):
                assert_safe_relative(root, rel)
                assert not is_protected(rel), rel
                assert zone_of(rel) in (Zone.ACTIVE, Zone.ARCHIVE, Zone.TRASH)
            assert zone_of(step.source) is not zone_of(step.destination)
        elif isinstance(step, Remove):
            assert_safe_relative(root, step.path)
            assert zone_of(step.path) is Zone.TRASH
        elif isinstance(step, WriteText):
            assert step.path in ("_index.md", "_archive/_index.md")
        elif isinstance(step, MakeDir):
            assert step.path in ("_archive", "_archive/_trash")


HYP = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@HYP
@given(raw=ANY_PATH)
def test_validate_target_never_accepts_anything_outside_or_protected(hostile, raw):
    root, _ = hostile
    try:
        rel = validate_target(root, raw)
    except Refusal as exc:
        assert exc.rule in (NOT_RELATIVE, OUTSIDE_ROOT, PROTECTED)
        assert exc.message
        return
    assert not must_be_refused(raw), f"{raw!r} was accepted as {rel!r}"
    assert_safe_relative(root, rel)
    assert not is_protected(rel)


@HYP
@given(raw=ANY_PATH)
def test_resolve_inside_never_returns_a_path_outside_the_root(hostile, raw):
    root, _ = hostile
    assume("\x00" not in raw)  # the OS cannot even name it; validate_relative refuses it first
    try:
        path = resolve_inside(root, raw)
    except Refusal as exc:
        assert exc.rule == OUTSIDE_ROOT
        return
    real_root = os.path.realpath(root)
    assert os.path.commonpath([real_root, os.path.realpath(path)]) == real_root


# What the hostile root still lets each operation do: (operation, path, where the file goes).
# Without them a contract that refused everything would pass the property below.
SAFE_PLANS = [
    ("archive", "projects/alpha.md", "_archive/projects/alpha.md"),
    ("delete", "projects/old.md", "_archive/_trash/projects/old.md"),
    ("delete", "_archive/projects/old.md", "_archive/_trash/projects/old.md"),
    ("recover", "projects/old.md", "projects/old.md"),
    ("recover", "notes/gone.md", "notes/gone.md"),
    ("recover", "_archive/_trash/notes/gone.md", "notes/gone.md"),
    ("purge", "notes/gone.md", None),
]


@pytest.mark.parametrize("op, raw, destination", SAFE_PLANS)
def test_the_hostile_root_still_plans_what_is_safe(hostile, op, raw, destination):
    root, _ = hostile
    plan = make_plan(context(root, TODAY), op, raw)
    assert_plan_safe(root, plan)
    moves = [step for step in plan.steps if isinstance(step, Move)]
    if destination is None:  # a purge removes the trashed file, and moves nothing
        assert moves == [] and [s.path for s in plan.steps if isinstance(s, Remove)] == ["_archive/_trash/notes/gone.md"]
    else:
        assert [m.destination for m in moves] == [destination]


@HYP
@given(raw=st.one_of(ANY_PATH, st.sampled_from([raw for _op, raw, _dest in SAFE_PLANS])))
def test_no_operation_plans_anything_unsafe(hostile, raw):
    root, _ = hostile
    ctx = context(root, TODAY)
    planned = []
    for op in OPS:
        try:
            plan = make_plan(ctx, op, raw)
        except Refusal:
            continue
        assert not must_be_refused(raw), f"{op} accepted {raw!r}"
        assert_plan_safe(root, plan)
        planned.append(op)
    # A known safe input is planned by its operation, whatever else the property tries.
    assert {op for op, safe, _dest in SAFE_PLANS if safe == raw} <= set(planned), (raw, planned)


@settings(max_examples=60, deadline=None)
@given(raw=hostile_paths().filter(must_be_refused))
def test_a_refused_path_changes_nothing_on_disk_even_with_yes(hostile, raw):
    root, base = hostile
    before = tree_digest(base)
    for op in OPS:
        out, err = io.StringIO(), io.StringIO()
        code = run_write(root, Request(op, raw, "why"), yes=True, stdin=io.StringIO(""), out=out, err=err)
        assert code == 2, (op, raw, out.getvalue())
        assert "refused" in err.getvalue()
    assert tree_digest(base) == before


# -- symlinks, by name ---------------------------------------------------------------
@pytest.mark.parametrize("raw", [
    "projects/out_link.md", "projects/out_dir/x.md", "projects/out_dir", "up/outside/secret.md", "up/memory/projects/alpha.md",
    "notes/in_link.md", "notes/in_dir/alpha.md", "notes/core_link/profile.md", "notes/core_file.md", "notes/index_link.md",
    "notes/loop.md", "notes/dangling.md", "_archive/projects/out.md", "_archive/_trash/projects/in.md", "_archive/linked/x.md",
])
def test_every_path_through_a_symlink_is_refused_by_every_operation(hostile, raw):
    root, base = hostile
    before = tree_digest(base)
    with pytest.raises(Refusal) as exc:
        validate_target(root, raw)
    assert exc.value.rule == OUTSIDE_ROOT
    for op in OPS:
        with pytest.raises(Refusal):
            make_plan(context(root, TODAY), op, raw)
    assert tree_digest(base) == before


# -- protected paths --------------------------------------------------------------------
PROTECTED_PATHS = ["_core", "_core/profile.md", "_core/preferences.md", "_core/sub/deep.md", "_core/new.md",
                   "_index.md", "_archive/_index.md", "_archive", "_archive/_trash", ".git/config", ".git",
                   "notes/.hidden.md", ".obsidian/workspace.md", "projects/.draft/x.md", "_archive/.git/config",
                   "_CORE/profile.md", "_Core/preferences.md", "_INDEX.md", "_Archive/_Index.md", "_ARCHIVE",
                   "_archive/_TRASH", "_Archive/_trash"]
DECORATIONS = ["{}", "./{}", "././{}", "{}/", "{}//", "./{}/"]


@settings(max_examples=150, deadline=None)
@given(base_path=st.sampled_from(PROTECTED_PATHS), decoration=st.sampled_from(DECORATIONS),
       double=st.booleans())
def test_protected_paths_are_refused_by_every_operation(hostile, base_path, decoration, double):
    root, _ = hostile
    raw = decoration.format(base_path.replace("/", "//") if double else base_path)
    with pytest.raises(Refusal) as exc:
        validate_target(root, raw)
    assert exc.value.rule == PROTECTED, exc.value.message
    for op in OPS:
        with pytest.raises(Refusal) as exc:
            make_plan(context(root, TODAY), op, raw)
        assert exc.value.rule == PROTECTED, (op, raw, exc.value.message)


def test_protected_paths_are_refused_through_the_cli_and_nothing_changes(hostile):
    root, base = hostile
    before = tree_digest(base)
    for raw in ("_core/profile.md", "_index.md", "_archive/_index.md", "_archive", "_archive/_trash", ".git/config"):
        for op in OPS:
            err = io.StringIO()
            assert run_write(root, Request(op, raw, None), yes=True, stdin=io.StringIO(""), out=io.StringIO(), err=err) == 2
            assert "protected-path" in err.getvalue()
    assert tree_digest(base) == before


@pytest.mark.parametrize("original", ["projects/evil-core.md", "projects/evil-index.md", "projects/evil-active.md",
                                      "projects/evil-outside.md", "projects/evil-hidden.md", "projects/out.md"])
def test_a_hostile_record_location_is_held_to_the_same_contract(hostile, original):
    """Records are text an agent may write: a `location:` into `_core/`, an index, an active
    file, outside the root or through a link must never become the source of a move."""
    root, base = hostile
    before = tree_digest(base)
    for op in ("delete", "recover", "purge"):
        with pytest.raises(Refusal):
            make_plan(context(root, TODAY), op, original)
        err = io.StringIO()
        assert run_write(root, Request(op, original, None), yes=True, stdin=io.StringIO(""), out=io.StringIO(), err=err) == 2
    assert tree_digest(base) == before


def test_a_hostile_record_original_is_never_a_recover_destination(hostile):
    root, _ = hostile
    with pytest.raises(Refusal) as exc:
        make_plan(context(root, TODAY), "recover", "_archive/projects/back-to-core.md")
    assert "_core/preferences.md" in exc.value.message


def test_genuine_archived_and_trashed_files_are_still_accepted(hostile):
    root, _ = hostile
    ctx = context(root, TODAY)
    for op, raw in (("delete", "projects/old.md"), ("recover", "projects/old.md"), ("recover", "notes/gone.md"),
                    ("purge", "notes/gone.md"), ("archive", "projects/alpha.md"), ("delete", "_archive/projects/old.md")):
        assert_plan_safe(root, make_plan(ctx, op, raw))


@pytest.mark.parametrize("raw,rule", [
    ("", NOT_RELATIVE), ("   ", NOT_RELATIVE), (".", NOT_RELATIVE), ("./", NOT_RELATIVE), (None, NOT_RELATIVE),
    (42, NOT_RELATIVE), (["projects/alpha.md"], NOT_RELATIVE),
    ("..", NOT_RELATIVE), ("projects/../../x.md", NOT_RELATIVE), ("projects/..", NOT_RELATIVE),
    ("/etc/passwd", NOT_RELATIVE), ("~", NOT_RELATIVE), ("~/x.md", NOT_RELATIVE), ("~root/x.md", NOT_RELATIVE),
    ("$HOME/x.md", NOT_RELATIVE), ("${HOME}/x.md", NOT_RELATIVE), ("%USERPROFILE%/x.md", NOT_RELATIVE),
    ("%userprofile%\\x.md", NOT_RELATIVE), ("C:", NOT_RELATIVE), ("C:\\x", NOT_RELATIVE), ("c:x.md", NOT_RELATIVE),
    ("\\\\host\\share", NOT_RELATIVE), ("//host/share/x.md", NOT_RELATIVE), ("projects\\alpha.md", NOT_RELATIVE),
    ("projects/alpha.md\x00", NOT_RELATIVE), ("projects/al\x00pha.md", NOT_RELATIVE), ("projects/alpha.md\n", NOT_RELATIVE),
    ("\x85projects/alpha.md", NOT_RELATIVE), ("projects/\u202ealpha.md", NOT_RELATIVE), (" projects/alpha.md", NOT_RELATIVE),
    ("projects\uff0falpha.md", NOT_RELATIVE), ("projects\u2215alpha.md", NOT_RELATIVE), ("\u2024\u2024/x.md", NOT_RELATIVE),
    ("\uff0e\uff0e/x.md", NOT_RELATIVE), ("projects/alpha\uff0emd", NOT_RELATIVE), ("C\uff1a/x.md", NOT_RELATIVE),
    ("projects\u2236alpha.md", NOT_RELATIVE), ("\u2025/x.md", NOT_RELATIVE), ("\u3002\u3002/x.md", NOT_RELATIVE),
    ("notes/\u3002\u3002/x.md", NOT_RELATIVE),
])
def test_point_one_rejections(raw, rule):
    with pytest.raises(Refusal) as exc:
        validate_relative(raw)
    assert exc.value.rule == rule


@pytest.mark.parametrize("raw,expected", [
    ("projects/alpha.md", "projects/alpha.md"), ("./projects/alpha.md", "projects/alpha.md"),
    ("projects//alpha.md", "projects/alpha.md"), ("projects/./alpha.md", "projects/alpha.md"),
    ("notes/会议 记录.md", "notes/会议 记录.md"), ("notes/café.md", "notes/café.md"), ("x/~/y.md", "x/~/y.md"),
])
def test_ordinary_relative_paths_are_normalised(raw, expected):
    assert validate_relative(raw) == expected


# -- valid paths are accepted ------------------------------------------------------------
SAFE_SEGMENT = st.text(alphabet="abcxyz019-_ éü会议", min_size=1, max_size=8).filter(
    lambda s: s == s.strip() and not s.startswith(("_", ".")))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(folders=st.lists(SAFE_SEGMENT, min_size=0, max_size=3), name=SAFE_SEGMENT,
       body=st.binary(min_size=0, max_size=64))
def test_archive_accepts_every_valid_active_path_and_moves_it_inside_the_root(folders, name, body):
    rel = "/".join([*folders, name + ".md"])
    with tempfile.TemporaryDirectory() as tmp:
        root = make_root(Path(tmp))
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = b"# T\n" + body
        path.write_bytes(data)
        plan = make_plan(context(root, TODAY), "archive", rel, "done")
        moves = plan.moves()
        assert moves == [Move(rel, "_archive/" + rel)]
        assert_plan_safe(root, plan)
        run_steps(root, plan)
        assert not os.path.lexists(path)
        assert (root / "_archive" / rel).read_bytes() == data
        assert f"- original: {rel}\n" in (root / "_archive/_index.md").read_text(encoding="utf-8")
        recover = make_plan(context(root, TODAY), "recover", rel)
        assert recover.moves() == [Move("_archive/" + rel, rel)]
        run_steps(root, recover)
        assert path.read_bytes() == data


@pytest.mark.parametrize("raw", ["notes/读书笔记：三体.md", "notes/计划。草稿.md"])
def test_cjk_punctuation_inside_a_name_is_allowed(raw):
    # Ordinary in Chinese and Japanese note names; only drive-like or dot-only uses are refused.
    assert validate_relative(raw) == raw


# -- no root inside a root ----------------------------------------------------------------
@pytest.mark.parametrize("inner", ["_archive", "_archive/_trash", "notes", "projects/sub"])
@pytest.mark.parametrize("op", ["save", "archive", "init", "upgrade"])
def test_a_folder_of_a_root_is_never_written_as_a_root(tmp_path, inner, op):
    """`--root ~/memory/_archive` would save "notes/x.md" into the archive past every zone rule
    (`_archive/` holds an `_index.md`, so it looks like a root): refused, nothing written."""
    root = make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})
    nested = root / inner
    nested.mkdir(parents=True, exist_ok=True)
    before = sorted(str(p) for p in root.rglob("*"))
    ctx = context(nested, dt.date(2026, 12, 2))
    with pytest.raises(Refusal) as refused:
        make_plan(ctx, op, "notes/x.md", "done", content=active_file("X"))
    assert refused.value.rule == "root-inside-root" and str(root) in refused.value.message
    assert sorted(str(p) for p in root.rglob("*")) == before


def test_an_archive_folder_above_a_root_does_not_make_it_nested(tmp_path):
    """A synced drive's own `_archive/` folder is common: only a folder that is clearly a root
    (an `_index.md` and `_core/` or `_archive/`) encloses another."""
    (tmp_path / "_archive").mkdir()
    root = make_root(tmp_path, {})
    plan = make_plan(context(root, dt.date(2026, 12, 2)), "save", "notes/x.md", content=active_file("X"))
    assert not plan.empty


def test_an_index_that_cannot_be_read_is_refused_as_unreadable_not_missing(tmp_path):
    """Unreadable is not missing: the refusal names what is wrong (it said `source-exists`)."""
    root = make_root(tmp_path, {"projects/alpha.md": active_file("Alpha")})
    (root / "_index.md").unlink()
    (root / "_index.md").mkdir()  # there, and no text can be read from it
    with pytest.raises(Refusal) as refused:
        make_plan(context(root, dt.date(2026, 12, 2)), "archive", "projects/alpha.md", "done")
    assert refused.value.rule == "readable" and "cannot be read" in refused.value.message
