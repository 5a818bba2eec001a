"""Precision of `pmem check` on the real-shaped fixture roots (docs/precision.md, issue 44).

    .venv/bin/python benchmarks/precision.py [--markdown] [--json PATH]

Builds every root of `tests/engine/realnotes.py` (the same builders as
tests/engine/test_real_notes.py) in a temporary folder, runs `pmem check --no-cache --format
json` on each as a user would, and compares the findings with what the fixture plants:

- a finding that matches a planted one (same path and rule, and the same line where the
  fixture names it) is *true*; each planted finding matches at most one;
- any other finding is *false* — a false alarm — except PM100 (a hint on every legacy file)
  and PM501 (staleness: it depends on today's date), which the fixtures do not label: they are
  counted as "unlabelled" and left out of precision;
- a planted finding nothing matched is a *miss*.

Printed: per fixture and rule, per fixture and severity, and the totals, with precision
(true / (true + false)) and recall (true / planted). `--markdown` prints the tables
docs/precision.md carries. The roots are deterministic, so the figures change only when the
engine or the fixtures do.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "engine"))
import realnotes as rn  # noqa: E402

UNLABELLED = rn.UNLABELLED  # the fixtures plant neither
FIXTURES = rn.BUILDERS


def pmem_command() -> list[str]:
    script = Path(sys.executable).parent / "pmem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pmem_lsp.cli.main"]


def check(root: Path) -> list[dict]:
    done = subprocess.run(pmem_command() + ["--root", str(root), "check", "--no-cache", "--format", "json"],
                          capture_output=True, text=True, check=False, timeout=600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"pmem check failed on {root}: {done.stderr}")
    return json.loads(done.stdout)["diagnostics"]


def judge(real: rn.RealRoot, diagnostics: list[dict]) -> dict:
    """Each finding judged true, false or unlabelled against the planted ones; the misses."""
    from pmem_lsp.engine.report import shown_path

    unmatched = list(real.planted)
    rows = []
    for d in diagnostics:
        if d["code"] in UNLABELLED:
            rows.append((d["code"], d["severity"], "unlabelled"))
            continue
        hit = next((p for p in unmatched if shown_path(p.path) == d["path"] and p.code == d["code"]
                    and (p.line is None or p.line + 1 == d["line"])), None)
        if hit is not None:
            unmatched.remove(hit)
        rows.append((d["code"], d["severity"], "true" if hit is not None else "false"))
    return {"rows": rows, "planted": Counter(p.code for p in real.planted),
            "missed": [(p.path, p.code, p.line, p.why) for p in unmatched],
            "false": [d for d, (_c, _s, v) in zip(diagnostics, rows, strict=True) if v == "false"]}


def _precision(true: int, false: int) -> str:
    return f"{true / (true + false):.3f}" if true + false else "—"


def _recall(true: int, planted: int) -> str:
    return f"{true / planted:.3f}" if planted else "—"


def tables(results: dict[str, dict]) -> list[str]:
    out = ["### Per fixture", "",
           "| fixture | findings | true | false | unlabelled (PM100, PM501) | planted | missed | precision | recall |",
           "|---|---|---|---|---|---|---|---|---|"]
    total: Counter[str] = Counter()
    for name, r in results.items():
        v = Counter(verdict for _c, _s, verdict in r["rows"])
        planted = sum(r["planted"].values())
        total.update({"findings": len(r["rows"]), "true": v["true"], "false": v["false"],
                      "unlabelled": v["unlabelled"], "planted": planted, "missed": len(r["missed"])})
        out.append(f"| {name} | {len(r['rows'])} | {v['true']} | {v['false']} | {v['unlabelled']} | {planted} | "
                   f"{len(r['missed'])} | {_precision(v['true'], v['false'])} | {_recall(v['true'], planted)} |")
    out.append(f"| **all** | {total['findings']} | {total['true']} | {total['false']} | {total['unlabelled']} | "
               f"{total['planted']} | {total['missed']} | {_precision(total['true'], total['false'])} | "
               f"{_recall(total['true'], total['planted'])} |")
    out += ["", "### Per rule (all fixtures)", "",
            "| rule | findings | true | false | unlabelled | planted | missed | precision | fixtures with findings |",
            "|---|---|---|---|---|---|---|---|---|"]
    by_rule: dict[str, Counter[str]] = {}
    where: dict[str, set[str]] = {}
    for name, r in results.items():
        for code, _sev, verdict in r["rows"]:
            by_rule.setdefault(code, Counter())[verdict] += 1
            where.setdefault(code, set()).add(name)
        for code, n in r["planted"].items():
            by_rule.setdefault(code, Counter())["planted"] += n
        for _path, code, _line, _why in r["missed"]:
            by_rule.setdefault(code, Counter())["missed"] += 1
    for code in sorted(by_rule):
        c = by_rule[code]
        found = c["true"] + c["false"] + c["unlabelled"]
        precision = "—" if code in UNLABELLED else _precision(c["true"], c["false"])
        out.append(f"| {code} | {found} | {c['true']} | {c['false']} | {c['unlabelled']} | {c['planted']} | "
                   f"{c['missed']} | {precision} | {', '.join(sorted(where.get(code, ()))) or '—'} |")
    out += ["", "### Per severity (all fixtures)", "",
            "| severity | findings | true | false | unlabelled | precision |", "|---|---|---|---|---|---|"]
    by_sev: dict[str, Counter[str]] = {}
    for r in results.values():
        for _code, sev, verdict in r["rows"]:
            by_sev.setdefault(sev, Counter())[verdict] += 1
    for sev in ("error", "warning", "information", "hint"):
        c = by_sev.get(sev, Counter())
        out.append(f"| {sev} | {sum(c.values())} | {c['true']} | {c['false']} | {c['unlabelled']} | "
                   f"{_precision(c['true'], c['false'])} |")
    out += ["", "### Per fixture and rule (findings; false alarms in brackets where any)", "",
            "| fixture | findings by rule |", "|---|---|"]
    for name, r in results.items():
        per_code = Counter(code for code, _s, _v in r["rows"])
        false_per_code = Counter(code for code, _s, v in r["rows"] if v == "false")
        cells = [f"{code} {n}" + (f" ({false_per_code[code]} false)" if false_per_code[code] else "")
                 for code, n in sorted(per_code.items())]
        out.append(f"| {name} | {', '.join(cells) or '—'} |")
    out += ["", "### Per fixture and severity", "",
            "| fixture | error | warning | information | hint |", "|---|---|---|---|---|"]
    for name, r in results.items():
        sev_counts = Counter(sev for _c, sev, _v in r["rows"])
        out.append(f"| {name} | " + " | ".join(str(sev_counts[s]) for s in ("error", "warning", "information", "hint"))
                   + " |")
    false = [(name, d) for name, r in results.items() for d in r["false"]]
    missed = [(name, m) for name, r in results.items() for m in r["missed"]]
    if false or missed:
        out += ["", "### False alarms and misses", ""]
        out += [f"- false: {name} `{d['path']}:{d['line']}` {d['code']} {d['severity']}: {d['message']}"
                for name, d in false]
        out += [f"- missed: {name} `{path}:{'?' if line is None else line + 1}` {code} — {why}"
                for name, (path, code, line, why) in missed]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the tables only (docs/precision.md)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="pmem-precision-") as tmp:
        for name, build in FIXTURES.items():
            real = build(Path(tmp) / name / "memory")
            results[name] = judge(real, check(real.root))
    lines = tables(results)
    if not args.markdown:
        import datetime as dt

        from pmem_lsp import __version__

        print(f"pmem {__version__}, {dt.date.today().isoformat()}; command: "
              f"{os.path.basename(sys.executable)} benchmarks/precision.py --markdown\n")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps({name: {"rows": r["rows"], "planted": r["planted"], "missed": r["missed"]}
                                         for name, r in results.items()}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
