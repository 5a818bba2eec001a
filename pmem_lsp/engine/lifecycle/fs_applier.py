"""Carry a plan out on the filesystem: the CLI's applier, and the server's fallback.

- Moves never overwrite: the file is hard-linked to its destination (which fails if the
  destination exists) and only then unlinked from its source; when the unlink fails (a
  read-only source folder) the link is undone, so the file is never left twice. A crash in
  between leaves it in both places, never in neither. Where hard links are not possible the
  destination is checked immediately before a rename.
- Text files are written atomically: a temporary file beside the target, fsync, rename,
  fsync of the folder. A file created by a plan must not exist yet.
- Each write is made on the text the file holds at that moment (`WriteText.rebase`): lines an
  agent added or reordered meanwhile are kept; when the route line or record the user confirmed
  changed, the step stops and nothing after it runs. The same check runs once for every write
  before the first step (`preflight`), so an index that was edited that way or cannot be
  rewritten (invalid UTF-8, NUL) stops the plan before the file moves.
- Each index write is compare-and-swap on a settled text (`write_index`): a text that lost
  lines since the plan was made (an agent mid truncate-then-write) is waited for, with
  backoff, until it is whole again or has held still (`settled`); the new text must be the
  text read minus what the change removes plus what it adds (`changes.check_effect`), checked
  right before the rename; the file is read again just before the rename, and when another
  writer changed it since the read, the change is made again on its text, with backoff, for
  at most `SETTLE_LIMIT` seconds, then refused. pmem's own writers also hold the root's lock
  (`lock.py`) for the whole plan.
- Nothing is based on a state pmem cannot trust (issue 40): an index emptied, headless or
  stripped of most routes since pmem read it is never a base (`_gutted`); no rename replaces
  an index another program holds open for writing (`wait_for_writers`, `open_writers.py`);
  every read, first or retry, opens the file without following a link and reads only a
  regular file (`_read_bytes`); a move or a purge acts only on the regular file it checked
  (same inode before and after), and folders made for a step that is refused are removed.
- `run_steps` runs a plan's steps in order; with `undo` (the executor, `execute.py`) a step
  that fails puts back every step done before it, in reverse, and says exactly what is left
  when even that fails. A removal (purge) is first a rename aside to a hidden temporary name,
  deleted only when every step is done, so it can be put back too.
- Moves keep the file's modification time (a hard link, or a rename, is the same inode).
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import re
import stat
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..env_seconds import env_seconds
from ..folders import make_folders
from .changes import check_effect, lost_lines, undo_change
from .consequences import prune_emptied
from .leftovers import TMP_SUFFIX, aside_name
from .open_writers import held_for_writing
from .plan import MakeDir, Move, Plan, Remove, Step, WriteText
from .safety import (
    CHANGED,
    COLLISION,
    ENCODING,
    OUTSIDE_ROOT,
    SOURCE,
    Refusal,
    require_free,
    require_source,
    resolve_inside,
)

UNSETTLED = "unsettled"  # the refusal's rule: an index kept losing lines (another writer mid-rewrite)
HELD = "held-open"  # the refusal's rule: another program holds the index open for writing
# Seconds an index write waits for another writer (settling, compare-and-swap, a writer that
# holds the index open): then it is refused, nothing changed.
SETTLE_LIMIT = env_seconds("PMEM_SETTLE_LIMIT", 5.0, minimum=0.1)
STABLE = 0.01  # seconds between the two reads that must agree before a text is a base
QUIET = 0.5  # a text that lost some lines is a base once the same lines stayed missing this long
QUIET_EMPTY = 1.0  # an empty index (no plan had lines in it) is a base once it stayed empty this long
# A text that ends in the middle of a line, written less than this long ago, is a writer's first
# half (agents truncate, then write, and may pause between the two): not a base yet.
MID_LINE_QUIET = 2.0

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
    """Move the regular file `src` to `dst`, which must not exist. The source is checked right
    before the move and the destination right after it: a name swapped for a folder or a link
    meanwhile is refused and put back, never moved (issue 40: a folder swapped in made `link`
    fail, and the fallback rename moved the whole folder into `_archive/`). The folders made
    for `dst` are removed again when the move does not happen ("nothing was changed" leaves no
    empty folder behind)."""
    before = _regular(src, "it was not moved")
    created = _folders_to_make(dst.parent)
    make_folders(dst.parent)
    try:
        _move(src, dst, before)
    except BaseException:
        _remove_folders(created)
        raise
    _fsync_dir(dst.parent)
    _fsync_dir(src.parent)


def _move(src: Path, dst: Path, before: os.stat_result) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except FileExistsError:
        raise Refusal(COLLISION, f"`{dst.name}` appeared at the destination; nothing was overwritten") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EACCES):
            raise
        if os.path.lexists(dst):
            raise Refusal(COLLISION, f"`{dst.name}` appeared at the destination; nothing was overwritten") from None
        _same_file(src, before)  # `link` fails on a folder too: it must still be the file checked
        os.rename(src, dst)
        try:
            _same_file(dst, before)
        except Refusal:
            if not os.path.lexists(src):
                os.rename(dst, src)  # what was swapped in goes back where it was
            raise
        return
    try:
        _same_file(dst, before)
    except Refusal:
        os.unlink(dst)  # a second name of what was swapped in; the source is left as it is
        raise
    try:
        os.unlink(src)
    except OSError as exc:
        # The source folder is read-only (or the file is immutable): undo the link, so the
        # file is not left in two places, and say nothing moved.
        try:
            os.unlink(dst)
        except OSError:
            raise exc from None
        raise Refusal("filesystem", f"`{src.name}` cannot be removed from its folder "
                                    f"({exc.strerror or exc}); it was not moved") from None


def _regular(path: Path, outcome: str) -> os.stat_result:
    """`path`'s own status (never through a link) when it is a regular file; else a Refusal."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise Refusal(SOURCE, f"`{path.name}` does not exist; {outcome}") from None
    kind = _not_regular(st.st_mode)
    if kind:
        raise Refusal(SOURCE, f"`{path.name}` is {kind}; pmem moves only regular files, so {outcome}")
    return st


