"""One registry of write operations (issue 41): every surface that names a write operation
names exactly the registry's (engine/lifecycle/registry.py), with the arguments its entry says.

A surface that adds an operation the registry does not have, or misses one it has, fails here:
the CLI's subcommands, `memory_preview`'s enum (as the SDK builds it and as listing.json serves
it before the SDK is imported), the server's commands (as registered, and as the early path
advertises them), `make_plan`'s planners and the token's list of operations.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import typing
from pathlib import Path

import pytest

from pmem_lsp.cli.main import build_parser
from pmem_lsp.engine.archive_index import DIALECTS
from pmem_lsp.engine.history.recording import caught_up_store
from pmem_lsp.engine.lifecycle.execute import Confirmed, execute
from pmem_lsp.engine.lifecycle.operations import PLANNERS, context, make_plan
from pmem_lsp.engine.lifecycle.plan import MakeDir, Move, Plan, Remove, WriteText
from pmem_lsp.engine.lifecycle.preview import Request
from pmem_lsp.engine.lifecycle.registry import (
    BY_NAME,
    MIGRATE_TARGETS,
    NAMES,
    WRITE_OPERATIONS,
    PathArgument,
    Safety,
    Surface,
    names_on,
)
from pmem_lsp.mcp import server as mcp_server
from pmem_lsp.mcp import tools as mcp_tools
from pmem_lsp.mcp.early_answers import LISTING
from pmem_lsp.server import lifecycle_commands
from pmem_lsp.server.early_path import BASE_CAPABILITIES
from roots import active_file, make_root, route_line, write_root


def test_the_table_is_well_formed():
    assert len(NAMES) == len(WRITE_OPERATIONS)  # no name twice
    for op in WRITE_OPERATIONS:
        assert op.surfaces, op.name
        assert op.action and op.cli_help, op.name
        assert (op.mcp_text is None or op.mcp_text.startswith(op.name)), op.name
    assert set(MIGRATE_TARGETS) == set(DIALECTS)


def _subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out[prefix + name] = sub
                out.update(_subcommands(sub, prefix + name + " "))
    return out


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {(a.option_strings[-1] if a.option_strings else a.dest): a for a in parser._actions}


def test_the_cli_confirms_exactly_the_registry_operations():
    """A CLI subcommand that applies a previewed write takes `--token`: those are the registry's
    operations (route's is `route add`; history's undo and restore among them)."""
    confirmed = {name.removesuffix(" add"): parser for name, parser in _subcommands(build_parser()).items()
                 if "--token" in _options(parser)}
    assert set(confirmed) == set(names_on(Surface.CLI))
    for name in names_on(Surface.CLI):
        op, options = BY_NAME[name], _options(confirmed[name])
        assert {"--yes", "--format"} <= set(options), name
        if op.path is PathArgument.DIALECT:
            assert options["--to"].dest == "path" and tuple(options["--to"].choices) == MIGRATE_TARGETS
        else:
            assert ("path" in options) == op.takes_path, name
        assert ("--reason" in options) == (op.reason or name == "save"), name  # save's: shown in its preview
        assert ("--add-route" in options) == op.add_route, name
        assert ("--content-file" in options) == op.content, name
        assert ("--no-route" in options) == op.route, name
        assert ("--route" in options or "--description" in options) == op.description, name
        if op.entry == "at":
            assert options["--at"].required, name
        elif op.entry is not None:
            assert options[op.entry].nargs is None, name  # the entry: one, positional
        assert ("paths" in options) == op.paths, name
        if not op.own_cli_parser or op.entry:
            assert _help_of(name) == op.cli_help


def _help_of(command: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return next(c.help for c in sub._choices_actions if c.dest == command)


def test_memory_preview_offers_exactly_the_registry_operations():
    mcp_names = names_on(Surface.MCP)
    assert typing.get_args(mcp_server.Operation) == mcp_names
    assert mcp_names == mcp_tools.OPERATIONS
    # listing.json is what the early path answers before the SDK is imported: the same enum.
    listing = json.loads(LISTING.read_text(encoding="utf-8"))
    for key in ("tools/list", "tools/list (stateless)"):
        preview_tool = next(t for t in listing[key]["tools"] if t["name"] == "memory_preview")
        assert preview_tool["inputSchema"]["properties"]["operation"]["enum"] == list(mcp_names)
    described = mcp_server.DESCRIPTIONS["memory_preview"]
    for name in mcp_names:
        if BY_NAME[name].mcp_text:
            assert BY_NAME[name].mcp_text in described


@pytest.mark.parametrize("name", names_on(Surface.MCP))
def test_memory_preview_checks_arguments_as_the_registry_says(name):
    op = BY_NAME[name]
    content = "# X\n" if op.content else None
    if op.entry is not None:  # history's writes: the entry is `entry` (undo) or `at` (restore)
        _history_arguments_checked(name)
        return
    if op.takes_path:
        with pytest.raises(mcp_tools.ToolFailure, match="needs a `path`"):
            mcp_tools._request(name, None, content, None, None, True)
    if not op.content:
        with pytest.raises(mcp_tools.ToolFailure, match="`content` is for save only"):
            mcp_tools._request(name, "projects/x.md", "# X\n", None, None, True)
    if not op.add_route:
        with pytest.raises(mcp_tools.ToolFailure, match="`add_route` is for recover only"):
            mcp_tools._request(name, "projects/x.md", content, None, None, True, add_route=True)
    request = mcp_tools._request(name, "projects/x.md", content, "a description", "a reason", True)
    assert (request.path is not None) == op.takes_path
    assert (request.reason is not None) == op.reason
    assert (request.description is not None) == op.description


def _history_arguments_checked(name: str) -> None:
    op = BY_NAME[name]
    path = "projects/x.md" if op.takes_path else None
    with pytest.raises(mcp_tools.ToolFailure, match=f"{name} needs `{op.entry}`"):
        mcp_tools._request(name, path, None, None, None, True)
    other = "at" if op.entry == "entry" else "entry"
    with pytest.raises(mcp_tools.ToolFailure, match=f"`{other}` is for"):
        mcp_tools._request(name, path, None, None, None, True, **{op.entry: "0123abcd", other: "0123abcd"})
    if op.takes_path:
        with pytest.raises(mcp_tools.ToolFailure, match="needs a `path`"):
            mcp_tools._request(name, None, None, None, None, True, **{op.entry: "0123abcd"})
    else:
        with pytest.raises(mcp_tools.ToolFailure, match="takes `paths`"):
            mcp_tools._request(name, "projects/x.md", None, None, None, True, **{op.entry: "0123abcd"})
    with pytest.raises(mcp_tools.ToolFailure, match="`content` is for save only"):
        mcp_tools._request(name, path, "# X\n", None, None, True, **{op.entry: "0123abcd"})
    if not op.paths:
        with pytest.raises(mcp_tools.ToolFailure, match="`paths` is for undo only"):
            mcp_tools._request(name, path, None, None, None, True, **{op.entry: "0123abcd"}, paths=["a.md"])
    asked = mcp_tools._request(name, path, None, None, None, True, **{op.entry: " 0123abcd "},
                               **({"paths": ["notes/n.md"]} if op.paths else {}))
    assert isinstance(asked, mcp_tools.HistoryWrite)
    assert (asked.op, asked.entry, asked.path, asked.paths) == (name, "0123abcd", path,
                                                                 ("notes/n.md",) if op.paths else ())


def test_the_server_commands_are_exactly_the_registry_editor_operations():
    registered = []

    class Recorder:
        def command(self, name):
            registered.append(name)
            return lambda handler: handler

    lifecycle_commands.register(Recorder())  # type: ignore[arg-type]
    wanted = [f"pmem.{name}" for name in names_on(Surface.EDITOR)]
    assert registered == wanted
    # The early path advertises the commands before the server is imported: the same ones.
    advertised = set(BASE_CAPABILITIES["executeCommandProvider"]["commands"])
    # History's writes have their editor command among the server's history commands
    # (`pmem.undo`, server/history_commands.py), which are not lifecycle commands.
    assert {f"pmem.{name}" for name in NAMES if BY_NAME[name].entry is None} & advertised == set(wanted)


def test_every_operation_has_a_planner_and_a_token():
    assert set(PLANNERS) == set(NAMES)


def test_each_plan_asks_with_its_registry_word_and_does_what_its_safety_class_says(tmp_path: Path):
    """The confirmation button (`Plan.action`) is the registry's word, and the plan's steps fit
    its safety class: one root taken through every operation, each planned where it has
    something to do."""
    day = dt.date(2026, 11, 20)
    plans: dict[str, Plan] = {}

    def plan(op: str, path: str | None = None, on: dt.date = day, root: Path | None = None, **kw) -> None:
        plans[op] = make_plan(context(root or memory, on), op, path, **kw)

    def apply(op: str, path: str, on: dt.date) -> None:
        made = plans[op] = make_plan(context(memory, on), op, path)
        execute(memory, Confirmed(Request(op, path), made), today=on)

    plan("init", root=tmp_path / "fresh")
    plan("upgrade", root=write_root(tmp_path / "before-lifecycle", {"_core/profile.md": "# Profile\n",
                                                                    "_index.md": "# Memory index\n"}))
    index = f"# Memory index\n\n{route_line('projects/alpha.md')}\n{route_line('notes/beta.md')}\n"
    memory = make_root(tmp_path, {"projects/gamma.md": active_file("Gamma"), "_index.md": index})
    plan("save", "projects/delta.md", content=active_file("Delta"))
    plan("route", "projects/gamma.md")
    plan("archive", "projects/alpha.md", reason="done")
    plan("migrate", MIGRATE_TARGETS[0])
    apply("archive", "projects/alpha.md", day)
    plan("recover", "projects/alpha.md")
    apply("delete", "projects/alpha.md", day)
    plan("purge", "projects/alpha.md", on=day + dt.timedelta(days=365))
    # History's writes, from the entries those applied writes recorded (the store is the test
    # run's own state folder): undo an edit made outside pmem, restore the index as at the start.
    table = [op for op in WRITE_OPERATIONS if op.entry is None or shutil.which("git")]  # history needs git
    if shutil.which("git"):
        (memory / "projects/gamma.md").write_text(active_file("Gamma") + "\nOne more line.\n", encoding="utf-8")
        store = caught_up_store(memory)
        plan("undo", store.head())
        plan("restore", store.entries()[-1].commit, content="_index.md")
    assert {name: made.action for name, made in plans.items()} == {op.name: op.action for op in table}
    for op in table:
        kinds = {type(step) for step in plans[op.name].steps}
        assert kinds, f"{op.name}: planned with nothing to do"
        if op.safety is Safety.CREATES_ONLY:
            assert kinds <= {MakeDir, WriteText}, op.name
        assert (Move in kinds) == (op.safety is Safety.MOVES), op.name
        assert (Remove in kinds) == (op.safety is Safety.REMOVES_PERMANENTLY), op.name
