"""Memory roots shaped like real notes nobody on this project wrote (issue 13, docs/design.md §7).

Each builder writes one memory root into the folder it is given and returns a `RealRoot`: the
root and the exact findings that root must produce (`planted`), apart from PM100 (a hint on
every legacy file) and PM501 (stale). Everything else a checker reports on these roots is a
false alarm.

- `obsidian_vault(dir)` — an Obsidian-help-like vault, English and Chinese;
- `cline_memory_bank(dir, lang)` — a Cline memory bank in "en", "zh" or "ja";
- `template_collection(dir, n)` — n CLAUDE.md templates, all titled `# [PROJECT TITLE]`;
- `templated_journal(dir, n)` — n daily notes made from one template (also the CLI
  `benchmarks/generate_journal.py OUT N` for `make bench`);
- `foam_vault(dir)` — a Foam vault with wiki-links and link reference definitions.

The builders are deterministic: fixed seeds, fixed texts, and every file's modification time
pinned (recent, so nothing is stale on `engine_helpers.TODAY` = 2026-12-01, except the
journal, whose notes carry their own day). They use the standard library only, so what they
expect never depends on the engine they check.

Planted lines are 0-based, as `Finding.line`; a finding about a whole file (PM202, PM503) is
on the file's title line (docs/design.md §4), PM006 on `_index.md` line 1.

The "secrets" planted here are random values built in real token shapes at run time (token
prefixes are concatenated, as in `benchmarks/secrets_eval.py`), never real credentials.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import string
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

# Modification times: a few days before engine_helpers.TODAY (2026-12-01), so PM501 (90 days)
# does not fire; each file one minute after the one written before it.
BASE_TIME = dt.datetime(2026, 11, 24, 9, 0)
# docs/design.md §4 defaults: PM006 past either, PM005 for a file over LARGE_FILE_BYTES.
INDEX_MAX_LINES, INDEX_MAX_BYTES = 200, 16384
LARGE_FILE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Planted:
    path: str
    code: str
    line: int | None  # 0-based; None where the exact line is not part of the expectation
    why: str

    def key(self) -> tuple[str, str, int | None]:
        return (self.path, self.code, self.line)


@dataclass
class RealRoot:
    root: Path
    planted: list[Planted]
    # Facts a test may want besides the findings: the planted near-duplicate pair
    # ("duplicate": (original, copy)), the number of notes, …
    facts: dict[str, object] = field(default_factory=dict)

    def expected(self, *prefixes: str) -> list[Planted]:
        """The planted findings whose code starts with one of `prefixes` (all without)."""
        return [p for p in self.planted if not prefixes or p.code.startswith(prefixes)]


class _Builder:
    """Writes files, remembers their modification times, and records planted findings."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.texts: dict[str, str] = {}
        self.times: dict[str, dt.datetime] = {}
        self.planted: list[Planted] = []
        self._clock = BASE_TIME

    def write(self, rel: str, text: str, when: dt.datetime | None = None) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.texts[rel] = text
        if when is None:
            self._clock += dt.timedelta(minutes=1)
            when = self._clock
        self.times[rel] = when

    def mkdir(self, rel: str) -> None:
        (self.root / rel).mkdir(parents=True, exist_ok=True)

    def line_of(self, rel: str, marker: str) -> int:
        """The 0-based line of `rel` holding `marker` (it must hold it exactly once)."""
        lines = self.texts[rel].split("\n")
        hits = [i for i, line in enumerate(lines) if marker in line]
        if len(hits) != 1:
            raise AssertionError(f"fixture bug: {marker!r} is on {len(hits)} lines of {rel}")
        return hits[0]

    def title_line(self, rel: str) -> int:
        lines = self.texts[rel].split("\n")
        start = 0
        if lines and lines[0] == "---":
            start = lines.index("---", 1) + 1
        for i in range(start, len(lines)):
            if lines[i].startswith("# "):
                return i
            if lines[i].strip():
                break
        return 0

    def plant(self, rel: str, code: str, why: str, at: str | None = None, *, whole_file: bool = False,
              line: int | None = None) -> None:
        if at is not None:
            line = self.line_of(rel, at)
        elif whole_file:
            line = self.title_line(rel)
        self.planted.append(Planted(rel, code, line, why))

    def plant_index_length(self, why: str) -> None:
        """PM006 when `_index.md` is over the default limits (200 lines or 16384 bytes)."""
        text = self.texts["_index.md"]
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > INDEX_MAX_LINES or len(text.encode("utf-8")) > INDEX_MAX_BYTES:
            self.planted.append(Planted("_index.md", "PM006", 0, why))

    def lifecycle(self, archive_index: str = "# Archive index\n") -> None:
        self.mkdir("_archive/_trash")
        self.write("_archive/_index.md", archive_index)

    def finish(self, **facts: object) -> RealRoot:
        for rel, when in self.times.items():
            stamp = when.timestamp()
            os.utime(self.root / rel, (stamp, stamp))
        return RealRoot(self.root, list(self.planted), dict(facts))