def _same_file(path: Path, before: os.stat_result, outcome: str = "it was not moved") -> None:
    """`path` is still the regular file `before` was read from (same device and inode)."""
    st = _regular(path, outcome)
    if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        raise Refusal(SOURCE, f"`{path.name}` was replaced by another file while pmem worked on it; {outcome}")


def _folders_to_make(folder: Path) -> list[Path]:
    """The folders `make_folders(folder)` will create, deepest first."""
    missing = []
    here = folder
    while not os.path.lexists(here) and here.parent != here:
        missing.append(here)
        here = here.parent
    return missing


def _remove_made(folders: list[Path]) -> None:
    """The undo of a MakeDir: its folder must go (an error says it could not); the parents it
    made go with it when empty."""
    os.rmdir(folders[0])
    _remove_folders(folders[1:])


def _remove_folders(folders: list[Path]) -> None:
    """Remove `folders` (deepest first) if they are empty; a folder that is not stays."""
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            return


def read_for_rewrite(path: Path) -> tuple[str | None, bool]:
    """(text, had BOM), or (None, False) when the file does not exist. Strict UTF-8: a file
    pmem cannot decode exactly is never rewritten (that would replace bytes)."""
    return decode_for_rewrite(path, _read_bytes(path))


def _snapshot(path: Path) -> tuple[bytes | None, tuple[int, ...] | None]:
    """The bytes of `path` and what the file system says of the file as they were read (inode,
    size, modification and change times; None: absent): two equal snapshots a moment apart mean
    nobody wrote it in between — equal bytes alone do not (a rewrite in place of the same text
    shows the same half each time). Read by `_read_bytes` (never through a link); the times are
    the name's own (`lstat`), so a link swapped in after the read is not followed either."""
    data = _read_bytes(path)
    if data is None:
        return None, None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, None
    return data, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file `path` (None: absent). Every read of a file pmem rewrites
    — the first and each retry — opens it the same way: never through a symbolic link at its
    name (O_NOFOLLOW), and only a regular file, checked on the descriptor read (`fstat`), so a
    name swapped for a link to a file outside the root, or for a folder, between two reads is
    refused, not read (issue 40)."""
    with _opened_regular(path) as fd:
        return None if fd is None else _read_all(fd)


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_NONBLOCK", 0))  # O_NONBLOCK: a FIFO swapped in does not hang the open


@contextlib.contextmanager
def _opened_regular(path: Path) -> Iterator[int | None]:
    """A read-only descriptor of the regular file `path`, or None when nothing is there; a
    Refusal when the name is a link, a folder or anything but a regular file."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        yield None
        return
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refusal(OUTSIDE_ROOT, f"`{path.name}` became a symbolic link; pmem does not read or write "
                                        "through links, so it was not rewritten") from None
        raise
    try:
        kind = _not_regular(os.fstat(fd).st_mode)
        if kind:
            raise Refusal(SOURCE, f"`{path.name}` became {kind}; pmem rewrites only regular files, "
                                  "so it was not rewritten")
        yield fd
    finally:
        os.close(fd)


