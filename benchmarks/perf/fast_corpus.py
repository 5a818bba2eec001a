"""The block scanner's fast path on a corpus of Markdown files: how many files it takes
whole, whether `scan_blocks` (fast path with hand-over) agrees with the full scanner on every
file, and the time per line of each (CPU, medians of 3 passes, in-process).

    python benchmarks/perf/fast_corpus.py ROOT [ROOT ...]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator

from pmem_lsp.engine.line_index import split_lines
from pmem_lsp.engine.markdown import _fast_scan, _Scanner, scan_blocks
from pmem_lsp.engine.memory_file import MemoryFile


def markdown_files(roots: list[str]) -> Iterator[str]:
    for root in roots:
        for folder, _, names in os.walk(root):
            yield from (os.path.join(folder, n) for n in names if n.endswith(".md"))


def main() -> None:
    docs = []
    for path in markdown_files(sys.argv[1:]):
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8-sig", "replace")
        start = MemoryFile(text).front_matter_end
        docs.append((path, split_lines(text)[start:], start))
    lines_in_all = sum(len(lines) for _, lines, _ in docs)
    taken = taken_lines = differ = 0
    for path, lines, first in docs:
        full = _Scanner(lines, first).run()
        if scan_blocks(lines, first) != full:
            differ += 1
            print("differs (scan_blocks):", path)
        fast = _fast_scan(lines, first)
        if fast is not None:
            taken += 1
            taken_lines += len(lines)
            if fast != full:
                differ += 1
                print("differs (fast path):", path)

    def cpu(fn: Callable[[list[str], int], object]) -> float:
        times = []
        for _ in range(3):
            start = time.process_time()
            for _, lines, first in docs:
                fn(lines, first)
            times.append(time.process_time() - start)
        return statistics.median(times)

    full_s = cpu(lambda lines, first: _Scanner(lines, first).run())
    fast_s = cpu(scan_blocks)
    print(f"{len(docs)} files, {lines_in_all} lines; the fast path takes {taken} whole "
          f"({taken_lines / max(1, lines_in_all):.0%} of lines); {differ} differ")
    print(f"full scanner {full_s * 1e6 / lines_in_all:.2f} µs/line ({full_s:.2f} s); scan_blocks "
          f"{fast_s * 1e6 / lines_in_all:.2f} µs/line ({fast_s:.2f} s); ×{full_s / fast_s:.1f}")


if __name__ == "__main__":
    main()
