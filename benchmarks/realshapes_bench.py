"""Per-file cost of a cold `pmem check` on real shapes beside the generated 10k root, and the
first ordinary run (it fills the caches) beside a cold one (issue 44).

    .venv/bin/python benchmarks/realshapes_bench.py [--rounds 5] [--files 2000] [--work DIR]
        [--shapes obsidian,journal,ja,zh,rules] [--json PATH]

Roots: the 10k root of `generate_root.py` and each shape of `generate_realnotes_scaled.py` at
about `--files` Markdown files. Every round runs every command once, in turn (a drift in load
hits them alike); between commands the script waits, outside the timing, for any cache writer
the last one left behind (`engine/cache_writer.py`'s lock), so no run pays for another's.

- **cold**: `pmem check --no-cache --format json`; wall and CPU (the process and its pool
  workers, from `getrusage`), each per Markdown file, beside the 10k root's (goal: ≤ 1.5×);
  and the same per file *beyond the start* — less a check of a three-file root in the same
  rounds (the interpreter, the imports): a root of 2,000 files spreads that over a fifth as
  many files as the 10k root, which alone makes its per-file cost look 1.1-1.3× higher;
- **first**: `pmem check --format json` with an empty cache folder (it stores the check cache
  and the per-file records), beside cold in the same rounds (goal: no slower).

Medians over the rounds; the load average is printed with them. A shared two-core machine is
noisy: read the ratios, and the CPU beside the wall.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate_realnotes_scaled import SHAPES  # noqa: E402
from generate_realnotes_scaled import generate as generate_scaled  # noqa: E402
from generate_root import generate as generate_root  # noqa: E402

PER_FILE_GOAL = 1.5  # a real shape's per-file cold cost ≤ this × the 10k root's


def pmem_command() -> list[str]:
    script = Path(sys.executable).parent / "pmem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pmem_lsp.cli.main"]


def _settle(cache: Path) -> None:
    """Wait until no cache writer forked by the last run still holds its record's lock."""
    for lock in glob.glob(f"{cache}/**/*.lock", recursive=True):
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        finally:
            os.close(fd)