def _not_regular(mode: int) -> str:
    """'' for a regular file, else what it is, for a person."""
    if stat.S_ISREG(mode):
        return ""
    return ("a symbolic link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode)
            else "something other than a regular file")


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


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
    """Write `text` through a temporary file, fsync and rename. Right before the rename, no
    other program may hold the file open for writing (refused otherwise: `wait_for_writers`,
    which the caller already waited on). `expected`: the bytes the new text was made from; the
    file is read again just before the rename and, if it changed meanwhile (another writer),
    ChangedMeanwhile is raised and nothing is replaced."""
    data = (_BOM if bom else b"") + text.encode("utf-8")
    mode = None
    if not create:
        try:
            mode = os.stat(path, follow_symlinks=False).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
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
            # The file is made: failing the step now would say "nothing was changed" beside a
            # file that exists (a review). A leftover is reported (PM007), cleared by the next write.
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        else:
            wait_for_writers(path, deadline=0.0)  # asked once more, next to the rename: no wait left
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
        prune_emptied(root, step.path)  # a purge leaves no empty folder in `_archive/_trash/`
    elif isinstance(step, WriteText):
        write_index(root, step)
    else:  # pragma: no cover - Step is a closed union
        raise TypeError(step)


def stash(root: Path, rel: str) -> Path:
    """A removal's first half: the file is renamed aside to a hidden name in its folder (which
    no agent reads as memory), so that the plan can still put it back."""
    resolve_inside(root, rel)
    require_source(root, rel)
    path = root / rel
    before = _regular(path, "it was not removed")
    aside = aside_name(path, purge=True)
    os.rename(path, aside)
    try:
        _same_file(aside, before, "it was not removed")  # a folder or link swapped in is not what goes
    except Refusal as exc:
        if not os.path.lexists(path):
            os.rename(aside, path)
        raise Refusal(exc.rule, exc.message.replace(f"`{aside.name}`", f"`{rel}`")) from None
    _fsync_dir(path.parent)
    return aside


def _decoded(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "replace")


_ROUTE_LINE = re.compile(r"^\s*[-*+]\s+\[[^\]]*\]\(")  # a list item that links: a route


