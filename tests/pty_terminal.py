"""A `pmem` command run at a terminal: stdin, stdout and stderr on a pseudo-terminal (the
stdlib `pty` module), the prompt answered once it is shown. No sleeps: the output is read
until the prompt appears or the process ends, within a generous bound."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

GENEROUS_SECONDS = 120.0


def run_at_terminal(args: list[str], answer: str | None, env: dict[str, str] | None = None,
                    prompt: bytes = b"[y/N] ") -> tuple[int, str]:
    """(exit status, everything shown) of `python -m pmem_lsp.cli.main ARGS` on a terminal;
    `answer` is typed (with Enter) once `prompt` is shown (None: never)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "pmem_lsp.cli.main", *args], stdin=follower, stdout=follower,
                            stderr=follower, env=env, close_fds=True)
    os.close(follower)
    shown = b""
    answered = answer is None
    deadline = time.monotonic() + GENEROUS_SECONDS
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:  # the process closed the terminal (Linux: EIO)
                    break
                if not chunk:
                    break
                shown += chunk
                if not answered and prompt in shown:
                    os.write(leader, (answer or "").encode() + b"\n")
                    answered = True
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
            raise AssertionError(f"pmem {' '.join(args)}: still running after {GENEROUS_SECONDS:.0f} s; shown: "
                                 f"{shown.decode(errors='replace')[-500:]}")
        code = proc.wait(timeout=GENEROUS_SECONDS)
    finally:
        os.close(leader)
    return code, shown.decode("utf-8", errors="replace").replace("\r\n", "\n")
