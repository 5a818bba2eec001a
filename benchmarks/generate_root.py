"""Generate a deterministic memory root for benchmarks: N files of about 2.5 KB each.

    python benchmarks/generate_root.py OUT_DIR --files 10000 [--seed 1]

Files are spread over `projects/` and `notes/` folders, each with a title, metadata, a
Summary, prose, lists, a fenced block in some, and relative links to other files. The index
routes nearly every file; the archive holds records. A few defects are planted at fixed
rates (2-bullet summaries, unrouted files, dangling routes, broken links) and a few fake,
randomly built secrets, so the benchmark exercises every rule family.
"""

from __future__ import annotations

import argparse
import posixpath
import random
import shutil
import string
from pathlib import Path

WORDS = ("memory agent project decision result constraint pipeline schedule budget client "
         "deadline review draft release migration dashboard report meeting research design "
         "tradeoff latency cost owner status risk metric baseline milestone backlog summary").split()


def sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def fake_token(rng: random.Random) -> str:
    # Built at random in a token-like shape; never a real credential.
    prefix = rng.choice(["gh" + "p_", "sk" + "-proj-", "xo" + "xb-"])
    return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def note(rng: random.Random, i: int, rel: str, others: list[str]) -> str:
    bullets = 2 if i % 97 == 0 else rng.randint(3, 5)  # ~1% PM102
    lines = [f"# Item {i}: {rng.choice(WORDS)} {rng.choice(WORDS)}", "",
             f"Status: {rng.choice(['active', 'paused', 'waiting'])}",
             f"Updated: 2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}", "",
             "## Summary"]
    lines += [f"- {sentence(rng, rng.randint(6, 12))}" for _ in range(bullets)]
    lines += ["", "## Context", ""]
    folder = rel.rsplit("/", 1)[0]
    while sum(len(line) + 1 for line in lines) < 2300:
        kind = rng.random()
        if kind < 0.45:
            lines += [sentence(rng, rng.randint(10, 22)) + " " + sentence(rng, rng.randint(8, 16)), ""]
        elif kind < 0.75:
            lines += [f"- {sentence(rng, rng.randint(5, 10))}" for _ in range(rng.randint(2, 4))] + [""]
        elif kind < 0.88:
            target = rng.choice(others)
            if i % 53 == 0:
                target = target.replace(".md", "-missing.md")  # a broken link now and then
            href = posixpath.relpath(target, folder)
            lines += [f"See [{posixpath.basename(target)[:-3]}]({href}) for {rng.choice(WORDS)}.", ""]
        elif kind < 0.95:
            lines += ["```", f"{rng.choice(WORDS)} --{rng.choice(WORDS)} {rng.randint(1, 99)}", "## Summary", "```", ""]
        else:
            lines += [f"## {rng.choice(WORDS).capitalize()}", ""]
    if i % 211 == 0:
        lines += [f"token: {fake_token(rng)}", ""]  # a planted secret (~0.5%)
    return "\n".join(lines) + "\n"


def generate(out: Path, files: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    (out / "_core").mkdir(parents=True)
    (out / "_archive/_trash").mkdir(parents=True)
    (out / "_core/profile.md").write_text("# Profile\n\n- Name: Bench Person\n- Role: data engineer\n")
    (out / "_core/preferences.md").write_text("# Preferences\n\n- Short answers.\n")
    rels = [f"{'projects' if i % 3 else 'notes'}/group-{i % 40:02d}/item-{i:05d}.md" for i in range(files)]
    routes = []
    for i, rel in enumerate(rels):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note(rng, i, rel, rels), encoding="utf-8")
        if i % 101 != 0:  # ~1% unrouted (PM202)
            routes.append(f"- [Item {i}]({rel}) — {sentence(rng, 6)}")
    routes += [f"- [Gone {k}](projects/gone-{k}.md) — renamed long ago" for k in range(3)]  # PM201
    (out / "_index.md").write_text("# Memory index\n\n" + "\n".join(routes) + "\n", encoding="utf-8")
    records = ["# Archive index", ""]
    for k in range(max(1, files // 100)):
        rel = f"projects/archived-{k:04d}.md"
        (out / "_archive/projects").mkdir(parents=True, exist_ok=True)
        (out / "_archive" / rel).write_text(note(rng, 100000 + k, rel, rels), encoding="utf-8")
        records += [f"## {rel}", "- status: archived", f"- original: {rel}", f"- location: _archive/{rel}",
                    f"- index-line: - [Archived {k}]({rel}) — finished", "- archived: 2026-06-01",
                    "- reason: finished", ""]
    (out / "_archive/_index.md").write_text("\n".join(records), encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    generate(args.out, args.files, args.seed)
    print(f"generated {args.files} files in {args.out}")


if __name__ == "__main__":
    main()