def _gutted(reference: str | None, raw: bytes | None, root: Path | None = None) -> str | None:
    """What another writer's rewrite in progress looks like from outside, said for a person
    (None: nothing of it): since `reference` (pmem's last reading) the text was emptied or
    vanished, lost its first heading, or lost most of its routes. Such a text is being written
    by someone else until proven otherwise — it is never the base of a write (issue 40: a writer
    that truncated and paused 5–8 s had a one-line index renamed over its text). A route whose
    note is gone from `root` went with its note (another pmem archived or trashed it while this
    one waited for the lock): that is no sign of a rewrite, and it is not counted."""
    if not (reference or "").strip():
        return None
    if raw is None:
        return "vanished"
    if not raw.strip():
        return "was emptied"
    # Compared without a byte order mark: the plan's text has none, the bytes may.
    now = set(_decoded(raw).removeprefix("\ufeff").splitlines())  # type: ignore[union-attr]
    before = reference.removeprefix("\ufeff").splitlines()  # type: ignore[union-attr]
    heading = next((line for line in before if line.startswith("# ")), None)
    if heading is not None and heading not in now:
        return "lost its heading"
    routes = [i for i, line in enumerate(before) if _ROUTE_LINE.match(line)]
    lost = [i for i in routes if before[i] not in now]
    if len(lost) >= 2 and len(lost) * 2 > len(routes) and root is not None:
        went = _went_with_their_notes(reference, set(lost), root)  # type: ignore[arg-type]
        lost, routes = [i for i in lost if i not in went], [i for i in routes if i not in went]
    if len(lost) >= 2 and len(lost) * 2 > len(routes):
        return f"lost {len(lost)} of its {len(routes)} routes"
    return None


def _went_with_their_notes(reference: str, lines: set[int], root: Path) -> set[int]:
    """Those of `lines` (route lines of `reference`) whose note no longer exists under `root`.
    Read only when the count alone would call the text gutted, so a steady wait stays cheap."""
    from ..index_routes import parse_index  # the index parser, only on this rare path
    from ..memory_file import MemoryFile

    gone = set()
    for route in parse_index(MemoryFile(reference.removeprefix("\ufeff"))).routes:
        if route.line in lines and route.path and not os.path.lexists(root / route.path):
            gone.add(route.line)
    return gone


def _mid_write(raw: bytes | None, key: tuple[int, ...] | None) -> bool:
    """`raw` ends in the middle of a line and its file was written less than `MID_LINE_QUIET`
    ago: most likely the first half of another writer's rewrite. Renaming a new text over it
    would send that writer's second half to the replaced file, and every line after the cut
    would be lost (a review: a 1 s pause between an agent's two writes lost three routes). A
    text the person left without a final newline is a base once it is that old."""
    if not raw or key is None or raw.endswith((b"\n", b"\r")):
        return False
    age = time.time_ns() - key[2]
    return 0 <= age < MID_LINE_QUIET * 1e9


