"""Timing of PM401's detector (`find_secrets`): median per ~20 KB note, and optionally on every
`.md` file of a root.

    python benchmarks/secrets_bench.py [ROOT] [--runs N]

Notes timed:
- typical: a ~20 KB memory note of English and Chinese prose, code blocks, tables and links,
  with the words "token", "password", "key" in prose and two planted secrets;
- dense: ~20 KB cut from the labelled evaluation set (a planted item every few lines);
- clean: ~20 KB of prose with none of the prefilter's literals (the prefilter's floor);
- drawing: the 1 MB one-line JSON of an Excalidraw note (`generate_realshaped.py`, issue 26).

Each with both gate engines (`engine/secrets/_gate.py`): pure, and compiled when hyperscan
(`pmem-lsp[fast]`) is installed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from generate_realshaped import megabyte_json_line  # noqa: E402
from pmem_lsp.engine.secrets import _gate, find_secrets  # noqa: E402
from secrets_eval import CODE, EN, TOKENS, ZH, generate, v_password  # noqa: E402

TARGET = 20 * 1024


def typical_note(seed: int = 7) -> list[str]:
    r = random.Random(seed)
    lines = ["# Billing migration", "", "Updated: 2025-03-14", "", "## Summary"]
    lines += ["- " + r.choice(EN) for _ in range(4)] + [""]
    planted = False
    while len("\n".join(lines).encode()) < TARGET:
        x = r.random()
        if x < 0.12:
            lines += [""] + r.choice(CODE) + [""]
        elif x < 0.2:
            lines += ["", "## " + r.choice(["Context", "Decisions", "Open questions", "背景", "决定"]), ""]
        elif x < 0.3:
            lines.append(f"- [{r.choice(['runbook', 'dashboard', 'design'])}](https://docs.internal.test/{r.randrange(1000)})")
        else:
            lines.append(r.choice(ZH if r.random() < 0.3 else EN))
        if not planted and len(lines) > 120:
            lines += ["", "- GitHub token: `" + TOKENS["GitHub token"](r) + "`", "- password: " + v_password(r), ""]
            planted = True
    return lines


def dense_note(seed: int = 401) -> list[str]:
    lines: list[str] = []
    for note in generate(seed, per_kind=3, neg_per_kind=4):
        lines += note.lines
        if len("\n".join(lines).encode()) >= TARGET:
            break
    return lines


def clean_note(seed: int = 3) -> list[str]:
    r = random.Random(seed)
    words = "the a billing service moved cluster latency dropped third retries caused duplicate charges we team".split()
    lines = []
    while len("\n".join(lines).encode()) < TARGET:
        lines.append(" ".join(r.choice(words) for _ in range(r.randint(6, 16))) + ".")
    return lines


def median_ms(lines: list[str], runs: int) -> float:
    find_secrets(lines)  # warm up (regex compilation is at import)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        find_secrets(lines)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _detect_secrets_ms(lines: list[str], runs: int) -> float:
    """detect-secrets 1.5 in-process, default plugins and filters, on one file."""
    import tempfile

    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "note.md"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        times = []
        with default_settings():
            for _ in range(runs):
                coll = SecretsCollection()
                t0 = time.perf_counter()
                coll.scan_file(str(path))
                times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", type=Path, help="time every .md file under this root too")
    ap.add_argument("--runs", type=int, default=300)
    args = ap.parse_args(argv)

    engines = ["pure"]
    try:
        _gate.choose("compiled")
        engines.append("compiled")
    except ImportError:
        print("(hyperscan is not installed: the pure gate only; pip install 'pmem-lsp[fast]')")
    notes = (("typical", typical_note()), ("dense", dense_note()), ("clean", clean_note()),
             ("drawing", [megabyte_json_line()]))
    for name, lines in notes:
        size = len("\n".join(lines).encode())
        for engine in engines:
            _gate.use(engine)
            ms = median_ms(lines, args.runs if name != "drawing" else max(5, args.runs // 20))
            print(f"{name:8} {engine:8} {size / 1024:7.1f} KB  {len(lines):4} lines  median {ms:.3f} ms  "
                  f"({ms * TARGET / size:.3f} ms per 20 KB)  {len(find_secrets(lines))} matches")
    _gate.use(None)

    try:
        from detect_secrets.core.scan import scan_line  # noqa: F401
    except ImportError:
        pass
    else:
        print(f"detect-secrets on the typical note: median {_detect_secrets_ms(typical_note(), 7):.1f} ms")

    if args.root:
        files = sorted(p for p in args.root.rglob("*.md") if p.is_file())
        texts = []
        for p in files:
            try:
                texts.append(p.read_text(encoding="utf-8", errors="replace").splitlines())
            except OSError:
                continue
        total = sum(len("\n".join(t).encode()) for t in texts)
        best = None
        for _ in range(3):
            t0 = time.perf_counter()
            found = sum(len(find_secrets(t)) for t in texts)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        print(f"root     {len(texts)} files, {total / 1024 / 1024:.1f} MB: {best * 1000:.0f} ms "
              f"(best of 3; {best / max(1, total) * TARGET * 1000:.3f} ms per 20 KB), {found} matches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
