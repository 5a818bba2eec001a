"""`HistoryStore`: one root's entries, as commits of a bare repository in the user's state folder.

An entry is a commit of the kept files; its message holds the one-line title, then trailers:
`Pmem-Writer` (pmem, agent, editor, outside), `Pmem-Detail` (the operation and its arguments,
the tool and client), `Pmem-Time`. `refs/heads/entries` is the newest entry. An entry is only
made when the tree differs from the newest one."""

from __future__ import annotations

import datetime as dt
import fcntl
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .git import Git, HistoryOff
from .location import make_private_dirs, store_dir
from .snapshot import StatCache, kept_size, large_limit, snapshot

FORMAT_VERSION = 1
REF = "refs/heads/entries"
WRITERS = ("pmem", "agent", "editor", "outside")
CHANGES = {"A": "added", "D": "removed", "M": "changed", "T": "changed"}


@dataclass(frozen=True)
class Writer:
    kind: str  # one of WRITERS
    detail: str = ""


@dataclass(frozen=True)
class Entry:
    id: str  # the commit, abbreviated as shown
    commit: str
    parent: str | None
    time: dt.datetime
    writer: Writer
    title: str
    files: list[tuple[str, str]] = field(default_factory=list)  # (path, added|removed|changed)

    def data(self) -> dict:
        return {"id": self.id, "time": self.time.isoformat(timespec="seconds"),
                "writer": {"kind": self.writer.kind, "detail": self.writer.detail}, "title": self.title,
                "files": [{"path": p, "change": c} for p, c in self.files]}


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


def _message(writer: Writer, title: str, when: dt.datetime) -> bytes:
    return (f"{_one_line(title) or writer.kind}\n\nPmem-Writer: {writer.kind}\n"
            f"Pmem-Detail: {_one_line(writer.detail)}\nPmem-Time: {when.isoformat()}\n").encode("utf-8", "replace")


def _trailer(message: str, name: str) -> str:
    found = re.search(rf"^{name}: ?(.*)$", message, re.M)
    return found.group(1) if found else ""


