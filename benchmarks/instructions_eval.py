"""What PM404 (instruction-injection) and PM208 (route-volatile) report on Markdown nobody
here wrote: every `.md`/`.mdx` file under the folders given, parsed as a memory file, each hit
printed with its file and line so a person can judge it (docs/decisions.md, "v0.9–v0.10
rules", has the figures and the judgement):

    python benchmarks/instructions_eval.py FOLDER [FOLDER ...]

For PM208, every list item that starts with a link or a path is read as if it were a route
line of `_index.md` (that is what tables of contents and link lists in docs look like).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pmem_lsp.engine.index_routes import parse_index
from pmem_lsp.engine.memory_file import MemoryFile
from pmem_lsp.engine.root_state import decode
from pmem_lsp.engine.rules.instructions import check_instructions
from pmem_lsp.engine.rules.route_facts import volatile_kinds
from pmem_lsp.engine.settings import Settings
from pmem_lsp.engine.zones import Zone


def main(folders: list[str]) -> int:
    files = lines = routes = 0
    pm404: list[str] = []
    pm208: list[str] = []
    settings = Settings()
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")):
            if path.suffix not in (".md", ".mdx") or not path.is_file():
                continue
            files += 1
            doc = MemoryFile(decode(path.read_bytes()))
            lines += len(doc.lines)
            for f in check_instructions(str(path), Zone.ACTIVE, doc, settings):
                pm404.append(f"{path}:{f.line + 1}: {doc.lines[f.line].strip()[:160]}")
            for route in parse_index(doc).routes:
                routes += 1
                found = volatile_kinds(route.description or "")
                if found:
                    pm208.append(f"{path}:{route.line + 1}: {[k for k, _ in found]} {route.description[:120]}")
    print(f"{files} files, {lines} lines, {routes} route-like list items")
    print(f"PM404: {len(pm404)} lines")
    print("\n".join(pm404))
    print(f"PM208: {len(pm208)} route-like items")
    print("\n".join(pm208))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
