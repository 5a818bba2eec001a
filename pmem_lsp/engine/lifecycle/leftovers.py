"""What a killed pmem write leaves behind, and clearing it up (docs/SECURITY.md, "The write protocol").

pmem writes every index and note through a hidden temporary file beside its target
(`.<name>.<random>.pmem-tmp`, renamed over the target), and a purge first sets its file aside
under a hidden name (`.<name>.<random>.purge.pmem-tmp`). A process killed at the wrong instant
leaves that file: hidden, so no agent reads it as memory, but it can hold a whole index or note.

- PM007 (`rules/interrupted_writes.py`) reports each one, with what it is and what is safe to do;
- the next pmem write, under the root's lock, clears those in the folders it writes
  (`clear_leftovers`): a write's temporary file once its target is there and readable (the
  target is intact: the rename either happened or the old text is still whole), a purge's set-aside
  file once its record is gone (the purge was complete), or it is put back where it was when
  its record is still there and the place is free (the purge is undone).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..archive_index import record_location
from ..index_edit import find_records
from ..zones import ARCHIVE_DIR, ARCHIVE_INDEX

TMP_SUFFIX = ".pmem-tmp"
PURGE_MARK = ".purge"
_NAME = re.compile(r"^\.(?P<target>.+)\.(?P<random>[A-Za-z0-9_]{6,})(?P<purge>\.purge)?\.pmem-tmp$")


@dataclass(frozen=True)
class Leftover:
    path: str  # root-relative, the hidden file itself
    target: str  # root-relative, the file it was written for (or set aside from)
    purge: bool  # a purge's set-aside file (the only copy of the file), not a temporary copy


def leftover(rel: str) -> Leftover | None:
    """What the hidden file `rel` is, when it is pmem's."""
    folder, _, name = rel.rpartition("/")
    m = _NAME.match(name)
    if m is None:
        return None
    target = f"{folder}/{m['target']}" if folder else m["target"]
    return Leftover(rel, target, bool(m["purge"]))


def aside_name(path: Path, purge: bool = False) -> Path:
    return path.with_name(f".{path.name}.{os.urandom(6).hex()}{PURGE_MARK if purge else ''}{TMP_SUFFIX}")


def _intact(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.read(1)
        return os.path.isfile(path) and not os.path.islink(path)
    except OSError:
        return False


def _recorded(root: Path, location: str) -> bool | None:
    """Whether `_archive/_index.md` still has a record for `location` (None: unreadable)."""
    try:
        text = (root / ARCHIVE_INDEX).read_bytes().decode("utf-8")
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError):
        return None
    return any(record_location(r) == location for r in find_records(text))


def clear_leftovers(root: Path, folders: set[str]) -> list[str]:
    """Clear pmem's leftovers in `folders` (root-relative, "" the root) where that is safe; the
    caller holds the root's lock. Returns what was done, one phrase each."""
    done: list[str] = []
    for folder in sorted(folders | {"", ARCHIVE_DIR}):
        try:
            with os.scandir(root / folder if folder else root) as it:
                names = [de.name for de in it if de.name.startswith(".") and de.name.endswith(TMP_SUFFIX)
                         and de.is_file(follow_symlinks=False)]
        except OSError:
            continue
        for name in names:
            found = leftover(f"{folder}/{name}" if folder else name)
            if found is None:
                continue
            path, target = root / found.path, root / found.target
            try:
                if not found.purge:
                    if _intact(target):
                        os.unlink(path)
                        done.append(f"removed {found.path}")
                elif not os.path.lexists(target):
                    recorded = _recorded(root, found.target)
                    if recorded is False:
                        os.unlink(path)
                        done.append(f"removed {found.path}")
                    elif recorded:
                        os.link(path, target)
                        os.unlink(path)
                        done.append(f"put {found.target} back")
            except OSError:
                continue  # left as it is: PM007 keeps reporting it
    return done
