"""Test-only: run the real `pmem` CLI or language server, killed by SIGKILL at the N-th
filesystem primitive of the lifecycle's filesystem applier (no test hook lives in the product).

`install(n, log)` wraps `os.mkdir`, `os.link`, `os.unlink`, `os.rename`, `os.replace` and
`os.fsync`. A call counts only when `pmem_lsp/engine/lifecycle/fs_applier.py` is on the calling
thread's stack (`Path.mkdir` and `tempfile.mkstemp` called from there count too), so the
server's watcher and the analysis never shift the numbering. Before the n-th counted call runs,
the process sends itself SIGKILL: no `finally`, no clean-up, no flush. Each counted call is
appended to `log` first ("<n> <name>"), so the test knows where the process died.

Ways to run it:

- `python crash_hook.py run N LOG -- ARGS…`: a fresh interpreter runs `pmem ARGS…` with the hook.
- `python crash_hook.py zygote SOCKET`: imports pmem (CLI and server) once, then for each
  connection forks a worker that runs `pmem ARGS…` on the caller's own stdin/stdout/stderr
  (passed over the socket), with the hook when asked. Starting the server costs ~0.7 s of
  imports (lsprotocol) and ~0.3 s of cattrs code generation; a fork of a warm interpreter
  makes a kill at every step affordable. It exits when its stdin (a pipe from the test) closes.
- `python -S crash_hook.py launch SOCKET SPEC`: the process a test starts (as a subprocess or as
  pytest-lsp's server command). It hands its stdio to the zygote's worker and exits with the
  worker's status — killed by SIGKILL itself when the worker was.

Only the standard library is imported at the top: `launch` runs without site-packages.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys

PRIMITIVES = ("mkdir", "link", "unlink", "rename", "replace", "fsync")


def install(kill_at: int, log: str | None = None) -> None:
    import pmem_lsp.engine.lifecycle.fs_applier as fs_applier

    target = fs_applier.__file__
    state = {"count": 0}

    def in_applier() -> bool:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == target:
                return True
            frame = frame.f_back
        return False

    def wrap(name: str, real):
        def call(*args, **kwargs):
            if in_applier():
                state["count"] += 1
                n = state["count"]
                if log:
                    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                    os.write(fd, f"{n} {name}\n".encode())
                    os.close(fd)
                if n == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)

        return call

    for name in PRIMITIVES:
        setattr(os, name, wrap(name, getattr(os, name)))


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def _run_pmem(argv: list[str]) -> int:
    from pmem_lsp.cli.main import main

    try:
        return _exit_code(main(argv))
    except SystemExit as exc:
        return _exit_code(exc.code)


def run(kill_at: int, log: str, argv: list[str]) -> None:
    install(kill_at, log or None)
    code = _run_pmem(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


# -- the zygote ---------------------------------------------------------------------------------
def _worker(spec: dict, fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    if spec.get("pidfile"):
        with open(spec["pidfile"], "w") as fh:
            fh.write(str(os.getpid()))
    if spec.get("kill_at"):
        install(spec["kill_at"], spec.get("log"))
    try:
        code = _run_pmem(spec["argv"])
    except BaseException:  # pragma: no cover - shown on the caller's stderr
        import traceback

        traceback.print_exc()
        code = 70
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _supervise(conn: socket.socket) -> None:
    """In a child of the zygote: fork the worker, wait for it, send its wait status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    spec = json.loads(msg.decode())
    pid = os.fork()
    if pid == 0:
        conn.close()
        _worker(spec, fds)
    for fd in fds:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    conn.sendall(str(status).encode())
    conn.close()
    os._exit(0)


def _warm_up() -> None:
    """Do once what every worker would do first: import what the CLI and the server import
    (some only when they start)."""
    import contextlib
    import importlib
    import pkgutil

    import pmem_lsp.cli
    import pmem_lsp.server

    for package in (pmem_lsp.cli, pmem_lsp.server):
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    for name in ("watchfiles", "anyio", "anyio._backends._asyncio"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


# The methods of a lifecycle session, both ways.
SESSION_METHODS = (
    "initialize", "initialized", "shutdown", "exit", "workspace/executeCommand", "window/showMessageRequest",
    "window/showMessage", "window/logMessage", "workspace/applyEdit", "textDocument/publishDiagnostics",
    "workspace/configuration", "client/registerCapability", "window/workDoneProgress/create", "$/progress",
    "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "workspace/didChangeWatchedFiles",
    "workspace/didChangeConfiguration", "workspace/willRenameFiles", "workspace/didRenameFiles",
)


def _share_a_warm_converter() -> None:
    """cattrs generates (and compiles) a structure and an unstructure function per message type
    the first time a converter meets it: ~0.3 s per server process. Take the converter of a
    server built here the way `start()` builds it, generate those functions once, and give every
    server this zygote forks that converter instead of its new, cold one. What is converted,
    and how, is the same."""
    from lsprotocol import types as lsp
    from pytest_lsp import client_capabilities

    import pmem_lsp.server.app as app

    converter = app.create_server().protocol._converter
    for method in SESSION_METHODS:
        for cls in lsp.METHOD_TO_TYPES.get(method, ())[:3]:
            if cls is not None:
                converter.get_structure_hook(cls)
                converter.get_unstructure_hook(cls)
    # Optional and union fields find their functions when data reaches them: send real data.
    for profile in ("neovim", "visual-studio-code"):
        request = lsp.InitializeRequest(id=1, params=lsp.InitializeParams(
            capabilities=client_capabilities(profile), process_id=1,
            workspace_folders=[lsp.WorkspaceFolder(uri="file:///memory", name="memory")]))
        converter.structure(converter.unstructure(request), lsp.InitializeRequest)
        # The answer: the capabilities a pmem server computes for this client.
        initialize = app.create_server().protocol.lsp_initialize(request.params)
        next(initialize)  # pmem's own initialize handler: not needed for the capabilities
        try:
            initialize.send(None)
        except StopIteration as done:
            converter.unstructure(lsp.InitializeResponse(id=1, result=done.value))
    create_server = app.create_server

    def create_server_with_the_warm_converter():
        server = create_server()
        server.protocol._converter = converter
        return server

    app.create_server = create_server_with_the_warm_converter


def zygote(path: str) -> None:
    _warm_up()
    try:
        _share_a_warm_converter()
    except Exception as exc:  # pygls internals moved: every server builds its own converter (slower)
        print(f"crash_hook: no shared converter ({exc!r})", file=sys.stderr)

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # supervisors are reaped automatically
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path + ".tmp")
    server.listen(64)
    os.rename(path + ".tmp", path)  # ready: the socket appears only once it accepts
    while True:
        ready, _, _ = select.select([server, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            return  # the test process is gone (our stdin is its pipe): so are we
        if server not in ready:
            continue
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            _supervise(conn)
        conn.close()


def launch(path: str, spec: str) -> None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    socket.send_fds(conn, [spec.encode()], [0, 1, 2])
    # The worker holds our stdin/stdout now; closing ours lets the other end see EOF as soon
    # as the worker dies.
    os.close(0)
    os.close(1)
    data = b""
    while chunk := conn.recv(64):
        data += chunk
    status = int(data or b"0")
    if os.WIFSIGNALED(status):
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if data else 70)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "run":
        sep = sys.argv.index("--")
        run(int(sys.argv[2]), sys.argv[3], sys.argv[sep + 1:])
    elif mode == "zygote":
        zygote(sys.argv[2])
    elif mode == "launch":
        launch(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(f"unknown mode {mode!r}")
