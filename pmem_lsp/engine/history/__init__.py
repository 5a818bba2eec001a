"""History: every state of a root pmem observes, kept outside the root in git's object store,
so the user can see, keep or undo any change whoever made it (docs/design.md §11).

- `location.py` — where a root's store lives (the user's state folder, never the root);
- `git.py` — the `git` command with no user configuration, and `HistoryOff` (why history is off);
- `snapshot.py` — the root's kept files as blob ids, hashing only what changed since last time;
- `store.py` — `HistoryStore`: record an entry, list entries, read a file at an entry;
- `merge.py` — undo's three-way merge of one file;
- `forget.py` — drop every kept version of a path;
- `review.py` — what the user accepted (`pmem review`), kept in the store;
- `recording.py` — `record_quietly`: what the write door and the CLI call, never raising.
"""
