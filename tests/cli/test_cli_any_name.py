"""Any name, any output; reads that stay inside; bounded status (issue 23), through `pmem` as a
subprocess: a name that is not UTF-8 is escaped in every format (never lost, never a
traceback) and routed, saved, archived and recovered exactly, a line break in a name or title
cannot add a line, a link out of the root is never read, and nothing recurses on deep folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from roots import base_files, remove_tree, summary_file, write_root

pytestmark = pytest.mark.e2e  # every test here runs `pmem` as a subprocess


def pmem(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=120, env={**os.environ, **(env or {})})


def bad_file(root: Path, name: bytes, text: str) -> None:
    full = os.path.join(os.fsencode(root), name)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as fh:
        fh.write(text.encode("utf-8"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_root(tmp_path / "memory", base_files())
    bad_file(root, b"notes/bad\xff name.md", "# Bad\n\nSome text.\n")
    return root


@pytest.mark.parametrize("lang", ["C.UTF-8", "C"])
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_an_undecodable_name_is_escaped_in_every_check_format(root: Path, fmt: str, lang: str):
    done = pmem("--root", str(root), "check", "--no-cache", "--format", fmt,
                env={"LC_ALL": lang, "PYTHONIOENCODING": ""})
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in done.stderr
    out = done.stdout.decode("utf-8")  # valid UTF-8, whatever the locale
    assert "\udcff" not in out and "\ufffd" not in out
    if fmt == "json":
        paths = {d["path"] for d in json.loads(out)["diagnostics"]}
        assert "notes/bad\\xff name.md" in paths
    elif fmt == "sarif":
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads(out)["runs"][0]["results"]}
        assert "notes/bad%FF%20name.md" in uris  # the exact bytes
    else:
        assert "notes/bad\\xff name.md" in out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_status_and_health_escape_undecodable_names(root: Path, fmt: str):
    for command in ("status", "health"):
        done = pmem("--root", str(root), command, "--format", fmt)
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
        out = done.stdout.decode("utf-8")
        assert "\udcff" not in out
        if command == "status":
            assert "notes/bad\\xff name.md" in (json.loads(out)["active"]["unrouted"] if fmt == "json" else out)


def test_a_line_break_in_a_name_or_a_title_adds_no_line_to_status(tmp_path: Path):
    files = base_files()
    files["_index.md"] += "- [Forged](notes/forged.md) — a\x0bb\x85c\u2028d\x1b[31m\n"
    files["notes/forged.md"] = summary_file("Forged")
    root = write_root(tmp_path / "memory", files)
    for name in (b"notes/x\nFORGED LINE.md", b"notes/y\rFORGED LINE.md"):
        bad_file(root, name, "# Note\n")
    clean = pmem("--root", str(write_root(tmp_path / "plain", base_files())), "status").stdout.decode()
    out = pmem("--root", str(root), "status").stdout.decode("utf-8")
    assert not any(line.startswith("FORGED") for line in out.splitlines()), out
    assert not any(c in out for c in "\r\x0b\x85\u2028\x1b")
    assert "notes/x\\x0aFORGED LINE.md" in out
    # One line per routed file more than the plain root: nothing else was added.
    assert len(out.splitlines()) == len(clean.splitlines()) + 2  # the new route, the not-routed line


OUTSIDE = "OUTSIDE-ONLY-LINE-9031"


@pytest.mark.parametrize("linked", ["_index.md", "_core/profile.md", "projects/alpha.md"])
def test_a_link_out_of_the_root_is_never_read(tmp_path: Path, linked: str):
    root = write_root(tmp_path / "memory", base_files())
    outside = tmp_path / "outside.md"
    outside.write_text(f"# {OUTSIDE}\n\n- [{OUTSIDE}](projects/alpha.md) — {OUTSIDE}\n", encoding="utf-8")
    (root / linked).unlink()
    (root / linked).symlink_to(outside)
    runs = [pmem("--root", str(root), "status"), pmem("--root", str(root), "status", "--format", "json"),
            pmem("--root", str(root), "check", "--no-cache", "--format", "json"),
            subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "save", "notes/new.md",
                            "--format", "json"], input=b"# New\n\nA note.\n", capture_output=True, timeout=120)]
    for done in runs:
        assert OUTSIDE.encode() not in done.stdout + done.stderr
        assert b"Traceback" not in done.stderr
    status = json.loads(runs[1].stdout)
    if linked == "_index.md":
        assert "leads out of the memory root" in status["indexError"]
    elif linked.startswith("_core/"):
        assert status["core"]["notRead"] == [{"path": linked, "note": status["core"]["notRead"][0]["note"]}]
    else:
        assert [r["note"] for r in status["routes"] if r["path"] == linked] == ["leaves the memory root"]


def test_status_reads_the_index_only_up_to_the_cap(tmp_path: Path):
    routes = "".join(f"- [Note {i}](notes/n{i}.md) — description {i} LATE-{i // 60000}\n" for i in range(70000))
    files = base_files()
    files["_index.md"] = "# Index\n\n" + routes + "- [Tail](notes/TAIL-ROUTE.md) — the last\n"
    root = write_root(tmp_path / "memory", files)
    assert (root / "_index.md").stat().st_size > 3 * 1024 * 1024
    done = pmem("--root", str(root), "status", "--format", "json")
    data = json.loads(done.stdout)
    assert data["indexTruncated"]["read"] == 2 * 1024 * 1024
    assert not any("TAIL-ROUTE" in r["path"] for r in data["routes"])
    text = pmem("--root", str(root), "status").stdout.decode()
    assert "only its first 2048.0 KB read" in text


def test_deep_folders_raise_no_recursion_error(tmp_path: Path):
    root = write_root(tmp_path / "memory", base_files())
    depth = 1900
    fd = os.open(root, os.O_RDONLY)
    try:  # made with folder descriptors: the whole path is never spelled out
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        note = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(note, b"# Deep\n")
        os.close(note)
    finally:
        os.close(fd)
    rel = "/".join(["d"] * depth) + "/deep.md"
    try:
        for args in (("check", "--no-cache"), ("check",), ("status",), ("health",), ("archive", rel, "--yes"),
                     ("recover", rel, "--yes")):
            done = pmem("--root", str(root), *args)
            assert b"RecursionError" not in done.stderr and b"Traceback" not in done.stderr, \
                (args, done.stderr[-500:])
            assert done.returncode in (0, 1), (args, done.stderr[-500:])
        assert (root / rel).is_file()
    finally:  # pytest's own clean-up of old temporary folders recurses per level
        remove_tree(root / "d")
        remove_tree(root / "_archive/d")


def _tree(root: Path) -> dict[bytes, bytes]:
    out = {}
    for folder, _dirs, files in os.walk(os.fsencode(root)):
        for name in files:
            with open(os.path.join(folder, name), "rb") as fh:
                out[os.path.join(folder, name)] = fh.read()
    return out


def _pmem_bytes(root: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """`pmem` with arguments that may hold a name that is not UTF-8 (passed as its bytes)."""
    return subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), *args],
                          input=stdin, capture_output=True, timeout=120)


@pytest.mark.parametrize("dialect", ["pmem", "v0.10"])
def test_an_undecodable_name_is_routed_archived_and_recovered_exactly(root: Path, dialect: str):
    """Its route is a link with the exact bytes (`%FF`), its record holds the shown name
    (`bad\\xff`), and recover gives the file and the route line back exactly
    (docs/decisions.md, "Any name through the lifecycle")."""
    (root / ".pmem.toml").write_text(f'dialect = "{dialect}"\n', encoding="utf-8")
    name = os.fsdecode(b"notes/bad\xff name.md")
    content = (root / name).read_bytes()
    routed = _pmem_bytes(root, "route", "add", name, "--yes")
    assert routed.returncode == 0, routed.stderr
    index = (root / "_index.md").read_text("utf-8")  # strict: the index stays UTF-8 text
    assert "](notes/bad%FF%20name.md)" in index, index

    archived = _pmem_bytes(root, "archive", name, "--reason", "done", "--yes")
    assert archived.returncode == 0, archived.stderr
    assert b"Archive notes/bad\\xff name.md" in archived.stdout and b"Traceback" not in archived.stderr
    record = (root / "_archive/_index.md").read_text("utf-8")
    assert "notes/bad\\xff name.md" in record and "%FF%20name.md)" in record, record
    assert (root / "_archive" / name).read_bytes() == content and not os.path.lexists(root / name)

    recovered = _pmem_bytes(root, "recover", name, "--yes")
    assert recovered.returncode == 0, recovered.stderr
    assert (root / name).read_bytes() == content
    assert (root / "_index.md").read_text("utf-8") == index
    assert "bad" not in (root / "_archive/_index.md").read_text("utf-8")
    checked = _pmem_bytes(root, "check", "--no-cache", "--format", "json")
    codes = {d["code"] for d in json.loads(checked.stdout)["diagnostics"]}
    assert not codes & {"PM201", "PM202", "PM301", "PM302"}, codes


def test_an_undecodable_name_is_saved_and_routed(root: Path):
    name = os.fsdecode(b"notes/new\xfe.md")
    saved = _pmem_bytes(root, "save", name, "--yes", stdin=b"# New\n\nWords.\n")
    assert saved.returncode == 0, saved.stderr
    assert (root / name).read_bytes() == b"# New\n\nWords.\n"
    assert "](notes/new%FE.md)" in (root / "_index.md").read_text("utf-8")


def test_a_name_whose_bytes_read_as_a_control_character_is_refused(root: Path):
    """A path that decodes to a control character (`\\xc2\\x85` is NEL) is still refused."""
    before = _tree(root)
    done = _pmem_bytes(root, "save", os.fsdecode(b"notes/x\xc2\x85.md"), "--yes", stdin=b"# X\n")
    assert done.returncode == 2, done.stderr
    assert b"control characters" in done.stderr and b"Traceback" not in done.stderr
    assert _tree(root) == before


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_huge_save_previews_its_size_head_and_tail(tmp_path: Path, fmt: str):
    root = write_root(tmp_path / "memory", base_files())
    content = "# Huge\n\n" + "".join(f"Paragraph {i} of plain words.\n" for i in range(200000)) + "THE-END\n"
    done = subprocess.run([sys.executable, "-m", "pmem_lsp.cli.main", "--root", str(root), "save", "notes/huge.md",
                           "--format", fmt], input=content.encode(), capture_output=True, timeout=300)
    assert done.returncode == 3, done.stderr[-400:]  # a preview, nothing written
    out = done.stdout.decode("utf-8")
    assert len(out) < 40_000 < len(content)
    assert "MiB" in out and "# Huge" in out and "THE-END" in out and "Paragraph 100000 " not in out
    assert not (root / "notes/huge.md").exists()


def test_a_file_name_cannot_forge_a_line_of_an_archive_preview(tmp_path: Path):
    from roots import demo_copy

    root = demo_copy(tmp_path / "memory")
    bad_file(root, b"notes/evil\n    projects\xe2\x88\x95fake.md:1 \xe2\x86\x92 x.md\nz.md", "[t](airflow-tips.md)\n")
    out = pmem("--root", str(root), "archive", "notes/airflow-tips.md", "--reason", "r")
    lines = out.stdout.decode().splitlines()
    assert lines and lines[0] == "Archive notes/airflow-tips.md", out.stdout + out.stderr
    assert not any(line.startswith(("    projects∕fake", "z.md")) for line in lines), out.stdout.decode()
    assert "    notes/evil\\x0a    projects∕fake.md:1 → x.md\\x0az.md:1 → notes/airflow-tips.md" in lines
    data = json.loads(pmem("--root", str(root), "archive", "notes/airflow-tips.md", "--reason", "r",
                           "--format", "json").stdout)
    assert "\nz.md" not in data["preview"] and len(data["preview"].splitlines()) == len(lines)


# -- invisible formatting characters: two names never look alike in a terminal ----------------

LOOKALIKES = {"notes/\u202edm.txt.md": "notes/\\u202edm.txt.md", "notes/a\u2066b\u2069.md": "notes/a\\u2066b\\u2069.md",
              "notes/\u200fright.md": "notes/\\u200fright.md", "notes/ar\u061cabic.md": "notes/ar\\u061cabic.md",
              "notes/zero\u200bwidth.md": "notes/zero\\u200bwidth.md"}


def test_bidi_and_invisible_characters_in_names_are_escaped_in_text_and_exact_in_json(tmp_path: Path):
    """check and status print a name holding a right-to-left override, an isolate, a direction
    mark or a zero-width space escaped, so that it cannot pass for another name; JSON keeps it
    exact. A zero-width joiner (emoji, Persian) stays as written."""
    root = write_root(tmp_path / "memory", base_files())
    (root / "notes").mkdir(exist_ok=True)
    for name in [*LOOKALIKES, "notes/👩\u200d💻.md"]:
        (root / name).write_text("# Note\n\nSome text.\n", encoding="utf-8")
    text = pmem("--root", str(root), "check", "--no-cache").stdout.decode("utf-8")
    status = pmem("--root", str(root), "status").stdout.decode("utf-8")
    data = json.loads(pmem("--root", str(root), "check", "--no-cache", "--format", "json").stdout)
    json_paths = {d["path"] for d in data["diagnostics"]}
    for name, escaped in LOOKALIKES.items():
        assert escaped in text, text
        assert name not in text and name not in status
        assert name in json_paths
    assert "notes/👩\u200d💻.md" in text
