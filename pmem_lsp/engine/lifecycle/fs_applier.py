"""Carry a plan out on the filesystem: the CLI's applier, and the server's fallback.

- Moves never overwrite: the file is hard-linked to its destination (which fails if the
  destination exists) and only then unlinked from its source. A crash in between leaves it
  in both places, never in neither. Where hard links are not possible the destination is
  checked immediately before a rename.
- Text files are written atomically: a temporary file beside the target, fsync, rename,
  fsync of the folder. A file created by a plan must not exist yet.
- Each write is made on the text the file holds at that moment (`WriteText.rebase`): lines an
  agent added or reordered meanwhile are kept; when the route line or record the user confirmed
  changed, the step stops and nothing after it runs. The same check runs once for every write
  before the first step (`preflight`), so an index that was edited that way or cannot be
  rewritten (invalid UTF-8, NUL) stops the plan before the file moves.
- Each index write is compare-and-swap (`write_index`): the file is read again just before
  the rename, and when another writer changed it since the read, the change is made again on
  its text (a few times, then refused). pmem's own writers also hold the root's lock
  (`lock.py`) for the whole plan.
- Moves keep the file's modification time (a hard link, or a rename, is the same inode).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from ..folders import make_folders
from .consequences import prune_emptied
from .plan import MakeDir, Move, Plan, Remove, Step, WriteText
from .safety import CHANGED, COLLISION, ENCODING, Refusal, require_free, require_source, resolve_inside

_BOM = b"\xef\xbb\xbf"


class ApplyError(Refusal):
    """A step failed; `done` lists the steps completed before it (the state is consistent
    enough for `pmem check` to report it with a fix)."""

    def __init__(self, rule: str, message: str, done: tuple[str, ...] = ()) -> None:
        super().__init__(rule, message)
        self.done = done


def describe(step: Step) -> str:
    if isinstance(step, MakeDir):
        return f"created {step.path}/"
    if isinstance(step, Move):
        return f"moved {step.source} → {step.destination}"
    if isinstance(step, Remove):
        return f"deleted {step.path}"
    return f"{'created' if step.before is None else 'updated'} {step.path}"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def move_no_overwrite(src: Path, dst: Path) -> None:
    make_folders(dst.parent)
    try:
        os.link(src, dst, follow_symlinks=False)
    except FileExistsError:
        raise Refusal(COLLISION, f"`{dst.name}` appeared at the destination; nothing was overwritten") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EACCES):
            raise
        if os.path.lexists(dst):
            raise Refusal(COLLISION, f"`{dst.name}` appeared at the destination; nothing was overwritten") from None
        os.rename(src, dst)
    else:
        os.unlink(src)
    _fsync_dir(dst.parent)
    _fsync_dir(src.parent)


def read_for_rewrite(path: Path) -> tuple[str | None, bool]:
    """(text, had BOM), or (None, False) when the file does not exist. Strict UTF-8: a file
    pmem cannot decode exactly is never rewritten (that would replace bytes)."""
    return decode_for_rewrite(path, _read_bytes(path))


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def decode_for_rewrite(path: Path, data: bytes | None) -> tuple[str | None, bool]:
    if data is None:
        return None, False
    bom = data.startswith(_BOM)
    try:
        text = data[len(_BOM):].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refusal(ENCODING, f"`{path.name}` is not valid UTF-8; pmem will not rewrite it") from None
    if "\x00" in text:
        raise Refusal(ENCODING, f"`{path.name}` contains NUL bytes; pmem will not rewrite it")
    return text, bom


class ChangedMeanwhile(Exception):
    """The file changed between the read a write was made from and the write (compare-and-swap)."""


def write_atomic(path: Path, text: str, bom: bool = False, create: bool = False,
                 expected: bytes | None = None) -> None:
    """Write `text` through a temporary file, fsync and rename. `expected`: the bytes the new
    text was made from; the file is read again just before the rename and, if it changed
    meanwhile (another writer), ChangedMeanwhile is raised and nothing is replaced."""
    data = (_BOM if bom else b"") + text.encode("utf-8")
    mode = None
    if not create:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".pmem-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            # mkstemp makes the file 0600; a new index gets what any new file gets (umask).
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        if create:
            # Creating must not replace a file that appeared meanwhile: link fails if it exists.
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise Refusal(COLLISION, f"`{path.name}` appeared meanwhile; nothing was overwritten") from None
            os.unlink(tmp)
        else:
            if expected is not None and _read_bytes(path) != expected:
                raise ChangedMeanwhile(path.name)
            os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def apply_step(root: Path, step: Step) -> None:
    if isinstance(step, MakeDir):
        resolve_inside(root, step.path)
        path = root / step.path
        if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
            raise Refusal(COLLISION, f"`{step.path}` exists but is not a folder")
        path.mkdir(mode=0o700 if step.private else 0o777, parents=True, exist_ok=True)
    elif isinstance(step, Move):
        resolve_inside(root, step.source)
        resolve_inside(root, step.destination)
        require_source(root, step.source)
        require_free(root, step.destination)
        move_no_overwrite(root / step.source, root / step.destination)
        prune_emptied(root, step.source)  # a recover or delete leaves no empty folder in `_archive/`
    elif isinstance(step, Remove):
        resolve_inside(root, step.path)
        require_source(root, step.path)
        os.unlink(root / step.path)
        _fsync_dir((root / step.path).parent)
    elif isinstance(step, WriteText):
        write_index(root, step)
    else:  # pragma: no cover - Step is a closed union
        raise TypeError(step)


CAS_ATTEMPTS = 5  # a file another writer keeps changing under us is refused after this many tries


def write_index(root: Path, step: WriteText) -> bool:
    """Make `step`'s change on what the file holds now, compare-and-swap: the file is read,
    the change re-made on it (lines an agent added meanwhile are kept), and the result written
    only if the file is still what was read. Returns whether the file was written (False: it
    already was as it should be)."""
    resolve_inside(root, step.path)
    path = root / step.path
    for _attempt in range(CAS_ATTEMPTS):
        raw = _read_bytes(path)
        current, bom = decode_for_rewrite(path, raw)
        try:
            write = step.rebase(current)
        except Refusal as exc:  # mid-plan: say that this file, at least, was left alone
            raise Refusal(exc.rule, f"{exc.message}; it was not rewritten") from None
        if write.after == current:
            return False  # already as it should be (an agent added the route meanwhile)
        make_folders(path.parent)
        try:
            write_atomic(path, write.after, bom=bom, create=current is None, expected=raw)
        except ChangedMeanwhile:
            continue  # another writer wrote between our read and our rename: again, on its text
        return True
    raise Refusal(CHANGED, f"`{step.path}` kept changing while pmem tried to write it; it was not rewritten")


def preflight(root: Path, plan: Plan) -> None:
    """Before the first step: every write of the plan must still apply to the file as it is now
    (the route lines and records it changes are there, a file it creates is not) and the file
    must be one pmem can rewrite (strict UTF-8). Otherwise the plan would move the file and
    then stop half-way at the index write."""
    for step in plan.writes():
        resolve_inside(root, step.path)
        current, _ = read_for_rewrite(root / step.path)
        step.rebase(current)


def apply_plan(root: Path, plan: Plan) -> list[str]:
    """Run every step in order; stop at the first failure and say what was already done. The
    caller holds the root's lock (`lock.RootLock`) from re-validation to here."""
    done: list[str] = []
    try:
        preflight(root, plan)
    except Refusal as exc:
        raise ApplyError(exc.rule, _after(done, exc.message), ()) from None
    except OSError as exc:
        why = f"cannot read the files to rewrite: {exc.strerror or exc}"
        raise ApplyError("filesystem", _after(done, why), ()) from None
    for step in plan.steps:
        try:
            apply_step(root, step)
        except Refusal as exc:
            raise ApplyError(exc.rule, _after(done, f"{exc.message}"), tuple(done)) from None
        except OSError as exc:
            raise ApplyError("filesystem", _after(done, f"{describe(step)} failed: {exc.strerror or exc}"),
                             tuple(done)) from None
        done.append(describe(step))
    return done


def _after(done: list[str], message: str) -> str:
    if not done:
        return f"{message}; nothing was changed"
    return f"{message} (already done: {'; '.join(done)}); run `pmem check` to see what is left to fix"
