"""Retention (docs/design.md §11, "Where"): entries are kept for `history.days` (default 90) and
at least the last 50; older ones are pruned. The newest entry kept becomes the chain's base,
rewritten with the same tree, message and time (an entry's tree is the whole root, so it loses
nothing), then `gc --prune=now` drops what only the pruned entries held. Run when recording, at
most once a day (`pruned` in the store: when it last ran)."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import time
from pathlib import Path

from .git import HistoryOff
from .review import renamed
from .snapshot import SETTINGS_FILE, StatCache
from .store import REF, HistoryStore

DEFAULT_DAYS = 90
KEEP_AT_LEAST = 50
ONCE_A_DAY = 86400.0
STAMP = "pruned"
# Every entry leaves its objects loose (a blob per changed file, a tree per folder on its path:
# ~19 KB an entry on the 10k root), and only a prune packs them: a busy root whose entries are
# all recent would grow by megabytes a day. Past this many loose objects (git's own `gc.auto`
# default) the day's prune packs them instead. Counted exactly (`count-objects`): `gc --auto`
# estimates from one of 256 object folders, too coarse to test.
LOOSE_LIMIT = 6700


def retention_days(root: Path) -> int:
    """`history.days`, read without the settings model (as `snapshot.large_limit`: recording
    must stay cheap and must not fail on a settings file pmem cannot use)."""
    try:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib

        with open(root / SETTINGS_FILE, "rb") as fh:
            days = tomllib.load(fh).get("history", {}).get("days", DEFAULT_DAYS)
        return days if isinstance(days, int) and not isinstance(days, bool) and days >= 1 else DEFAULT_DAYS
    except (OSError, ValueError, AttributeError, ImportError):
        return DEFAULT_DAYS


def prune(store: HistoryStore, days: int, now: dt.datetime | None = None) -> int:
    """Drop the entries older than `days`, keeping at least the newest `KEEP_AT_LEAST`; how many
    were dropped."""
    now = now or dt.datetime.now(dt.timezone.utc)
    cutoff = int((now - dt.timedelta(days=days)).timestamp())
    git = store.git
    with store.locked():
        head = store.head()
        if head is None:
            return 0
        listed = git.run("log", "--format=%H %ct", head).decode().split("\n")
        commits = [(c, int(t)) for c, t in (line.split() for line in listed if line.strip())]  # newest first
        recent = sum(1 for _, when in commits if when >= cutoff)
        keep = max(KEEP_AT_LEAST, recent)
        if keep >= len(commits):
            return 0
        rewritten: dict[str, str] = {}
        parent: str | None = None
        for commit, _ in reversed(commits[:keep]):
            info = git.run("log", "-1", "--format=%B%x00%at %ad", "--date=format:%z", commit).decode()
            message, stamp = info.split("\x00")
            dated = {"GIT_AUTHOR_DATE": stamp.strip(), "GIT_COMMITTER_DATE": stamp.strip()}
            args = ["commit-tree", f"{commit}^{{tree}}", *(["-p", parent] if parent else [])]
            parent = git.run(*args, input=message.encode(), env=dated).decode().strip()
            rewritten[commit] = parent
        assert parent is not None
        git.run("update-ref", REF, parent, head)
        renamed(store, rewritten)  # reviewed entries stay reviewed
        cache = StatCache(store.dir / "stat.json")
        cache.save(rewritten.get(cache.head or ""))  # the same blobs, under the rewritten entry's id
        git.run("reflog", "expire", "--expire=now", "--all")
        git.run("gc", "--quiet", "--prune=now")
        return len(commits) - keep


def prune_daily(store: HistoryStore) -> int:
    """`prune` when it has not run for a day (its cost, a gc, is paid once a day at most); on a
    day with nothing to prune, the loose objects are packed when there are many."""
    stamp = store.dir / STAMP
    try:
        if time.time() - stamp.stat().st_mtime < ONCE_A_DAY:
            return 0
    except FileNotFoundError:
        pass
    stamp.touch()
    pruned = prune(store, retention_days(store.root))
    if not pruned:
        pack_loose_objects(store)
    return pruned


def pack_loose_objects(store: HistoryStore) -> bool:
    """Start `git gc` in the background when the store holds more than LOOSE_LIMIT loose
    objects; whether it was started. Nobody waits for it (a pack of the 10k root's store takes
    seconds); git's own lock keeps two from running at once, and objects written meanwhile are
    kept (gc prunes only loose objects older than two weeks)."""
    try:
        counted = dict(line.split(": ", 1) for line in store.git.run("count-objects", "-v").decode().splitlines()
                       if ": " in line)
        if int(counted.get("count", "0")) <= LOOSE_LIMIT:
            return False
        subprocess.Popen([store.git.exe, "gc", "--quiet"], env=store.git.env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        return True
    except (OSError, ValueError, HistoryOff):
        return False
