"""Any name a file system allows goes through the whole lifecycle and comes back exactly
(issue 40): archive → recover → archive → delete → recover, through the engine's one door
(`execute` with a `Confirmed` plan), in both record dialects. Record paths (`location`,
`original`, `original_path`, the heading) are plain paths, never links, so `?`, `#` and `%`
are part of a name; the route line is written as a link that reads back as that name.

A name with a part that starts with `.` is hidden (docs/design.md §3, point 4) and refused
with a message that names that part (docs/decisions.md, "Any name through the lifecycle")."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import reference_cli
from engine_helpers import findings
from pmem_lsp.engine.archive_index import PMEM, V010
from pmem_lsp.engine.index_edit import LINK, format_target
from pmem_lsp.engine.lifecycle.execute import Confirmed, execute
from pmem_lsp.engine.lifecycle.operations import context
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.safety import Refusal, validate_relative
from pmem_lsp.engine.names import shown
from roots import base_files, summary_file, write_root

TODAY = dt.date(2026, 12, 1)
# What a lifecycle leaves wrong about a file when it reads its name wrong.
NAME_CODES = {"PM201", "PM202", "PM301", "PM302"}

# A name part: any printable text but `/` and `\` (the safety contract refuses a backslash and
# control characters, and a name that starts or ends with white space), with the characters
# that a link reader takes for syntax made frequent: `?`, `#`, `%`, brackets, spaces, CJK.
_SPECIAL = st.sampled_from(list("?#%[]() <>`*_!&'\"~:;,=+") + ["%3F", "%20", "%23", "表达式", "目录", "é"])
_PRINTABLE = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Co", "Cn"), blacklist_characters="/\\")


def _contract_takes(name: str) -> bool:
    """The safety contract's point 1 takes `notes/{name}.md` (it refuses format characters and
    look-alikes of `/`, `.` and `:`, which no lifecycle then sees)."""
    try:
        validate_relative(f"notes/{name}.md")
    except Refusal:
        return False
    return True


_PART = st.lists(st.one_of(_SPECIAL, _PRINTABLE), min_size=1, max_size=10).map("".join).map(str.strip).filter(
    lambda p: p and not p.startswith(".") and _contract_takes(p))
NAMES = _PART


def _route(rel: str) -> str:
    return f"- {format_target(LINK, rel, 'Named note')} — a note with an unusual name"


def _run(root: Path, op: str, path: str) -> str:
    """Plan `op`, carry it out as confirmed, and return the preview the user confirmed."""
    request = Request(op, path, "done" if op == "archive" else None)
    plan = request.plan(context(root, TODAY))
    execute(root, Confirmed(request, plan), today=TODAY)
    return plan.preview


def _name_problems(root: Path, rel: str) -> list[tuple[str, str, str]]:
    """Findings that show a lifecycle misread `rel`: on the file, or on a record or route."""
    return [(f.code, f.path, f.message) for f in findings(root) if f.code in NAME_CODES]


def lifecycle(base: Path, name: str, dialect: str) -> None:
    rel = f"notes/{name}.md"
    files = base_files()
    files[".pmem.toml"] = f'dialect = "{dialect}"\n'
    route = _route(rel)
    files["_index.md"] += f"\n## Notes\n{route}\n"
    root = write_root(base / "memory", files)
    (root / "notes").mkdir(exist_ok=True)
    body = summary_file("Named note").encode("utf-8")
    try:
        (root / rel).write_bytes(body)
    except OSError:
        return  # the file system does not take this name (too long, say)
    assert _name_problems(root, rel) == [], "the root is clean before"
    steps = (("archive", rel), ("recover", f"_archive/{rel}"), ("archive", rel), ("delete", rel), ("recover", rel))
    for op, path in steps:
        preview = _run(root, op, path)
        # The preview names the file as it is (escaped only where `shown` must), never a misread name.
        assert f"{op.capitalize()} {shown(rel)}" in preview, preview
        if op == "recover":
            assert "restore the saved route line exactly" in preview and f"    {shown(route)}" in preview, preview
        assert _name_problems(root, rel) == [], (op, (root / "_archive/_index.md").read_text("utf-8", "surrogateescape"))
        archive_text = (root / "_archive/_index.md").read_text("utf-8", "surrogateescape")
        if op in ("archive", "delete"):
            # Both readers find the record by its original path.
            assert rel in reference_cli.records(archive_text) or dialect == PMEM, archive_text
    assert (root / rel).read_bytes() == body, "the file is back byte for byte"
    index = (root / "_index.md").read_text("utf-8", "surrogateescape")
    assert index.splitlines().count(route) == 1, index
    assert f"{name}.md" not in (root / "_archive/_index.md").read_text("utf-8", "surrogateescape"), "record gone"


@pytest.mark.parametrize("dialect", [PMEM, V010])
# 30 names per dialect: each runs five confirmed writes (every one fsynced) and six checks.
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=NAMES)
@example(name="Rust ?")
@example(name="# Lambda表达式")
@example(name="100% a%41b")
@example(name="a [b] (c)")
@example(name="x #y ?z")
def test_any_name_survives_the_whole_lifecycle(dialect: str, name: str):
    with tempfile.TemporaryDirectory() as d:
        lifecycle(Path(d), name, dialect)


def test_a_dot_part_makes_a_file_hidden_and_the_refusal_says_which(tmp_path: Path):
    files = base_files()
    files["notes/.d目录.md"] = summary_file("Dotted")
    root = write_root(tmp_path / "memory", files)
    with pytest.raises(Refusal) as refused:
        _run(root, "archive", "notes/.d目录.md")
    assert "hidden (`.d目录.md` starts with `.`)" in refused.value.message
    assert (root / "notes/.d目录.md").is_file()


@pytest.mark.parametrize("dialect", [PMEM, V010])
def test_a_name_that_is_not_utf8_is_refused_and_nothing_changes(tmp_path: Path, dialect: str):
    """The indexes are UTF-8 text, so no route or record can hold such a name: every operation
    refuses it with the reason, before anything moves (docs/decisions.md, "Any name")."""
    files = base_files()
    files[".pmem.toml"] = f'dialect = "{dialect}"\n'
    root = write_root(tmp_path / "memory", files)
    name = os.fsdecode(b"notes/bad\xff name.md")
    (root / "notes").mkdir()
    (root / name).write_bytes(b"# Bad\n")
    before = {p: (root / p).read_bytes() for p in ("_index.md", "_archive/_index.md")}
    with pytest.raises(Refusal) as refused:
        _run(root, "archive", name)
    assert "not valid UTF-8" in refused.value.message and "rename the file first" in refused.value.message
    assert {p: (root / p).read_bytes() for p in before} == before
    assert (root / name).is_file()
