"""Real-shaped roots of thousands of files, from the fixture builders of tests/engine/realnotes.py
(issue 44: the collections it was found on had 1,200-6,400 files).

    python benchmarks/generate_realnotes_scaled.py OUT [--shape obsidian|journal|ja|zh|rules] [--files N]

Each shape is one builder's root, its notes then copied into volumes (`notes/vol-007/…`: the
first folder of a path, then the volume) until the root holds about N Markdown files:

- `obsidian` — `obsidian_vault`: wikilinks, embeds, names with spaces, brackets and CJK;
- `journal` — `templated_journal`: daily notes made from one template (`journal/2026/…`);
- `ja` — `cline_memory_bank(…, "ja")`: Japanese notes with Japanese headings;
- `zh` — `cline_memory_bank(…, "zh")`: Chinese notes, CJK names;
- `rules` — `template_collection`: an agent-rule collection (CLAUDE.md templates), built at
  the size asked for rather than copied.

A copy is not the original again: about half of its words (Latin words of four letters or
more, runs of CJK characters) are replaced, seeded per volume, outside headings, front matter
keys, links and code spans — otherwise every copy would be a near-duplicate of its original
and the duplicate rule, not the shape, would dominate the cost. Links between notes of one
volume still resolve; the index routes only the originals (the copies are unrouted, as most of
a collection wrapped as a memory root is). Deterministic: the same files, bytes and times on
every run.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "engine"))
import realnotes as rn  # noqa: E402

SHAPES: dict[str, Callable[[Path, int], rn.RealRoot]] = {
    "obsidian": lambda d, n: rn.obsidian_vault(d),
    "journal": lambda d, n: rn.templated_journal(d, min(n, 2000)),
    "ja": lambda d, n: rn.cline_memory_bank(d, "ja"),
    "zh": lambda d, n: rn.cline_memory_bank(d, "zh"),
    "rules": lambda d, n: rn.template_collection(d, max(12, n)),
}
NOT_COPIED = ("_index.md", "_core/", "_archive/")

_LATIN = "memory agent project decision review draft release design budget client owner status".split()
_CJK = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种"
        "面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本"
        "去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比"
        "或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总"
        "次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做"
        "必战先回则任取据处理府研质")
_WORD = re.compile(
    r"(?m)^(?:#.*|[\w-]+:)|\[\[[^\]\n]*\]\]|\[[^\]\n]*\]\([^)\n]*\)|`[^`\n]*`|<[^>\n]*>"  # kept as is
    r"|(\b[A-Za-z]{4,}\b|[\u3040-\u30ff\u4e00-\u9fff]{2,})")  # group 1: changed


def _changed(text: str, rng: random.Random) -> str:
    def swap(match: re.Match[str]) -> str:
        word = match.group(1)
        if word is None or rng.random() < 0.5:
            return match.group(0)
        if word.isascii():
            new = rng.choice(_LATIN)
            return new.capitalize() if word[0].isupper() else new
        return "".join(rng.choice(_CJK) for _ in word)

    return _WORD.sub(swap, text)


def _is_copied(rel: str) -> bool:
    return rel.endswith(".md") and "/" in rel and not rel.startswith(NOT_COPIED)


def generate(out: Path, shape: str, files: int = 2000) -> Path:
    """The root of `shape` with about `files` Markdown files in `out` (replaced)."""
    if out.exists():
        shutil.rmtree(out)
    real = SHAPES[shape](out, files)
    root = real.root
    originals = sorted(str(p.relative_to(root)).replace(os.sep, "/") for p in root.rglob("*.md")
                       if _is_copied(str(p.relative_to(root)).replace(os.sep, "/")))
    count = sum(1 for _ in root.rglob("*.md"))
    volume = 0
    while count < files and originals:
        volume += 1
        rng = random.Random(f"{shape}-{volume}")
        for rel in originals:
            if count >= files:
                break
            head, rest = rel.split("/", 1)
            target = root / head / f"vol-{volume:03}" / rest
            target.parent.mkdir(parents=True, exist_ok=True)
            source = root / rel
            target.write_text(_changed(source.read_text(encoding="utf-8"), rng), encoding="utf-8")
            st = source.stat()
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # the original's day: PM501 alike
            count += 1
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="obsidian")
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    root = generate(args.out, args.shape, args.files)
    print(f"{root}: {sum(1 for _ in root.rglob('*.md'))} Markdown files ({args.shape})")


if __name__ == "__main__":
    main()
