"""What the indexes held before the writers nobody confirmed: the routes and records PM210 and
PM308 (`rules/vanished.py`) compare the root with, read from the history store.

The reference is the newest entry a confirmed writer made (`pmem`, `editor`) and every entry
after it (`outside`, `agent`): a wipe is recorded too — by the next pmem command, or by the
hook right after the agent's write — and must not become the reference that hides it. A route
or a record seen in any of these entries counts (the newest text of it wins).

Cost: the rule runs in every check and in the language server, so the store is read once per
newest entry: the ref read as a file (no process), then one `git log` and one `git cat-file
--batch` for the two index texts of the entries it needs, cached by the newest entry's id."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..archive_index import record_location
from ..index_edit import find_records, route_neighbours
from ..index_routes import parse_index
from ..line_index import split_keepends
from ..memory_file import MemoryFile
from .git import GIT_TIMEOUT, Git, HistoryOff
from .location import store_dir
from .recording import history_disabled
from .store import newest_entry

INDEX = "_index.md"
ARCHIVE_INDEX = "_archive/_index.md"
CONFIRMED_WRITERS = ("pmem", "editor")
LOOK_BACK = 20  # entries: an agent's session of writes, not the whole history


@dataclass(frozen=True)
class KeptRoute:
    target: str
    line: str  # the route line exactly, without its line ending
    above: str | None  # its neighbours then: where it goes back
    below: str | None


@dataclass(frozen=True)
class Reference:
    head: str
    routes: dict[str, KeptRoute] = field(default_factory=dict)  # target → its route line
    records: dict[str, str] = field(default_factory=dict)  # location → the record's block


_cache: dict[Path, Reference] = {}


def reference(root: Path) -> Reference | None:
    """None: history is off, or nothing was recorded for this root."""
    if history_disabled():
        return None
    store = store_dir(root)
    head = newest_entry(store)
    if head is None:
        return None
    cached = _cache.get(store)
    if cached is not None and cached.head == head:
        return cached
    try:
        found = _read(Git(store), head)
    except (HistoryOff, OSError, ValueError):
        return None
    _cache[store] = found
    return found


def _read(git: Git, head: str) -> Reference:
    log = git.run("log", f"-{LOOK_BACK}", "--format=%H%x00%B%x1e", head).decode("utf-8", "replace")
    commits = []
    for record in filter(str.strip, log.split("\x1e")):
        commit, _, message = record.strip("\n").partition("\x00")
        commits.append(commit)
        writer = re.search(r"^Pmem-Writer: ?(\S*)", message, re.M)
        if writer is not None and writer.group(1) in CONFIRMED_WRITERS:
            break
    texts = _index_texts(git, commits)
    routes: dict[str, KeptRoute] = {}
    records: dict[str, str] = {}
    parsed: set[str | None] = {None}  # an index most entries share is parsed once
    for commit in commits:  # newest first: the newest text of a route or record wins
        index, archive = texts.get((commit, INDEX)), texts.get((commit, ARCHIVE_INDEX))
        index, archive = (None if index in parsed else index), (None if archive in parsed else archive)
        parsed |= {index, archive}
        if index is not None:
            lines = split_keepends(index)
            for route in parse_index(MemoryFile(index)).routes:
                if route.path and route.path not in routes and route.line < len(lines):
                    above, below = route_neighbours(index, route.line)
                    routes[route.path] = KeptRoute(route.path, lines[route.line].rstrip("\r\n"), above, below)
        if archive is not None:
            lines = split_keepends(archive)
            for rec in find_records(archive):
                location = record_location(rec)
                if location and location not in records:
                    records[location] = "".join(lines[rec.heading_line:rec.end])
    return Reference(head, routes, records)


def _index_texts(git: Git, commits: list[str]) -> dict[tuple[str, str], str]:
    """The two index texts at each commit, by one `git cat-file --batch`."""
    specs = [(c, rel) for c in commits for rel in (INDEX, ARCHIVE_INDEX)]
    query = "".join(f"{c}:{rel}\n" for c, rel in specs).encode()
    done = subprocess.run([git.exe, "cat-file", "--batch"], input=query, capture_output=True, env=git.env,
                          timeout=GIT_TIMEOUT, check=True)
    out, pos, found = done.stdout, 0, {}
    for spec in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            found[spec] = out[pos:pos + size].decode("utf-8", "replace")
            pos += size + 1
    return found