def _rng_token(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def fake_aws_pair(rng: random.Random) -> tuple[str, str]:
    """An AWS access key id and secret access key in the real shapes (random, never real)."""
    key_id = "AK" + "IA" + _rng_token(rng, string.ascii_uppercase + "234567", 16)
    secret = _rng_token(rng, string.ascii_letters + string.digits + "/+", 40)
    return key_id, secret


def _route(form: str, path: str, label: str, desc: str) -> str:
    """One `_index.md` route line in one of the target forms of docs/design.md §2.3."""
    stem = path[:-3] if path.endswith(".md") else path
    if form == "code":
        return f"- `{path}` — {desc}"
    if form == "code-colon":
        return f"- `{path}`: {desc}"
    if form == "angle-link":
        return f"- [{label}](<{path}>) — {desc}"
    if form == "pct-link":
        return f"- [{label}]({path.replace(' ', '%20')}) — {desc}"
    if form == "wiki":
        return f"- [[{stem}]] — {desc}"
    if form == "wiki-label":
        return f"- [[{stem}|{label}]] — {desc}"
    if form == "angle":
        return f"- <{path}> — {desc}"
    if form == "bare":
        return f"- {path} — {desc}"
    if form == "table":
        return f"| [[{stem}]] | {desc} |"
    raise ValueError(form)


# ---------------------------------------------------------------------------------------------
# Obsidian vault (English + Chinese)
# ---------------------------------------------------------------------------------------------

_OBS_PROFILE = """# Profile

- Name: Lin Wei (林伟)
- Based in Shanghai; works in English and Chinese.
- Role: product designer who keeps everything in one Obsidian vault.
"""

_OBS_PREFERENCES = """# Preferences

## Communication
- Answer in the language of the question (English or 中文).
- Short answers first, details on request.

## Notes
- Note names keep their spaces and Chinese characters; never rename them to kebab-case.
"""

_OBS_BASES = """---
aliases: [Bases, database views]
tags: [obsidian/plugins, bases]
---
# Bases syntax

Bases turn a set of notes into a database-like view[^1]. A base is defined in YAML and filters
notes by folder, tag or property. See [Create a base](Create%20a%20base.md) to make your first
one, or [[Create a base|the step-by-step guide]].

## Filters

Filters decide which notes are in the base:

```yaml
filters:
  and:
    - file.inFolder("notes")
    - 'status != "done"'
```

A filter can also test a tag: `file.hasTag("book")`.

## Formulas

Formulas add computed properties. The result shows as a column in every view; Canvas cards
can embed a base too (see [Canvas](<Plugins (core)/Canvas [beta].md>)).

## Views

Table and cards views are built in. Each view keeps its own sort and limit.

[^1]: This is a footnote.
"""

_OBS_CREATE_BASE = """# Create a base

## Summary
- A base is created from the command palette or from a folder's context menu.
- New bases start with one table view over the whole vault.
- Filters are added from the toolbar and stored in the `.base` file.

## From the command palette

1. Open the command palette and run **Bases: Create new base**.
2. Name the base. Obsidian creates `Untitled.base` in the current folder.
3. Add filters from the toolbar; the syntax is in [Bases syntax](<Bases syntax.md#Filters>).

## From a folder

Right-click a folder in the file explorer and choose **New base**. The base starts filtered
to that folder.
"""

_OBS_CANVAS = """---
tags: [obsidian/plugins, canvas]
---
# Canvas [beta]

> [!note] Beta feature
> Canvas is a core plugin. Enable it in **Settings → Core plugins**.

Canvas is an infinite space for laying out notes, media and web pages. Cards can link to
each other with arrows, and groups collect related cards.

## Cards

- **Note cards** show a note from the vault; edits in the card change the note.
- **Text cards** hold Markdown that lives only in the canvas.
- **Media cards** show images, audio, video and PDFs.

Drag a note from the file explorer onto the canvas to add it, or paste a link. [[Bases syntax]]
explains how to embed a base in a card. Daily notes can be dropped in as well; see
[Daily notes](Daily%20notes.md).

> [!warning] Large canvases
> A canvas with thousands of cards gets slow to pan. Split it into several canvases.
"""

_OBS_DAILY = """# Daily notes

The Daily notes plugin opens a note named after today's date, made from a template.

## Settings

| Setting | What it does |
| --- | --- |
| Date format | The file name, e.g. `YYYY-MM-DD` |
| New file location | The folder daily notes go into |
| Template file location | The note used as a template |

To publish some daily notes, see [Publish setup](../Publish%20setup.md).

Links to other notes work as anywhere else: [[使用 Obsidian]] explains the basics in Chinese.
"""

_OBS_FORMATTING = """# Basic formatting syntax

Learn how to apply basic formatting to your notes, using [Markdown](https://daringfireball.net/projects/markdown/).

## Footnotes

You can add footnotes[^1] to your notes using the following syntax:

```md
This is a simple footnote[^1].

[^1]: This is the referenced text.
```

Named footnotes still appear as numbers[^note].

## Callouts

> [!tip] Callouts
> Use callouts to include additional content without breaking the flow of your notes.

> [!quote] Quote
> Obsidian is a note-taking app that works on local Markdown files.

## Tables

| First name | Last name |
| ---------- | --------- |
| Max        | Planck    |
| Marie      | Curie     |

[^1]: This is the referenced text.
[^2]: Add 2 spaces at the start of each new line.
  This lets you write footnotes that span multiple lines.
[^note]: Named footnotes still appear as numbers, but can make it easier to identify and link references.
"""

_OBS_CLI = """---
tags: [obsidian, cli, setup]
aliases: [obsidian command]
---
# Obsidian CLI

The installer puts the binary at `/usr/local/bin/obsidian`; the Flatpak build lives elsewhere.
Add the shell helper to `~/.zshrc` so that `obs` opens today's daily note:

```sh
alias obs='obsidian "obsidian://daily?vault=Notes"'
```

Settings for every vault are in `~/.config/obsidian/obsidian.json`; the vault's own settings
are in its `.obsidian` folder.

## Committing the vault

The vault is a git repository. Run the hooks in one **pass:** `--no-verify` would skip them,
so never use it when committing the vault.

## Local REST API

The Local REST API plugin wants the key as a header, `Authorization: Bearer <your-api-key>`.
From the shell:

```sh
curl -H "Authorization: Bearer $OBSIDIAN_API_KEY" https://127.0.0.1:27124/vault/
```
"""

_OBS_SYNC = """# Sync with a script

Status: active

## Summary
- A small Python script pushes the vault to my home server every night.
- The API key comes from the environment, never from the vault.
- Backups to S3 use the credentials the AWS CLI already has.

## The script

In Python the header is `f"Bearer {API_KEY}"`, with the key read from the environment:

```python
import os

import requests

API_KEY = os.environ["OBSIDIAN_API_KEY"]
headers = {"Authorization": f"Bearer {API_KEY}"}
requests.put("https://notes.home.arpa/sync", headers=headers, timeout=30)
```

The GitHub backup pushes with `git push https://x-access-token:${GITHUB_TOKEN}@github.com/linwei/vault.git`,
and the workflow gets `$GITHUB_TOKEN` from Actions. The config template has
`api_key: <your-api-key>` and `token: ${TOKEN}`; the real values stay out of the vault.

The S3 copy uses the profile in `~/.aws/credentials` (profile `backup`).
"""

_OBS_READING = """# Reading list

## Summary
- Reading now: Piranesi by Susanna Clarke.
- Finished in 2026: The Left Hand of Darkness, Klara and the Sun, Project Hail Mary.
- Queue: The Dispossessed, Middlemarch, 三体.

## 2026

Finished in 2026: The Left Hand of Darkness (January), Klara and the Sun (March), Project Hail Mary (June).

- [x] The Left Hand of Darkness — Ursula K. Le Guin
- [x] Klara and the Sun — Kazuo Ishiguro
- [x] Project Hail Mary — Andy Weir
- [ ] Piranesi — Susanna Clarke

## Queue

1. The Dispossessed
2. Middlemarch
3. 三体（刘慈欣）
"""

_OBS_UNTITLED = """# Untitled 1

Ideas for the vault's home page: a base of open projects, the reading list, and today's note.
"""

_OBS_USING = """---
aliases: [使用指南, Obsidian 入门]
tags: [obsidian, 中文]
---
# 使用 Obsidian

## 摘要
- Obsidian 把笔记保存为本地 Markdown 文件，库就是一个文件夹。
- 内部链接用 [[双方括号]]，反向链接面板显示谁链接了当前笔记。
- 核心插件在 设置 → 核心插件 中开启。

## 界面

左侧是文件列表，中间是编辑区，右侧是反向链接和大纲。新建笔记见 [创建笔记](快速入门/创建笔记.md)，
链接笔记见 [[快速入门/链接笔记]]。

> [!tip] 提示
> 按 Ctrl+O 快速打开笔记。
"""

_OBS_CREATE_NOTE = """# 创建笔记

在文件列表中点击"新建笔记"按钮，或者按 Ctrl+N。新笔记的默认名称是"未命名"[^1]。

## 重命名

点击笔记标题即可重命名。Obsidian 会自动更新指向这篇笔记的所有链接。返回
[使用 Obsidian](<../使用 Obsidian.md>)。

[^1]: 这是一个脚注。
"""

_OBS_LINK_NOTES = """# 链接笔记

内部链接把笔记连在一起：输入 `[[` 然后选择要链接的笔记，例如 [[创建笔记]]。

也可以使用标准 Markdown 链接：[基础格式](../Basic%20formatting%20syntax.md)。
链接会在笔记重命名时自动更新。

## 反向链接

反向链接面板列出所有链接到当前笔记的笔记，包括没有链接、只提到了标题的笔记。
"""

_OBS_PAPER = """# 论文笔记：Attention Is All You Need

作者：Vaswani 等，2017

这篇论文提出了 Transformer：一种完全基于注意力机制的序列转换模型，不再使用循环和卷积。
我读它是为了弄清楚自注意力的计算方式，以及为什么它能并行训练。

下面先摘录论文的摘要，再记我自己的理解。

## 摘要

主流的序列转换模型基于复杂的循环或卷积神经网络，包括一个编码器和一个解码器。性能最好的模型还通过注意力机制连接编码器和解码器。

我们提出了一种新的简单网络架构 Transformer，它完全基于注意力机制，彻底放弃了循环和卷积。

在两个机器翻译任务上的实验表明，这些模型质量更高，更易于并行，训练时间也显著减少。

## 我的笔记

- 自注意力的复杂度是序列长度的平方，这是长文本的瓶颈。
- 位置编码用正弦函数，让模型知道词的顺序。
- 多头注意力让不同的头关注不同的关系。
"""

_OBS_WEBSITE = """# Website redesign

Status: done
Updated: 2026-11-02

## Summary
- The new site runs on Astro and deploys from the `main` branch.
- Page weight went from 2.1 MB to 380 KB; Lighthouse performance is 98.
- The old WordPress install was shut down on 2026-10-30.

## What changed

- Moved every post to Markdown with front matter.
- Replaced the theme with a hand-written stylesheet.
- Added RSS and a `/now` page.
"""

_OBS_HOMELAB = """# Home lab

Status: active
Source: ~/homelab-7c1e4b2a-9f3d/ansible

## Summary
- Two mini PCs run Proxmox; the NAS holds backups and media.
- Everything is configured with the ansible playbooks in the homelab repository.
- Nightly backups go to S3 with the `backup` profile.

## Backups

The backup job reads `~/.aws/credentials` on the NAS. I pasted the profile here while
debugging, which I should not have:

```ini
[backup]
aws_access_key_id = {key_id}
aws_secret_access_key = {secret}
region = eu-north-1
```

## Sources

- Rack wiring diagram: `~/scans-5d2e8f1c-a3b7/rack-diagram.pdf`
"""

_OBS_OLD_SYNC = """# Old sync notes

How I synced the vault with Syncthing before switching to Obsidian Sync.
"""


def obsidian_vault(dir: Path) -> RealRoot:
    """An Obsidian-help-like vault: names with spaces, CJK, parentheses and brackets."""
    b = _Builder(dir)
    rng = random.Random(1301)
    key_id, secret = fake_aws_pair(rng)
    b.write("_core/profile.md", _OBS_PROFILE)
    b.write("_core/preferences.md", _OBS_PREFERENCES)
    b.write(".obsidian/app.json", '{"alwaysUpdateLinks": true}\n')

    notes = {
        "notes/Bases syntax.md": _OBS_BASES,
        "notes/Create a base.md": _OBS_CREATE_BASE,
        "notes/Plugins (core)/Canvas [beta].md": _OBS_CANVAS,
        "notes/Plugins (core)/Daily notes.md": _OBS_DAILY,
        "notes/Basic formatting syntax.md": _OBS_FORMATTING,
        "notes/Obsidian CLI.md": _OBS_CLI,
        "notes/Sync with a script.md": _OBS_SYNC,
        "notes/Reading list.md": _OBS_READING,
        "notes/Untitled 1.md": _OBS_UNTITLED,
        "notes/使用 Obsidian.md": _OBS_USING,
        "notes/快速入门/创建笔记.md": _OBS_CREATE_NOTE,
        "notes/快速入门/链接笔记.md": _OBS_LINK_NOTES,
        "notes/论文笔记/Attention Is All You Need.md": _OBS_PAPER,
        "projects/Website redesign.md": _OBS_WEBSITE,
        "projects/Home lab.md": _OBS_HOMELAB.replace("{key_id}", key_id).replace("{secret}", secret),
    }
    for rel, text in notes.items():
        b.write(rel, text)

    # Archived before: a record whose index-line is a code-span route with a space.
    old_line = "- `notes/Old sync notes.md` — how I synced with Syncthing before Obsidian Sync"
    b.write("_archive/notes/Old sync notes.md", _OBS_OLD_SYNC)
    b.lifecycle("# Archive index\n\n## notes/Old sync notes.md\n- status: archived\n"
                "- original: notes/Old sync notes.md\n- location: _archive/notes/Old sync notes.md\n"
                f"- index-line: {old_line}\n- archived: 2026-11-03\n- reason: switched to Obsidian Sync\n")

    index = "\n".join([
        "# Memory index",
        "",
        "Routes to my Obsidian vault, one line per note. Paths are relative to this folder.",
        "",
        "## Notes",
        _route("code", "notes/Bases syntax.md", "", "Bases: filters, formulas and views over notes"),
        _route("angle-link", "notes/Create a base.md", "Create a base", "creating a base from the palette or a folder"),
        _route("angle-link", "notes/Plugins (core)/Canvas [beta].md", "Canvas [beta]",
               "the Canvas core plugin: cards, groups and arrows"),
        _route("pct-link", "notes/Plugins (core)/Daily notes.md", "Daily notes", "the Daily notes plugin and its settings"),
        _route("wiki", "notes/Basic formatting syntax.md", "", "Markdown in Obsidian: footnotes, callouts, tables"),
        _route("angle", "notes/Obsidian CLI.md", "", "the obsidian command, shell alias and the REST API"),
        _route("pct-link", "notes/Sync with a script.md", "Sync with a script", "nightly sync and S3 backups of the vault"),
        _route("code", "notes/Graph view.md", "", "the graph view and its filters"),
        _route("wiki-label", "notes/使用 Obsidian.md", "使用 Obsidian", "Obsidian 入门：界面、库和设置"),
        "- [创建笔记](notes/快速入门/创建笔记.md) — 如何新建和重命名笔记",
        "- `notes/快速入门/链接笔记.md`：内部链接与反向链接",
        _route("angle", "notes/论文笔记/Attention Is All You Need.md", "", "论文笔记：Transformer 与自注意力"),
        "",
        "| Note | What it holds |",
        "| --- | --- |",
        _route("table", "notes/Reading list.md", "", "books finished in 2026 and the queue"),
        "",
        "## Projects",
        _route("angle-link", "projects/Website redesign.md", "Website redesign", "the 2026 redesign of my personal site"),
        _route("wiki", "projects/Home lab.md", "", "Proxmox, the NAS and the ansible playbooks"),
        "",
    ])
    b.write("_index.md", index)

    b.plant("_index.md", "PM201", "route to a note that does not exist", at="`notes/Graph view.md`")
    b.plant("notes/Untitled 1.md", "PM202", "an Untitled note nobody routed", whole_file=True)
    b.plant("notes/Plugins (core)/Daily notes.md", "PM402", "relative link to a missing note",
            at="[Publish setup](../Publish%20setup.md)")
    b.plant("projects/Home lab.md", "PM401", "AWS access key id pasted in a fenced block", at="aws_access_key_id")
    b.plant("projects/Home lab.md", "PM401", "AWS secret access key pasted in a fenced block",
            at="aws_secret_access_key")
    b.plant("projects/Home lab.md", "PM403", "`Source:` line naming a folder that does not exist",
            at="Source: ~/homelab-")
    # Issue 13 item 4: a pointer is a link target or a path in a line that declares a source,
    # or in an item under such a heading. `~/.aws/credentials` in the prose of the same file
    # (and `~/.zshrc`, `/usr/local/bin/obsidian` elsewhere) is no pointer: no finding, whether
    # or not it exists on the machine running the tests.
    b.plant("projects/Home lab.md", "PM403", "backticked path in an item under `## Sources` that does not exist",
            at="rack-diagram.pdf")
    b.plant("projects/Website redesign.md", "PM502", "`Status: done` in the metadata", at="Status: done")
    # Issue 13 item 6: the paper's abstract under `## 摘要` is a misplaced summary, reported once
    # (no PM102/PM103 about its paragraphs). Also silent here, by the issue: footnote
    # definitions (item 3), `pass:` and `f"Bearer {API_KEY}"` (item 5), and the reading list's
    # "Finished in 2026: …" Summary bullet, which lists books, not the end of the work (item 8).
    b.plant("notes/论文笔记/Attention Is All You Need.md", "PM101",
            "a mid-file `## 摘要` (the paper's abstract): one finding, PM101", at="## 摘要")
    return b.finish()


# ---------------------------------------------------------------------------------------------
# Cline memory bank (en, zh, ja)
# ---------------------------------------------------------------------------------------------

_CLINE = {
    "en": {
        "profile": "# Profile\n\n- Name: Sam Okafor\n- Freelance full-stack developer in Lisbon.\n",
        "preferences": "# Preferences\n\n- TypeScript over JavaScript.\n- Explain database changes before making them.\n",
        "projectbrief.md": """# Project Brief

## Overview
Acme Shop is a small online store for handmade ceramics. Customers browse the catalogue, pay
by card and track their orders; the two owners manage stock and shipping from an admin page.

## Core requirements
- Product catalogue with categories, search and filters
- Card payments through Stripe Checkout
- Order tracking by e-mail link, without an account
- Admin page for stock, prices and shipping labels

## Goals
- Launch before the spring market in March 2027.
- Keep hosting under 30 euros a month.

## Out of scope
- Several sellers, marketplace features
- Native mobile apps
""",
        "productContext.md": """# Product Context

## Why this project exists
The owners sold through a marketplace that took 15 % of every sale and hid customer e-mail
addresses, so they could not tell buyers about new firings.

## Problems it solves
- Lower fees: Stripe's card fees only.
- A mailing list the owners own.
- Stock that matches the shelf: every piece is unique.

## How it should work
1. A visitor lands on the catalogue and filters by glaze or size.
2. The product page shows every photo and the exact piece that ships.
3. Checkout takes card details on Stripe's page; no account needed.
4. An e-mail with a tracking link follows when the label is printed.

## User experience goals
- Fast on a phone over a weak connection.
- Calm, photo-first design; no pop-ups.
""",
        "activeContext.md": """# Active Context

Updated: 2026-11-27

## Summary
- Current focus: Stripe Checkout and the payment webhook.
- The order model moved from a JSON column to three tables on 2026-11-20.
- Open question: how to charge VAT to customers outside the EU.

## Current focus
Wiring Stripe Checkout: the session is created server-side, and the webhook marks the order
paid. The webhook must be idempotent because Stripe retries.

## Recent changes
- Replaced the local-storage cart with a server-side cart (`src/lib/cart.ts`).
- Orders now have `orders`, `order_items` and `shipments` tables.

## Next steps
1. Finish the webhook handler in `src/app/api/stripe/route.ts`.
2. Send the confirmation e-mail from the webhook, not from the success page.
3. Ask the owners about VAT outside the EU.
""",
        "systemPatterns.md": """# System Patterns

## Architecture
Next.js App Router with server components; Prisma talks to PostgreSQL. Stripe is the only
external service on the payment path.

```mermaid
flowchart LR
  Browser --> NextJS[Next.js server]
  NextJS --> DB[(PostgreSQL)]
  NextJS --> Stripe
  Stripe -- webhook --> NextJS
```

## Key patterns
- Server actions for every form; no client-side fetch for writes.
- Money is stored in cents as integers, never as floats.
- Every webhook event is stored before it is handled, keyed by its event id.

## Conventions
API routes follow the [API conventions](../docs/api-conventions.md): nouns, plural, JSON errors
with a `code` field.
""",
        "techContext.md": """# Tech Context

## Stack
- Next.js 15, TypeScript 5.6, Prisma 6
- PostgreSQL 16; Stripe Checkout; Resend for e-mail
- Hosting: a single Hetzner VM with Docker Compose

## Local setup
1. Copy `.env.example` to `.env.local`.
2. Set `DATABASE_URL=postgres://shop:${DB_PASSWORD}@localhost:5432/shop`.
3. Set `STRIPE_SECRET_KEY=<your-stripe-test-key>`; the webhook secret comes from `stripe listen`.
4. Run `pnpm install && pnpm prisma migrate dev && pnpm dev`.

The npm registry token lives in `~/.npmrc`, not in the repository.

## Environments
- Production: shop.example.com, deployed by GitHub Actions on a tag.
- Staging database: postgres://shop_app:{db_password}@db.staging.internal:5432/shop
- Repo: `~/code/acme-shop-1b9e47c2`
""",
        "progress.md": """# Progress

## Summary
- Done: login page, signup flow and password reset.
- In progress: Stripe Checkout; the webhook handler is half written.
- Blocked: VAT rules for customers outside the EU need a decision from the owners.

## What works
- [x] Done: login page
- [x] Done: signup flow
- [x] Product list with filters
- [x] Admin stock editor

## What's left
- [ ] Checkout and webhook
- [ ] Order history for customers
- [ ] Shipping labels

## Known issues
- Sessions expire after 15 minutes on Safari; cookie settings to check.
""",
        "features/payments.md": """# Payments

Stripe Checkout in hosted mode. Refunds are made from the Stripe dashboard for now; the admin
page shows them after the `charge.refunded` webhook.
""",
        "index_intro": "Cline memory bank for Acme Shop. Read projectbrief first; activeContext and progress change most often.",
        "heading": "## Memory bank",
        "descs": {
            "projectbrief.md": "what Acme Shop is, requirements and goals",
            "productContext.md": "why the shop exists and how it should feel",
            "activeContext.md": "current focus, recent changes and next steps",
            "systemPatterns.md": "architecture, key patterns and conventions",
            "techContext.md": "stack, local setup and environments",
            "progress.md": "what works, what is left, known issues",
            "decisionLog.md": "decisions with dates and reasons",
        },
        "labels": {"productContext.md": "Product context", "progress.md": "Progress"},
        "source_marker": "Repo: `~/code/acme-shop-",
        "db_marker": "Staging database:",
        "link_marker": "(../docs/api-conventions.md)",
        "db_password": "Vq7rLz2pW9xK",
    },
    "zh": {
        "profile": "# 个人资料\n\n- 姓名：陈静\n- 在杭州做全栈开发，独立接项目。\n",
        "preferences": "# 偏好\n\n- 用中文回答，代码注释用英文。\n- 改数据库之前先说明方案。\n",
        "projectbrief.md": """# 项目简介

## 概述
小店是一个卖手工茶具的网店。顾客浏览商品、用微信支付下单并查看物流；店主在后台管理库存和发货。

## 核心需求
- 商品目录，支持分类、搜索和筛选
- 微信支付和支付宝
- 不注册也能通过短信链接查询订单
- 后台管理库存、价格和快递单

## 目标
- 2027 年春节前上线。
- 服务器费用每月不超过 200 元。

## 不做的事
- 多商家入驻
- 原生 App
""",
        "productContext.md": """# 产品背景

## 为什么要做
店主之前在电商平台开店，平台抽成高，而且拿不到顾客的联系方式，新品上架没法通知老顾客。

## 解决的问题
- 降低手续费：只付支付通道的费用。
- 店主自己的会员名单。
- 库存和货架一致：每件茶具都是独一无二的。

## 应该怎样工作
1. 顾客进入商品列表，按釉色或尺寸筛选。
2. 商品页展示所有照片，以及实际发货的那一件。
3. 下单后跳转微信支付，不需要注册。
4. 打印快递单后，顾客收到带物流链接的短信。

## 体验目标
- 在手机弱网下也要快。
- 以照片为主的安静设计，没有弹窗。
""",
        "activeContext.md": """# 当前上下文

更新：2026-11-27

## 摘要
- 当前重点：接入微信支付和支付回调。
- 订单模型在 2026-11-20 从一个 JSON 字段拆成了三张表。
- 待定：港澳台顾客的运费怎么算。

## 当前重点
正在接入微信支付：服务端创建预支付订单，回调把订单标记为已支付。回调必须幂等，因为微信会重试。

## 最近的改动
- 购物车从 localStorage 改成了服务端购物车（`src/lib/cart.ts`）。
- 订单拆成 `orders`、`order_items` 和 `shipments` 三张表。

## 下一步
1. 写完 `src/app/api/wxpay/notify/route.ts` 里的回调处理。
2. 在回调里发确认短信，而不是在支付成功页发。
3. 问店主港澳台的运费。
""",
        "systemPatterns.md": """# 系统模式

## 架构
Next.js App Router 加服务端组件；Prisma 访问 PostgreSQL。支付链路上唯一的外部服务是微信支付。

## 关键模式
- 所有表单都用 server action，写操作不走客户端 fetch。
- 金额用整数分存储，从不用浮点数。
- 每个回调事件先按事件 ID 存库，再处理。

## 约定
接口遵循 [接口约定](../docs/api-conventions.md)：名词复数，错误返回带 `code` 字段的 JSON。
""",
        "techContext.md": """# 技术背景

## 技术栈
- Next.js 15、TypeScript 5.6、Prisma 6
- PostgreSQL 16；微信支付；阿里云短信
- 部署：一台阿里云 ECS，Docker Compose

## 本地环境
1. 复制 `.env.example` 为 `.env.local`。
2. 设置 `DATABASE_URL=postgres://xd:${DB_PASSWORD}@localhost:5432/xiaodian`。
3. 设置 `WXPAY_API_KEY=<你的商户 API 密钥>`。
4. 运行 `pnpm install && pnpm prisma migrate dev && pnpm dev`。

npm 的访问令牌放在 `~/.npmrc` 里，不进仓库。

## 环境
- 生产：shop.example.cn，打 tag 后由 GitHub Actions 部署。
- 预发布数据库：postgres://xd_app:{db_password}@db.staging.internal:5432/xiaodian
- 路径：~/code/xiaodian-4f8a2c91
""",
        "progress.md": """# 进度

## 摘要
- 已完成：登录页、注册流程和找回密码。
- 进行中：微信支付；回调处理写了一半。
- 阻塞：港澳台运费规则要等店主决定。

## 已经可用
- [x] 登录页
- [x] 注册流程
- [x] 商品列表和筛选
- [x] 后台库存编辑

## 还没做
- [ ] 支付和回调
- [ ] 顾客的订单历史
- [ ] 快递单打印

## 已知问题
- Safari 上会话 15 分钟就过期，要检查 cookie 设置。
""",
        "features/payments.md": """# 支付

微信支付使用 Native 支付。退款暂时在商户平台上操作，回调到达后后台会显示退款状态。
""",
        "index_intro": "小店项目的 Cline 记忆库。先读 projectbrief；activeContext 和 progress 改得最勤。",
        "heading": "## 记忆库",
        "descs": {
            "projectbrief.md": "小店是什么、核心需求和目标",
            "productContext.md": "为什么做这个店、应该怎样工作",
            "activeContext.md": "当前重点、最近的改动和下一步",
            "systemPatterns.md": "架构、关键模式和约定",
            "techContext.md": "技术栈、本地环境和各个环境",
            "progress.md": "已经可用的、还没做的、已知问题",
            "decisionLog.md": "决策记录：日期和理由",
        },
        "labels": {"productContext.md": "产品背景", "progress.md": "进度"},
        "source_marker": "路径：~/code/xiaodian-",
        "db_marker": "预发布数据库：",
        "link_marker": "(../docs/api-conventions.md)",
        "db_password": "Hn4tR8wKs2qZ",
    },
    "ja": {
        "profile": "# プロフィール\n\n- 名前：佐藤 葵\n- 大阪在住のフリーランスのエンジニア。\n",
        "preferences": "# 好み\n\n- 回答は日本語で、コードのコメントは英語で。\n- DB を変更する前に方針を説明すること。\n",
        "projectbrief.md": """# プロジェクト概要

## 概要
- レシピ箱は家族でレシピを共有する Web アプリ。
- 写真と材料から買い物リストを作れる。
- 2027 年 4 月に家族向けベータ版を公開する。

## 主な要件
- レシピの登録、検索、タグ付け
- 材料から買い物リストを自動作成
- 家族グループでの共有と編集権限

## 目標
- スマホで片手で使えること。
- サーバー代は月 3,000 円以内。

## 対象外
- レシピの販売
- ネイティブアプリ
""",
        "productContext.md": """# プロダクトの背景

## なぜ作るのか
母のレシピがノートや写真に散らばっていて、家族の誰も全部を見つけられない。

## 解決する問題
- レシピを一か所に集める。
- 週末の買い物リストを家族で共有する。
- 分量を人数に合わせて自動で計算する。

## 使い方
1. 写真を撮ってレシピを登録する。
2. 今週作るレシピを選ぶ。
3. 買い物リストがまとめて作られ、家族に共有される。

## 体験の目標
- 台所でも読みやすい大きな文字。
- 広告なし、通知は最小限。
""",
        "activeContext.md": """# 現在のコンテキスト

更新：2026-11-27

## Summary
- 現在の作業：買い物リストの自動作成。
- 材料の単位変換を 2026-11-20 に共通モジュールへ移した。
- 未決定：家族グループの上限人数。

## 現在の作業
材料を店の売り場ごとにまとめて買い物リストにする。同じ材料は単位をそろえて合計する。

## 最近の変更
- 単位変換を `src/lib/units.ts` に移動した。
- レシピのタグを多対多のテーブルに変更した。

## 次のステップ
1. `src/app/api/lists/route.ts` の集計処理を仕上げる。
2. 家族への共有通知を追加する。
3. グループの上限人数を決める。
""",
        "systemPatterns.md": """# システムパターン

## アーキテクチャ
Next.js App Router とサーバーコンポーネント。Prisma で PostgreSQL にアクセスする。

## 主なパターン
- フォームはすべて server action を使う。
- 分量は有理数（分子と分母）で保存し、浮動小数点は使わない。
- 写真はアップロード時に縮小してから保存する。

## 規約
API は [API 規約](../docs/api-conventions.md) に従う：名詞は複数形、エラーは `code` 付きの JSON。
""",
        "techContext.md": """# 技術コンテキスト

## 技術スタック
- Next.js 15、TypeScript 5.6、Prisma 6
- PostgreSQL 16、画像は Cloudflare R2
- さくらの VPS 1 台、Docker Compose

## ローカル環境
1. `.env.example` を `.env.local` にコピーする。
2. `DATABASE_URL=postgres://recipe:${DB_PASSWORD}@localhost:5432/recipes` を設定する。
3. `R2_SECRET_ACCESS_KEY=<あなたのシークレットキー>` を設定する。
4. `pnpm install && pnpm prisma migrate dev && pnpm dev` を実行する。

npm のトークンは `~/.npmrc` に置き、リポジトリには入れない。

## 環境
- 本番：recipes.example.jp、タグを打つと GitHub Actions がデプロイする。
- ステージング DB：postgres://recipe_app:{db_password}@db.staging.internal:5432/recipes
- Repo: `~/code/recipe-box-9c3e5a17`
""",
        "progress.md": """# 進捗

## Summary
- 完了：ログイン画面、会員登録、パスワード再設定。
- 作業中：買い物リストの自動作成。集計処理は半分ほど。
- 保留：家族グループの上限人数はまだ決まっていない。

## 動いているもの
- [x] ログイン画面
- [x] 会員登録
- [x] レシピの登録と検索

## 残っているもの
- [ ] 買い物リスト
- [ ] 家族への共有
- [ ] 分量の人数換算

## 既知の問題
- Safari でセッションが 15 分で切れる。Cookie の設定を確認する。
""",
        "features/payments.md": """# 有料プラン

家族 10 人以上のグループ向けに有料プランを検討中。決済は Stripe を予定。
""",
        "index_intro": "レシピ箱の Cline メモリーバンク。まず projectbrief を読む。activeContext と progress が一番よく変わる。",
        "heading": "## メモリーバンク",
        "descs": {
            "projectbrief.md": "レシピ箱とは何か、要件と目標",
            "productContext.md": "なぜ作るのか、どう動くべきか",
            "activeContext.md": "現在の作業、最近の変更、次のステップ",
            "systemPatterns.md": "アーキテクチャ、主なパターン、規約",
            "techContext.md": "技術スタック、ローカル環境、各環境",
            "progress.md": "動いているもの、残っているもの、既知の問題",
            "decisionLog.md": "決定事項の記録：日付と理由",
        },
        "labels": {"productContext.md": "プロダクトの背景", "progress.md": "進捗"},
        "source_marker": "Repo: `~/code/recipe-box-",
        "db_marker": "ステージング DB：",
        "link_marker": "(../docs/api-conventions.md)",
        "db_password": "Wm3pQ8vXk2Lr",
    },
}


def cline_memory_bank(dir: Path, lang: str = "en") -> RealRoot:
    """A Cline memory bank (`memory-bank/*.md`) in English, Chinese or Japanese."""
    t = _CLINE[lang]
    b = _Builder(dir)
    b.write("_core/profile.md", t["profile"])
    b.write("_core/preferences.md", t["preferences"])
    b.lifecycle()
    b.write(".clinerules", "Read memory-bank/ at the start of every task.\n")
    for name in ("projectbrief.md", "productContext.md", "activeContext.md", "systemPatterns.md",
                 "techContext.md", "progress.md", "features/payments.md"):
        text = t[name].replace("{db_password}", t["db_password"])
        b.write(f"memory-bank/{name}", text)

    d, labels = t["descs"], t["labels"]
    sep = "：" if lang != "en" else ": "
    index = "\n".join([
        "# Memory index" if lang == "en" else "# 记忆索引" if lang == "zh" else "# メモリー索引",
        "",
        t["index_intro"],
        "",
        t["heading"],
        _route("bare", "memory-bank/projectbrief.md", "", d["projectbrief.md"]),
        f"- [{labels['productContext.md']}](memory-bank/productContext.md) — {d['productContext.md']}",
        f"- `memory-bank/activeContext.md`{sep}{d['activeContext.md']}",
        _route("wiki", "memory-bank/systemPatterns.md", "", d["systemPatterns.md"]),
        _route("angle", "memory-bank/techContext.md", "", d["techContext.md"]),
        _route("wiki-label", "memory-bank/progress.md", labels["progress.md"], d["progress.md"]),
        _route("bare", "memory-bank/decisionLog.md", "", d["decisionLog.md"]),
        "",
    ])
    b.write("_index.md", index)

    b.plant("_index.md", "PM201", "route to decisionLog.md, which this bank never had", at="memory-bank/decisionLog.md")
    b.plant("memory-bank/features/payments.md", "PM202", "a feature note nobody routed", whole_file=True)
    b.plant("memory-bank/systemPatterns.md", "PM402", "relative link to docs that are not in the root",
            at=t["link_marker"])
    b.plant("memory-bank/techContext.md", "PM401", "staging database URL with its password", at=t["db_marker"])
    b.plant("memory-bank/techContext.md", "PM403", "a source line naming a repository that does not exist "
            "(one finding, however the path is written)", at=t["source_marker"])
    # Not planted: progress.md's Summary starts "Done: login page, …" / "已完成：登录页…" — a list of
    # finished parts of ongoing work, not the work itself done (issue 13 item 8); the body's
    # "- [x] Done: login page" checkboxes never count (only metadata and Summary bullets do).
    if lang == "ja":
        # docs/design.md §4 names `## 概要` among the PM106 variants; here it holds three bullets right
        # after the title, so renaming it gives a valid summary: a true finding. (A `## 概要`
        # over prose — "overview" — is not in these fixtures: see the report to the lead.)
        b.plant("memory-bank/projectbrief.md", "PM106",
                "`## 概要` with three bullets right after the title: docs/design.md §4 lists it as a summary variant",
                at="## 概要")
    return b.finish()


# ---------------------------------------------------------------------------------------------
# CLAUDE.md template collection
# ---------------------------------------------------------------------------------------------

# (name, family, blurb, install, dev, test, lint, structure lines)
_STACKS = [
    ("React TypeScript", "node", "a single-page React 19 app built with Vite",
     "pnpm install", "pnpm dev", "pnpm vitest", "pnpm eslint . && pnpm prettier --check .",
     ["`src/components/` — reusable components, one folder each", "`src/routes/` — route components loaded lazily",
      "`src/hooks/` — shared hooks, prefixed with `use`"]),
    ("Next.js App Router", "node", "a Next.js 15 site using the App Router and server components",
     "npm ci", "npm run dev", "npm test", "npm run lint",
     ["`app/` — routes, layouts and server components", "`components/ui/` — shadcn/ui primitives",
      "`lib/` — server-only helpers and database access"]),
    ("Vue 3 Vite", "node", "a Vue 3 app using the Composition API and Pinia",
     "pnpm install", "pnpm dev", "pnpm test:unit", "pnpm lint",
     ["`src/views/` — one component per route", "`src/stores/` — Pinia stores", "`src/composables/` — shared logic"]),
    ("SvelteKit", "node", "a SvelteKit app with server-side rendering and form actions",
     "npm install", "npm run dev", "npm run test", "npm run check",
     ["`src/routes/` — pages and endpoints", "`src/lib/server/` — code that never reaches the browser",
      "`src/lib/components/` — shared components"]),
    ("Express API", "node", "a REST API on Express 5 with Zod validation",
     "npm ci", "npm run dev", "npm test", "npm run lint",
     ["`src/routes/` — one router per resource", "`src/middleware/` — auth, logging, errors",
      "`src/db/` — Knex migrations and queries"]),
    ("NestJS", "node", "a NestJS service with TypeORM and PostgreSQL",
     "npm ci", "npm run start:dev", "npm run test", "npm run lint",
     ["`src/modules/` — one Nest module per domain", "`src/common/` — guards, pipes, interceptors",
      "`test/` — end-to-end tests with Supertest"]),
    ("Astro Blog", "node", "a static blog built with Astro and MDX content collections",
     "pnpm install", "pnpm dev", "pnpm astro check", "pnpm lint",
     ["`src/content/posts/` — one MDX file per post", "`src/layouts/` — page layouts", "`public/` — static assets"]),
    ("Electron Desktop", "node", "a desktop app on Electron with a React renderer",
     "npm ci", "npm start", "npm test", "npm run lint",
     ["`src/main/` — the main process", "`src/preload/` — the context bridge",
      "`src/renderer/` — the React UI"]),
    ("Django", "python", "a Django 5 web application with server-rendered templates",
     "uv sync", "uv run python manage.py runserver", "uv run pytest", "uv run ruff check . && uv run ruff format --check .",
     ["`apps/` — one Django app per domain", "`config/settings/` — split settings per environment",
      "`templates/` — Django templates"]),
    ("FastAPI", "python", "an async API on FastAPI with SQLAlchemy 2 and Alembic",
     "uv sync", "uv run fastapi dev app/main.py", "uv run pytest", "uv run ruff check .",
     ["`app/routers/` — one router per resource", "`app/models/` — SQLAlchemy models",
      "`migrations/` — Alembic revisions"]),
    ("Flask", "python", "a small Flask app with Jinja templates and SQLite",
     "pip install -r requirements.txt", "flask --app app run --debug", "pytest", "ruff check .",
     ["`app/` — the application factory and blueprints", "`app/templates/` — Jinja templates",
      "`instance/` — the SQLite database, not committed"]),
    ("Data Science Notebook", "python", "a research repository of Jupyter notebooks and a small library",
     "uv sync", "uv run jupyter lab", "uv run pytest", "uv run ruff check src",
     ["`notebooks/` — numbered notebooks, run in order", "`src/` — functions the notebooks import",
      "`data/` — raw data, never edited in place"]),
    ("PyTorch Research", "python", "a PyTorch training codebase with Hydra configs",
     "uv sync", "uv run python train.py", "uv run pytest", "uv run ruff check .",
     ["`configs/` — Hydra configuration groups", "`models/` — model definitions",
      "`scripts/` — training and evaluation entry points"]),
    ("Scrapy Crawler", "python", "a Scrapy project that crawls public price lists",
     "pip install -r requirements.txt", "scrapy crawl prices", "pytest", "ruff check .",
     ["`crawler/spiders/` — one spider per site", "`crawler/pipelines.py` — cleaning and storage",
      "`crawler/settings.py` — throttling and user agent"]),
    ("Go Gin API", "go", "a JSON API written in Go with Gin and sqlc",
     "go mod download", "go run ./cmd/api", "go test ./...", "golangci-lint run",
     ["`cmd/api/` — the main package", "`internal/handlers/` — HTTP handlers", "`internal/db/` — sqlc-generated queries"]),
    ("Go CLI Cobra", "go", "a command-line tool in Go built on Cobra and Viper",
     "go mod download", "go run . --help", "go test ./...", "golangci-lint run",
     ["`cmd/` — one file per subcommand", "`internal/config/` — Viper configuration",
      "`internal/output/` — table and JSON printers"]),
    ("Rust Axum", "rust", "a web service in Rust on Axum and SQLx",
     "cargo fetch", "cargo run", "cargo test", "cargo clippy -- -D warnings && cargo fmt --check",
     ["`src/routes/` — one module per resource", "`src/db.rs` — the SQLx pool", "`migrations/` — SQLx migrations"]),
    ("Rust CLI Clap", "rust", "a command-line tool in Rust using clap and anyhow",
     "cargo fetch", "cargo run -- --help", "cargo test", "cargo clippy -- -D warnings",
     ["`src/main.rs` — argument parsing only", "`src/commands/` — one module per subcommand",
      "`tests/` — integration tests with assert_cmd"]),
    ("Tauri Desktop", "rust", "a Tauri 2 desktop app with a Svelte front end",
     "pnpm install", "pnpm tauri dev", "cargo test --manifest-path src-tauri/Cargo.toml", "pnpm lint",
     ["`src/` — the Svelte front end", "`src-tauri/src/` — Rust commands", "`src-tauri/tauri.conf.json` — app config"]),
    ("Spring Boot", "jvm", "a Spring Boot 3 service in Java 21 with Spring Data JPA",
     "./mvnw dependency:resolve", "./mvnw spring-boot:run", "./mvnw test", "./mvnw spotless:check",
     ["`src/main/java/.../web/` — controllers", "`src/main/java/.../domain/` — entities and services",
      "`src/main/resources/db/migration/` — Flyway migrations"]),
    ("Kotlin Android", "jvm", "an Android app in Kotlin with Jetpack Compose",
     "./gradlew dependencies", "./gradlew installDebug", "./gradlew test", "./gradlew ktlintCheck",
     ["`app/src/main/java/.../ui/` — Compose screens", "`app/src/main/java/.../data/` — repositories and Room",
      "`app/src/test/` — unit tests"]),
    ("Ruby on Rails", "ruby", "a Rails 8 application with Hotwire",
     "bundle install", "bin/dev", "bin/rails test", "bundle exec rubocop",
     ["`app/models/` — Active Record models", "`app/views/` — ERB views and Turbo frames",
      "`db/migrate/` — migrations"]),
    ("Laravel", "php", "a Laravel 11 application with Livewire",
     "composer install", "php artisan serve", "php artisan test", "./vendor/bin/pint --test",
     ["`app/Http/Controllers/` — controllers", "`app/Livewire/` — Livewire components",
      "`database/migrations/` — migrations"]),
    ("Flutter", "dart", "a Flutter app for iOS and Android using Riverpod",
     "flutter pub get", "flutter run", "flutter test", "flutter analyze",
     ["`lib/features/` — one folder per feature", "`lib/core/` — theme, routing, networking",
      "`test/` — widget and unit tests"]),
    ("SwiftUI iOS", "swift", "an iOS app in SwiftUI with SwiftData",
     "xcodebuild -resolvePackageDependencies", "open App.xcodeproj", "xcodebuild test -scheme App",
     "swiftlint",
     ["`App/Views/` — SwiftUI views", "`App/Models/` — SwiftData models", "`AppTests/` — XCTest cases"]),
    ("ASP.NET Core API", "dotnet", "an ASP.NET Core 9 minimal API with Entity Framework Core",
     "dotnet restore", "dotnet watch run", "dotnet test", "dotnet format --verify-no-changes",
     ["`src/Api/Endpoints/` — endpoint groups", "`src/Api/Data/` — the DbContext and migrations",
      "`tests/Api.Tests/` — xUnit tests"]),
]

_VARIANTS = [
    ("", "The repository holds one deployable application."),
    ("Monorepo", "The repository is a monorepo: each package has its own build, and shared code lives in `packages/shared/`."),
    ("Docker", "Everything runs in Docker Compose locally; `docker compose up` starts the app and its database."),
    ("Postgres", "PostgreSQL is the only datastore; migrations run on deploy, never by hand."),
    ("Team", "Several developers work here at once: keep pull requests small and rebase before merging."),
]

_FAMILY_STYLE = {
    "node": ["Use TypeScript strict mode; no `any` without a comment saying why.",
             "Prefer named exports; default exports only where the framework needs them.",
             "Format with Prettier defaults; do not fight the formatter."],
    "python": ["Type-annotate every public function; run the type checker before committing.",
               "Follow PEP 8 through ruff; line length is 100.",
               "Prefer pathlib over os.path, and f-strings over format()."],
    "go": ["Return errors, wrap them with `fmt.Errorf(\"...: %w\", err)`; never panic in library code.",
           "Keep packages small; no package named `utils`.",
           "Table-driven tests for anything with more than two cases."],
    "rust": ["No `unwrap()` outside tests; use `?` and `anyhow::Context`.",
             "Keep `clippy` clean with `-D warnings`.",
             "Prefer borrowing over cloning; explain every `clone()` on a hot path."],
    "jvm": ["Constructor injection only; no field injection.",
            "Immutable data classes or records for DTOs.",
            "One public class per file."],
    "ruby": ["Follow the Rails conventions before inventing a pattern.",
             "Fat models are fine; keep controllers thin.",
             "Use `rubocop -a` only on the files you touched."],
    "php": ["Follow PSR-12 through Pint.", "Form requests for validation, never in controllers.",
            "Eloquent relationships over raw joins."],
    "dart": ["Widgets stay small; extract anything over 80 lines.", "Riverpod providers are declared at top level.",
             "Run `dart format` before committing."],
    "swift": ["Views stay small; move logic into observable models.", "No force unwraps outside previews.",
              "SwiftLint warnings are errors in CI."],
    "dotnet": ["Nullable reference types are on; treat warnings as errors.", "Async all the way; no `.Result`.",
               "Records for request and response types."],
}

_FAMILY_CODE = {
    "python": ("```python\nimport os\n\nimport httpx\n\nAPI_KEY = os.environ[\"API_KEY\"]\n"
               "client = httpx.Client(headers={\"Authorization\": f\"Bearer {API_KEY}\"})\n```"),
    "node": ("```ts\nconst res = await fetch(url, {\n  headers: { Authorization: `Bearer ${process.env.API_TOKEN}` },\n});\n```"),
}

_CONVENTIONS = [
    "Dates are stored in UTC and shown in the user's time zone.",
    "Feature flags live in one file; remove a flag within two releases of shipping it.",
    "Log with structured fields, never with string concatenation.",
    "Every public endpoint has a rate limit.",
    "Migrations are additive; dropping a column takes two releases.",
    "Error messages say what to do next, not only what went wrong.",
    "No new dependency without checking its licence and last release date.",
    "Screenshots in pull requests for every visible change.",
    "Accessibility: every interactive element is reachable by keyboard.",
    "Money is an integer number of cents.",
    "Use the repository's logger, not print statements.",
    "Background jobs must be idempotent; they will run twice.",
    "Configuration comes from the environment; nothing secret in the repository.",
    "Cache keys include a version prefix so a deploy can invalidate them.",
    "Prefer composition over inheritance.",
    "Tests name the behaviour, not the method: `rejects_expired_tokens`.",
    "Translations go through the i18n files; no user-facing string in code.",
    "Keep functions under 40 lines unless splitting them hurts readability.",
    "Commit generated clients; regenerate them in a separate commit.",
    "Document every environment variable in `.env.example`.",
    "Avoid global state; pass dependencies explicitly.",
    "Benchmarks run on a quiet machine; compare medians, not single runs.",
    "Public APIs are versioned in the URL path.",
    "Delete dead code instead of commenting it out.",
]

_TEMPLATE_NOTES = [
    "The staging environment is reset every Monday at 06:00 UTC.",
    "The design system is documented in Storybook; check it before adding a component.",
    "The product owner reviews every change to the onboarding flow.",
    "Load tests run weekly; a regression of 10 % blocks the release.",
    "Customer data never leaves the EU region.",
    "The mobile team consumes this API; coordinate breaking changes with them.",
    "Analytics events are listed in the tracking plan; add new ones there first.",
    "Releases go out on Tuesdays and Thursdays only.",
    "On-call rotates weekly; the runbook explains every alert.",
    "Support tickets tagged `bug` are triaged within one working day.",
    "The search index is rebuilt nightly; a full rebuild takes forty minutes.",
    "Images are resized on upload to three widths.",
    "The legacy admin is frozen; fix bugs only, add no features.",
    "Old sessions are cleared by a cron job every night.",
    "The public status page updates itself from the health checks.",
    "Dependency updates arrive as grouped pull requests every Monday.",
]


def _template_text(rng: random.Random, stack: tuple, variant: tuple[str, str], extra_env: str = "") -> str:
    name, family, blurb, install, dev, test, lint, structure = stack
    vname, vblurb = variant
    conventions = rng.sample(_CONVENTIONS, 4)
    notes = rng.sample(_TEMPLATE_NOTES, 3)
    lines = [
        "# [PROJECT TITLE]",
        "",
        "[One paragraph: what this project does, who uses it, and what matters most when changing it.]",
        "",
        "## Overview",
        "",
        f"This is {blurb}. {vblurb}",
        "",
        "## Commands",
        "",
        f"- `{install}` — install dependencies",
        f"- `{dev}` — run it locally",
        f"- `{test}` — run the tests",
        f"- `{lint}` — lint and format",
        "",
        "## Project structure",
        "",
        *(f"- {s}" for s in structure),
        "",
        "## Code style",
        "",
        *(f"- {s}" for s in _FAMILY_STYLE[family]),
        *(f"- {c}" for c in conventions),
        "",
    ]
    code = _FAMILY_CODE.get(family)
    if code:
        lines += ["## Calling other services", "", "Read keys from the environment and send them as a bearer token:",
                  "", code, ""]
    lines += [
        "## Environment",
        "",
        "- Copy `.env.example` to `.env` and fill in `API_KEY=<your-api-key>`.",
        "- Never hard-code credentials; reference them as `${API_TOKEN}` in configuration files.",
        "- CI reads `$GITHUB_TOKEN`; never print it in logs.",
        *([extra_env] if extra_env else []),
        "",
        "## Git workflow",
        "",
        "- Branch from `main`; name branches `feat/…`, `fix/…` or `chore/…`.",
        "- Run the hooks in one **pass:** `--no-verify` is never acceptable.",
        "- Write commit messages in the imperative mood and explain why, not what.",
        "- Keep pull requests under 400 changed lines where possible.",
        "",
        "## Working with Claude",
        "",
        "- Read this file and `~/.claude/CLAUDE.md` before starting a task.",
        "- Ask before adding a dependency or changing a public interface.",
        "- Prefer small, reviewable changes, and explain the trade-offs you made.",
        "- Do not edit generated files under `dist/`, `build/` or `/usr/local/lib`.",
        "- When unsure, say so instead of guessing.",
        "",
        "## Notes",
        "",
        *(f"- {n}" for n in notes),
        "",
    ]
    return "\n".join(lines)


def template_names(n: int) -> list[tuple[str, tuple, tuple[str, str]]]:
    """(path, stack, variant) of the first `n` templates: every stack, then every stack again
    with the next variant, and so on."""
    out = []
    for k in range(n):
        stack = _STACKS[k % len(_STACKS)]
        variant = _VARIANTS[(k // len(_STACKS)) % len(_VARIANTS)]
        rounds = k // (len(_STACKS) * len(_VARIANTS))
        name = stack[0] + (f" {variant[0]}" if variant[0] else "") + (f" v{rounds + 1}" if rounds else "")
        out.append((f"templates/{name} CLAUDE.md", stack, variant))
    return out


_TEMPLATE_FORMS = ("code", "angle-link", "pct-link", "wiki", "angle", "wiki-label")


def template_collection(dir: Path, n: int = 60) -> RealRoot:
    """`n` CLAUDE.md templates titled `# [PROJECT TITLE]`, sharing their boilerplate, plus one
    near-duplicate copy of the FastAPI template (a few words changed, newer and shorter)."""
    if n < 12:
        raise ValueError("a template collection needs at least 12 templates")
    b = _Builder(dir)
    rng = random.Random(5020 + n)
    b.write("_core/profile.md", "# Profile\n\n- Name: Priya Raman\n- Staff engineer; collects CLAUDE.md templates for the team.\n")
    b.write("_core/preferences.md", "# Preferences\n\n- Keep templates generic: brackets for anything project-specific.\n")
    b.lifecycle()

    names = template_names(n)
    secret_at = 11  # Data Science Notebook: someone pasted their own key into the shared template
    key = "sk-" + "proj-" + _rng_token(random.Random(77), string.ascii_letters + string.digits, 64)
    texts: dict[str, str] = {}
    for k, (rel, stack, variant) in enumerate(names):
        extra = f"- My key for local runs: `OPENAI_API_KEY={key}`" if k == secret_at else ""
        texts[rel] = _template_text(rng, stack, variant, extra)
        b.write(rel, texts[rel])

    # The near-duplicate: the FastAPI template saved again under another name, a few words
    # changed (and one dropped), a day later. It is the newer and the shorter of the two.
    original = names[9][0]
    copy = "templates/FastAPI Service CLAUDE.md"
    copied = (texts[original]
              .replace("an async API on FastAPI", "an async service on FastAPI")
              .replace("run it locally", "run locally")
              .replace("- `uv run pytest` — run the tests", "- `uv run pytest` — run tests"))
    assert copied != texts[original] and len(copied) < len(texts[original])
    b.write(copy, copied, when=b.times[original] + dt.timedelta(days=1))

    b.write("templates/README.md", "# CLAUDE.md templates\n\nOne template per stack. Copy one into a new "
            "repository as `CLAUDE.md` and replace everything in brackets.\n")

    routed = names + [(copy, None, None)]
    lines = ["# Memory index", "", "CLAUDE.md templates, one per stack. Copy one into a new repository and fill in the brackets.", "",
             "## Templates"]
    table = []
    for k, (rel, _stack, _variant) in enumerate(routed):
        label = rel[len("templates/"):-len(" CLAUDE.md")]
        desc = f"CLAUDE.md for {label}"
        if k >= len(routed) - 4:
            table.append(_route("table", rel, label, desc))
        else:
            lines.append(_route(_TEMPLATE_FORMS[k % len(_TEMPLATE_FORMS)], rel, label, desc))
    missing = "templates/Elixir Phoenix LiveView CLAUDE.md"
    lines.append(_route("code", missing, "", "CLAUDE.md for Phoenix LiveView with Ecto and Oban"))
    lines += ["", "## More templates", "", "| Template | Use it for |", "| --- | --- |", *table, ""]
    b.write("_index.md", "\n".join(lines))

    b.plant("_index.md", "PM201", "route to a template that was never added", at=f"`{missing}`")
    b.plant("templates/README.md", "PM202", "the collection's README is not routed", whole_file=True)
    b.plant(names[secret_at][0], "PM401", "a real-looking OpenAI key pasted into one template", at="OPENAI_API_KEY=")
    b.plant(copy, "PM503", "near-duplicate of the FastAPI template (newer and shorter)", whole_file=True)
    b.plant_index_length("one route per template: the index is over the limits")
    return b.finish(duplicate=(original, copy), templates=n + 1)


# ---------------------------------------------------------------------------------------------
# Templated journal
# ---------------------------------------------------------------------------------------------

JOURNAL_END = dt.date(2026, 11, 30)  # the last daily note: the day before engine_helpers.TODAY

_J_OPEN = ["Woke up before the alarm", "Slept badly after the late call", "Quiet start to the day",
           "Rain against the window all morning", "The flat was cold until nine", "First coffee on the balcony",
           "Long dream about the old office", "Up early for the gym", "Slow morning with the radio on",
           "The neighbours were drilling again", "Fell asleep on the sofa and woke at five",
           "Heavy head this morning", "Bright and clear outside", "The heating clicked on at six",
           "Made porridge and read the news", "Walked the long way to the bakery", "Stretched for ten minutes",
           "Wrote before checking the phone", "The kids woke me at half six", "Tea instead of coffee today"]
_J_THOUGHT = [
    "I keep postponing the tax paperwork and it sits in the back of my mind",
    "the migration plan finally makes sense to me after drawing it on paper",
    "I want to spend less time in meetings that could be a short message",
    "my sister called about the summer trip and we picked two dates",
    "reading before bed works better than scrolling, when I manage it",
    "the garden needs a decision about the old apple tree",
    "I should write down what I learned from the outage last week",
    "running three times a week is realistic if I go before work",
    "the new team lead asks good questions and I like the pace",
    "there is too much unread mail and most of it can be archived",
    "cooking on Sunday for the whole week saves more time than I expected",
    "the book club pick is slow going but the last chapter was good",
    "I need a better system for receipts than the shoebox",
    "the bike needs new brake pads before the winter",
    "I am calmer on days that start without the phone",
    "the presentation went better than I feared",
    "planning the week on Sunday evening keeps Monday from feeling chaotic",
    "learning Spanish with ten minutes a day is slow but it adds up",
    "I owe three people a reply and should just do it today",
    "the apartment feels smaller with all the boxes from the move",
    "the code review backlog is growing and I should block an hour for it",
    "I liked how the workshop ended with everyone writing one next step",
    "my knee still hurts after the hike so I will skip the run",
    "the budget for the kitchen is tighter than we thought",
    "I want to visit grandma before the holidays get busy",
    "the choir rehearsal moved to Wednesdays which suits me better",
    "writing the design doc forced me to admit two open questions",
    "I forgot to water the plants again and the basil did not survive",
    "the landlord finally answered about the window",
    "I keep thinking about the conversation with Lea about changing teams",
    "there is a talk on Friday I would like to attend",
    "I should stop checking the news first thing",
    "the train was late twice this week and I am tired of it",
    "the old laptop is slow but replacing it can wait until spring",
    "I did not expect the interview to be so friendly",
    "the podcast about sleep gave me a few ideas worth trying",
    "I am reading slower than usual and that is fine",
    "the new recipe for lentil soup is a keeper",
    "we talked about adopting a dog and agreed to wait a year",
    "my handwriting gets worse the faster I think",
]
_J_DETAIL = ["especially after lunch", "more than I admit", "and that is fine", "if I am honest",
             "for the first time in weeks", "again", "somehow", "which surprised me", "at least for now",
             "like every autumn"]
_J_GRATITUDE = ["a long call with Mum", "sunlight in the kitchen", "fresh bread from the corner bakery",
                "a colleague who covered for me", "the quiet train ride", "a good night's sleep",
                "the cat asleep on the desk", "a walk along the river", "soup from the freezer",
                "a message from an old friend", "finishing the draft", "warm socks", "the library reopening",
                "a clear plan for tomorrow", "the first snow", "tea with lemon and honey", "a tidy desk",
                "laughing at dinner", "a free afternoon", "the bus arriving on time"]
_J_TASKS = ["Call the dentist", "Pay the electricity bill", "Send the invoice to Marta", "Book train tickets",
            "Renew the library books", "Water the plants", "Back up the laptop", "Reply to the landlord",
            "Buy a birthday present for Jonas", "Fix the bathroom tap", "Clean out the fridge",
            "Prepare slides for Thursday", "Return the parcel", "Update the budget sheet", "Order new glasses",
            "Draft the quarterly review", "Sort the receipts", "Change the bed sheets"]
_J_MOODS = ["calm", "tired", "restless", "content", "focused", "scattered", "hopeful", "grumpy", "steady", "light"]
_J_WEATHER = ["rain", "sun", "fog", "wind", "snow", "clouds", "drizzle", "frost"]
_J_EVENING = ["Went to bed on time", "Stayed up too late with a series", "Read two chapters",
              "Cooked dinner with friends", "Called it a day at six", "Worked late on the report",
              "Long bath and an early night", "Walked to the river after dinner"]


def _journal_day(rng: random.Random, day: dt.date) -> tuple[str, str]:
    """The text of one daily note, and the route description for it."""
    morning = []
    for _ in range(9):
        morning.append(f"{rng.choice(_J_OPEN)}, and {rng.choice(_J_THOUGHT)} {rng.choice(_J_DETAIL)}.")
    gratitude = rng.sample(_J_GRATITUDE, 3)
    tasks = rng.sample(_J_TASKS, 2)
    evening = rng.choice(_J_EVENING)
    text = "\n".join([
        f"# {day.isoformat()}",
        "",
        "Tags: #journal #daily",
        f"Mood: {rng.choice(_J_MOODS)}",
        f"Weather: {rng.choice(_J_WEATHER)}",
        "",
        "## Morning pages",
        "",
        " ".join(morning[:3]),
        "",
        " ".join(morning[3:6]),
        "",
        " ".join(morning[6:]),
        "",
        "## Gratitude",
        "",
        *(f"{i + 1}. {g}" for i, g in enumerate(gratitude)),
        "",
        "## Tasks",
        "",
        "- [ ] Review inbox",
        "- [ ] Plan the three most important tasks for today",
        "- [ ] Walk for thirty minutes before lunch",
        *(f"- [ ] {t}" for t in tasks),
        "",
        "## Evening review",
        "",
        "- What went well today?",
        "- What would I do differently tomorrow?",
        f"- {evening}.",
        "",
    ])
    first = morning[0]
    desc = f"{day.strftime('%a')} {day.day} {day.strftime('%b')}: {first[:-1].lower()}; grateful for {gratitude[0]}"
    return text, desc[:158]


_JOURNAL_FORMS = ("wiki", "pct-link", "code", "angle")


def journal_path(day: dt.date) -> str:
    return f"journal/{day.year}/{day.isoformat()}.md"


def templated_journal(dir: Path, n: int = 500) -> RealRoot:
    """`n` daily notes from one template, the last on `JOURNAL_END`; one day copied to the
    next with two words changed (the planted near-duplicate)."""
    if n < 20:
        raise ValueError("a templated journal needs at least 20 notes")
    b = _Builder(dir)
    rng = random.Random(2000)
    b.write("_core/profile.md", "# Profile\n\n- Name: Jonas Berg\n- Keeps a daily journal in Obsidian since 2021.\n")
    b.write("_core/preferences.md", "# Preferences\n\n- Never quote the journal back at length; summarise.\n")
    b.lifecycle()

    days = [JOURNAL_END - dt.timedelta(days=n - 1 - i) for i in range(n)]
    dup = n // 2  # days[dup] is copied to days[dup + 1]
    unrouted = dup + 5
    linked = dup + 10
    texts: dict[str, str] = {}
    descs: dict[str, str] = {}
    for i, day in enumerate(days):
        rel = journal_path(day)
        text, desc = _journal_day(rng, day)
        if i == dup + 1:
            # Yesterday's note copied: the title's date updated, and two words changed.
            prev = texts[journal_path(days[dup])]
            text = prev.replace(f"# {days[dup].isoformat()}", f"# {day.isoformat()}", 1)
            text = re.sub(r"^Weather: \w+$", "Weather: sleet", text, count=1, flags=re.M)
            text = re.sub(r"^Mood: \w+$", "Mood: wistful", text, count=1, flags=re.M)
            desc = descs[journal_path(days[dup])].replace(days[dup].strftime("%a") + f" {days[dup].day} ",
                                                          day.strftime("%a") + f" {day.day} ", 1)
        if i == linked:
            text = text.replace("## Evening review",
                                "Standup notes are in [the meeting log](../../meetings/standup%20log.md).\n\n"
                                "## Evening review", 1)
        texts[rel], descs[rel] = text, desc
        b.write(rel, text, when=dt.datetime.combine(day, dt.time(22, 0)))

    lines = ["# Memory index", "", "Daily notes, one route per day. Search by date.", ""]
    year = None
    for i, day in enumerate(days):
        if day.year != year:
            year = day.year
            lines += ([""] if i else []) + [f"## {year}"]
        if i == unrouted:
            continue
        rel = journal_path(day)
        lines.append(_route(_JOURNAL_FORMS[i % len(_JOURNAL_FORMS)], rel, day.isoformat(), descs[rel]))
    typo = f"journal/{JOURNAL_END.year}/{JOURNAL_END.year}-11-31.md"
    lines.append(_route("wiki", typo, "", "Mon 1 Dec: the note for today, with the date typed wrong"))
    lines.append("")
    index = "\n".join(lines)
    b.write("_index.md", index)

    # The copy is the later day (and its file changed later): PM503 goes on it, naming the
    # original. No other pair is near-duplicate (see `similar_pairs`), though every note
    # shares the template's headings and prompts (issue 13 item 2).
    copy = journal_path(days[dup + 1])
    b.plant(copy, "PM503", "yesterday's note copied with two words changed (the newer of the pair)", whole_file=True)
    b.plant("_index.md", "PM201", "route to November 31st", at=typo[:-3])
    b.plant(journal_path(days[unrouted]), "PM202", "a day with no route", whole_file=True)
    b.plant(journal_path(days[linked]), "PM402", "link to a meeting log that is not in the root",
            at="(../../meetings/standup%20log.md)")
    b.plant_index_length("one route per day: the index is over the limits")
    return b.finish(duplicate=(journal_path(days[dup]), copy), notes=n,
                    index_bytes=len(index.encode("utf-8")))


# ---------------------------------------------------------------------------------------------
# Foam vault
# ---------------------------------------------------------------------------------------------

_FOAM_REFS_BEGIN = '[//begin]: # "Autogenerated link references for markdown compatibility"'
_FOAM_REFS_END = '[//end]: # "Autogenerated link references"'

_FOAM = {
    "getting-started.md": f"""# Getting started

Foam is a personal knowledge base on top of VS Code and Markdown. Start with [[inbox]] and
follow the links; every note can link to another with `[[wikilinks]]`.

- Create a note with the command palette: **Foam: Create New Note**.
- Open today's daily note with **Alt+D**.
- See how notes connect with **Foam: Show Graph**.

{_FOAM_REFS_BEGIN}
[inbox]: inbox.md "Inbox"
{_FOAM_REFS_END}
""",
    "inbox.md": """# Inbox

Things to sort into notes later.

- Look at [[note-a]] again and merge it with [[foam-tips]].
- Try the graph filters.

[draft]: drafts/launch-post.md is the working copy until the post goes out.

Questions for the Foam community call[^1].

[^1]: Next call is on the first Thursday of the month.
""",
    "notes/note-a.md": f"""# Note A

Note A collects ideas about linking. It points to [[note-b]] and to [[foam-tips]]; both are
resolved by name, whatever folder they live in.

Backlinks show up in the Foam panel, not in the note itself.

{_FOAM_REFS_BEGIN}
[note-b]: note-b.md "Note B"
[foam-tips]: foam-tips.md "Foam tips"
{_FOAM_REFS_END}
""",
    "notes/note-b.md": f"""# Note B

Note B is where the retro ideas started: see [[note-a]] and the retro [[retro-2026-q3]].

{_FOAM_REFS_BEGIN}
[note-a]: note-a.md "Note A"
[retro-2026-q3]: ../journal/retro-2026-q3.md "Retro 2026 Q3"
{_FOAM_REFS_END}
""",
    "notes/foam-tips.md": """# Foam tips

## Summary
- Link reference definitions make wiki-links work on GitHub too.
- Placeholders (links to notes that do not exist yet) show in the graph.
- Daily notes go into `journal/`.

## Settings

`foam.edit.linkReferenceDefinitions` set to `withExtensions` writes definitions like
`[note-a]: note-a.md "Note A"` at the bottom of each note. See [Note A](note-a.md).

A link to a note that does not exist yet is a placeholder: [[a-placeholder-note]].
""",
    "notes/keyboard shortcuts.md": """# Keyboard shortcuts

The ones I keep forgetting:

[Ctrl+Shift+P]: command palette, then type "Foam" to see every command
[Alt+D]: opens today's daily note

- **Ctrl+Click** on a wiki-link opens the note.
- **Ctrl+Shift+F** searches every note.
""",
    "journal/2026-11-20.md": """# 2026-11-20

- Set up the docs site for the launch.
- New deploy token for the docs site: {token}
- Moved the shortcuts note out of the inbox: [[keyboard shortcuts]].
""",
    "journal/2026-11-21.md": """# 2026-11-21

- Wrote the first half of the launch post.
- Graph view is getting crowded; tag notes by project.
""",
    "projects/launch.md": """# Launch

## Summary
- Shipped on 2026-11-25.
- The docs site and the blog post went out the same day.
- Feedback is collected in [[inbox]].

## Links

- The old plan is in [the roadmap](roadmap-2025.md).
- See the [raw export](~/exports-8d41c0f2-6b7e/foam-graph.json) of the graph for the retro.
""",
}


def foam_vault(dir: Path) -> RealRoot:
    """A Foam vault: `[[wikilinks]]`, Foam's link reference definitions, and prose lines that
    look like definitions but are not (CommonMark: a definition's destination is followed only
    by an optional title)."""
    b = _Builder(dir)
    token = "gh" + "p_" + _rng_token(random.Random(4020), string.ascii_letters + string.digits, 36)
    b.write("_core/profile.md", "# Profile\n\n- Name: Alex Moreau\n- Writes docs for an open-source project; notes in Foam.\n")
    b.write("_core/preferences.md", "# Preferences\n\n- Keep wiki-links; do not convert them to Markdown links.\n")
    b.lifecycle()
    b.write(".vscode/settings.json", '{"foam.edit.linkReferenceDefinitions": "withExtensions"}\n')
    for rel, text in _FOAM.items():
        b.write(rel, text.replace("{token}", token))

    index = "\n".join([
        "# Memory index",
        "",
        "My Foam workspace. Wiki-links resolve by note name.",
        "",
        "- [[getting-started]] — what Foam is and the first commands",
        "- inbox.md — things to sort into notes later",
        "- [Note A](notes/note-a.md) — ideas about linking",
        "- [[notes/note-b|Note B]] — where the retro ideas started",
        "- <notes/foam-tips.md> — link reference definitions, placeholders, daily notes",
        "- `notes/keyboard shortcuts.md` — the shortcuts I keep forgetting",
        "- [[notes/weekly-review]] — the weekly review checklist",
        "- [[journal/2026-11-20]] — docs site set-up for the launch",
        "- [Launch](projects/launch.md) — the launch of the docs site and the blog post",
        "",
    ])
    b.write("_index.md", index)

    b.plant("_index.md", "PM201", "route to a weekly review note that was never written", at="[[notes/weekly-review]]")
    b.plant("journal/2026-11-21.md", "PM202", "a daily note with no route", whole_file=True)
    b.plant("journal/2026-11-20.md", "PM401", "a GitHub token pasted into a daily note", at="New deploy token")
    # Foam leaves a definition behind when a note is deleted. It is a real CommonMark
    # definition (destination, then only a title), so its missing target is a true PM402,
    # unlike `[Ctrl+Shift+P]: command palette, …` or `[draft]: drafts/launch-post.md is …`,
    # which are paragraphs (issue 13 item 3), and `[^1]: …`, a footnote.
    b.plant("notes/note-b.md", "PM402", "a real link reference definition to a deleted note",
            at="[retro-2026-q3]: ../journal/retro-2026-q3.md")
    b.plant("projects/launch.md", "PM402", "relative link to a missing roadmap", at="(roadmap-2025.md)")
    b.plant("projects/launch.md", "PM403", "link target to an export that does not exist", at="[raw export](~/exports-")
    b.plant("projects/launch.md", "PM502", "a Summary bullet saying the work itself shipped", at="- Shipped on 2026-11-25.")
    return b.finish()


# ---------------------------------------------------------------------------------------------
# Near-duplicates, measured independently of the engine
# ---------------------------------------------------------------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")


def shingle_set(text: str) -> frozenset[tuple[str, str, str]]:
    """Word 3-shingles of the text (NFKC, case-folded; a CJK character counts as a word), the
    measure the design's PM503 threshold (0.9) is stated in."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return frozenset(zip(words, words[1:], words[2:], strict=False))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def similar_pairs(root: Path, folder: str, threshold: float = 0.9) -> list[tuple[str, str, float]]:
    """Every pair of Markdown files under `root/folder` at least `threshold` similar (all pairs
    compared: for checking fixtures, not for speed)."""
    rels = sorted(p.relative_to(root).as_posix() for p in (root / folder).rglob("*.md"))
    sets = [shingle_set((root / r).read_text(encoding="utf-8")) for r in rels]
    out = []
    for i in range(len(rels)):
        for j in range(i + 1, len(rels)):
            s = jaccard(sets[i], sets[j])
            if s >= threshold:
                out.append((rels[i], rels[j], s))
    return out


# Every real-shaped fixture root by name: what tests/engine/test_real_notes.py checks and
# benchmarks/precision.py counts (one table, so the two always speak of the same roots).
BUILDERS = {
    "obsidian": obsidian_vault,
    "cline-en": lambda d: cline_memory_bank(d, "en"),
    "cline-zh": lambda d: cline_memory_bank(d, "zh"),
    "cline-ja": lambda d: cline_memory_bank(d, "ja"),
    "templates": lambda d: template_collection(d, 60),
    "journal-500": lambda d: templated_journal(d, 500),
    "foam": foam_vault,
}
# The codes no fixture plants or labels: allowed anywhere, counted apart.
UNLABELLED = ("PM100", "PM501")
