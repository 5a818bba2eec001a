"""The rule catalogue: every code pmem knows, with its name, default severity and why it exists.

Explanations are written for the person who sees the diagnostic; each traces back to the
Persistent Memory format (spec v0.8.0) or to DESIGN §4.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Finding, Severity

E, W, I, H = Severity.ERROR, Severity.WARNING, Severity.INFORMATION, Severity.HINT


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str
    severity: Severity
    explanation: str


RULES: dict[str, Rule] = {
    r.code: r
    for r in (
        Rule("PM001", "lifecycle-missing", W,
             "The lifecycle structure (`_archive/`, `_archive/_trash/`, `_archive/_index.md`) is "
             "incomplete. Archive, delete and recover need it, and the format says to run "
             "`memory upgrade` first; `pmem upgrade` creates only what is missing."),
        Rule("PM002", "index-missing", W,
             "Active memory files exist but `_index.md` does not. Agents find on-demand files "
             "only through the index, so none of them can be loaded on demand."),
        Rule("PM003", "core-missing", I,
             "`_core/profile.md` or `_core/preferences.md` is missing. These are the baseline "
             "context every agent reads when memory is loaded."),
        Rule("PM004", "core-too-large", W,
             "`_core/` is larger than `core.maxBytes`. Everything in `_core/` is loaded on every "
             "activation; the format asks to keep it small. Move detail into on-demand files."),
        Rule("PM005", "raw-material", W,
             "A non-Markdown or very large file is stored in memory. The format keeps raw "
             "repositories, downloads, media and datasets in their project workspaces and stores "
             "a short description and a path in memory instead."),
        Rule("PM006", "index-too-long", W,
             "`_index.md` is longer than `index.maxLines` or `index.maxBytes`. It is read on every "
             "activation, and agents truncate long indexes: keep one short line per file."),
        Rule("PM100", "summary-missing", H,
             "This active file has no `## Summary`. That is valid (legacy files are read whole), "
             "but a summary of 3 to 6 bullets lets agents answer from it without reading the "
             "whole file."),
        Rule("PM101", "summary-misplaced", W,
             "The summary must come immediately after the title and optional metadata lines. "
             "Agents read it first only from there; elsewhere it is an ordinary section."),
        Rule("PM102", "summary-bullet-count", W,
             "A summary holds three to six factual bullets about current status, key decisions, "
             "results or constraints."),
        Rule("PM103", "summary-non-bullet", W,
             "A summary holds only top-level `-`, `*` or `+` bullets (with indented continuation "
             "lines). Other content makes it invalid, and agents fall back to reading the whole "
             "file."),
        Rule("PM104", "summary-empty-bullet", W,
             "A summary bullet is empty or a placeholder (`TODO`, `TBD`, `...`, `xxx`, `<…>`). "
             "Agents answer from the summary, so every bullet must state a fact."),
        Rule("PM105", "summary-duplicate", W,
             "A file has one summary. A second `## Summary` or `## 摘要` heading is ambiguous."),
        Rule("PM106", "summary-heading-variant", W,
             "This heading looks like a summary but is not recognised: only `## Summary` and "
             "`## 摘要` are (exactly, level 2). Rename it so agents read it first."),
        Rule("PM107", "summary-not-applicable", I,
             "Summaries apply to active on-demand files only. `_core/` and `_index.md` are always "
             "read whole, so a summary there is never used."),
        Rule("PM201", "route-dangling", E,
             "This route points to a file that does not exist. Agents following it find nothing."),
        Rule("PM202", "route-missing", W,
             "This active file has no route in `_index.md`, so agents never load it on demand. "
             "Add a one-line route, or archive the file."),
        Rule("PM203", "route-duplicate", W,
             "The same file is routed more than once. Keep one line per file."),
        Rule("PM204", "route-invalid-target", E,
             "Routes point to active on-demand Markdown files inside the root. `_core/` is always "
             "loaded, `_archive/` is never loaded, and absolute paths, URLs, hidden and "
             "non-Markdown files are not memory files."),
        Rule("PM205", "route-archived", E,
             "This route points to a file that now lives in `_archive/`. Archived files must not "
             "be routed: remove the line (recover the file to route it again)."),
        Rule("PM206", "route-malformed", W,
             "An index line mentions a file but does not start with a target, or a route has no "
             "description. A route is one line: a target (`[Title](path)`, `<path>`, `` `path` ``, "
             "`[[path]]` or a bare `path.md`), then a separator and a short description."),
        Rule("PM207", "route-description-long", I,
             "This route's description is over 160 characters. The index is read on every "
             "activation; keep each route to one short line."),
        Rule("PM301", "archive-unrecorded", W,
             "This file is in `_archive/` but `_archive/_index.md` has no record of it, so its "
             "original path and route line are unknown and it cannot be recovered cleanly."),
        Rule("PM302", "archive-record-dangling", W,
             "This archive record points to a location where no file exists."),
        Rule("PM303", "archive-record-incomplete", W,
             "This archive record misses fields or has bad values. A record keeps status, "
             "original path, location, the exact index line and the dates, so that recover can "
             "restore the file and its route exactly. (A record without `index-line` is a legacy "
             "record: reported as information.)"),
        Rule("PM304", "trash-expired", I,
             "This trashed file is past its `recover-by` date. It may be purged, but only with a "
             "separate explicit confirmation."),
        Rule("PM305", "recover-blocked", I,
             "The original path of this archived file is occupied by another file, so recovering "
             "it would collide. Rename one of them first."),
        Rule("PM401", "secret", E,
             "This looks like a password, API key, token, private key or credentialed URL. Memory "
             "is plain text read by every agent the person uses, so a secret here travels far "
             "(the format's core rule 6). Remove it and keep it in a password manager; if it is "
             "not a secret, allow it on this line with `<!-- pmem: allow-secret -->`. The "
             "message names the kind and shows at most the first four characters."),
        Rule("PM402", "broken-link", W,
             "This relative link points to a file that does not exist in the root."),
        Rule("PM403", "source-path-missing", I,
             "This points to source material outside the memory root (a `~/…` or absolute path in "
             "a code span or a link) that does not exist on this machine. The format keeps raw "
             "material in its workspace and a path to it in memory; a path that no longer "
             "resolves sends agents nowhere. Update it, or say where the material went. Checked "
             "with `stat` only: nothing outside the root is read."),
        Rule("PM501", "stale", I,
             "This active file has not changed for `stale.days` (default 90): by its last commit "
             "when the root is a git repository, else by its modification time. Memory health "
             "proposes archiving inactive files, so agents stop loading them on demand; archived "
             "files keep a record and can be recovered. The quick fix archives it, after "
             "confirmation."),
        Rule("PM502", "concluded", I,
             "This file says its work is finished: a `Status:` of done, completed, closed, shipped, "
             "finished, archived or concluded (完成, 已完成, 结束), or a Summary bullet that says "
             "so. Concluded material belongs in `_archive/`; the quick fix archives it with that "
             "line as the reason, after confirmation."),
        Rule("PM503", "duplicate-content", I,
             "This active file is a near-duplicate of another: the same normalised title, or text "
             "at least `duplicates.threshold` (default 0.9) similar. It is reported on the newer "
             "(or shorter) of the two, naming the other. Keep one: the quick fix archives this "
             "one (\"duplicate of …\"), after confirmation."),
    )
}


def rule(code: str) -> Rule:
    return RULES[code]


def severity_of(f: Finding) -> Severity:
    """The finding's severity: as set by `apply_settings`, else its rule's default."""
    return f.severity or RULES[f.code].severity
