"""The MCP tools' reply bounds in process (issue 23): pages that hold everything between them,
a size bound that wins over `limit`, and clear notes."""

from __future__ import annotations

import json

import pytest

from pmem_lsp.mcp.tools import MAX_REPLY_CHARS, ToolFailure, paged, text_piece


def test_pages_cover_the_list_once_in_order():
    items = [{"n": i} for i in range(1234)]
    got, offset = [], 0
    while True:
        data = paged({"items": list(items)}, ("items",), "tool", "items", offset, 500)
        got += data["items"]
        page = data.get("page")
        if page is None or "next_offset" not in page:
            break
        assert page["total"] == 1234 and "offset" in page["note"]
        offset = page["next_offset"]
    assert got == items


def test_a_reply_that_holds_everything_has_no_page():
    data = paged({"items": [1, 2, 3]}, ("items",), "tool", "items")
    assert data == {"items": [1, 2, 3]}


def test_the_size_bound_wins_over_the_limit():
    items = [{"text": "x" * 5000, "n": i} for i in range(200)]
    data = paged({"items": items}, ("items",), "tool", "items", 0, 200)
    assert len(json.dumps(data)) <= MAX_REPLY_CHARS
    assert 1 <= data["page"]["returned"] < 200 and data["page"]["next_offset"] == data["page"]["returned"]


def test_offsets_past_the_end_and_bad_arguments():
    data = paged({"items": [1, 2]}, ("items",), "tool", "items", 5, 10)
    assert data["items"] == [] and "nothing from offset 5" in data["page"]["note"]
    for offset, limit in ((-1, None), ("3", None), (0, 0), (0, 5000), (True, None)):
        with pytest.raises(ToolFailure):
            paged({"items": [1]}, ("items",), "tool", "items", offset, limit)


def test_a_long_text_comes_in_pieces_that_join_to_it():
    text = "".join(chr(0x4E00 + i % 500) for i in range(150_000))
    pieces, offset = [], 0
    while True:
        piece, page = text_piece(text, offset, "memory_read")
        pieces.append(piece)
        if page is None or "next_offset" not in page:
            break
        offset = page["next_offset"]
    assert "".join(pieces) == text and len(pieces) == 3


def _big_index_root(tmp_path, routes: int):
    from roots import base_files, write_root

    files = base_files()
    files["_index.md"] = "# Memory index\n\n## Notes\n" + "".join(
        f"- [N{i}](notes/n{i}.md) — note {i} ends here\n" for i in range(routes))
    return write_root(tmp_path / "memory", files)


def test_memory_load_drops_the_route_cut_at_the_cap_and_says_the_index_was_cut(tmp_path):
    from pmem_lsp.engine.root_state import MAX_ANALYSED_BYTES
    from pmem_lsp.mcp.tools import load

    root = _big_index_root(tmp_path, 50_000)
    raw = (root / "_index.md").read_bytes()
    assert len(raw) > MAX_ANALYSED_BYTES
    whole = raw[:MAX_ANALYSED_BYTES].rsplit(b"\n", 1)[0].count(b"\n- [N")  # the route lines read whole
    first = load(root)
    index = first["index"]
    assert index["truncated"] is True and index["bytes"] == len(raw) and index["read"] == MAX_ANALYSED_BYTES
    assert "missing" in index["note"] and str(len(raw)) in index["note"]
    assert first["page"]["total"] == whole
    last = load(root, offset=whole - 3)
    routes = last["index"]["routes"]
    assert len(routes) == 3 and "next_offset" not in last["page"]
    assert all(r["description"].endswith("ends here") for r in routes), routes[-1]
    assert routes[-1]["path"] == f"notes/n{whole - 1}.md"


def test_memory_load_of_an_index_under_the_cap_says_nothing_of_a_cut(tmp_path):
    from pmem_lsp.mcp.tools import load

    index = load(_big_index_root(tmp_path, 10))["index"]
    assert "truncated" not in index and len(index["routes"]) == 10


def test_memory_read_says_a_huge_note_was_read_only_up_to_the_cap(tmp_path):
    from pmem_lsp.engine.root_state import MAX_ANALYSED_BYTES
    from pmem_lsp.mcp.tools import read
    from roots import base_files, write_root

    files = base_files()
    files["notes/huge.md"] = "# Huge\n\n" + "a line of the note that goes on\n" * 120_000
    root = write_root(tmp_path / "memory", files)
    size = (root / "notes/huge.md").stat().st_size
    assert size > MAX_ANALYSED_BYTES * 1.5
    first = read(root, "notes/huge.md", full=True)
    assert first["truncated"] is True and first["bytes"] == size and first["read"] == MAX_ANALYSED_BYTES
    assert str(size) in first["note"] and str(size - MAX_ANALYSED_BYTES) in first["note"]
    assert first["page"]["truncated"] is True and first["page"]["bytes"] == size
    total = first["page"]["total"]
    end = read(root, "notes/huge.md", full=True, offset=total - 10)
    assert "next_offset" not in end["page"] and "not where the file ends" in end["page"]["note"]
    past = read(root, "notes/huge.md", full=True, offset=total + 5)
    assert past["text"] == "" and f"nothing from offset {total + 5}" in past["page"]["note"]
    assert "last characters" not in past["page"]["note"]


def test_an_offset_past_the_end_of_a_text_says_there_is_nothing_there():
    piece, page = text_piece("x" * 70_000, 80_000, "memory_read")
    assert piece == "" and page is not None
    assert "nothing from offset 80000" in page["note"] and "70000 characters" in page["note"]


def test_memory_load_says_a_core_file_over_the_cap_is_read_only_up_to_it(tmp_path):
    from pmem_lsp.engine.root_state import MAX_ANALYSED_BYTES
    from pmem_lsp.mcp.tools import load
    from roots import base_files, write_root

    files = base_files()
    files["_core/profile.md"] = "# Profile\n\n" + "a line about the person\n" * 120_000
    root = write_root(tmp_path / "memory", files)
    size = (root / "_core/profile.md").stat().st_size
    row = next(r for r in load(root)["core"] if r["path"] == "_core/profile.md")
    assert row["truncated"] is True and row["bytes"] == size and row["read"] == MAX_ANALYSED_BYTES
    assert "memory_read" in row["note"] and str(size - MAX_ANALYSED_BYTES) in row["note"]
