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
