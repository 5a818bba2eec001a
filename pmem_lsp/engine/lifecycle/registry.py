"""Every write operation in one table: its name, its arguments, how much it can destroy, the
word on its confirmation button, and where it is offered (issue 41).

The CLI's subcommands, `memory_preview`'s `operation` enum and argument checks, the server's
`pmem.*` commands and their buttons, and `make_plan`'s dispatch are made from this table or
checked against it (tests/engine/test_write_registry.py). Adding a write operation is one
entry here plus its planner in `operations._PLANNERS`.

Standard library only: `pmem mcp` lists its tools and the CLI builds its parser before the
engine is imported (docs/design.md §7), and both read this table.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class PathArgument(enum.Enum):
    """What an operation's `path` is."""

    NONE = "none"  # the whole root (upgrade, init)
    REQUIRED = "required"  # a file, relative to the root
    ORIGINAL_OR_LOCATION = "original-or-location"  # an archived or trashed file: its original path or where it is
    DIALECT = "dialect"  # migrate: `path` carries the dialect to write (the CLI's `--to`)


class Safety(enum.Enum):
    """The most an operation can do to what is there, for the one deciding whether to confirm."""

    CREATES_ONLY = "creates-only"  # folders and files that were not there
    MOVES = "moves"  # files change place; each can be moved back (an archive, the trash)
    REWRITES = "rewrites"  # a file's text or an index's lines are replaced
    REMOVES_PERMANENTLY = "removes-permanently"  # gone for good: no recover


class Surface(enum.Enum):
    CLI = "cli"  # `pmem NAME` (save and route have their own parsers: see `cli_parser`)
    MCP = "mcp"  # `memory_preview`'s `operation`
    EDITOR = "editor"  # the server's `pmem.NAME` command, confirmed with `action`


ALL_SURFACES = frozenset(Surface)


@dataclass(frozen=True)
class WriteOperation:
    name: str
    path: PathArgument
    safety: Safety
    action: str  # the confirmation button (`Plan.action`): "Archive", "Delete permanently", …
    cli_help: str  # the subcommand's line in `pmem --help`
    # Its phrase in `memory_preview`'s description, in table order; None: not named there (init
    # is described on the `operation` argument itself).
    mcp_text: str | None
    surfaces: frozenset[Surface] = ALL_SURFACES
    reason: bool = False  # why, in the user's words, kept in the archive record
    content: bool = False  # the file's whole new text
    description: bool = False  # the route's description
    route: bool = False  # whether a new active file gets a route (`--route`/`--no-route`, MCP `route`)
    add_route: bool = False  # a file archived with no route comes back with the proposed one
    needs_root: bool = True  # False: it creates the root (its surfaces run without one)
    # True: the CLI's parser for it is written by hand in cli/main.py (save reads stdin or a
    # file, route is `route add`, undo and restore are history's); else it is made from this entry.
    own_cli_parser: bool = False
    # History's writes (docs/design.md §11): the argument naming the history entry — `entry`
    # (undo ENTRY) or `at` (restore PATH --at ENTRY). Their request is made from the history
    # store (cli/history.py: `undo_request`, `restore_request`), not from the arguments alone.
    entry: str | None = None
    paths: bool = False  # undo: only these files of the entry (`pmem undo ENTRY PATH…`)

    @property
    def takes_path(self) -> bool:
        return self.path is not PathArgument.NONE


# In the order every surface lists them (the MCP enum and description, the CLI's help).
WRITE_OPERATIONS: tuple[WriteOperation, ...] = (
    WriteOperation(
        "save", PathArgument.REQUIRED, Safety.REWRITES, "Save",
        "save a memory file (content on stdin), with its route for a new file",
        "save (`path`, the whole new `content`; `description` for its route, `route: false` for none)",
        surfaces=frozenset({Surface.CLI, Surface.MCP}), content=True, description=True, route=True,
        own_cli_parser=True),
    WriteOperation(
        "route", PathArgument.REQUIRED, Safety.REWRITES, "Route",
        "routes in _index.md",
        "route (add the `_index.md` route of an existing active file)",
        surfaces=frozenset({Surface.CLI, Surface.MCP}), description=True, own_cli_parser=True),
    WriteOperation(
        "upgrade", PathArgument.NONE, Safety.CREATES_ONLY, "Upgrade",
        "create the missing lifecycle folders and archive index",
        "upgrade (create the missing lifecycle folders)"),
    WriteOperation(
        "archive", PathArgument.REQUIRED, Safety.MOVES, "Archive",
        "move an active file to _archive/ and record it",
        "archive (`path`, `reason`)", reason=True),
    WriteOperation(
        "delete", PathArgument.ORIGINAL_OR_LOCATION, Safety.MOVES, "Delete",
        "move an archived file to the trash (recoverable for 30 days)",
        "delete (an archived file to the trash)"),
    WriteOperation(
        "recover", PathArgument.ORIGINAL_OR_LOCATION, Safety.MOVES, "Recover",
        "bring an archived or trashed file back with its route",
        "recover", add_route=True),
    WriteOperation(
        "purge", PathArgument.ORIGINAL_OR_LOCATION, Safety.REMOVES_PERMANENTLY, "Delete permanently",
        "permanently delete a trashed file past its recover-by date",
        "purge (expired trash only)"),
    WriteOperation(
        "init", PathArgument.NONE, Safety.CREATES_ONLY, "Create",
        "create a new memory root",
        None, surfaces=frozenset({Surface.CLI, Surface.MCP}), needs_root=False),
    WriteOperation(
        "migrate", PathArgument.DIALECT, Safety.REWRITES, "Migrate",
        "rewrite the archive records (and, for v0.10, the route lines) in one dialect",
        None, surfaces=frozenset({Surface.CLI})),
    # History's writes. The editor's `pmem.undo` is the server's history command
    # (server/history_commands.py), so the editor is not their surface here.
    WriteOperation(
        "undo", PathArgument.NONE, Safety.REWRITES, "Undo",
        "revert what an entry changed, keeping every later change (previewed)",
        "undo (`entry` from memory_history, optionally only its `paths`: what it changed is taken back, "
        "later changes kept; a line changed later too is a conflict, refused)",
        surfaces=frozenset({Surface.CLI, Surface.MCP}), own_cli_parser=True, entry="entry", paths=True),
    WriteOperation(
        "restore", PathArgument.REQUIRED, Safety.REWRITES, "Restore",
        "bring a file back as it was at an entry (a previewed save)",
        "restore (`path` as it was `at` an entry from memory_history; also a deleted file)",
        surfaces=frozenset({Surface.CLI, Surface.MCP}), own_cli_parser=True, entry="at"),
)

BY_NAME: dict[str, WriteOperation] = {op.name: op for op in WRITE_OPERATIONS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
# migrate's targets, in the order `pmem migrate --help` lists them: archive_index.DIALECTS, which
# this module does not import (a test holds the two equal; docs/decisions.md "Dialects").
MIGRATE_TARGETS = ("v0.10", "pmem")


def names_on(surface: Surface) -> tuple[str, ...]:
    """The operations `surface` offers, in table order."""
    return tuple(op.name for op in WRITE_OPERATIONS if surface in op.surfaces)


def needs_root(name: str) -> bool:
    """False only for an operation that creates the root; an unknown name needs one."""
    op = BY_NAME.get(name)
    return op is None or op.needs_root
