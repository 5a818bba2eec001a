"""What the indexes held before the writers nobody confirmed: the routes and records PM210 and
PM308 (`rules/vanished.py`) compare the root with, read from the history store.

The reference is the newest entry a confirmed writer made (`pmem`, `editor`) and every entry
after it (`outside`, `agent`): a wipe is recorded too — by the next pmem command, or by the
hook right after the agent's write — and must not become the reference that hides it. A route
or a record seen in any of these entries counts (the newest text of it wins). Only the texts are
kept here: the rule parses just the lines missing from the index now (a 10k-route index is
not parsed again when nothing vanished).

Cost: the rule runs in every check and in the language server, so the store is read once per
newest entry: the ref read as a file (no process), then one `git log` and one `git cat-file
--batch` for the two index texts of the entries it needs, cached by the newest entry's id."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .git import GIT_TIMEOUT, Git, HistoryOff
from .location import store_dir
from .recording import history_disabled
from .store import newest_entry

INDEX = "_index.md"
ARCHIVE_INDEX = "_archive/_index.md"
CONFIRMED_WRITERS = ("pmem", "editor")
LOOK_BACK = 20  # entries: an agent's session of writes, not the whole history


@dataclass(frozen=True)
class Reference:
    """The distinct texts of the two indexes over the reference entries, newest first."""

    head: str
    index_texts: tuple[str, ...] = ()
    archive_texts: tuple[str, ...] = ()


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
    except (HistoryOff, OSError, ValueError, IndexError, subprocess.SubprocessError):
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

    def distinct(rel: str) -> tuple[str, ...]:
        found = [texts[(c, rel)] for c in commits if (c, rel) in texts]
        return tuple(dict.fromkeys(found))  # an index most entries share, once

    return Reference(head, distinct(INDEX), distinct(ARCHIVE_INDEX))


def _index_texts(git: Git, commits: list[str]) -> dict[tuple[str, str], str]:
    """The two index texts at each commit: their blob ids by one `git cat-file --batch-check`,
    then each distinct blob once by one `--batch` (twenty entries of a 1 MB index that did not
    change are one megabyte read, not twenty)."""
    specs = [(c, rel) for c in commits for rel in (INDEX, ARCHIVE_INDEX)]
    listing = _cat_file(git, "--batch-check", "".join(f"{c}:{rel}\n" for c, rel in specs)).split(b"\n")
    blob_of = {}
    for spec, line in zip(specs, listing, strict=False):
        header = line.split()
        if len(header) == 3 and header[1] == b"blob":
            blob_of[spec] = header[0].decode()
    blobs = list(dict.fromkeys(blob_of.values()))
    out, pos, text_of = _cat_file(git, "--batch", "".join(f"{b}\n" for b in blobs)), 0, {}
    for blob in blobs:
        end = out.index(b"\n", pos)
        size = int(out[pos:end].split()[2])
        text_of[blob] = out[end + 1:end + 1 + size].decode("utf-8", "replace")
        pos = end + 1 + size + 1
    return {spec: text_of[blob] for spec, blob in blob_of.items()}


def _cat_file(git: Git, mode: str, query: str) -> bytes:
    return subprocess.run([git.exe, "cat-file", mode], input=query.encode("utf-8", "surrogateescape"),
                          capture_output=True, env=git.env, timeout=GIT_TIMEOUT, check=True).stdout
