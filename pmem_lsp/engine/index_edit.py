"""Editing the two indexes as text: route lines in `_index.md`, records in `_archive/_index.md`.

Shared by the lifecycle plans and the quick fixes, so a route is written, placed and removed
the same way everywhere (docs/design.md §2.3, §2.4). Every function takes the current text and returns
the new text; line endings of the file are kept.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING
from urllib.parse import quote

from .archive_index import (
    DIALECTS,
    NO_ROUTE,
    PATH_KEYS,
    PMEM,
    TRASHED,
    V010,
    V010_ORDER,
    ArchiveRecord,
    dialect_of_records,
    parse_archive_index,
    record_text,
    written_name,
)
from .index_routes import ANGLE, BARE, CODE_SPAN, LINK, WIKI, Route, parse_index
from .line_index import newline_of, split_keepends
from .memory_file import MemoryFile
from .names import uri_quote
from .secrets import find_secrets
from .zones import ARCHIVE_INDEX, INDEX

if TYPE_CHECKING:
    from .root_state import RootState

_RE_LIST_MARKER = re.compile(r"^\s*([-*+]|\d{1,9}[.)])\s")
DEFAULT_SEPARATOR = " — "


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def routes_to(index_text: str, path: str) -> list[Route]:
    return [r for r in parse_index(MemoryFile(index_text)).routes if r.path == path]


def remove_lines(text: str, line_numbers: set[int]) -> str:
    return "".join(line for i, line in enumerate(split_keepends(text)) if i not in line_numbers)


# -- writing a route --------------------------------------------------------
def link_destination(path: str) -> str:
    """A Markdown link destination that reads back as `path`: `%`, `#` and `?` escaped (they
    would read as an escape, a fragment or a query), and `<…>` around a path with spaces or
    parentheses (`[A b](<notes/a b.md>)`), or percent escapes where it holds `<` or `>`."""
    out = path.replace("%", "%25").replace("#", "%23").replace("?", "%3F")
    if not any(c in out for c in " ()<>\\`"):
        return out
    if "<" not in out and ">" not in out:
        return f"<{out}>"
    for c, code in ((" ", "%20"), ("(", "%28"), (")", "%29"), ("<", "%3C"), (">", "%3E"), ("`", "%60")):
        out = out.replace(c, code)
    return out


def readable(name: str) -> str:
    """`name` as words for a route's title or description: a byte that is not UTF-8 as U+FFFD.
    The route's target carries the exact bytes; this is text a person reads, and `names.shown`'s
    `\\xff` would be taken for a path by `_label` (a backslash becomes `/`)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace") if not_utf8(name) else name


def _label(title: str, path: str) -> str:
    """Link text that cannot end the link early or escape: brackets become parentheses."""
    label = " ".join((title or "").split()) or path
    return label.replace("[", "(").replace("]", ")").replace("\\", "/").replace("`", "'")


def _written_target(form: str, path: str, title: str) -> str:
    if form == WIKI:
        return f"[[{path[:-3] if path.lower().endswith('.md') else path}]]"
    if form == ANGLE:
        return f"<{path}>"
    if form == CODE_SPAN:
        return f"`{path}`"
    if form == BARE:
        return path
    return f"[{_label(title, path)}]({link_destination(path)})"


def reads_back(line: str, path: str) -> bool:
    """Does `line` (a list item or table row) parse as a route to `path`?"""
    model = parse_index(MemoryFile(line + "\n"))
    return len(model.routes) == 1 and model.routes[0].path == path and not model.malformed


def not_utf8(path: str) -> bool:
    """A name the file system gave as bytes that are not UTF-8 (held as lone surrogates)."""
    return not path.isascii() and any("\udc80" <= c <= "\udcff" for c in path)


# The forms nearest to one that cannot hold a path, before a link: a bare path cannot hold a
# root-level name with spaces (`My note.md — …` is no route), but `` `My note.md` `` keeps the
# look of an index of bare paths (docs/decisions.md, "Route titles and descriptions").
_FALLBACK_FORMS = {BARE: (CODE_SPAN, ANGLE), CODE_SPAN: (ANGLE,), ANGLE: (CODE_SPAN,)}