def settled(path: Path, reference: str | None, deadline: float) -> bytes | None:
    """The bytes of `path` once they are a safe base for a write made from `reference` (the text
    the plan was made on; None: any text): two snapshots `STABLE` seconds apart agree, bytes and
    file times (`_snapshot`) — an index that another program rewrites in place (truncate, then
    write) shows its halves in between — and no line of `reference` is missing. When lines are
    missing (that writer is mid-rewrite, or removed them on purpose), wait, with backoff, until
    they are back, or — for a text that still has lines — until the same lines stayed missing
    for `QUIET` seconds. An empty file is
    a base only once it stayed empty for `QUIET_EMPTY` seconds, and a text that was emptied,
    vanished, lost its heading or most of its routes since `reference` (`_gutted`) never is:
    when it stays so until `deadline`, or never settles, the write is refused and nothing is
    written."""
    raw, key = _snapshot(path)
    base = path.parent if path.name == "_index.md" and path.parent.name != "_archive" else None
    if reference is not None and raw is not None and reference.strip() and _decoded(raw) == reference \
            and not _mid_write(raw, key):
        return raw  # exactly the text the plan was made on (itself settled): no half of a rewrite
    delay = STABLE
    missing: tuple[Counter[str], bool] | None = None  # what the last steady text lacked: lines, any text
    since = time.monotonic()
    while True:
        time.sleep(delay * random.uniform(1.0, 1.5))
        again, again_key = _snapshot(path)
        if (again, again_key) != (raw, key):  # written in between (or mid-write): read again
            raw, key, delay = again, again_key, STABLE
        else:
            gone = lost_lines(reference, _decoded(raw))
            blank = raw is not None and not raw.strip()  # caught between a truncate and its write?
            if not gone and not blank:
                if not _mid_write(raw, key):
                    return raw
            elif (gone, blank) != missing:  # another steady text, with other lines missing: wait again
                missing, since = (gone, blank), time.monotonic()
            elif not _gutted(reference, raw, base) and time.monotonic() - since >= (QUIET_EMPTY if blank else QUIET) \
                    and not _mid_write(raw, key):
                return raw  # the same lines stayed missing: removed on purpose (others may come and go)
            delay = min(delay * 2, 0.1)
        if time.monotonic() >= deadline:
            seen = _gutted(reference, raw, base)
            if seen:
                raise Refusal(UNSETTLED, f"`{path.name}` {seen} since pmem read it (another program may be "
                                         "rewriting it); pmem writes no index on such a text, so it was not "
                                         "rewritten — run the command again when it is complete")
            raise Refusal(UNSETTLED, f"`{path.name}` kept changing while pmem waited to write it (another "
                                     "program is rewriting it); it was not rewritten")


def wait_for_writers(path: Path, deadline: float) -> None:
    """Return once no other program holds `path` open for writing (`open_writers`); refuse when
    one still does at `deadline`. Asked right before a rename replaces an index: a writer that
    truncated it and pauses would write its text into the replaced file after the rename, and
    that text would be lost — so pmem waits for it to finish, or changes nothing."""
    delay = STABLE
    while True:
        with _opened_regular(path) as fd:
            if fd is None or not held_for_writing(fd):
                return
        if time.monotonic() >= deadline:
            raise Refusal(HELD, f"`{path.name}` is held open for writing by another program (it may be "
                                "rewriting it); pmem does not replace a file another program is writing, so "
                                "it was not rewritten — run the command again when that program is done")
        time.sleep(delay * random.uniform(1.0, 1.5))
        delay = min(delay * 2, 0.1)


def _backoff(attempt: int) -> float:
    """Seconds to wait before compare-and-swap attempt `attempt + 1`: exponential, jittered."""
    return random.uniform(0.5, 1.0) * min(0.002 * 2 ** attempt, 0.1)


@dataclass(frozen=True)
class Written:
    """What an index write did: the text it replaced (None: it created the file) and the text
    it left, so that it can be undone."""

    step: WriteText
    before: str | None
    after: str
    bom: bool


def write_index(root: Path, step: WriteText, deadline: float | None = None) -> Written | None:
    """Make `step`'s change on what the file holds now, compare-and-swap on a settled text: the
    file is read (`settled`), the change re-made on it (lines an agent added meanwhile are kept),
    checked (`check_effect`) and the result written only if the file is still what was read.
    Returns what was written, or None when the file already was as it should be. Each attempt
    checks the path again as the first did (inside the root, through no link): a retry reads
    the index exactly as carefully as the first read."""
    path = root / step.path
    deadline = time.monotonic() + SETTLE_LIMIT if deadline is None else deadline
    attempt = 0
    while True:
        resolve_inside(root, step.path)
        raw = settled(path, step.before, deadline)
        current, bom = decode_for_rewrite(path, raw)
        try:
            write = step.rebase(current)
        except Refusal as exc:  # mid-plan: say that this file, at least, was left alone
            raise Refusal(exc.rule, f"{exc.message}; it was not rewritten") from None
        if write.after == current:
            return None  # already as it should be (an agent added the route meanwhile)
        check_effect(step.change, step.path, current, write.after)
        make_folders(path.parent)
        if raw is not None:
            wait_for_writers(path, deadline)  # a writer mid-rewrite finishes first (asked again at the rename)
        try:
            write_atomic(path, write.after, bom=bom, create=current is None, expected=raw)
        except ChangedMeanwhile:
            # another writer wrote between our read and our rename: again, on its text
            if time.monotonic() >= deadline:
                raise Refusal(CHANGED, f"`{step.path}` kept changing while pmem tried to write it; "
                                       "it was not rewritten") from None
            time.sleep(_backoff(attempt))
            attempt += 1
            continue
        return Written(step, current, write.after, bom)


