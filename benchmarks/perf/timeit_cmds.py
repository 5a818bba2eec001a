"""Interleaved medians of several shell commands, for a shared, noisy machine: each round
runs every command once, in turn, so a drift in load hits all of them alike. Ratios are to
the first command.

    python benchmarks/perf/timeit_cmds.py ROUNDS 'label=command ...' ...
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def main() -> None:
    rounds = int(sys.argv[1])
    cmds = [spec.partition("=")[::2] for spec in sys.argv[2:]]
    times: dict[str, list[float]] = {label: [] for label, _ in cmds}
    for _ in range(rounds):
        for label, cmd in cmds:
            start = time.perf_counter()
            subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[label].append(time.perf_counter() - start)
    base = statistics.median(times[cmds[0][0]])
    for label, _ in cmds:
        median = statistics.median(times[label])
        print(f"{label:<28} median {median * 1000:8.1f} ms  min {min(times[label]) * 1000:8.1f} ms  "
              f"ratio {median / base:6.2f}x")


if __name__ == "__main__":
    main()
