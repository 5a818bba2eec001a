"""The server does not keep parsed documents of files read from disk (issue 18: RSS on a
10k-file root); editor buffers keep theirs, and a small LRU serves repeated asks."""

from __future__ import annotations

from pmem_lsp.engine import root_state
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.root_state import FileEntry, keep_disk_docs
from pmem_lsp.engine.zones import Zone

TEXT = "# A\n\n## Summary\n- one\n\n[x](b.md)\n"


def test_disk_documents_go_to_the_lru_and_buffers_keep_theirs():
    keep_disk_docs(False)
    try:
        disk = FileEntry("notes/a.md", Zone.ACTIVE, len(TEXT), 0.0, text=TEXT)
        buffer = FileEntry("notes/b.md", Zone.ACTIVE, len(TEXT), 0.0, text=TEXT, from_buffer=True)
        doc = disk.doc
        assert doc is not None and disk._doc is None
        assert disk.doc is doc  # asked again while recent: the same document
        assert [ln.target for ln in doc.links] == [ln.target for ln in MemoryFile(TEXT).links]
        assert buffer.doc is not None and buffer._doc is buffer.doc
        others = [FileEntry(f"n/{i}.md", Zone.ACTIVE, 1, 0.0, text=f"# {i}\n") for i in range(root_state.RECENT_DOCS)]
        for entry in others:
            assert entry.doc is not None
        assert len(root_state._recent) == root_state.RECENT_DOCS
        again = disk.doc  # pushed out: parsed again, to the same result
        assert again is not doc and again is not None and again.lines == doc.lines
    finally:
        keep_disk_docs(True)
    kept = FileEntry("notes/c.md", Zone.ACTIVE, len(TEXT), 0.0, text=TEXT)
    assert kept.doc is kept._doc and not root_state._recent
