"""Hover and completion latency on a generated root (docs/design.md §7: hover ≤ 10 ms p95). A
measurement, not a test:

    python benchmarks/navigation_bench.py [--files 10000] [--work DIR] [--n 300]

Two views of the same requests:

- engine: the time `hover()` / `complete()` take on a scanned, analysed root state — warm
  (nothing changed since the last request) and, for completion, cold (the first request after
  the buffer changed, which parses the changed file again);
- server: round trips over stdio against the real server, like an editor — hover on routes,
  links and titles; completion right after typing in `_index.md` and in a note's link.

The generated index routes nearly every file (about 10k lines, ~1 MB): far past PM006's 200
lines, so anything that must re-read the index after an edit of it is at its worst here.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from generate_root import generate  # noqa: E402
from pmem_lsp.engine.analysis import analyze, by_path  # noqa: E402
from pmem_lsp.engine.navigation import complete, hover  # noqa: E402
from pmem_lsp.engine.root_state import RootState  # noqa: E402
from pmem_lsp.engine.settings import resolve_settings  # noqa: E402
from run import Client, percentile  # noqa: E402


def ms(samples: list[float]) -> str:
    return f"p50 {percentile(samples, 50):6.2f} ms   p95 {percentile(samples, 95):6.2f} ms   max {max(samples):7.2f} ms"


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def bench_engine(root: Path, n: int, rng: random.Random) -> None:
    state = RootState.scan(root, resolve_settings(root))
    findings = by_path(analyze(state))
    index = state.doc("_index.md")
    route_lines = [i for i, line in enumerate(index.lines) if line.startswith("- [")]
    notes = [rel for rel in state.files if rel.startswith("projects/") and rel.endswith(".md")]
    from pmem_lsp.engine.navigation.refs import link_target

    linked = [(rel, link) for rel in rng.sample(notes, 2000) for link in state.doc(rel).links
              if link_target(link, rel.rsplit("/", 1)[0]) in state.files]  # links to existing files

    print("engine (warm caches)")
    hover(state, "_index.md", route_lines[0], 4, findings)  # the index's routes are parsed once
    print("  hover on a route       ",
          ms([timed(lambda: hover(state, "_index.md", rng.choice(route_lines), 8, findings)) for _ in range(n)]))
    samples = []
    for _ in range(n):
        rel, link = rng.choice(linked)
        samples.append(timed(functools.partial(hover, state, rel, link.line, link.start + 1, findings)))
    print("  hover on a link        ", ms(samples))
    print("  hover on a title       ", ms([timed(lambda: hover(state, rng.choice(notes), 0, 3, findings))
                                           for _ in range(n)]))

    text = state.files["_index.md"].text
    cold, warm = [], []
    for k in range(max(20, n // 10)):
        partial = "".join(rng.choice("projectsnotegroup/-0123456789") for _ in range(k % 4))
        line = text + "- [New](" + partial
        state.set_buffer("_index.md", line)
        row = line.count("\n")
        char = len(line) - line.rfind("\n") - 1
        cold.append(timed(functools.partial(complete, state, "_index.md", row, char, findings)))
        warm.append(timed(functools.partial(complete, state, "_index.md", row, char, findings)))
    print("  completion, _index.md, first after an edit", ms(cold))
    print("  completion, _index.md, warm               ", ms(warm))
    cold, warm = [], []
    for _ in range(n):
        rel = rng.choice(notes)
        line = state.files[rel].text + "See [x](../" + rng.choice(["", "gr", "group-1", "group-12/it", "../notes/",
                                                                  "../notes/group-02/it"])
        state.set_buffer(rel, line)
        row = line.count("\n")
        char = len(line) - line.rfind("\n") - 1
        cold.append(timed(functools.partial(complete, state, rel, row, char, findings)))
        warm.append(timed(functools.partial(complete, state, rel, row, char, findings)))
    print("  completion in a link, first after an edit ", ms(cold))
    print("  completion in a link, warm                ", ms(warm))


def bench_server(root: Path, n: int, rng: random.Random) -> None:
    uri = lambda p: p.as_uri()  # noqa: E731
    client = Client([sys.executable, "-m", "pmem_lsp"])
    try:
        rid = client.request("initialize", {
            "processId": os.getpid(), "rootUri": uri(root), "workspaceFolders": [{"uri": uri(root), "name": "bench"}],
            "capabilities": {"general": {"positionEncodings": ["utf-16"]},
                             "textDocument": {"hover": {"contentFormat": ["markdown"]}}}})
        client.wait(lambda m: m.get("id") == rid)
        client.notify("initialized", {})
        client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri(root / "_index.md"), timeout=300)
        time.sleep(1.0)
        while not client.inbox.empty():
            client.inbox.get()

        def round_trip(method: str, params: dict) -> float:
            sent = time.perf_counter()
            rid = client.request(method, params)
            at, msg = client.wait(lambda m: m.get("id") == rid)
            assert "error" not in msg, msg
            return (at - sent) * 1000

        index = root / "_index.md"
        index_text = index.read_text(encoding="utf-8")
        lines = index_text.splitlines()
        route_lines = [i for i, line in enumerate(lines) if line.startswith("- [")]
        notes = sorted(p for p in (root / "projects").rglob("*.md"))
        print("server (stdio round trips)")
        for _ in range(3):  # warm-up: the first hover parses the index's routes
            round_trip("textDocument/hover", {"textDocument": {"uri": uri(index)},
                                              "position": {"line": route_lines[0], "character": 8}})
        print("  hover on a route       ", ms([round_trip("textDocument/hover", {
            "textDocument": {"uri": uri(index)}, "position": {"line": rng.choice(route_lines), "character": 8}})
            for _ in range(n)]))
        print("  hover on a title       ", ms([round_trip("textDocument/hover", {
            "textDocument": {"uri": uri(rng.choice(notes))}, "position": {"line": 0, "character": 3}})
            for _ in range(n)]))

        # Typing in _index.md, then asking for completion (the editor's own sequence).
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri(index), "languageId": "markdown",
                                                                "version": 1, "text": index_text}})
        time.sleep(1.5)
        samples = []
        for k in range(max(20, n // 10)):
            typed = "- [New](" + "projects/"[: k % 9]
            time.sleep(0.3)  # a pause in typing: the server's debounced analysis has run
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri(index), "version": k + 2},
                                                     "contentChanges": [{"text": index_text + typed}]})
            samples.append(round_trip("textDocument/completion", {
                "textDocument": {"uri": uri(index)}, "position": {"line": len(lines), "character": len(typed)}}))
        print("  completion, _index.md, right after typing", ms(samples), "(behind the index's re-analysis)")
        samples = []
        for k in range(max(20, n // 10)):
            typed = "- [Other](" + "projects/"[: k % 9]
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri(index), "version": 1000 + k},
                                                     "contentChanges": [{"text": index_text + typed}]})
            time.sleep(1.0)  # the server's analysis of the change has finished
            while not client.inbox.empty():
                client.inbox.get()
            samples.append(round_trip("textDocument/completion", {
                "textDocument": {"uri": uri(index)}, "position": {"line": len(lines), "character": len(typed)}}))
        print("  completion, _index.md, after the analysis", ms(samples))
        samples = []
        for k in range(n // 3):
            note = rng.choice(notes)
            text = note.read_text(encoding="utf-8")
            typed = "See [x](../" + ["", "gr", "group-12/it", "../notes/group-02/"][k % 4]
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri(note), "languageId": "markdown",
                                                                    "version": 1, "text": text + typed}})
            samples.append(round_trip("textDocument/completion", {
                "textDocument": {"uri": uri(note)}, "position": {"line": text.count("\n"), "character": len(typed)}}))
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri(note)}})
        print("  completion in a link, right after opening", ms(samples))
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "pmem-nav-bench")
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    root = args.work / f"root-{args.files}"
    if not (root / "_index.md").exists():
        generate(root, args.files)
    print(f"{args.files} files in {root}")
    bench_engine(root, args.n, random.Random(args.seed))
    bench_server(root, args.n, random.Random(args.seed))


if __name__ == "__main__":
    main()
