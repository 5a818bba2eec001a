"""A lifecycle preview names files, and a file's name is bytes chosen by whoever made it: every
name in a preview goes through `names.shown`, so no name can forge a line of the preview the
user confirms (docs/decisions.md, "Any name, any output")."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmem_lsp.engine.lifecycle.fs_applier import run_steps
from pmem_lsp.engine.lifecycle.operations import context, make_plan
from pmem_lsp.engine.lifecycle.safety import Refusal
from pmem_lsp.engine.names import shown
from roots import base_files, demo_copy, summary_file, write_root

TODAY = dt.date(2026, 12, 1)
PLAIN = "plain-name"
FORGED = os.fsdecode(b"evil\n    projects\xe2\x88\x95fake.md:1 \xe2\x86\x92 x.md\nz")


def test_a_name_cannot_forge_a_line_of_the_archive_preview(tmp_path: Path):
    root = demo_copy(tmp_path / "memory")
    (root / f"notes/{FORGED}.md").write_text("# Evil\n\n[t](airflow-tips.md)\n")
    plan = make_plan(context(root, TODAY), "archive", "notes/airflow-tips.md", "r")
    lines = plan.preview.splitlines()
    assert not any(line.startswith(("    projects∕fake", "z.md")) for line in lines), plan.preview
    assert f"    {shown('notes/' + FORGED + '.md')}:3 → notes/airflow-tips.md" in lines
    assert "notes/evil\\x0a    projects∕fake.md:1 → x.md\\x0az.md:3" in plan.preview


# Any name a file may have in `notes/`: any text but `/` and NUL (control characters, line
# breaks and separators included), or any bytes, undecodable ones arriving as surrogates.
_TEXT = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1, max_size=16)
_BYTES = st.binary(min_size=1, max_size=16).filter(lambda b: b"/" not in b and b"\x00" not in b).map(os.fsdecode)
NAMES = st.one_of(_TEXT, _BYTES, st.sampled_from([FORGED, "a\rb", "a\u2028b", "a\x85b", "x\x1b[2Jy", "a\\nb"]))


def _previews(base: Path, name: str) -> dict[str, int]:
    """The line count of each preview that may name `notes/{name}.md`: the archive, delete and
    recover of a file it links to (before and after its archive), a save of a file named after
    it, and the archive of it itself. A request the safety contract refuses for its name gives
    no preview at all (nothing to forge) and no count."""
    root = base / "memory"
    files = base_files()
    files["notes/target.md"] = summary_file("Target")
    write_root(root, files)
    named = f"notes/{name}.md"
    out: dict[str, int] = {}
    try:
        (root / named).write_text(summary_file("Named", extra="[t](target.md) [a](../_archive/notes/target.md)\n"))
    except OSError:
        return out  # the file system does not take this name (too long, say)

    def count(key: str, op: str, path: str, **kw: object) -> None:
        try:
            plan = make_plan(context(root, TODAY), op, path, "done" if op == "archive" else None, **kw)  # type: ignore[arg-type]
        except Refusal:
            return
        out[key] = len(plan.preview.splitlines())
        if key in ("archive", "delete"):
            run_steps(root, plan)

    count("save", "save", f"notes/{name}-new.md", content="# New\n\nText.\n")
    count("self", "archive", named)
    count("archive", "archive", "notes/target.md")
    count("delete", "delete", "notes/target.md")
    count("recover", "recover", "notes/target.md")
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(NAMES)
def test_no_name_gives_a_preview_more_lines_than_a_plain_name_does(name: str):
    with tempfile.TemporaryDirectory() as plain_dir, tempfile.TemporaryDirectory() as named_dir:
        plain = _previews(Path(plain_dir), PLAIN)
        assert set(plain) == {"save", "self", "archive", "delete", "recover"}
        named = _previews(Path(named_dir), name)
        for op, count in named.items():
            assert count <= plain[op], (op, name)
