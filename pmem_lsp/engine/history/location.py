"""Where a root's history store lives: `$XDG_STATE_HOME/pmem/history/<id>/` (else
`~/.local/state/pmem/history/<id>/`), `<id>` from the root's real path. Outside the root and
outside the root's own git repository by construction: history must survive whatever wipes
the root, and must never show up in the user's commits."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def history_home() -> Path:
    state = os.environ.get("XDG_STATE_HOME", "").strip()
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "pmem" / "history"


def store_id(root: Path) -> str:
    """One store per root, whatever path it is reached by (a symlink, a relative path)."""
    real = os.path.realpath(root)
    return hashlib.sha256(os.fsencode(real)).hexdigest()[:24]


def store_dir(root: Path) -> Path:
    return history_home() / store_id(root)


def make_private_dirs(path: Path) -> None:
    """`path` and the pmem folders above it, 0700: the store holds what agents once wrote.
    A missing state folder itself (`~/.local/state` on a fresh account or a Mac) is made too,
    0700 as the XDG Base Directory specification asks of a folder it makes; a folder that
    exists keeps its mode."""
    missing = [path]
    for folder in path.parents:  # <id>, …/history, …/pmem, the state home, ~/.local
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)