def format_target(form: str, path: str, title: str) -> str:
    """`path` written as a route target of `form`, or, when that form cannot hold it (a wiki
    link cannot hold `[`, a code span `%20`, a bare path a root-level name with spaces…), as
    the nearest form that can (`_FALLBACK_FORMS`), else as a link: whatever pmem writes
    parses back to the same path."""
    if not_utf8(path):
        # `_index.md` is UTF-8 text: only a link's `%` escapes can carry the name's bytes
        # (`notes/bad%FF.md`), which the route reader decodes back to them (issue 40).
        return f"[{_label(title, readable(path))}]({uri_quote(path)})"
    target = _written_target(form, path, title)
    for tried in (*_FALLBACK_FORMS.get(form, ()), LINK):
        if reads_back(f"- {target} — x", path):
            break
        target = _written_target(tried, path, title)
    if not reads_back(f"- {target} — x", path):
        target = f"[{_label(title, path)}]({quote(path, safe='/')})"  # every unusual character escaped
    # A root-level name that begins as a home or environment alias does (`$top.md`,
    # `~draft.md`) is read as one in every form: `./` makes it the root's file, in the index's
    # own form where it can (a v0.10 root's bare `./$top.md`, which its reference CLI reads
    # too), else as a link (its other characters escaped where the plain one does not read back).
    label = _label(title, path)
    for dotted in (_written_target(form, "./" + path, title), f"[{label}]({link_destination('./' + path)})",
                   f"[{label}]({quote('./' + path, safe='/')})"):
        if reads_back(f"- {target} — x", path):
            break
        target = dotted
    return target


def route_style(index_text: str, dialect: str = PMEM) -> tuple[str, str, str]:
    """(list marker, target form, separator) that most existing routes use; with none, the
    root's dialect's: `- path — …` in v0.10 (the line its reference CLI reads), else
    `- [Title](path) — …`."""
    doc = MemoryFile(index_text)
    routes = [r for r in parse_index(doc).routes if not r.table]
    if not routes:
        return "-", BARE if dialect == V010 else LINK, DEFAULT_SEPARATOR
    markers: Counter[str] = Counter()
    separators: Counter[str] = Counter()
    for r in routes:
        line = doc.lines[r.line]
        m = _RE_LIST_MARKER.match(line)
        if m:
            markers["-" if m.group(1)[0].isdigit() else m.group(1)] += 1
        rest = line[r.end:]
        sep = re.match(r"^[^\s—–:：|-]*?(\s*(?:—|–|-|:|：|\|)\s*)", rest.lstrip(")>`]"))
        if sep and r.description:
            separators[sep.group(1)] += 1
    forms = Counter(r.form for r in routes)
    return (markers.most_common(1)[0][0] if markers else "-", forms.most_common(1)[0][0],
            separators.most_common(1)[0][0] if separators else DEFAULT_SEPARATOR)


def propose_route(index_text: str, path: str, title: str | None, description: str | None,
                  dialect: str = PMEM) -> str:
    """A route line for `path` in the style most routes use; `- [Title](path) — description`
    when there is none. The description is the first Summary bullet, else the title. A title
    or bullet that holds a likely secret is not copied: the index is read by every agent."""
    marker, form, separator = route_style(index_text, dialect)
    title = " ".join((_no_secret(title) or readable(path.rsplit("/", 1)[-1].removesuffix(".md"))).split())
    desc = " ".join((_no_secret(description) or title).split())
    line = f"{marker} {format_target(form, path, title)}{separator}{desc}"
    if not reads_back(line, path):
        # The separator or the description changed how the line reads: the default style does not.
        line = f"- {format_target(LINK, path, title)}{DEFAULT_SEPARATOR}{desc}"
    return line


def route_title(doc: MemoryFile | None, path: str) -> str:
    """A route's title for the memory file `path` (docs/decisions.md, "Route titles and
    descriptions"): front matter `title:` (else `name:`); else the `# ` heading that is the
    document's title (its first line after front matter, blank lines and comments); else the
    file name without `.md`, as Obsidian titles a note. A heading further down (`# 1.Definición`
    after a note's opening line, an Excalidraw drawing's `# Text Elements`) is no title."""
    if doc is not None:
        for key in ("title", "name"):
            text = doc.front_matter_text(key)
            if text:
                return text
        if doc.title is not None and doc.title.text.strip():
            return " ".join(doc.title.text.split())
    name = path.rsplit("/", 1)[-1]
    return readable(name[:-3] if name.lower().endswith(".md") else name)


def route_description(doc: MemoryFile | None) -> str | None:
    """A route's description from the file: its Summary's first bullet, else front matter
    `description:` (else `summary:`); None when it has neither (the title is used then)."""
    if doc is None:
        return None
    if doc.summary is not None and doc.summary.bullets and doc.summary.bullets[0].text:
        return doc.summary.bullets[0].text
    for key in ("description", "summary"):
        text = doc.front_matter_text(key)
        if text:
            return text
    return None


def route_for(index_text: str, path: str, doc: MemoryFile | None, description: str | None = None,
              dialect: str = PMEM) -> str:
    """The route line for the memory file `path` (parsed as `doc`, None when unreadable): its
    `route_title`, and `description` or else its `route_description`. One rule for the PM202
    fix, `pmem route add`, `pmem save`, the MCP tools and a recover without a saved route line."""
    if description is None:
        description = route_description(doc)
    return propose_route(index_text, path, route_title(doc, path), description, dialect)


