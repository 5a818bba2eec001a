"""Generate a templated journal: N daily notes made from one template (issue 13, docs/design.md §7).

    python benchmarks/generate_journal.py OUT_DIR N

Every note has the same headings and prompts ("## Morning pages", "## Gratitude", "## Tasks",
"- [ ] Review inbox", …) and a few paragraphs of its own; the last note is dated 2026-11-30.
One day is a copy of the day before with two words changed (the only near-duplicate pair),
and a few true problems are planted (a dangling route, an unrouted day, a broken link; the
index, one route per day, is over PM006's limits). The notes are the fixture
`templated_journal` of `tests/engine/realnotes.py`, which also lists the findings they must produce.
`make bench` times `pmem check` on the 2,000-note journal.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "engine"))
from realnotes import templated_journal


def generate(out: Path, notes: int) -> Path:
    if out.exists():
        shutil.rmtree(out)
    return templated_journal(out, notes).root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("notes", type=int, nargs="?", default=2000)
    args = parser.parse_args()
    generate(args.out, args.notes)
    print(f"generated a journal of {args.notes} daily notes in {args.out}")


if __name__ == "__main__":
    main()
