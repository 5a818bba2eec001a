"""A strict model of how the format's reference CLI (`memory`, v0.10) reads and writes a root,
written from the documented format and parsing (docs/design.md §2.5; docs/decisions.md,
"Dialects") — not its code. Tests use it to check that what pmem writes is read right by it,
and that what it writes is read right by pmem (every cross pair).

What it does, as documented:

- records are read only under lines starting with `### `; every line after one, up to the next
  `### ` line, belongs to that block (a `## ` record there is part of it); lines before the
  first `### ` are a preamble;
- a field is a line starting exactly with `- name: `; its value is the rest, trimmed; the first
  such line of a block wins;
- a record is found by its `original_path` field;
- archive drops every `- ` line of `_index.md` that contains the path, and appends
  `### path` with `original_path`, `state: archived`, `archived_at`, `reason`,
  `active_index_line` (the first `- ` line with an em dash that contains the path, else
  `(no active index line)`);
- delete moves `_archive/X` to `_archive/_trash/X`, drops the block's `- state: ` lines and
  appends `state: trashed`, `deleted_at`, `recover_deadline` (+30 days);
- recover refuses a block without a saved line, moves the file back, appends the saved line at
  the end of `_index.md` unless the index holds it already, and removes the block;
- status reads a route as `- <path> — <summary>`, the path being the first word;
- health dates a file by front matter `updated`/`verified`, else `> last_verified:` /
  `> source_date:`, else its modification time, and lists blocks past `recover_deadline`.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

NO_LINE = "(no active index line)"


class ReferenceError_(Exception):
    """What the reference CLI prints as `memory: …` with exit status 1."""


@dataclass
class Block:
    heading: str
    body: list[str] = field(default_factory=list)

    def get(self, name: str) -> str | None:
        prefix = f"- {name}: "
        for line in self.body:
            if line.startswith(prefix):
                return line[len(prefix):].strip()
        return None


@dataclass
class ArchiveText:
    preamble: list[str]
    blocks: list[Block]

    def find(self, original: str) -> int:
        return next((i for i, b in enumerate(self.blocks) if b.get("original_path") == original), -1)

    def text(self) -> str:
        lines = [line for line in self.preamble if line]
        for b in self.blocks:
            lines += [f"### {b.heading}", *b.body]
        return "\n".join([*lines, ""])


def parse(text: str) -> ArchiveText:
    preamble: list[str] = []
    blocks: list[Block] = []
    for line in text.split("\n"):
        if line.startswith("### "):
            blocks.append(Block(line[4:].strip()))
        elif blocks:
            blocks[-1].body.append(line)
        else:
            preamble.append(line)
    return ArchiveText(preamble, blocks)


def records(text: str) -> dict[str, dict[str, str | None]]:
    """original_path → the fields the reference CLI reads from its block."""
    out: dict[str, dict[str, str | None]] = {}
    for b in parse(text).blocks:
        original = b.get("original_path")
        if original is not None and original not in out:
            out[original] = {k: b.get(k) for k in ("original_path", "state", "archived_at", "reason",
                                                    "active_index_line", "deleted_at", "recover_deadline")}
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _route_lines(index: str) -> list[str]:
    return [line for line in index.split("\n") if line.strip().startswith("- ") and "—" in line]


def archive(root: Path, rel: str, reason: str, today: dt.date) -> None:
    src, dest = root / rel, root / "_archive" / rel
    if not src.is_file():
        raise ReferenceError_(f"source does not exist: {src}")
    if dest.exists():
        raise ReferenceError_(f"destination collision, refusing to overwrite: _archive/{rel}")
    index = _read(root / "_index.md")
    route = next((line for line in _route_lines(index) if rel in line), NO_LINE)
    parsed = parse(_read(root / "_archive" / "_index.md"))
    if parsed.find(rel) != -1:
        raise ReferenceError_(f"archive index already has a record for {rel}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(src, dest)
    kept = [line for line in index.split("\n") if not (line.strip().startswith("- ") and rel in line)]
    _write(root / "_index.md", "\n".join(kept))
    parsed.blocks.append(Block(rel, [f"- original_path: {rel}", "- state: archived",
                                     f"- archived_at: {today.isoformat()}", f"- reason: {reason}",
                                     f"- active_index_line: {route}"]))
    _write(root / "_archive" / "_index.md", parsed.text())


def delete(root: Path, rel: str, today: dt.date) -> None:
    src, dest = root / "_archive" / rel, root / "_archive" / "_trash" / rel
    if not src.exists():
        raise ReferenceError_(f"source does not exist: {src}")
    if dest.exists():
        raise ReferenceError_(f"destination collision, refusing to overwrite: _archive/_trash/{rel}")
    parsed = parse(_read(root / "_archive" / "_index.md"))
    i = parsed.find(rel)
    if i == -1:
        raise ReferenceError_(f"no archive record for {rel}; archive it first with `memory archive`")
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(src, dest)
    block = parsed.blocks[i]
    deadline = today + dt.timedelta(days=30)
    block.body = [line for line in block.body if not line.startswith("- state: ")] + [
        "- state: trashed", f"- deleted_at: {today.isoformat()}", f"- recover_deadline: {deadline.isoformat()}"]
    _write(root / "_archive" / "_index.md", parsed.text())


def recover(root: Path, rel: str) -> None:
    parsed = parse(_read(root / "_archive" / "_index.md"))
    i = parsed.find(rel)
    if i == -1:
        raise ReferenceError_(f"no archive record for {rel}")
    block = parsed.blocks[i]
    state = block.get("state") or "archived"
    src = root / "_archive" / ("_trash/" + rel if state == "trashed" else rel)
    if not src.exists():
        raise ReferenceError_(f"source does not exist: {src}")
    if (root / rel).exists():
        raise ReferenceError_(f"destination collision, refusing to overwrite: {rel}")
    saved = block.get("active_index_line")
    if not saved or saved == NO_LINE:
        raise ReferenceError_(f"archive record for {rel} lacks a stored active index line")
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    os.rename(src, root / rel)
    index = _read(root / "_index.md")
    if saved.strip() not in index:
        index = f"{index.rstrip()}\n{saved.strip()}\n"
    lines = index.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    _write(root / "_index.md", "\n".join(lines) + "\n")
    del parsed.blocks[i]
    _write(root / "_archive" / "_index.md", parsed.text())


def status_routes(root: Path) -> list[tuple[str, bool]]:
    """(path, exists) for every route line, as its status reads them."""
    out = []
    for line in _route_lines(_read(root / "_index.md")):
        m = re.match(r"^-\s+(\S+?)\s+—\s+(.*)$", line.strip())
        path = m.group(1) if m else line.strip()[2:]
        out.append((path, (root / path).is_file()))
    return out


def file_date(path: Path) -> dt.date:
    text = path.read_text(encoding="utf-8")
    m = re.match(r"^\ufeff?---\n([\s\S]*?)\n---", text)
    found = None
    if m:
        d = re.search(r"^(?:updated|verified):\s*(\d{4}-\d{2}-\d{2})", m.group(1), re.M)
        found = d.group(1) if d else None
    if found is None:
        d = re.search(r"^>\s*(?:last_verified|source_date):\s*(\d{4}-\d{2}-\d{2})", text, re.M)
        found = d.group(1) if d else None
    if found is not None:
        return dt.date.fromisoformat(found)
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc).date()


def health(root: Path, today: dt.date, max_age_days: int = 90) -> tuple[list[str], list[str]]:
    """(inactive active files under projects/ and notes/, expired trash headings)."""
    cutoff = today - dt.timedelta(days=max_age_days)
    stale = []
    for zone in ("projects", "notes"):
        for p in sorted((root / zone).rglob("*.md")):
            if p.is_file() and file_date(p) < cutoff:
                stale.append(p.relative_to(root).as_posix())
    expired = [b.heading for b in parse(_read(root / "_archive" / "_index.md")).blocks
               if (d := b.get("recover_deadline")) and d < today.isoformat()]
    return stale, expired