def root_dialect(setting: str | None, archive_text: str | None, index_text: str | None) -> str:
    """The dialect pmem writes a root in (docs/decisions.md, "Dialects"): the `dialect`
    setting when it names one; else the one most records of `_archive/_index.md` use (v0.10 on
    a tie); with no record, pmem's own when most routes of `_index.md` are `[Title](path)`
    links (the line pmem used to write), else v0.10 — the format's current release."""
    if setting in DIALECTS:
        return setting
    found = dialect_of_records(find_records(archive_text)) if archive_text else None
    if found is not None:
        return found
    routes = [r for r in parse_index(MemoryFile(index_text)).routes if not r.table] if index_text else []
    if routes and Counter(r.form for r in routes).most_common(1)[0][0] == LINK:
        return PMEM
    return V010


def state_dialect(state: RootState) -> str:
    """`root_dialect` of a scanned root: its settings and the two indexes it holds."""
    def text(rel: str) -> str | None:
        entry = state.files.get(rel)
        return entry.text if entry is not None else None

    return root_dialect(state.settings.dialect, text(ARCHIVE_INDEX), text(INDEX))


def _no_secret(text: str | None) -> str | None:
    text = (text or "").strip()
    return text if text and not find_secrets([text]) else None


def insert_route(index_text: str, path: str, route_line: str) -> str:
    """Put `route_line` at the end of the section whose heading names the file's top folder
    (`## Projects` for `projects/…`, case-insensitive), else at the end of the file."""
    doc = MemoryFile(index_text)
    lines = split_keepends(index_text)
    nl = newline_of(index_text)
    top = path.split("/", 1)[0].lower() if "/" in path else ""
    insert_at = None
    if top:
        heads = [h for h in doc.headings if h.top_level]
        for n, h in enumerate(heads):
            if h.text.strip().lower() != top:
                continue
            end = len(lines)
            for later in heads[n + 1:]:
                if later.level <= h.level:
                    end = later.line
                    break
            last = h.end_line
            for i in range(h.end_line + 1, end):
                if lines[i].strip():
                    last = i
            insert_at = last + 1
            break
    if insert_at is None:
        insert_at = len(lines)
        while insert_at > 0 and not lines[insert_at - 1].strip():
            insert_at -= 1
    before = lines[:insert_at]
    if before and not before[-1].endswith(("\n", "\r")):
        before[-1] += nl
    return "".join(before) + route_line + nl + "".join(lines[insert_at:])


def route_neighbours(index_text: str, line: int) -> tuple[str | None, str | None]:
    """The lines right above and right below route line `line` (None where that is blank or
    the file's edge): where a recover puts the line back (`insert_route_near`)."""
    lines = [x.rstrip("\r\n") for x in split_keepends(index_text)]
    above = lines[line - 1] if 0 < line <= len(lines) and lines[line - 1].strip() else None
    below = lines[line + 1] if line + 1 < len(lines) and lines[line + 1].strip() else None
    return above, below


def insert_route_near(index_text: str, path: str, route_line: str, after: str | None, before: str | None) -> str:
    """`route_line` back where it was: right after the line `after` (its old neighbour above),
    else right before `before` (the one below), each only when exactly one line of the index
    is that line; else where `insert_route` puts a route."""
    lines = split_keepends(index_text)
    bare = [x.rstrip("\r\n") for x in lines]
    for neighbour, offset in ((after, 1), (before, 0)):
        if neighbour is None:
            continue
        found = [i for i, x in enumerate(bare) if x == neighbour]
        if len(found) == 1:
            at = found[0] + offset
            head = lines[:at]
            nl = newline_of(index_text)
            if head and not head[-1].endswith(("\n", "\r")):
                head[-1] += nl
            return "".join(head) + route_line + nl + "".join(lines[at:])
    return insert_route(index_text, path, route_line)


# -- records ------------------------------------------------------------------
def _derived_location(original: str, status: str | None) -> str:
    return f"_archive/_trash/{original}" if status == TRASHED else f"_archive/{original}"


def format_record(original: str, fields: list[tuple[str, str]], nl: str = "\n", dialect: str = PMEM) -> str:
    """A record for `original` with `fields` (pmem's key names) in `dialect`. A v0.10 record
    is the format's `### path` block, fields in its order and spelling; it has no `location`
    (kept only when it is not the one its path and state imply) and says
    `(no active index line)` rather than leaving the route out. Paths are written as
    `record_text` gives them (a name that is not UTF-8 escaped), the reader's inverse."""
    fields = [(key, record_text(value) if key in PATH_KEYS else value) for key, value in fields]
    heading = record_text(original)
    if dialect != V010:
        body = "".join(f"- {key}: {value}{nl}" if value else f"- {key}:{nl}" for key, value in fields)
        return f"## {heading}{nl}{body}"
    values = dict(fields)
    values.setdefault("index-line", NO_ROUTE)
    if values.get("location") == _derived_location(heading, values.get("status")):
        del values["location"]
    ordered = [k for k in V010_ORDER if k in values] + [k for k in values if k not in V010_ORDER]
    body = "".join(f"- {written_name(k, V010)}: {values[k]}{nl}" for k in ordered)
    return f"### {heading}{nl}{body}"


