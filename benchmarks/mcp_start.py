"""`pmem mcp` start → the tool list, as a client sees it (issue 43).

Codex's `codex exec` leaves out a server that has not listed its tools within about a second,
and headless Claude Code's first calls failed with "still connecting": the goal is the tool
list ≤ 300 ms after the spawn, on a 10k-file root. Measured for both protocol revisions the
server speaks: 2025-11-25 (`initialize`, `notifications/initialized`, `tools/list`) and
2026-07-28 (stateless: `server/discover`, then `tools/list` with the revision in `_meta`),
with and without a memory root, in interleaved rounds beside the interpreter's own start
(`python -c pass`), whose time a loaded machine shows too.

    python benchmarks/mcp_start.py ROOT [--runs 9] [--command 'pmem mcp']

`make bench` runs it on its 10k root (benchmarks/run.py, `mcp_listing`).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CLIENT_INFO = {"name": "bench", "version": "0"}
GOAL_MS = 300


def handshake(revision: str) -> list[dict[str, Any]]:
    """The messages a client sends up to its tool list, in `revision`."""
    if revision == "2026-07-28":
        meta = {"io.modelcontextprotocol/protocolVersion": revision,
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                "io.modelcontextprotocol/clientCapabilities": {}}
        return [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}]
    return [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": CLIENT_INFO}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}]


def time_to_list(command: list[str], messages: list[dict[str, Any]], env: dict[str, str]) -> tuple[float, float, int]:
    """(seconds to the first answer, seconds to the tool list, tools listed) for one start.
    Each message goes out once the one before it is answered, as a client sends them."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    first = listed = float("nan")
    count = 0
    try:
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" not in message:
                continue
            for line in proc.stdout:
                reply = json.loads(line)
                if reply.get("id") == message["id"]:
                    break
            else:
                return first, listed, count
            if message["id"] == 1:
                first = time.perf_counter() - start
            else:
                listed = time.perf_counter() - start
                count = len((reply.get("result") or {}).get("tools") or ())
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return first, listed, count


def measure(root: Path, runs: int, env: dict[str, str], command: list[str] | None = None,
            revisions: tuple[str, ...] = ("2025-11-25", "2026-07-28")) -> dict[str, Any]:
    """Medians in ms: `{revision}_{with_root|no_root}_first_ms` / `_list_ms`, `python_start_ms`."""
    command = command or [sys.executable, "-m", "pmem_lsp.mcp"]
    # The root goes in $PMEM_ROOT, as clients configure it (`pmem mcp` takes no --root after `mcp`).
    variants = {f"{rev}_{label}": ({**env, "PMEM_ROOT": str(where)}, handshake(rev))
                for rev in revisions
                for label, where in (("with_root", root), ("no_root", root.parent / "no-such-root"))}
    first: dict[str, list[float]] = {k: [] for k in variants}
    listed: dict[str, list[float]] = {k: [] for k in variants}
    tools: dict[str, int] = {}
    python: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=False)
        python.append(time.perf_counter() - start)
        for key, (variant_env, messages) in variants.items():
            a, b, n = time_to_list(command, messages, variant_env)
            first[key].append(a)
            listed[key].append(b)
            tools[key] = n
    out: dict[str, Any] = {"python_start_ms": statistics.median(python) * 1000, "runs": runs}
    for key in variants:
        out[f"{key}_first_ms"] = statistics.median(first[key]) * 1000
        out[f"{key}_list_ms"] = statistics.median(listed[key]) * 1000
        out[f"{key}_tools"] = tools[key]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--command", help="the server command (default: this interpreter's -m pmem_lsp.mcp)")
    parser.add_argument("--revisions", default="2025-11-25,2026-07-28")
    args = parser.parse_args()
    env = {**os.environ}
    command = shlex.split(args.command) if args.command else None
    result = measure(args.root, args.runs, env, command, tuple(args.revisions.split(",")))
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {args.runs} runs; goal ≤ {GOAL_MS} ms to the list")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