def undo_write(root: Path, written: Written) -> None:
    """Put back what `written` changed, on what the file holds now (compare-and-swap)."""
    path = root / written.step.path
    deadline = time.monotonic() + SETTLE_LIMIT
    attempt = 0
    while True:
        resolve_inside(root, written.step.path)
        raw = settled(path, written.after, deadline)
        current, bom = decode_for_rewrite(path, raw)
        text = undo_change(written.step.change, written.step.path, written.before, written.after, current)
        if text is None:
            if raw is not None:
                os.unlink(path)
                _fsync_dir(path.parent)
            return
        if text == current:
            return
        if raw is not None:
            wait_for_writers(path, deadline)
        try:
            write_atomic(path, text, bom=bom, create=current is None, expected=raw)
        except ChangedMeanwhile:
            if time.monotonic() >= deadline:
                raise Refusal(CHANGED, f"`{written.step.path}` kept changing while pmem put it back") from None
            time.sleep(_backoff(attempt))
            attempt += 1
            continue
        return


def preflight(root: Path, plan: Plan) -> None:
    """Before the first step: every write of the plan must still apply to the file as it is now
    (the route lines and records it changes are there, a file it creates is not), read once it
    is settled (`settled`), and the file must be one pmem can rewrite (strict UTF-8). Otherwise
    the plan would move the file and then stop half-way at the index write. An index another
    program holds open for writing is waited for here too (`wait_for_writers`), before any
    file moves."""
    deadline = time.monotonic() + SETTLE_LIMIT
    for step in plan.writes():
        resolve_inside(root, step.path)
        path = root / step.path
        raw = settled(path, step.before, deadline)
        current, _ = decode_for_rewrite(path, raw)
        step.rebase(current)
        if raw is not None:
            wait_for_writers(path, deadline)


Mover = Callable[[Path, Move], None]  # how a move reaches the disk (the server's goes through the editor)


@dataclass
class _Journal:
    """The steps done so far and how to put each back, newest last."""

    done: list[str] = field(default_factory=list)
    undo: list[tuple[int, str, Callable[[], None]]] = field(default_factory=list)  # (step done, how, undo)
    stashed: list[Path] = field(default_factory=list)


def _run_one(root: Path, step: Step, journal: _Journal, move: Mover | None, undo: bool) -> None:
    if not undo:
        if isinstance(step, Move) and move is not None:
            move(root, step)
        else:
            apply_step(root, step)
        return
    if isinstance(step, MakeDir):
        path = root / step.path
        made = _folders_to_make(path)  # its parents too: a refusal leaves none of them behind
        apply_step(root, step)
        if made:
            journal.undo.append((len(journal.done), f"remove the folder {step.path}/",
                                 lambda: _remove_made(made)))
    elif isinstance(step, Move):
        (move or apply_step)(root, step)
        back = Move(step.destination, step.source)
        journal.undo.append((len(journal.done), f"move {step.destination} back to {step.source}",
                             lambda: (move or apply_step)(root, back)))
    elif isinstance(step, Remove):
        aside = stash(root, step.path)
        journal.stashed.append(aside)

        def put_back() -> None:
            move_no_overwrite(aside, root / step.path)
            journal.stashed.remove(aside)

        journal.undo.append((len(journal.done), f"put {step.path} back", put_back))
    elif isinstance(step, WriteText):
        written = write_index(root, step)
        if written is not None:
            journal.undo.append((len(journal.done), f"put {step.path} back as it was",
                                 lambda: undo_write(root, written)))
    else:  # pragma: no cover - Step is a closed union
        raise TypeError(step)


