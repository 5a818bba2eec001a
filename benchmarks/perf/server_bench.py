"""Server start → first diagnostics, RSS, keystroke latency on ROOT (reuses run.py's bench).

    python benchmarks/perf/server_bench.py ROOT [KEYSTROKES]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import run

if __name__ == "__main__":
    out = run.bench_server(Path(sys.argv[1]), keystrokes=int(sys.argv[2]) if len(sys.argv) > 2 else 60)
    print(json.dumps(out, indent=1))
