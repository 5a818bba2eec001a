"""Phases of `pmem check` in one process (wall and CPU time), on ROOT:

    python benchmarks/perf/phases.py ROOT
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

T0, C0 = time.perf_counter(), time.process_time()


def lap(label: str, t: float, c: float) -> tuple[float, float]:
    print(f"{label:<36} wall {1000 * (time.perf_counter() - t):8.1f} ms  "
          f"cpu {1000 * (time.process_time() - c):8.1f} ms")
    return time.perf_counter(), time.process_time()


def main() -> None:
    from pmem_lsp.cli import main as _cli  # noqa: F401
    from pmem_lsp.engine.analysis import Analysis
    from pmem_lsp.engine.report import report_data, report_json
    from pmem_lsp.engine.root_state import RootState
    from pmem_lsp.engine.settings import resolve_settings

    gc.disable()  # as `pmem check` does (cli/main.py: the collector is off for a one-shot check)
    t, c = lap("imports (cli, analysis, report)", T0, C0)
    root = Path(sys.argv[1])
    state = RootState.scan(root, resolve_settings(root, {}))
    t, c = lap("scan + read + decode", t, c)
    for e in state.files.values():
        if e.text is not None and e.doc is not None:
            _ = e.doc  # (not `.lines`: with the core, a check splits the text of few files)
    t, c = lap("MemoryFile (the record, or split+blocks+preamble)", t, c)
    for e in state.files.values():
        if e.text is not None and e.doc is not None:
            _ = e.doc.links
    t, c = lap("doc.links", t, c)
    analysis = Analysis(state)
    t, c = lap("Analysis (rules, duplicates)", t, c)
    found = analysis.all()
    report_json(report_data(str(root), state.markdown_count(), found, state.read_problems()))
    lap("report JSON", t, c)
    print("findings", len(found))
    lap("TOTAL", T0, C0)


if __name__ == "__main__":
    main()