def _why(step: Step, exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, Refusal):
        return exc.rule, exc.message
    assert isinstance(exc, OSError)
    return "filesystem", f"{describe(step)} failed: {exc.strerror or exc}"


class Replan(ApplyError):
    """The steps ran but left the root short of what the operation is for (`verify`: a plan made
    on an index read mid-rewrite), and were all put back: plan again."""


def run_steps(root: Path, plan: Plan, move: Mover | None = None, undo: bool = False,
              verify: Callable[[], str | None] | None = None) -> list[str]:
    """Run `plan`'s steps in order (moves through `move` when given); returns what was done.
    On a failure: without `undo`, stop and say what was done (ApplyError.done); with `undo`,
    put back every step done, newest first, and say so — or, when even that fails, say exactly
    which steps remain done (ApplyError.done) and what failed. `verify`, after the last step:
    why the operation's goal is not reached (None: it is); then every step is put back and
    Replan is raised (or the ApplyError that says what remains)."""
    journal = _Journal()
    try:
        preflight(root, plan)
    except Refusal as exc:
        raise ApplyError(exc.rule, _after([], exc.message), ()) from None
    except OSError as exc:
        why = f"cannot read the files to rewrite: {exc.strerror or exc}"
        raise ApplyError("filesystem", _after([], why), ()) from None
    for step in plan.steps:
        try:
            _run_one(root, step, journal, move, undo)
        except (Refusal, OSError) as exc:
            rule, why = _why(step, exc)
            if not undo or not journal.undo:
                raise ApplyError(rule, _after(journal.done, why), tuple(journal.done)) from None
            raise _rolled_back(rule, why, journal) from None
        journal.done.append(describe(step))
    missed = verify() if verify is not None and undo else None
    if missed is not None:
        failed = _rolled_back(CHANGED, missed, journal)
        if failed.done:
            raise failed
        raise Replan(CHANGED, failed.message, ())
    for aside in journal.stashed:
        try:
            os.unlink(aside)  # the removal's second half; a leftover is reported (PM007), cleared by the next write
            _fsync_dir(aside.parent)
        except OSError:
            continue
        # A purge leaves no empty folder in `_archive/_trash/` (never `_archive/` or its trash).
        prune_emptied(root, os.path.relpath(aside, root).replace(os.sep, "/"))
    return journal.done


def _rolled_back(rule: str, why: str, journal: _Journal) -> ApplyError:
    """Undo the journal, newest first; the error says what is left."""
    remaining = {n for n, _, _ in journal.undo}
    while journal.undo:
        n, what, undo = journal.undo.pop()
        try:
            undo()
        except (Refusal, OSError) as exc:
            cause = exc.message if isinstance(exc, Refusal) else (exc.strerror or str(exc))
            still = [journal.done[i] for i in sorted(remaining)]
            left = "; ".join(still)
            return ApplyError(rule, f"{why}; pmem tried to put back what it had done, but could not {what} "
                                    f"({cause}), so this much of the operation remains done: {left}; "
                                    "run `pmem check`, whose fixes finish it", tuple(still))
        remaining.discard(n)
    undone = "; ".join(journal.done)
    return ApplyError(rule, f"{why}; what was already done ({undone}) was put back, so nothing was changed", ())


def _after(done: list[str], message: str) -> str:
    if not done:
        return f"{message}; nothing was changed"
    return f"{message} (already done: {'; '.join(done)}); run `pmem check` to see what is left to fix"
