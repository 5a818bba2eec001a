"""Editing the two indexes as text: route lines in `_index.md`, records in `_archive/_index.md`.

Shared by the lifecycle plans and the quick fixes, so a route is written, placed and removed
the same way everywhere (docs/design.md §2.3, §2.4). Every function takes the current text and returns
the new text; line endings of the file are kept.
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import quote

from .archive_index import ArchiveRecord, parse_archive_index
from .index_routes import ANGLE, BARE, CODE_SPAN, LINK, WIKI, Route, parse_index
from .line_index import newline_of, split_keepends
from .memory_file import MemoryFile
from .secrets import find_secrets

_RE_LIST_MARKER = re.compile(r"^\s*([-*+]|\d{1,9}[.)])\s")
DEFAULT_SEPARATOR = " — "


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def routes_to(index_text: str, path: str) -> list[Route]:
    return [r for r in parse_index(MemoryFile(index_text)).routes if r.path == path]


def remove_lines(text: str, line_numbers: set[int]) -> str:
    return "".join(line for i, line in enumerate(split_keepends(text)) if i not in line_numbers)


def line_text(text: str, line: int) -> str:
    lines = split_keepends(text)
    return _strip_eol(lines[line]) if 0 <= line < len(lines) else ""


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


def format_target(form: str, path: str, title: str) -> str:
    """`path` written as a route target of `form`, or as a link when that form cannot hold
    it (a wiki link cannot hold `[`, a code span `%20`, a bare path a space before its folder…):
    whatever pmem writes parses back to the same path."""
    target = _written_target(form, path, title)
    if not reads_back(f"- {target} — x", path):
        target = _written_target(LINK, path, title)
    if not reads_back(f"- {target} — x", path):
        target = f"[{_label(title, path)}]({quote(path, safe='/')})"  # every unusual character escaped
    return target


def route_style(index_text: str) -> tuple[str, str, str]:
    """(list marker, target form, separator) that most existing routes use."""
    doc = MemoryFile(index_text)
    routes = [r for r in parse_index(doc).routes if not r.table]
    if not routes:
        return "-", LINK, DEFAULT_SEPARATOR
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


def propose_route(index_text: str, path: str, title: str | None, description: str | None) -> str:
    """A route line for `path` in the style most routes use; `- [Title](path) — description`
    when there is none. The description is the first Summary bullet, else the title. A title
    or bullet that holds a likely secret is not copied: the index is read by every agent."""
    marker, form, separator = route_style(index_text)
    title = " ".join((_no_secret(title) or path.rsplit("/", 1)[-1].removesuffix(".md")).split())
    desc = " ".join((_no_secret(description) or title).split())
    line = f"{marker} {format_target(form, path, title)}{separator}{desc}"
    if not reads_back(line, path):
        # The separator or the description changed how the line reads: the default style does not.
        line = f"- {format_target(LINK, path, title)}{DEFAULT_SEPARATOR}{desc}"
    return line


def route_for(index_text: str, path: str, doc: MemoryFile | None, description: str | None = None) -> str:
    """The route line for the memory file `path` (parsed as `doc`, None when unreadable): its
    title, and `description` or else its first Summary bullet. One rule for the PM202 fix,
    `pmem route add`, `pmem save` and a recover without a saved route line."""
    title = doc.title_text if doc is not None else None
    if description is None and doc is not None and doc.summary is not None and doc.summary.bullets:
        description = doc.summary.bullets[0].text or None
    return propose_route(index_text, path, title, description)


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
def format_record(original: str, fields: list[tuple[str, str]], nl: str = "\n") -> str:
    body = "".join(f"- {key}: {value}{nl}" if value else f"- {key}:{nl}" for key, value in fields)
    return f"## {original}{nl}{body}"


def append_record(archive_text: str, record_text: str) -> str:
    nl = newline_of(archive_text) if archive_text else "\n"
    text = archive_text
    if text and not text.endswith(("\n", "\r")):
        text += nl
    if text and not text.endswith(nl + nl) and text.strip():
        text += nl
    # The record may already carry the file's line ending: normalise, never double a `\r`.
    return text + re.sub(r"\r\n|\r|\n", lambda _: nl, record_text)


def find_records(archive_text: str) -> list[ArchiveRecord]:
    return parse_archive_index(MemoryFile(archive_text))


def update_record(archive_text: str, record: ArchiveRecord, values: dict[str, str]) -> str:
    """Set `values` on `record`: existing fields are rewritten in place (other fields, known or
    not, are kept as written); new ones are added after the record's last field."""
    lines = split_keepends(archive_text)
    nl = newline_of(archive_text)
    pending = dict(values)
    for f in record.fields:
        if f.key in pending:
            indent = re.match(r"^\s*[-*+]\s+", lines[f.line])
            prefix = indent.group(0) if indent else "- "
            eol = lines[f.line][len(_strip_eol(lines[f.line])):] or nl
            lines[f.line] = f"{prefix}{f.key}: {pending.pop(f.key)}{eol}"
    if pending:
        last = record.fields[-1].line if record.fields else record.heading_line
        if not lines[last].endswith(("\n", "\r")):
            lines[last] += nl
        added = "".join(f"- {k}: {v}{nl}" for k, v in pending.items())
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