def _run(cmd: list[str], env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


START = "start only"  # a root of three files: what every check pays before its first file


def _start_only(root: Path) -> Path:
    (root / "_core").mkdir(parents=True, exist_ok=True)
    (root / "_index.md").write_text("# Index\n\n- [Profile](_core/profile.md) — who the user is\n", encoding="utf-8")
    (root / "_core/profile.md").write_text("# Profile\n\n## Summary\n\n- A user.\n- Of pmem.\n- Here.\n",
                                           encoding="utf-8")
    (root / "_core/preferences.md").write_text("# Preferences\n\n- Short answers.\n", encoding="utf-8")
    return root


def roots(work: Path, shapes: list[str], files: int, big_root: Path | None = None) -> dict[str, Path]:
    """The start-only root, the generated 10k root (`big_root` when one is made already) and
    each shape at about `files` files, all under `work`."""
    out = {START: _start_only(work / "start-only"), "generated 10k": big_root or work / "root10k"}
    if not (out["generated 10k"] / "_index.md").exists():
        generate_root(out["generated 10k"], 10_000, 1)
    for shape in shapes:
        out[shape] = generate_scaled(work / f"real-{shape}", shape, files)
    return out


def measure(found: dict[str, Path], rounds: int, first: bool, cache: Path) -> dict:
    pmem = pmem_command()
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(rounds):
        for name, root in found.items():
            for label in ("cold", "first") if first else ("cold",):
                shutil.rmtree(cache, ignore_errors=True)
                env = {**os.environ, "PMEM_CACHE_DIR": str(cache), "XDG_CACHE_HOME": str(cache)}
                env.pop("PMEM_NO_CACHE", None)
                cmd = pmem + ["--root", str(root), "check", "--format", "json"]
                if label == "cold":
                    cmd.append("--no-cache")
                samples.setdefault((name, label), []).append(_run(cmd, env))
                _settle(cache)
    shutil.rmtree(cache, ignore_errors=True)
    results: dict[str, dict] = {}
    for name, root in found.items():
        files = sum(1 for _ in root.rglob("*.md"))
        cold = samples[(name, "cold")]
        row = {"files": files, "cold_wall_s": statistics.median(w for w, _ in cold),
               "cold_cpu_s": statistics.median(c for _, c in cold)}
        row["cold_wall_ms_per_file"] = row["cold_wall_s"] * 1000 / files
        row["cold_cpu_ms_per_file"] = row["cold_cpu_s"] * 1000 / files
        if first:
            firsts = samples[(name, "first")]
            row["first_wall_s"] = statistics.median(w for w, _ in firsts)
            row["first_cpu_s"] = statistics.median(c for _, c in firsts)
        results[name] = row
    # Per file beyond the start: a check of 2,000 files spreads the interpreter's start and the
    # imports (a third of a second) over a fifth as many files as the 10k root does.
    start = results[START]
    for row in results.values():
        row["beyond_start_wall_ms_per_file"] = (row["cold_wall_s"] - start["cold_wall_s"]) * 1000 / row["files"]
        row["beyond_start_cpu_ms_per_file"] = (row["cold_cpu_s"] - start["cold_cpu_s"]) * 1000 / row["files"]
    base = results["generated 10k"]
    for row in results.values():
        row["wall_per_file_ratio"] = row["cold_wall_ms_per_file"] / base["cold_wall_ms_per_file"]
        row["cpu_per_file_ratio"] = row["cold_cpu_ms_per_file"] / base["cold_cpu_ms_per_file"]
        row["beyond_start_wall_ratio"] = row["beyond_start_wall_ms_per_file"] / base["beyond_start_wall_ms_per_file"]
        row["beyond_start_cpu_ratio"] = row["beyond_start_cpu_ms_per_file"] / base["beyond_start_cpu_ms_per_file"]
    return results


def print_results(results: dict, load: str) -> None:
    print(load)
    print(f"{'root':14} {'files':>6} {'cold wall':>9} {'ms/file':>8} {'×10k':>5} {'cold CPU':>8} {'ms/file':>8} "
          f"{'×10k':>5} {'beyond start: wall ms/file':>26} {'×10k':>5} {'CPU ms/file':>11} {'×10k':>5} "
          f"{'first wall':>10} {'first/cold':>10}")
    for name, r in results.items():
        first = ""
        if "first_wall_s" in r:
            first = f"{r['first_wall_s']:>9.2f}s {r['first_wall_s'] / r['cold_wall_s']:>9.2f}×"
        print(f"{name:14} {r['files']:>6} {r['cold_wall_s']:>8.2f}s {r['cold_wall_ms_per_file']:>8.3f} "
              f"{r['wall_per_file_ratio']:>5.2f} {r['cold_cpu_s']:>7.2f}s {r['cold_cpu_ms_per_file']:>8.3f} "
              f"{r['cpu_per_file_ratio']:>5.2f} {r['beyond_start_wall_ms_per_file']:>26.3f} "
              f"{r['beyond_start_wall_ratio']:>5.2f} {r['beyond_start_cpu_ms_per_file']:>11.3f} "
              f"{r['beyond_start_cpu_ratio']:>5.2f} {first}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--work", type=Path, default=Path("/tmp/pmem-realshapes"))
    parser.add_argument("--no-first", action="store_true", help="time the cold checks only")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    found = roots(args.work, [s for s in args.shapes.split(",") if s], args.files)
    time.sleep(2.1)  # past the caches' racy window of the freshly generated roots
    results = measure(found, args.rounds, not args.no_first, args.work / "cache")
    load = "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print_results(results, load)
    if args.json:
        args.json.write_text(json.dumps({"load": load, "roots": results}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