class HistoryStore:
    """Opened per command; `HistoryOff` when it cannot be used (the message says why)."""

    def __init__(self, root: Path, create: bool = True) -> None:
        self.root = root
        self.dir = store_dir(root)
        self.git = Git(self.dir)
        version_file = self.dir / "VERSION"
        if not self.dir.is_dir():
            if not create:
                raise HistoryOff("history is off: nothing was recorded for this root yet")
            try:
                make_private_dirs(self.dir)
            except OSError as exc:
                raise HistoryOff(f"history is off: cannot create {self.dir}: {exc.strerror or exc}") from None
        try:
            version = version_file.read_text(encoding="ascii").strip() if version_file.exists() else None
        except OSError as exc:
            raise HistoryOff(f"history is off: the store {self.dir} cannot be read: {exc.strerror or exc}") from None
        if version is not None and (not version.isdigit() or int(version) > FORMAT_VERSION):
            raise HistoryOff(f"history is off: the store {self.dir} was written by a newer pmem (format {version})")
        if version is None or not self.git.git_dir.is_dir():
            try:
                self.git.run("init", "--quiet", "--bare", str(self.git.git_dir))
                version_file.write_text(f"{FORMAT_VERSION}\n", encoding="ascii")
            except OSError as exc:
                raise HistoryOff(f"history is off: cannot write the store {self.dir}: {exc.strerror or exc}") from None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One writer of the store at a time (two pmem processes recording at once)."""
        with open(self.dir / "lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # -- recording -----------------------------------------------------------------------------

    def head(self) -> str | None:
        out = self.git.run("rev-parse", "--verify", "-q", REF, check=False).decode().strip()
        return out or None

    def record(self, writer: Writer, title: str, when: dt.datetime | None = None) -> str | None:
        """An entry of the root as it is now, when it differs from the newest; its commit id."""
        when = when or dt.datetime.now(dt.timezone.utc).astimezone()
        with self.locked():
            cache = StatCache(self.dir / "stat.json")
            last = cache.blobs()
            blobs = snapshot(self.root, self.git, cache)
            parent = self.head()
            if parent is not None and parent == cache.head and blobs == last:
                # The newest entry is these very blobs (the cache says so): no tree to build.
                cache.save(parent)
                return None
            tree = self.tree_of(blobs)
            known_to_differ = parent is not None and parent == cache.head  # the cache named its blobs
            if parent is not None and not known_to_differ \
                    and self.git.run("rev-parse", f"{parent}^{{tree}}").decode().strip() == tree:
                cache.save(parent)
                return None
            stamp = f"{int(when.timestamp())} {when.strftime('%z') or '+0000'}"
            args = ["commit-tree", tree, *(["-p", parent] if parent else [])]
            commit = self.git.run(*args, input=_message(writer, title, when),
                                  env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}).decode().strip()
            self.git.run("update-ref", REF, commit, *([parent] if parent else []))
            cache.save(commit)  # after the entry: a crash before it only means hashing again
            return commit

    def record_file(self, rel: str, writer: Writer, title: str, when: dt.datetime | None = None) -> str | None:
        """An entry that is the newest one with only `rel` as it is now (its blob replaced, added
        or removed): what a hook records around an agent's one-file write, without walking the
        root (a 10k root's walk is over the hook's budget). Exact for that file; whatever else
        changed meanwhile is found by the next whole recording. None: nothing recorded yet (the
        first entry is a whole one) or `rel` is as the newest entry has it."""
        when = when or dt.datetime.now(dt.timezone.utc).astimezone()
        with self.locked():
            parent = newest_entry(self.dir)
            if parent is None:
                return None
            path = self.root / rel
            kept = path.is_file() and not path.is_symlink() \
                and kept_size(rel, path.stat().st_size, large_limit(self.root))
            blob = self.git.run("hash-object", "-w", "--no-filters", "--", str(path)).decode().strip() if kept \
                else None
            then = self.git.run("rev-parse", "-q", "--verify", f"{parent}:{rel}", check=False).decode().strip() or None
            if blob == then:
                return None
            index = self.dir / "index"
            index.unlink(missing_ok=True)
            self.git.run("read-tree", parent)
            if blob is None:
                self.git.run("update-index", "--force-remove", "--", rel)
            else:
                self.git.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
            tree = self.git.run("write-tree").decode().strip()
            stamp = f"{int(when.timestamp())} {when.strftime('%z') or '+0000'}"
            commit = self.git.run("commit-tree", tree, "-p", parent, input=_message(writer, title, when),
                                  env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}).decode().strip()
            self.git.run("update-ref", REF, commit, parent)
            # The stat cache still names `parent`: the next whole recording builds its tree and
            # compares it with this entry's, so nothing is recorded twice nor missed.
            return commit

    def blobs_of(self, commit: str) -> dict[str, str]:
        """path → blob id of every file kept in the entry `commit`."""
        raw = self.git.run("ls-tree", "-r", "-z", "--full-tree", commit).decode("utf-8", "surrogateescape")
        found = {}
        for line in filter(None, raw.split("\x00")):
            meta, _, rel = line.partition("\t")
            found[rel] = meta.split()[2]
        return found

    def tree_of(self, blobs: dict[str, str]) -> str:
        index = self.dir / "index"
        index.unlink(missing_ok=True)  # the index is rebuilt from blob ids: no file is read again
        # NUL-terminated: a name that starts with `"` would otherwise be read as C-quoted.
        listing = "".join(f"100644 {blob}\t{rel}\0" for rel, blob in sorted(blobs.items()))
        self.git.run("update-index", "-z", "--index-info", input=listing.encode("utf-8", "surrogateescape"))
        return self.git.run("write-tree").decode().strip()

    # -- reading -------------------------------------------------------------------------------

    def resolve(self, given: str) -> str:
        """The full commit of the entry `given` names; HistoryOff-free ValueError when none."""
        if not re.fullmatch(r"[0-9a-fA-F]{4,40}", given or ""):
            raise ValueError(f"`{given}` is not an entry id (entries are shown by `pmem history`)")
        commit = self.git.run("rev-parse", "--verify", "-q", f"{given}^{{commit}}", check=False).decode().strip()
        head = self.head()
        if not commit or head is None or not self.git.ok("merge-base", "--is-ancestor", commit, head):
            raise ValueError(f"no entry `{given}` in this root's history (see `pmem history`)")
        return commit

    def entries(self, path: str | None = None, since: dt.datetime | None = None,
                after: str | None = None) -> list[Entry]:
        """Newest first. `path`: only entries that changed it; `since`: at or after that time;
        `after`: only entries newer than that commit."""
        head = self.head()
        if head is None:
            return []
        args = ["log", "--format=%x1e%H%x00%P%x00%B%x00", "--name-status", "--no-renames", "-z", head]
        if after:
            args.append(f"^{after}")
        if path:
            args += ["--", path]
        raw = self.git.run(*args).decode("utf-8", "surrogateescape")
        found = []
        for record in raw.split("\x1e")[1:]:
            parts = record.split("\x00")
            commit, parents, message = parts[0], parts[1].split(), parts[2]
            names = [p.strip("\n") for p in parts[3:] if p.strip("\n")]
            files = [(names[i + 1], CHANGES.get(names[i][:1], "changed")) for i in range(0, len(names) - 1, 2)]
            time = dt.datetime.fromisoformat(_trailer(message, "Pmem-Time"))
            if since is not None and time < since:
                continue
            kind = _trailer(message, "Pmem-Writer")
            found.append(Entry(commit[:12], commit, parents[0] if parents else None, time,
                               Writer(kind if kind in WRITERS else "outside", _trailer(message, "Pmem-Detail")),
                               message.splitlines()[0] if message else "", files))
        return found

    def text_at(self, commit: str, rel: str) -> bytes | None:
        """The bytes of `rel` at the entry `commit`, None when it was not there."""
        spec = f"{commit}:{rel}"
        if not self.git.ok("cat-file", "-e", spec):
            return None
        return self.git.run("cat-file", "blob", spec)

    def parent_of(self, commit: str) -> str | None:
        out = self.git.run("rev-parse", "--verify", "-q", f"{commit}^", check=False).decode().strip()
        return out or None


def newest_entry(store: Path) -> str | None:
    """The newest entry's commit, read from the ref itself (loose, else packed): no process,
    for the callers that run on every check or every agent write."""
    git_dir = store / "repo.git"
    try:
        return (git_dir / REF).read_text(encoding="ascii").strip() or None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        for line in (git_dir / "packed-refs").read_text(encoding="ascii").splitlines():
            if line.endswith(" " + REF):
                return line.split()[0]
    except OSError:
        return None
    return None


def open_store(root: Path, create: bool = True) -> HistoryStore:
    """The store of `root` (HistoryOff when it cannot be used)."""
    try:
        return HistoryStore(root, create)
    except OSError as exc:
        raise HistoryOff(f"history is off: {exc.strerror or exc}") from None
