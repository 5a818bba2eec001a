"""`pmem hook` on a write outside the root is answered before argparse and the engine (issue
18); anything else goes the whole way and answers as `run_hook` does."""

from __future__ import annotations

import io
import json
import logging
import sys
import tempfile
import threading
from pathlib import Path

from pmem_lsp.cli.hook import answer_outside, hook_call, run_hook
from pmem_lsp.cli.main import main


def test_hook_call_recognises_only_the_hook_command_line():
    assert hook_call(["hook", "pre-write"]) == (None,)
    assert hook_call(["--root", "/r", "hook", "post-write"]) == ("/r",)
    assert hook_call(["--root=/r", "hook", "pre-write"]) == ("/r",)
    for argv in (["hook"], ["hook", "--help"], ["hook", "pre-write", "x"], ["check"], ["--root", "/r", "hook"]):
        assert hook_call(argv) is None


def _call(path: str, tool: str = "Write") -> str:
    return json.dumps({"tool_name": tool, "cwd": "/", "tool_input": {"file_path": path, "content": "# A\n"}})


def test_outside_and_non_writes_are_answered_at_once_and_the_rest_is_not():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "root")
        (root / "notes").mkdir(parents=True)
        assert answer_outside(str(root), _call(f"{tmp}/elsewhere.py")) == 0
        assert answer_outside(str(root), _call(f"{root}/notes/a.md", tool="Read")) == 0
        assert answer_outside(str(root), _call(f"{root}/notes/a.md")) is None
        assert answer_outside(str(root), "not json") is None
        assert answer_outside(str(root), json.dumps({"tool_name": "Write"})) is None


def test_main_gives_what_run_hook_gives(monkeypatch, capsys):
    # The whole way installs the secret redaction in this (pytest's) process: put it back after.
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    handlers = [logging.lastResort, *logging.getLogger().handlers]
    for h in handlers:
        if h is not None:
            monkeypatch.setattr(h, "filters", list(h.filters))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "root")
        (root / "notes").mkdir(parents=True)
        (root / "_index.md").write_text("# Index\n", encoding="utf-8")
        for text in (_call(f"{tmp}/elsewhere.py"), _call(f"{root}/notes/a.md"), "not json",
                     _call(f"{root}/notes/b.md").replace("# A", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")):
            for event in ("pre-write", "post-write"):
                out, err = io.StringIO(), io.StringIO()
                expected = run_hook(root, event, io.StringIO(text), out, err)
                monkeypatch.setattr(sys, "stdin", io.StringIO(text))
                got = main(["--root", str(root), "hook", event])
                seen = capsys.readouterr()
                assert (got, seen.out, seen.err) == (expected, out.getvalue(), err.getvalue())


def _hook_in_a_fresh_interpreter(root: Path, event: str, payload: str) -> tuple[str, list[str]]:
    """The hook's output, and which pydantic modules it imported, from a new interpreter."""
    import subprocess

    code = ("import io, sys\n"
            "from pathlib import Path\n"
            "from pmem_lsp.cli.hook import run_hook\n"
            "out = io.StringIO()\n"
            f"run_hook(Path({str(root)!r}), {event!r}, io.StringIO(sys.stdin.read()), out, io.StringIO())\n"
            "import json\n"
            "print(json.dumps([out.getvalue(), sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic')]))\n")
    done = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, text=True, check=True)
    said, modules = json.loads(done.stdout)
    return said, modules


def test_post_write_loads_no_settings_model_on_a_root_without_settings_and_honours_them_with(tmp_path):
    """The settings model (pydantic, ~100 ms) is for a root that has settings to validate; the
    defaults come without it (issue 25: the agent waits on every write)."""
    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    (root / "_index.md").write_text("# Index\n", encoding="utf-8")
    note = root / "notes/a.md"
    note.write_text("# A\n\nno summary\n", encoding="utf-8")
    payload = json.dumps({"tool_name": "Write", "hook_event_name": "PostToolUse", "cwd": str(root),
                          "tool_input": {"file_path": str(note), "content": "# A\n\nno summary\n"}})
    said, modules = _hook_in_a_fresh_interpreter(root, "post-write", payload)
    assert modules == [] and "PM202" in said, (said, modules)
    (root / ".pmem.toml").write_text('ignore = ["PM202"]\n', encoding="utf-8")
    said, modules = _hook_in_a_fresh_interpreter(root, "post-write", payload)
    assert "pydantic" in modules and "PM202" not in said, (said, modules)
