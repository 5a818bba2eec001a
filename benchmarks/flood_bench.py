"""The load test of issue 9 at full length: `didChange` at 200 per second on a 20 KB note for
10 seconds, a hover every 50 ms. A measurement, not a test (`make test` runs the same flood
for 4 s: tests/server/test_server_load.py, whose `run_flood` this reuses):

    python benchmarks/flood_bench.py [--seconds 10] [--json benchmarks/results.json]

Records hover p50/p95, the server's RSS at the start and the end of the flood (and once a
second), whether it stayed flat, the changes actually sent per second, and whether the final
diagnostics equal the engine's findings on the final text. `run.py` (`make bench`) calls
`run()`; run alone, this updates the `flood` entry of the JSON file and leaves the rest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "server")]  # roots.py; lsp_helpers.py, test_server_load.py
from lsp_helpers import SERVER, start  # noqa: E402
from test_server_load import flood_root, memory_verdict, run_flood  # noqa: E402


async def _flood(seconds: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="pmem-flood-") as tmp:
        root = flood_root(Path(tmp) / "memory")
        client = await SERVER.start()
        try:
            init = await start(client, root)
            result = await run_flood(client, root, init.capabilities.position_encoding or "utf-16", seconds=seconds)
            await client.shutdown_session()
        finally:
            await client.stop()
    out = result.summary()
    out["memory_note"] = memory_verdict(result.rss_mb)[1]
    out["hover_failure_examples"] = result.hover_failures[:5]
    if result.mismatch:
        out["mismatch"] = result.mismatch[:2000]
    return out


def run(seconds: float = 10.0) -> dict:
    return asyncio.run(_flood(seconds))


def report(s: dict) -> None:
    print(f"flood: {s['changes']} didChange in {s['duration_s']:.1f} s "
          f"(per second: {', '.join(map(str, s['changes_per_s']))}; worst send lag {s['max_send_lag_ms']} ms), "
          f"{s['hovers']} hovers, {s['toggles']} planted findings flipped")
    verdict = "ok" if s["hover_p95_ms"] is not None and s["hover_p95_ms"] <= 10 else "over the goal"
    print(f"  hover p50 {s['hover_p50_ms']} ms, p95 {s['hover_p95_ms']} ms (goal ≤ 10 ms: {verdict}), "
          f"max {s['hover_max_ms']} ms, unanswered or wrong: {s['hover_failures']}")
    print(f"  RSS {s['rss_start_mb']} → {s['rss_end_mb']} MB over the flood "
          f"({'flat' if s['memory_flat'] else 'GROWING: ' + s['memory_note']})")
    print(f"  server CPU {s['server_cpu_share']:.0%} of one core; final diagnostics {s['settle_ms']} ms after "
          f"the last change, {'equal to' if s['diagnostics_match'] else 'DIFFERENT from'} the engine's "
          f"findings on the final text ({', '.join(s['final_codes']) or 'none'})")


def main() -> None:
    parser = argparse.ArgumentParser(description="didChange flood with hovers (issue 9)")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", type=Path, default=HERE / "results.json")
    args = parser.parse_args()
    s = run(args.seconds)
    report(s)
    results = json.loads(args.json.read_text()) if args.json.exists() else {}
    results["flood"] = s
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {args.json} (the `flood` entry)")


if __name__ == "__main__":
    main()
