"""The process boundary (issue 9, docs/design.md §7): pmem opens no network connection and writes no
file outside the memory root but its own user cache folder (`~/.cache/pmem`: the check
records of `pmem check` and the writers' locks, engine/user_cache.py) and its history store
in the user's state folder (`~/.local/state/pmem/history/`, docs/design.md §11) — no log
file, nothing else in HOME, the working folder or TMPDIR.

Every Python process the tests start gets a `sitecustomize.py` first on PYTHONPATH that adds
an audit hook (PEP 578; it sees the C-level calls, whatever library makes them):

- network: creating a socket of any family but AF_UNIX, connecting, binding or sending to an
  address that is not a Unix socket path, and name lookups (getaddrinfo, gethostbyname, …)
  are refused (the call raises PermissionError) and recorded. An AF_UNIX socket pair is
  allowed: asyncio's event loop makes one to wake itself up — a pipe inside the process,
  not a network connection;
- files: every open for writing, and every create, rename, remove, chmod and link, is
  recorded with its absolute path.

The record goes to a file opened before the hook is installed (its own writes are not
events). The same sessions also run in a new network namespace (`unshare -n`, or `unshare -rn`
without root: only a loopback interface that is down), which covers what the hook cannot see:
subprocesses (git) and the kernel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from raw_lsp import SERVER_COMMAND, RawServer
from test_no_leaks import CAPABILITIES, leak_root

SITECUSTOMIZE = r'''
import os
import sys

_fd = os.open(os.environ["PMEM_SANDBOX_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
_AF_UNIX = 1
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _record(kind, detail):
    os.write(_fd, ("%s %d %s %r\n" % (kind, os.getpid(), os.path.basename(sys.argv[0] or "?"), detail)).encode())


def _path(p):
    if isinstance(p, int):
        return "<fd>"
    try:
        return os.path.abspath(os.fsdecode(p))
    except Exception:
        return repr(p)


def _net(detail):
    _record("NET", detail)
    raise PermissionError("network use is refused in this test sandbox: %r" % (detail,))


def _hook(event, args):
    if event == "socket.__new__":
        family = args[1]
        if family not in (_AF_UNIX, -1):  # -1: adopting an existing descriptor (socketpair)
            _net(("socket", family))
    elif event in ("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"):
        address = args[1] if len(args) > 1 else None
        if not isinstance(address, (str, bytes)):  # a Unix socket path is local
            _net((event, repr(address)))
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr",
                   "socket.gethostbyname_ex", "socket.getnameinfo"):
        _net((event, repr(args[0]) if args else ""))
    elif event == "open":
        path, mode, flags = args
        writing = (mode is not None and any(c in str(mode) for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS)
        # An int path wraps a descriptor opened before (mkstemp's, recorded there).
        if writing and path is not None and not isinstance(path, int) and _path(path) != os.devnull:
            _record("WRITE", _path(path))
    elif event in ("os.mkdir", "os.remove", "os.rmdir", "os.chmod", "os.truncate", "os.utime", "os.chown"):
        _record("WRITE", (event, _path(args[0])))
    elif event in ("os.rename", "os.link", "os.symlink"):
        _record("WRITE", (event, _path(args[0]), _path(args[1])))
    elif event == "tempfile.mkstemp":
        _record("WRITE", ("mkstemp", _path(args[0])))


sys.addaudithook(_hook)
_record("LOADED", " ".join(sys.argv))
'''


class Sandbox:
    """Where the processes of one test run: HOME, working folder and TMPDIR of their own, the
    audit hook on PYTHONPATH, and optionally a new network namespace."""

    def __init__(self, base: Path, isolate_network: bool) -> None:
        self.base = base
        self.home, self.cwd, self.tmp, hook = (base / n for n in ("home", "cwd", "tmp", "hook"))
        for d in (self.home, self.cwd, self.tmp, hook):
            d.mkdir(parents=True)
        (hook / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        self.log = base / "sandbox.log"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("PMEM", "PYTHON", "XDG_"))}
        self.env.update(PYTHONPATH=os.pathsep.join([str(hook), *filter(None, [os.environ.get("PYTHONPATH")])]),
                        PMEM_SANDBOX_LOG=str(self.log), HOME=str(self.home), TMPDIR=str(self.tmp),
                        PYTHONDONTWRITEBYTECODE="1",  # the interpreter's bytecode cache is not pmem's
                        # The cache records written in place, so the log holds every write when
                        # the command returns (tests/conftest.py; engine/cache_writer.py).
                        PMEM_CACHE_WRITE="foreground")
        self.prefix = list(UNSHARE or []) if isolate_network else []

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.prefix, sys.executable, "-m", "pmem_lsp.cli.main", *args], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=60, cwd=self.cwd, env=self.env)

    def server(self) -> RawServer:
        return RawServer(self.cwd, command=[*self.prefix, *SERVER_COMMAND], env=self.env)

    def records(self) -> list[tuple[str, str]]:
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text(encoding="utf-8").splitlines():
            kind, _, rest = line.partition(" ")
            out.append((kind, rest))
        return out

    def listing(self) -> dict[str, list[str]]:
        return {name: sorted(p.relative_to(d).as_posix() for p in d.rglob("*"))
                for name, d in (("home", self.home), ("cwd", self.cwd), ("tmp", self.tmp))}

    # Outside the root pmem writes only into its user cache folder: the lock that keeps two
    # pmem writers apart (engine/lifecycle/lock.py) and the check cache's records
    # (cli/check_cache.py), each written through a temporary file renamed into place.
    CACHE = ".cache/pmem"
    LOCKS = ".cache/pmem/locks"
    RECORDS = ".cache/pmem/records"

    STATE = ".local/state/pmem"  # the history store (engine/history/location.py), 0700

    def listing_but_user_cache(self) -> dict[str, list[str]]:
        listing = self.listing()
        history = [p for p in listing["home"] if p == self.STATE or p.startswith(self.STATE + "/")]
        assert all(p == self.STATE or p.startswith(self.STATE + "/history") for p in history), history
        listing["home"] = [p for p in listing["home"] if p not in history and p not in (".local", ".local/state")]
        cached = [p for p in listing["home"] if p.startswith(self.CACHE + "/")]
        locks = [p for p in cached if p.startswith(self.LOCKS + "/")]
        per_file = [p for p in cached if p == self.RECORDS or p.startswith(self.RECORDS + "/")]
        records = [p for p in cached if p not in locks and p != self.LOCKS and p not in per_file]
        assert all(p.endswith(".lock") for p in locks) and len(locks) <= 1, locks
        # Each record may have its `.lock` beside it: readers wait on it for a busy writer
        # (engine/cache_writer.py).
        assert all(p.endswith((".check", ".check.lock")) and "/" not in p[len(self.CACHE) + 1:]
                   for p in records), records
        # The per-file records (engine/entry_cache.py): one file per root and settings, nothing else.
        assert all(p == self.RECORDS or (p.endswith((".records", ".records.lock"))
                                         and "/" not in p[len(self.RECORDS) + 1:]) for p in per_file), per_file
        listing["home"] = [p for p in listing["home"] if p not in (".cache", self.CACHE, *cached)]
        return listing

    def writes_outside(self, writes: list[str], root: Path) -> list[str]:
        cache = str(self.home / ".cache")  # the lock file, the check records and their folders
        state = str(self.home / ".local" / "state")  # the history store and its folders
        local = str(self.home / ".local")  # made when missing, for the state folder (a fresh HOME)
        return [w for w in writes if str(root) not in w
                and not (cache in w and ("pmem" in w or w.endswith(".cache')")))
                and not (state in w and ("pmem" in w or w.endswith((".local')", "state')"))))
                and not w.endswith(f"'{local}')")]


def _find_unshare() -> tuple[list[str] | None, str]:
    """The command prefix that runs a program without network (`unshare -n` as root, else
    `unshare -rn` in a user namespace), or None and why neither works here."""
    exe = shutil.which("unshare")
    if exe is None:
        return None, "unshare (util-linux) is not installed"
    why = ""
    for flags in ("-n", "-rn"):
        try:
            done = subprocess.run([exe, flags, "true"], capture_output=True, text=True, timeout=10)
        except OSError as exc:
            return None, f"unshare cannot run: {exc}"
        if done.returncode == 0:
            return [exe, flags], ""
        why = done.stderr.strip()
    return None, f"neither unshare -n (needs CAP_SYS_ADMIN) nor unshare -rn (user namespaces) works: {why}"


UNSHARE, NO_UNSHARE_REASON = _find_unshare()
ISOLATION = [
    pytest.param(False, id="socket-trap"),
    pytest.param(True, id="no-network-namespace",
                 marks=pytest.mark.skipif(UNSHARE is None, reason=NO_UNSHARE_REASON)),
]


def test_the_sandbox_catches_what_it_claims(tmp_path: Path):
    """The trap itself: an AF_INET socket, a name lookup and a file write are seen; an
    AF_UNIX socket pair and an asyncio event loop are allowed."""
    box = Sandbox(tmp_path, isolate_network=False)
    probe = (
        "import asyncio, socket\n"
        "a, b = socket.socketpair(); a.close(); b.close()\n"
        "asyncio.run(asyncio.sleep(0))\n"
        "for f in (lambda: socket.socket(), lambda: socket.getaddrinfo('example.org', 80),\n"
        "          lambda: socket.create_connection(('127.0.0.1', 9))):\n"
        "    try:\n"
        "        f(); print('allowed')\n"
        "    except PermissionError:\n"
        "        print('refused')\n"
        f"open({str(box.cwd / 'x.txt')!r}, 'w').close()\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=box.env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["refused"] * 3
    kinds = [k for k, _ in box.records()]
    assert kinds.count("NET") == 3 and kinds[0] == "LOADED"
    assert any(k == "WRITE" and "x.txt" in r for k, r in box.records())


@pytest.mark.skipif(UNSHARE is None, reason=NO_UNSHARE_REASON)
def test_the_namespace_has_no_network():
    code = "import socket; print(' '.join(name for _, name in socket.if_nameindex()))"
    done = subprocess.run([*UNSHARE, sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["lo"]  # loopback only, and down


@pytest.mark.parametrize("isolate", ISOLATION)
def test_the_cli_uses_no_network_and_writes_only_in_the_root(tmp_path: Path, isolate: bool):
    box = Sandbox(tmp_path / "box", isolate_network=isolate)
    root = leak_root(tmp_path / "memory")
    (root / ".pmem.toml").write_text('[severity]\nPM003 = "hint"\n', encoding="utf-8")
    before = box.listing()
    # The check cache stores a run's record only when no file changed in the two seconds
    # before it (cli/check_cache.py), so whether these checks write their records depended on
    # how fast this machine ran them. With no such window they always do, and the test says
    # exactly what they write.
    box.env["PMEM_CACHE_RACY_SECONDS"] = "0"
    runs = [box.cli("--root", str(root), *args) for args in (
        ("check",), ("check", "--format", "json"), ("status",), ("health", "--format", "json"), ("rules", "PM401"))]
    assert [r.returncode for r in runs] == [1, 1, 0, 0, 0], [r.stderr for r in runs]
    assert json.loads(runs[1].stdout)["diagnostics"]
    read_only = box.records()
    assert [k for k, _ in read_only if k != "WRITE"] == ["LOADED"] * 5, read_only  # loaded in each
    read_writes = [r for k, r in read_only if k == "WRITE"]
    # The only writes of the read-only commands: the records of the two checks and of health
    # (cached like check) in the user cache; status and rules store none.
    assert box.writes_outside(read_writes, root) == [] and not [w for w in read_writes if str(root) in w]
    assert sum(w.endswith(".check')") for w in read_writes) == 3, read_writes

    archived = box.cli("--root", str(root), "archive", "projects/stale.md", "--reason", "old", "--yes")
    assert archived.returncode == 0, archived.stderr
    assert (root / "_archive/projects/stale.md").exists() and not (root / "projects/stale.md").exists()
    records = box.records()
    assert not [r for k, r in records if k == "NET"], records
    writes = [r for k, r in records if k == "WRITE"]
    assert writes, "the archive wrote its indexes"
    assert box.writes_outside(writes, root) == []
    assert box.listing_but_user_cache() == before  # nothing in HOME (but the lock), the working folder or TMPDIR


def _server_session(box: Sandbox, root: Path) -> RawServer:
    session = box.server()
    session.confirm = True  # the archive is confirmed, as a user would
    try:
        session.initialize(root, CAPABILITIES)
        done = root / "projects/done.md"
        session.wait_for_code(done, "PM401")
        session.open(done)
        hover = session.request("textDocument/hover", {"textDocument": {"uri": (root / "_index.md").as_uri()},
                                                       "position": {"line": 4, "character": 4}})
        assert hover.get("result"), hover
        session.request("workspace/executeCommand", {"command": "pmem.health", "arguments": [{}]})
        done = session.request("workspace/executeCommand", {"command": "pmem.archive",
                                                            "arguments": [{"path": "projects/stale.md"}]})
        assert done["result"]["applied"] is True, done
    finally:
        assert session.close() == 0, "".join(session.stderr)
    return session


@pytest.mark.parametrize("isolate", ISOLATION)
def test_a_server_session_uses_no_network_and_writes_only_in_the_root(tmp_path: Path, isolate: bool):
    box = Sandbox(tmp_path / "box", isolate_network=isolate)
    root = leak_root(tmp_path / "memory")
    before = box.listing()
    session = _server_session(box, root)
    assert (root / "_archive/projects/stale.md").exists()
    records = box.records()
    assert [k for k, _ in records].count("LOADED") == 1, records  # the hook ran in the server
    assert not [r for k, r in records if k == "NET"], records
    writes = [r for k, r in records if k == "WRITE"]
    assert writes and box.writes_outside(writes, root) == []
    assert box.listing_but_user_cache() == before
    assert "Traceback" not in "".join(session.stderr)


def test_no_file_outside_the_root_changes_and_the_root_changes_only_as_planned(tmp_path: Path):
    """Directory listings, independent of the audit hook: after check, status, health, an
    archive from the CLI and a server session with an archive, HOME, the working folder and
    TMPDIR are as they were, and the root differs only by the two moves and the two indexes."""
    box = Sandbox(tmp_path / "box", isolate_network=False)
    root = leak_root(tmp_path / "memory")

    def tree() -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    before, outside = tree(), box.listing()
    for args in (("check",), ("status",), ("health",)):
        box.cli("--root", str(root), *args)
    assert tree() == before
    assert box.cli("--root", str(root), "archive", "notes/keys.md", "--yes").returncode == 0
    _server_session(box, root)
    after = tree()
    assert box.listing_but_user_cache() == outside
    moved = {"notes/keys.md": "_archive/notes/keys.md", "projects/stale.md": "_archive/projects/stale.md"}
    for src, dest in moved.items():
        assert src not in after and after[dest] == before[src]
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert changed == set(moved) | set(moved.values()) | {"_index.md", "_archive/_index.md"}
    for p in after:  # no stray temporary file left behind
        assert not p.endswith(".pmem-tmp"), p


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_pmem_runs_no_program_named_in_the_roots_git_config(tmp_path: Path):
    """A memory root that is a git repository: pmem asks git for commit dates (PM501). Its
    `.git/config` is text anyone who can write the root (an agent) can change; nothing in it
    may make pmem run a program."""
    box = Sandbox(tmp_path / "box", isolate_network=False)
    root = leak_root(tmp_path / "memory")
    marker = tmp_path / "ran"
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
           "-c", "commit.gpgsign=false"]
    env = {**box.env, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "memory"]):
        subprocess.run([*git, *args], check=True, capture_output=True, env=env, timeout=60)
    subprocess.run([*git, "config", "core.fsmonitor", f"touch {marker}; false"], check=True, env=env, timeout=60)
    (root / "projects/alpha.md").write_text("# Alpha\n\nchanged\n", encoding="utf-8")  # a dirty file
    result = box.cli("--root", str(root), "check")
    assert result.returncode == 1, result.stderr
    assert not marker.exists(), "git ran the command named by core.fsmonitor in the root's .git/config"
