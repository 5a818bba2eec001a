"""Generate a deterministic memory root shaped like a real vault (issue 26), beside the
synthetic roots of `generate_root.py`:

    python benchmarks/generate_realshaped.py OUT_DIR [--files 1200] [--seed 26]

What the synthetic roots lack and real vaults have: names with spaces, `%`, parentheses and
CJK characters; YAML and JSON front matter; wiki links; drawings stored as one long line of
JSON (Excalidraw-style `.excalidraw.md` notes, 50 KB to 1 MB on one line); attachments beside
the notes (images and PDFs: raw material, PM005); an `_index.md` that routes most notes in
the forms people write (`[[…]]`, `<…>`, `%20`, backticks). Everything is generated here: no
text comes from any real vault.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import string
from pathlib import Path

WORDS = ("rack server plan garden notes idea draft review budget trip recipe build log meeting "
         "book reading list project status decision habit week month research migration").split()
GERMAN = "Notizen Garten Reise Rezept Serverschrank Planung Woche Idee Entwurf Überblick".split()
CJK = "项目 笔记 计划 阅读 会议 周报 想法 草稿 花园 旅行 菜谱 机柜".split()
ID_CHARS = string.ascii_letters + string.digits + "_-"


def _name(rng: random.Random, i: int) -> str:
    kind = i % 6
    if kind == 0:
        return f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {i}"
    if kind == 1:
        return f"{rng.choice(GERMAN)} {i} (Entwurf)"
    if kind == 2:
        return f"{rng.choice(CJK)}{rng.choice(CJK)} {i}"
    if kind == 3:
        return f"19% {rng.choice(WORDS)} {i}"
    if kind == 4:
        return f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i}"
    return f"{i:04d} {rng.choice(CJK)} – {rng.choice(WORDS)}"


def _front_matter(rng: random.Random, i: int) -> str:
    if i % 5 == 0:
        return "---\n" + json.dumps({"tags": [rng.choice(WORDS)], "created": f"2025-03-0{1 + i % 9}"}) + "\n---\n"
    if i % 5 == 1:
        return f"---\ntags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\naliases: [\"{rng.choice(GERMAN)}\"]\n---\n"
    return ""


def _note(rng: random.Random, i: int, title: str, others: list[str]) -> str:
    lines = [_front_matter(rng, i) + f"# {title}", ""]
    if i % 3:
        bullets = [f"- {rng.choice(WORDS)} {rng.choice(CJK)} {rng.choice(GERMAN)}" for _ in range(3)]
        lines += ["## Summary", *bullets, "", "## Notes"]
    for _ in range(rng.randint(4, 12)):
        other = rng.choice(others)
        # A wiki link by root path, and a Markdown link the way Obsidian writes one from the root.
        lines.append(f"{rng.choice(WORDS).title()} {rng.choice(GERMAN)} {rng.choice(CJK)} — see [[{other}]] and "
                     f"[{rng.choice(WORDS)}](</{other}.md>).")
    if i % 4 == 0:
        lines += ["", f"![[attachments/img {i}.png]]"]
    return "\n".join(lines) + "\n"


def drawing(rng: random.Random, size: int) -> str:
    """An Excalidraw-style note: a little Markdown, then the scene as ONE line of JSON."""
    elements = []
    total = 0
    while total < size:
        element = {"type": rng.choice(["rectangle", "ellipse", "arrow", "text"]),
                   "id": "".join(rng.choice(ID_CHARS) for _ in range(21)),
                   "x": round(rng.uniform(-500, 1500), 3), "y": round(rng.uniform(-500, 1500), 3),
                   "width": round(rng.uniform(10, 400), 2), "height": round(rng.uniform(10, 300), 2),
                   "strokeColor": "#1e1e1e", "backgroundColor": "transparent", "seed": rng.randrange(10**9),
                   "versionNonce": rng.randrange(10**9), "updated": 1700000000000 + rng.randrange(10**8),
                   "groupIds": [], "boundElements": None, "link": None, "locked": False}
        if element["type"] == "text":
            element["text"] = f"{rng.choice(WORDS)} {rng.choice(CJK)} {rng.choice(GERMAN)}"
        if rng.random() < 0.05:
            element["fileId"] = "".join(rng.choice("0123456789abcdef") for _ in range(40))
        elements.append(element)
        total += 330
    scene = json.dumps({"type": "excalidraw", "version": 2, "source": "https://excalidraw.com",
                        "elements": elements, "appState": {"gridSize": None, "viewBackgroundColor": "#ffffff"}},
                       ensure_ascii=False, separators=(",", ":"))
    return ("---\nexcalidraw-plugin: parsed\n---\n\n# Drawing\n\n## Text Elements\n"
            f"{rng.choice(WORDS)} ^a1b2c3\n\n%%\n# Drawing\n```json\n{scene}\n```\n%%\n")


def generate(out: Path, files: int = 1200, seed: int = 26) -> Path:
    rng = random.Random(seed)
    if out.exists():
        shutil.rmtree(out)
    (out / "_core").mkdir(parents=True)
    (out / "_archive" / "_trash").mkdir(parents=True)
    (out / "_core" / "profile.md").write_text("# Profile\n\nA person with a vault.\n", encoding="utf-8")
    (out / "_core" / "preferences.md").write_text("# Preferences\n\nShort answers.\n", encoding="utf-8")
    (out / "_archive" / "_index.md").write_text("# Archive index\n", encoding="utf-8")
    folders = ["notes", "notes/Garten", "notes/项目", "projects", "projects/Home lab", "notes/阅读 笔记"]
    names = [f"{folders[i % len(folders)]}/{_name(rng, i)}" for i in range(files)]
    drawings = max(1, files // 60)
    routes = []
    for i, rel in enumerate(names):
        path = out / f"{rel}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        if i < drawings:
            size = 1_150_000 if i == 0 else rng.choice([50_000, 120_000, 300_000])
            path = out / f"{rel}.excalidraw.md"
            path.write_text(drawing(rng, size), encoding="utf-8")
            rel = f"{rel}.excalidraw"
        else:
            path.write_text(_note(rng, i, rel.rsplit("/", 1)[-1], names), encoding="utf-8")
        if i % 10 != 9:  # most routed, as people do
            form = i % 4
            if form == 0:
                routes.append(f"- [[{rel}]] — {rng.choice(WORDS)}")
            elif form == 1:
                routes.append(f"- [{rng.choice(WORDS).title()}](<{rel}.md>) — {rng.choice(CJK)}")
            elif form == 2:
                routes.append(f"- `{rel}.md` — {rng.choice(GERMAN)}")
            else:
                escaped = rel.replace("%", "%25").replace(" ", "%20")
                routes.append(f"- [{rng.choice(WORDS)}]({escaped}.md) — {rng.choice(WORDS)}")
    attachments = out / "notes" / "attachments"
    attachments.mkdir(parents=True, exist_ok=True)
    for i in range(0, files, 4):
        (attachments / f"img {i}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + rng.randbytes(2000))
    for i in range(files // 100):
        (attachments / f"scan {i}.pdf").write_bytes(b"%PDF-1.4\n" + rng.randbytes(20000))
    (out / "_index.md").write_text("# Index\n\n## Notes\n" + "\n".join(routes) + "\n", encoding="utf-8")
    return out


def megabyte_json_line(seed: int = 26) -> str:
    """The one-line JSON of a 1 MB drawing: what the secrets scanner is timed on."""
    text = drawing(random.Random(seed), 1_150_000)
    return max(text.split("\n"), key=len)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=26)
    a = parser.parse_args()
    print(generate(a.out, a.files, a.seed))
