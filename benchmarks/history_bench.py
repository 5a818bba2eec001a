"""History's cost on the generated 10k root (docs/design.md §11, issue 42): the first entry of a
new root, one change, a burst of 1,000 changes each recorded, a hook's one-file entry, and the
store's size after those 1,000 entries — with `history.days` pruning, which keeps at least the
last 50 entries, the bound. Run by `make bench`; prints a table and writes
benchmarks/history-results.json.

    python benchmarks/history_bench.py [--files 10000] [--burst 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from generate_root import generate  # noqa: E402
from pmem_lsp.engine.history.store import Writer, open_store  # noqa: E402


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--burst", type=int, default=1_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pmem-history-bench-") as tmp:
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        root = generate(Path(tmp) / "root", args.files)
        note = next(p for p in sorted((root / "projects").rglob("*.md")))
        rel = note.relative_to(root).as_posix()
        store = open_store(root)
        first = timed(lambda: store.record(Writer("outside"), "the root as it was"))
        unchanged = [timed(lambda: store.record(Writer("outside"), "nothing new")) for _ in range(5)]
        one = []
        for i in range(5):
            note.write_text(note.read_text(encoding="utf-8") + f"\nOne more line {i}.\n", encoding="utf-8")
            one.append(timed(lambda: store.record(Writer("outside"), "one change")))
        hook = []
        for i in range(5):
            note.write_text(note.read_text(encoding="utf-8") + f"\nA hook's line {i}.\n", encoding="utf-8")
            hook.append(timed(lambda: store.record_file(rel, Writer("agent", "Write · bench"), "one file")))
        start = time.perf_counter()
        for i in range(args.burst):
            note.write_text(note.read_text(encoding="utf-8") + f"\nBurst line {i}.\n", encoding="utf-8")
            store.record_file(rel, Writer("agent", "Edit · bench"), f"burst {i}")
        burst = time.perf_counter() - start
        loose = size_of(store.dir)
        # The store's repository is `repo.git` inside its folder (engine/history/git.py).
        subprocess.run(["git", f"--git-dir={store.git.git_dir}", "gc", "--quiet"], check=True, capture_output=True)
        packed = size_of(store.dir)
        root_bytes = sum(p.stat().st_size for p in root.rglob("*.md"))
    results = {
        "files": args.files, "root_bytes": root_bytes,
        "first_entry_s": round(first, 3),
        "no_change_ms": round(1000 * statistics.median(unchanged), 1),
        "one_change_ms": round(1000 * statistics.median(one), 1),
        "hook_one_file_ms": round(1000 * statistics.median(hook), 1),
        "burst": args.burst, "burst_s": round(burst, 2), "burst_per_entry_ms": round(1000 * burst / args.burst, 1),
        "store_bytes_after_burst": loose, "store_bytes_after_gc": packed,
        "load_average": os.getloadavg()[0],
    }
    print(f"history on {args.files} files ({root_bytes / 1e6:.1f} MB), load {results['load_average']:.1f}")
    print(f"  first entry of a new root   {results['first_entry_s']:8.3f} s")
    print(f"  nothing changed             {results['no_change_ms']:8.1f} ms")
    print(f"  one change (whole root)     {results['one_change_ms']:8.1f} ms")
    print(f"  a hook's one-file entry     {results['hook_one_file_ms']:8.1f} ms   (goal: within the hooks' 150/300 ms)")
    print(f"  burst of {args.burst} entries       {results['burst_s']:8.2f} s   "
          f"({results['burst_per_entry_ms']:.1f} ms each)")
    print(f"  store after the burst       {loose / 1e6:8.1f} MB loose, {packed / 1e6:.1f} MB after git gc")
    (HERE / "history-results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
