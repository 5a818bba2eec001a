"""Any name a file system allows goes through the whole lifecycle and comes back exactly
(issue 40): archive → recover → archive → delete → recover, through the engine's one door
(`execute` with a `Confirmed` plan), in both record dialects. Record paths (`location`,
`original`, `original_path`, the heading) are plain paths, never links, so `?`, `#` and `%`
are part of a name; the route line is written as a link that reads back as that name.

A name that is not UTF-8 (bytes the file system holds, Python's lone surrogates) goes the same
way: its route is a link with the exact bytes `%`-escaped (`notes/bad%FF.md`), its record
paths are written in `names.shown` form (`notes/bad\\xff.md`) and read back through
`names.unshown` (docs/decisions.md, "Any name through the lifecycle").

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
from pmem_lsp.engine.archive_index import PMEM, V010, record_text
from pmem_lsp.engine.index_edit import ANGLE, BARE, CODE_SPAN, LINK, WIKI, format_target, propose_route, reads_back
from pmem_lsp.engine.lifecycle.execute import Confirmed, execute
from pmem_lsp.engine.lifecycle.operations import context
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.safety import Refusal, validate_relative
from pmem_lsp.engine.names import shown
from pmem_lsp.engine.paths import normalize_target
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


def _byte_name(chunks: list[str | int]) -> str:
    """Text and single bytes 80–ff joined as bytes, read as the file system reads a name."""
    raw = b"".join(c.encode("utf-8") if isinstance(c, str) else bytes([c]) for c in chunks)
    return os.fsdecode(raw).strip()


# A name part that is not UTF-8: printable text with undecodable bytes between (a lone 0xff,
# a cut-off `é` as 0xc3, Latin-1 `é` as 0xe9 …). Bytes that happen to form UTF-8 read as text.
_UNDECODABLE = st.integers(min_value=0x80, max_value=0xFF)
BYTE_NAMES = st.lists(st.one_of(_SPECIAL, _PRINTABLE, _UNDECODABLE), min_size=1, max_size=10).filter(
    lambda chunks: any(isinstance(c, int) for c in chunks)).map(_byte_name).filter(
    lambda p: p and not p.startswith(".") and _contract_takes(p))


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
        # Created by its bytes, as another program would: no text encoding in between.
        fd = os.open(os.fsencode(root / rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return  # the file system does not take this name (too long, say)
    with os.fdopen(fd, "wb") as out:
        out.write(body)
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
            # (A name that is not UTF-8 is there in `names.shown` form: UTF-8 text cannot hold it.)
            assert record_text(rel) in reference_cli.records(archive_text) or dialect == PMEM, archive_text
    assert (root / rel).read_bytes() == body, "the file is back byte for byte"
    index = (root / "_index.md").read_text("utf-8", "surrogateescape")
    assert index.splitlines().count(route) == 1, index
    archive_text = (root / "_archive/_index.md").read_text("utf-8", "surrogateescape")
    assert f"{name}.md" not in archive_text and record_text(f"{name}.md") not in archive_text, "record gone"


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
# Fewer examples than printable names: the same five confirmed writes each, on top of those.
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=BYTE_NAMES)
@example(name=os.fsdecode(b"bad\xff name"))
@example(name=os.fsdecode(b"caf\xe9 100% ?#"))
@example(name=os.fsdecode(b"\xc3 [x] (y)"))
def test_a_name_that_is_not_utf8_survives_the_whole_lifecycle(dialect: str, name: str):
    with tempfile.TemporaryDirectory() as d:
        lifecycle(Path(d), name, dialect)


def test_a_route_reads_percent_escapes_as_the_bytes_of_a_name():
    """`%FF` is the byte 0xff (the name `bad\\xff.md`), not U+FFFD; UTF-8 escapes are text."""
    assert normalize_target("notes/bad%FF.md") == (os.fsdecode(b"notes/bad\xff.md"), None)
    assert normalize_target("notes/caf%C3%A9%20x.md") == ("notes/café x.md", None)
    assert normalize_target("notes/é%FF.md") == (os.fsdecode("notes/é".encode() + b"\xff.md"), None)


@pytest.mark.parametrize("dialect", [PMEM, V010])
def test_a_name_that_is_not_utf8_is_written_escaped_and_restored_exactly(tmp_path: Path, dialect: str):
    """The route is a link with the exact bytes; the record holds the shown form in every path
    field and the heading, and the route line as written; recover gives both back exactly."""
    files = base_files()
    files[".pmem.toml"] = f'dialect = "{dialect}"\n'
    files["_index.md"] += "\n## Notes\n- [Bad](notes/bad%FF%20name.md) — a note with a byte name\n"
    root = write_root(tmp_path / "memory", files)
    name = os.fsdecode(b"notes/bad\xff name.md")
    (root / "notes").mkdir()
    (root / name).write_bytes(b"# Bad\n")
    index_before = (root / "_index.md").read_bytes()
    assert _name_problems(root, name) == []
    _run(root, "archive", name)
    record = (root / "_archive/_index.md").read_text("utf-8")  # strict: the record is UTF-8 text
    heading, original = (("## ", "- original: ") if dialect == PMEM else ("### ", "- original_path: "))
    assert f"{heading}notes/bad\\xff name.md\n" in record and f"{original}notes/bad\\xff name.md\n" in record
    assert "[Bad](notes/bad%FF%20name.md) — a note with a byte name" in record
    assert dialect == V010 or "- location: _archive/notes/bad\\xff name.md\n" in record
    assert (root / "_archive" / name).read_bytes() == b"# Bad\n"
    _run(root, "recover", name)
    assert (root / "_index.md").read_bytes() == index_before
    assert (root / name).read_bytes() == b"# Bad\n"


@pytest.mark.parametrize("form", [BARE, WIKI, ANGLE, CODE_SPAN, LINK])
def test_a_route_to_a_name_that_is_not_utf8_is_always_a_link_with_its_bytes(form: str):
    """Only a link's `%` escapes carry bytes in UTF-8 text; a title made from the name (none
    given) shows the byte as U+FFFD, words for a person (the target is exact)."""
    path = os.fsdecode(b"notes/bad\xff name.md")
    assert format_target(form, path, "Bad") == "[Bad](notes/bad%FF%20name.md)"
    line = propose_route("", path, None, None, V010)
    assert line == "- [bad\ufffd name](notes/bad%FF%20name.md) — bad\ufffd name" and reads_back(line, path)
    line.encode("utf-8")  # writable into `_index.md`


def test_a_surrogate_that_stands_for_no_byte_is_refused():
    with pytest.raises(Refusal, match="stands for no byte"):
        validate_relative("notes/\ud800.md")
    with pytest.raises(Refusal, match="control characters"):  # bytes that decode to a C1 control (NEL)
        validate_relative(os.fsdecode(b"notes/\xc2") + "\udc85.md")


# A root-level note whose name begins as a home or environment alias does: `$top.md`, `~draft.md`.
_ALIAS_NAMES = st.tuples(st.sampled_from(["$", "~", "${", "$HOME", "~x"]), NAMES).map(lambda t: f"{t[0]}{t[1]}.md").filter(
    lambda rel: "/" not in rel)


@settings(max_examples=200, deadline=None)
@given(rel=_ALIAS_NAMES, form=st.sampled_from([LINK, BARE, CODE_SPAN, ANGLE, WIKI]))
@example(rel="$top.md", form=BARE)
@example(rel="~top two.md", form=LINK)
@example(rel="$? ?.md", form=LINK)  # found by hypothesis: `?` escaped, then a space
def test_a_root_note_named_like_an_alias_gets_a_route_that_reads_back(rel: str, form: str):
    """Every form reads `$top.md` or `~draft.md` as a home or environment alias, so the route is
    written `./$top.md` (docs/decisions.md, "Notes named like an alias"): it reads back as the
    root's file, and the contract takes that form, and says it when given the bare name."""
    target = format_target(form, rel, "Top")
    assert reads_back(f"- {target} — x", rel), target
    if form == BARE and reads_back(f"- ./{rel} — x", rel):  # a v0.10 root's own form, where it can hold it
        assert target == f"./{rel}", target
    assert validate_relative(f"./{rel}") == rel
    with pytest.raises(Refusal) as refused:
        validate_relative(rel)
    assert f"`./{rel}`" in str(refused.value), refused.value


def test_a_routed_root_note_named_like_an_alias_is_neither_unrouted_nor_missing(tmp_path: Path):
    files = base_files()
    names = ("$top.md", "~draft.md", "$top two.md")
    files["_index.md"] += "\n## Odd names\n" + "".join(f"- {format_target(LINK, n, 'Odd')} — odd\n" for n in names)
    for n in names:
        files[n] = summary_file("Odd")
    root = write_root(tmp_path / "memory", files)
    assert [(f.code, f.path) for f in findings(root) if f.code in NAME_CODES] == []
