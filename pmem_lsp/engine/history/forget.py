"""`pmem history --forget PATH`: every entry rewritten without PATH, then the old commits and
blobs pruned, so that no version of it can be read from the store (a secret an agent once
wrote). The entries keep their titles, writers and times."""

from __future__ import annotations

from .review import renamed
from .store import REF, HistoryStore


def forget_path(store: HistoryStore, rel: str) -> int:
    """Drop every kept version of `rel`; how many entries held it."""
    git = store.git
    with store.locked():
        head = store.head()
        if head is None:
            return 0
        commits = git.run("rev-list", "--reverse", head).decode().split()
        held = 0
        parent: str | None = None
        rewritten: dict[str, str] = {}
        for commit in commits:
            # The same message and time: the rewritten entry is the same entry, less one file.
            info = git.run("log", "-1", "--format=%B%x00%at %ad", "--date=format:%z", commit).decode()
            message, stamp = info.split("\x00")
            dated = {"GIT_AUTHOR_DATE": stamp.strip(), "GIT_COMMITTER_DATE": stamp.strip()}
            blobs = store.blobs_of(commit)
            if blobs.pop(rel, None) is not None:
                held += 1
            tree = store.tree_of(blobs)
            args = ["commit-tree", tree, *(["-p", parent] if parent else [])]
            parent = git.run(*args, input=message.encode(), env=dated).decode().strip()
            rewritten[commit] = parent
        assert parent is not None
        git.run("update-ref", REF, parent)
        renamed(store, rewritten)  # what the user reviewed stays reviewed
        (store.dir / "index").unlink(missing_ok=True)
        git.run("reflog", "expire", "--expire=now", "--all")
        git.run("gc", "--quiet", "--prune=now")
        # The stat cache names the blob of `rel` as it is on disk: forgotten, it must be hashed
        # again if it is recorded again, never referred to.
        from .snapshot import StatCache

        cache = StatCache(store.dir / "stat.json")
        cache.forget(rel)
        cache.save(None)
        return held
