"""Keystroke → diagnostics as the client sees it (issue 45), in the three patterns people type:

- `back_to_back`: each edit sent as soon as the previous edit's diagnostics arrived;
- `typist`: one edit every 80 ms (a typist's pace), whatever the server is doing;
- `burst`: 50 edits 10 ms apart (a paste, key repeat), then a pause.

A language client drives `pmem-lsp` over stdio on a generated root (10,000 files by default)
with a 20 KB note open; every edit is a full-text `didChange` that alternates the note's Summary
between four and two bullets, so every edit changes the diagnostics. An edit's latency is the
wall time from writing it on the server's stdin to reading the first `publishDiagnostics` of
the note whose version is that edit's or a later one (diagnostics that reflect it). Each
pattern runs with the native core and without it (`PMEM_NATIVE=0`); p50/p95/max beside the
goal (docs/design.md §7: ≤ 10 ms p95).

    python benchmarks/keystroke_bench.py [--work DIR] [--files 10000] [--edits 120] [--rounds 1]
                                         [--modes native,pure] [--patterns back_to_back,typist,burst]

`make bench` (run.py) calls `run()`; run alone, it prints the table and (`--json`) writes it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate_root import generate  # noqa: E402
from run import Client, note_20kb, percentile  # noqa: E402

GOAL_P95_MS = 10.0
PATTERNS = ("back_to_back", "typist", "burst")
TYPIST_GAP = 0.08  # seconds between a typist's keystrokes
BURST_EDITS, BURST_GAP = 50, 0.01  # a paste or key repeat


class Session:
    """One server over stdio with the bench note open and the root's scan landed."""

    def __init__(self, root: Path, env: dict, tree: Path | None = None) -> None:
        self.root = root
        self.note = root / "notes/bench-note.md"
        # The disk holds three bullets and the edits two or four: no edit is back in sync with
        # the disk, so every publication carries the version it was made from.
        self.note.write_text(note_20kb("Bench note", 3), encoding="utf-8")
        self.uri = self.note.as_uri()
        self.version = 1
        if tree is not None:  # another checkout's server, for a before/after in the same run
            env = {**env, "PYTHONPATH": str(tree)}
        self.client = Client([sys.executable, "-m", "pmem_lsp"], env=env, cwd=tree or Path("/tmp"))
        client = self.client
        rid = client.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": "bench"}],
            "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                             "workspace": {"configuration": True}}})
        client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": self.uri, "languageId": "markdown", "version": 1, "text": self.note.read_text(encoding="utf-8")}})
        index = (root / "_index.md").as_uri()  # the index's diagnostics come with the scan
        client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == index,
                    timeout=600)
        self.quiet(1.0)
        self.texts = (note_20kb("Bench note", 2), note_20kb("Bench note", 4))

    def quiet(self, seconds: float) -> None:
        """Let the server settle (the near-duplicate search after a pause), and forget what it sent."""
        time.sleep(seconds)
        while not self.client.inbox.empty():
            self.client.inbox.get()

    def edit(self) -> tuple[int, float]:
        """Send the next edit; its version and when it was written."""
        self.version += 1
        text = self.texts[self.version % 2]
        sent = time.perf_counter()
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": self.uri, "version": self.version},
                                                      "contentChanges": [{"text": text}]})
        return self.version, sent

    def reflected(self, versions: dict[int, float], arrivals: dict[int, float], until: float) -> None:
        """Read publications until `until` (perf_counter) or every sent version is reflected;
        record each version's arrival at the first publication of it or a later version."""
        import queue
        while len(arrivals) < len(versions):
            left = until - time.perf_counter()
            if left <= 0:
                return
            try:
                at, msg = self.client.inbox.get(timeout=left)
            except queue.Empty:
                return
            if msg.get("method") != "textDocument/publishDiagnostics" or msg["params"]["uri"] != self.uri:
                if "method" in msg and "id" in msg:  # a request from the server
                    self.client.send({"id": msg["id"], "result": None})
                continue
            version = msg["params"].get("version") or 0
            for v in versions:
                if v <= version and v not in arrivals:
                    arrivals[v] = at

    def close(self) -> None:
        self.client.close()
        self.note.unlink(missing_ok=True)