def _reference_heading(line: str) -> bool:
    return line.startswith("### ")


def append_record(archive_text: str, record_text: str) -> str:
    """Add a record at the end, where no reader takes it for part of another record: a record
    under any heading but `### ` goes before the first `### ` line, since the reference CLI
    reads every line after a `### ` heading up to the next one as that block."""
    nl = newline_of(archive_text) if archive_text else "\n"
    # The record may already carry the file's line ending: normalise, never double a `\r`.
    record_text = re.sub(r"\r\n|\r|\n", lambda _: nl, record_text)
    if not _reference_heading(record_text):
        lines = split_keepends(archive_text)
        first = next((i for i, line in enumerate(lines) if _reference_heading(line)), None)
        if first is not None:
            head = "".join(lines[:first])
            if head.strip() and not head.endswith(nl + nl):
                head += nl
            return head + record_text + nl + "".join(lines[first:])
    text = archive_text
    if text and not text.endswith(("\n", "\r")):
        text += nl
    if text and not text.endswith(nl + nl) and text.strip():
        text += nl
    return text + record_text


def convert_record(archive_text: str, record: ArchiveRecord, dialect: str) -> str:
    """`record` rewritten in `dialect`, every field kept (unknown ones as written; a
    `(no active index line)` dropped for pmem's dialect, where no `index-line` says it), moved
    to where `append_record` puts a new one."""
    fields: list[tuple[str, str]] = []
    for f in record.fields:
        if f.key == "index-line" and record.saved_route is None:
            continue
        fields.append((f.key, f.value))
    values = dict(fields)
    original = values.get("original") or record.title
    if dialect == PMEM:
        values.setdefault("original", original)
        values.setdefault("location", _derived_location(original, (values.get("status") or "").lower() or None))
        order = ("status", "original", "location", "index-line", "archived", "reason", "deleted", "recover-by")
        fields = [(k, values[k]) for k in order if k in values] + [(k, v) for k, v in fields if k not in order]
    text = format_record(original, fields, newline_of(archive_text), dialect)
    return append_record(remove_record(archive_text, record), text)


def find_records(archive_text: str) -> list[ArchiveRecord]:
    return parse_archive_index(MemoryFile(archive_text))


def _field_text(key: str, value: str) -> str:
    return record_text(value) if key in PATH_KEYS else value


def update_record(archive_text: str, record: ArchiveRecord, values: dict[str, str]) -> str:
    """Set `values` on `record`: existing fields are rewritten in place (other fields, known or
    not, are kept as written); new ones are added after the record's last field."""
    lines = split_keepends(archive_text)
    nl = newline_of(archive_text)
    dialect = record.dialect
    pending = dict(values)
    if dialect == V010 and record.field("location") is None:
        pending.pop("location", None)  # a v0.10 record's location follows from its path and state
    for f in record.fields:
        if f.key in pending:
            indent = re.match(r"^\s*[-*+]\s+", lines[f.line])
            prefix = indent.group(0) if indent else "- "
            eol = lines[f.line][len(_strip_eol(lines[f.line])):] or nl
            lines[f.line] = f"{prefix}{written_name(f.key, dialect)}: {_field_text(f.key, pending.pop(f.key))}{eol}"
            for continued in range(f.line + 1, f.end_line + 1):
                lines[continued] = ""  # the old value's continuation lines go with it
    if pending:
        # After the last field's last line: never inside a continued (multi-line) value.
        last = record.fields[-1].end_line if record.fields else record.heading_line
        if not lines[last].endswith(("\n", "\r")):
            lines[last] += nl
        added = "".join(f"- {written_name(k, dialect)}: {_field_text(k, v)}{nl}" for k, v in pending.items())
        lines.insert(last + 1, added)
    return "".join(lines)


def remove_record(archive_text: str, record: ArchiveRecord) -> str:
    """Remove the record's heading and its section, and one blank line that separated it."""
    lines = split_keepends(archive_text)
    start, end = record.heading_line, record.end
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    # Drop the blank lines between this record and the next one, or before it at the end.
    if end < len(lines):
        while end < len(lines) and not lines[end].strip():
            end += 1
    else:
        while start > 0 and not lines[start - 1].strip():
            start -= 1
    return "".join(lines[:start] + lines[end:])