def back_to_back(session: Session, edits: int) -> list[float]:
    latencies = []
    for _ in range(edits):
        version, sent = session.edit()
        arrivals: dict[int, float] = {}
        session.reflected({version: sent}, arrivals, sent + 10)
        latencies.append((arrivals.get(version, float("inf")) - sent) * 1000)
    return latencies


def paced(session: Session, edits: int, gap: float) -> list[float]:
    """`edits` edits `gap` seconds apart on a monotonic schedule, publications read between them."""
    sent_at: dict[int, float] = {}
    arrivals: dict[int, float] = {}
    start = time.perf_counter()
    for k in range(edits):
        due = start + k * gap
        session.reflected(sent_at, arrivals, due)
        time.sleep(max(0.0, due - time.perf_counter()))  # everything so far arrived early
        version, sent = session.edit()
        sent_at[version] = sent
    session.reflected(sent_at, arrivals, time.perf_counter() + 10)
    return [(arrivals.get(v, float("inf")) - sent) * 1000 for v, sent in sent_at.items()]


def burst(session: Session, edits: int) -> list[float]:
    latencies: list[float] = []
    while len(latencies) < edits:
        latencies += paced(session, BURST_EDITS, BURST_GAP)
        session.quiet(0.3)
    return latencies


def summary(latencies: list[float]) -> dict:
    return {"edits": len(latencies), "p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95),
            "max_ms": max(latencies)}


def run(root: Path, edits: int = 120, modes: tuple[str, ...] = ("native", "pure"),
        patterns: tuple[str, ...] = PATTERNS, env: dict | None = None, tree: Path | None = None) -> dict:
    """{mode: {pattern: {edits, p50_ms, p95_ms, max_ms}}}; `pure` is `PMEM_NATIVE=0`. `tree`: the
    server of another checkout (its folder is put first on the server's path)."""
    base = {**(env or os.environ), "PMEM_NO_CACHE": "1"}
    out: dict = {}
    for mode in modes:
        session = Session(root, {**base, "PMEM_NATIVE": "0"} if mode == "pure" else base, tree)
        try:
            out[mode] = {}
            for pattern in patterns:
                session.quiet(1.0)
                if pattern == "back_to_back":
                    latencies = back_to_back(session, edits)
                elif pattern == "typist":
                    latencies = paced(session, edits, TYPIST_GAP)
                else:
                    latencies = burst(session, edits)
                out[mode][pattern] = summary(latencies)
        finally:
            session.close()
    return out


def rows(results: dict) -> list[tuple[str, str, str, str]]:
    names = {"back_to_back": "back to back", "typist": "a typist, 80 ms apart", "burst": "bursts of 50, 10 ms apart"}
    out = []
    for mode, patterns in results.items():
        for pattern, s in patterns.items():
            out.append((f"keystroke → diagnostics, {names[pattern]}, {mode}",
                        f"p50 {s['p50_ms']:.1f} / p95 {s['p95_ms']:.1f} / max {s['max_ms']:.1f} ms",
                        f"≤ {GOAL_P95_MS:.0f} ms p95", "met" if s["p95_ms"] <= GOAL_P95_MS else "not met"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "pmem-bench")
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--edits", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=1, help="repeat everything; each round printed")
    parser.add_argument("--modes", default="native,pure")
    parser.add_argument("--patterns", default=",".join(PATTERNS))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--before", type=Path, help="another checkout (a git worktree) measured in the same rounds")
    args = parser.parse_args()
    root = args.work / f"root-{args.files}"
    if not (root / "_index.md").exists():
        generate(root, args.files)
    rounds = []
    trees = {"before": args.before, "this tree": None} if args.before else {"this tree": None}
    for r in range(args.rounds):
        for name, tree in trees.items():  # interleaved: a drift in load hits both alike
            results = run(root, args.edits, tuple(args.modes.split(",")), tuple(args.patterns.split(",")), tree=tree)
            rounds.append({"round": r + 1, "tree": name, "load": os.getloadavg()[0], "results": results})
            print(f"round {r + 1}, {name}, load average {os.getloadavg()[0]:.2f}")
            for row in rows(results):
                print(" | ".join(row))
    if args.json:
        args.json.write_text(json.dumps(rounds, indent=2) + "\n")


if __name__ == "__main__":
    main()
