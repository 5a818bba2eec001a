"""`pmem mcp`: the memory root as MCP tools, over stdio (docs/design.md §10).

Built on the official MCP Python SDK, 2.x (`MCPServer`), an optional extra: `pip install
'pmem-lsp[mcp]'`. It serves both protocol revisions: 2025-11-25 (an `initialize` handshake; the
confirmation is an `elicitation/create` request) and 2026-07-28 (stateless; the confirmation is
an `input_required` result the client answers by calling again), from one declaration. The
tools' work is in `tools.py` (no SDK there); this module declares them with their annotations,
turns every failure into a tool error (never an exception that ends the session, never a
message that could quote memory), and asks the user to confirm a write where the client can
ask — in addition to the preview's token, never instead.

`PMEM_MCP_ELICITATION=off` in the server's environment stops it asking: for clients that
advertise elicitation but decline every request on their own (the token then decides alone).

Always there (issue 25): the server starts whether or not the memory root exists, and a tool
called without one answers "no memory root at …; create it with …" (an `init` preview, applied
like any other). What the tool listing needs (the SDK) is imported first; the engine behind
the tools (`tools.py`) is imported in the background once the server runs, so that a client's
first request finds the tools listed. When nobody can confirm a change (a headless run that
dismisses or declines every question), the answer says so and gives the `pmem` command a
person runs to review and apply it.
"""

# No `from __future__ import annotations` here: the SDK reads the tools' signatures, whose
# annotations name classes imported inside `build_server`.

import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .. import __version__
from ..engine.lifecycle.registry import WRITE_OPERATIONS, Surface, names_on
from ..engine.lifecycle.registry import needs_root as operation_needs_root
from ..engine.names import clean_data

# memory_preview's `operation` enum is the registry's (engine/lifecycle/registry.py), made at
# run time; the type checker reads it as the string it is.
if TYPE_CHECKING:
    Operation = str
else:
    Operation = Literal[names_on(Surface.MCP)]

if TYPE_CHECKING:  # the SDK is an optional extra: imported at run time where it is used
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult

    from .early_answers import Handover

log = logging.getLogger(__name__)


class _Deferred:
    """`tools`, imported on first use (the engine is not needed to list the tools)."""

    def __getattr__(self, name: str) -> Any:
        from . import tools as module

        return getattr(module, name)


if TYPE_CHECKING:
    from . import tools
else:
    tools = _Deferred()


def _import_tools() -> None:
    try:
        from . import tools as _module  # noqa: F401
    except Exception:  # a tool call then reports it as an internal error
        log.debug("importing the tools failed", exc_info=True)


_warming: list[threading.Thread] = []


def _warm_up() -> None:
    """Import the engine behind the tools in the background, once: after the tools are listed,
    so that the listing does not share the interpreter with it (a call that comes first
    imports it itself)."""
    if not _warming:
        _warming.append(threading.Thread(target=_import_tools, name="pmem-mcp-warm-up", daemon=True))
        _warming[0].start()

SDK_MISSING = "pmem mcp needs the MCP Python SDK 2.x: pip install 'pmem-lsp[mcp]'"
SDK_RANGE = "mcp>=2.3,<3"
ELICITATION_ENV = "PMEM_MCP_ELICITATION"  # "off": never ask; anything else: ask where the client can

INSTRUCTIONS = (
    "Persistent Memory: the user's reviewed context as plain Markdown files. Start with memory_load "
    "(core files and the index's routes). Read an on-demand file with memory_read: its summary first, "
    "the whole file only when needed. Never write memory files directly: memory_preview, show the "
    "preview to the user, then memory_apply with its token only after their explicit yes. Never store "
    "secrets. memory_status says what is saved; memory_health proposes clean-ups; memory_check checks "
    "files or a proposed text."
)

WRITE_TOOLS = ("memory_preview", "memory_apply")  # their errors say `"applied": false`, as the CLI's
_READ_ONLY: dict[str, Any] = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                              "openWorldHint": False}

PAGED = (" Long lists come a page at a time: `offset` and `limit`; a reply that leaves items out says so in "
         "its `page`, with the `next_offset` to ask for.")

DESCRIPTIONS = {
    "memory_load": (
        "Load baseline memory: the text of every `_core/` file and the routes of `_index.md` (one line "
        "per on-demand file: path and description). Call it at the start of a session. Never loads "
        "`_archive/`. Then read only the routed files the conversation needs, with memory_read." + PAGED),
    "memory_read": (
        "Read one memory file, summary first. An active file with a valid `## Summary` returns only its "
        "bullets (`summary_only: true`): answer from them when they suffice; when the fact is absent, "
        "ambiguous or needs exact detail, say so and call again with `full: true`. Files without a valid "
        "summary, `_core/` and `_index.md` are returned whole. `path` is relative to the memory root. "
        "`_archive/` only with `archived: true`, when the user explicitly asks. A long text comes in pieces: "
        "`page.next_offset` is the `offset` of the next one."),
    "memory_status": (
        "What is saved: core files and their size, active files, and one line per routed file "
        "(as `pmem status --format json`). Reads `_core/` and `_index.md` only." + PAGED),
    "memory_health": (
        "Memory health: a numbered proposal (keep active / archive / delete, a one-line reason each) and "
        "expired trash listed separately (as `pmem health --format json`). Changes nothing. Present it to "
        "the user and carry out only the items they confirm, one by one, with memory_preview "
        "(operation archive, delete or purge) and memory_apply." + PAGED),
    "memory_check": (
        "Check memory files for problems (as `pmem check --format json`): all files, or `paths`; or check "
        "a proposed text before saving it, with `path` (where it would be saved) and `content`. Nothing "
        "is written. Findings name a likely secret's kind, never its value." + PAGED),
    "memory_history": (
        "What changed in the memory, by whom (as `pmem history --format json`): entries newest first, "
        "each with its id, time, writer (pmem, agent, editor, outside), title and files; for one `path`, "
        "or `since` a time (`2h`, `3d`, `2026-01-31`). Changes nothing in the memory. At the end of a "
        "task, show the user what changed; only they keep or undo it." + PAGED),
    "memory_diff": (
        "A unified diff of what changed (as `pmem diff --format json`, secrets masked): one `entry`, or "
        "everything `since` an entry or a time, or everything `unreviewed` since the user last reviewed; "
        "`path` for one file. Changes nothing. A long diff comes in pieces: `page.next_offset`."),
    "memory_preview": (
        "Preview a change to memory; nothing is written. Operations: "
        + ", ".join(op.mcp_text for op in WRITE_OPERATIONS if Surface.MCP in op.surfaces and op.mcp_text)
        + ". Returns the preview text, the changes, findings on saved text, and a token. Show the preview to "
        "the user; after their explicit yes call memory_apply with the token. Refused requests (a secret "
        "in the content, `_archive/` as a save target, a path outside the root, …) are errors that say why."),
    "memory_apply": (
        "Apply a preview from memory_preview, exactly as previewed, once the user has said yes to it. "
        "Takes the preview's token; each token works once. If any file the change reads or writes "
        "changed since the preview, nothing is written and the error says the preview is stale: preview "
        "again. Where the client can ask the user, the user is also asked to confirm here."),
}


def _result(data: dict[str, Any], error: bool = False) -> "CallToolResult":
    from mcp.types import CallToolResult, TextContent

    # A name that is not UTF-8 reaches here as lone surrogates, which the transport cannot
    # encode (it ended the session): every string is made writable first (engine/names.py).
    data = clean_data(data)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, indent=2, ensure_ascii=False))],
                          structuredContent=data, isError=error)


def _failure(name: str, kind: str, message: str) -> "CallToolResult":
    return _error(name, tools.ToolFailure(kind, message))


def _error(name: str, exc: "tools.ToolFailure") -> "CallToolResult":
    return _result(exc.data(write=name in WRITE_TOOLS), error=True)


def _internal(name: str, exc: BaseException) -> "CallToolResult":
    # The exception's text can quote memory (a path, a line): the client gets its kind only;
    # the traceback goes to stderr through the redaction (docs/architecture.md, "Invariants").
    log.error("%s failed", name, exc_info=exc)
    return _failure(name, "internal", f"{name} failed with an internal error ({type(exc).__name__}); "
                                "the server's log on stderr has the details")


def _sdk() -> "tuple[type[Context], type[MCPServer], type[ToolError]]":
    """The SDK's parts this module uses; ImportError when the extra is not installed (or is
    the 1.x line, which has no `mcp.server.mcpserver`)."""
    import mcp.types as types  # noqa: F401
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    return Context, MCPServer, ToolError


def build_server(root: Path, *, elicitation: bool | None = None) -> "MCPServer":
    """The MCPServer for `root` (not started). `elicitation`: ask the user to confirm a
    write where the client can (default: unless $PMEM_MCP_ELICITATION is `off`)."""
    from typing import Annotated

    import anyio
    import pydantic
    from mcp.server.elicitation import ElicitationResult
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.mcpserver.resolve import Elicit, Resolve
    from mcp.shared.exceptions import MCPError
    from mcp.types import CallToolResult, ToolAnnotations
    from pydantic import BaseModel, Field
    if elicitation is None:
        elicitation = os.environ.get(ELICITATION_ENV, "").strip().lower() not in ("off", "0", "no", "false")
    root = Path(root)
    kept: list[tools.Previews] = []

    def previews() -> "tools.Previews":
        if not kept:
            kept.append(tools.Previews())
        return kept[0]

    class Server(MCPServer):
        async def list_tools(self) -> Any:
            listed = await super().list_tools()
            _warm_up()
            return listed

        # Any: CallToolResult too, which the low-level server takes and the SDK's annotation omits.
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            # What the SDK would turn into an error text that quotes the arguments (a
            # pydantic error shows the value it rejected): a clean tool error instead.
            try:
                return await super().call_tool(name, arguments, context)
            except MCPError:
                if name != "memory_apply":
                    raise
                # The confirmation could not be asked (the client failed the request):
                # no yes, and no no either (nobody said it), so nothing is recorded.
                return _error(name, _unanswered(arguments.get("token")))
            except ToolError as exc:
                cause = exc.__cause__
                if name == "memory_apply" and str(exc).startswith("Resolver"):
                    # The client's answer to the confirmation was not a yes or no.
                    previews().discard(arguments.get("token"))
                    return _failure(name, "not-confirmed", "the client's answer was not a yes or no; nothing "
                                                           "was written. Preview again.")
                if isinstance(cause, pydantic.ValidationError):
                    detail = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                                       for e in cause.errors())
                    return _failure(name, "arguments", f"invalid arguments for {name}: {detail}")
                if cause is None and str(exc).startswith("Unknown tool"):
                    return _failure(name, "unknown-tool", f"there is no tool `{name}`")
                return _internal(name, cause or exc)

    # pmem's version, not the SDK's: the early answer (listing.json) says the same whichever
    # SDK release is installed.
    server = Server("pmem", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    async def run_tool(name: str, work: Callable[[], dict[str, Any]], needs_root: bool = True) -> CallToolResult:
        """`work` in a worker thread (a large root must not stall the session), as a result.
        `needs_root`: answer "no memory root" first when there is none."""

        def checked() -> dict[str, Any]:
            if needs_root:
                tools.require_root(root)
            return work()

        try:
            return _result(await anyio.to_thread.run_sync(checked))
        except tools.ToolFailure as exc:
            return _error(name, exc)
        except Exception as exc:  # any other failure is a tool error, never the end
            return _internal(name, exc)

    def annotations(title: str, **hints: Any) -> ToolAnnotations:
        return ToolAnnotations(title=title, **hints)

    def tool(name: str, title: str, **hints: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return server.tool(name=name, title=title, description=DESCRIPTIONS[name],
                           annotations=annotations(title, **hints))

    Path_ = Annotated[str, Field(description="A memory file's path relative to the memory root, "
                                             "e.g. `projects/kiln.md`.")]
    Offset = Annotated[int, Field(ge=0, description="Where to start: a reply that leaves items out says, in its "
                                                    "`page`, the `next_offset` to ask for.")]
    Limit = Annotated[int | None, Field(ge=1, le=tools.MAX_LIMIT,
                                        description=f"At most this many items (default {tools.DEFAULT_LIMIT}; "
                                                    "fewer when the reply would be too large).")]

    @tool("memory_load", "Load baseline memory", **_READ_ONLY)
    async def memory_load(offset: Offset = 0, limit: Limit = None) -> CallToolResult:
        return await run_tool("memory_load", lambda: tools.load(root, offset, limit))

    @tool("memory_read", "Read a memory file (summary first)", **_READ_ONLY)
    async def memory_read(
        path: Path_,
        full: Annotated[bool, Field(description="Return the whole file even when it has a valid summary.")] = False,
        archived: Annotated[bool, Field(description="Allow a path in `_archive/`: only when the user explicitly "
                                                    "asks about archived memory.")] = False,
        offset: Annotated[int, Field(ge=0, description="A long text comes in pieces: the character to start "
                                                       "from (the reply's `page.next_offset`).")] = 0,
    ) -> CallToolResult:
        return await run_tool("memory_read", lambda: tools.read(root, path, full, archived, offset))

    @tool("memory_history", "Memory history", **_READ_ONLY)
    async def memory_history(
        path: Annotated[str | None, Field(description="Only the entries that changed this file "
                                                      "(relative to the root).")] = None,
        since: Annotated[str | None, Field(description="Only entries since this time (`2h`, `3d`, "
                                                       "`2026-01-31`).")] = None,
        offset: Offset = 0, limit: Limit = None,
    ) -> CallToolResult:
        return await run_tool("memory_history", lambda: tools.history(root, path, since, offset, limit))

    @tool("memory_diff", "What changed, as a diff", **_READ_ONLY)
    async def memory_diff(
        entry: Annotated[str | None, Field(description="An entry id from memory_history: what it "
                                                       "changed.")] = None,
        path: Annotated[str | None, Field(description="Only this file (relative to the root).")] = None,
        since: Annotated[str | None, Field(description="Everything changed since this entry id or time "
                                                       "(`2h`, `3d`).")] = None,
        unreviewed: Annotated[bool, Field(description="Everything changed since the user last "
                                                      "reviewed.")] = False,
        offset: Annotated[int, Field(ge=0, description="A long diff comes in pieces: the character to "
                                                       "start from (the reply's `page.next_offset`).")] = 0,
    ) -> CallToolResult:
        return await run_tool("memory_diff", lambda: tools.diff(root, entry, path, since, unreviewed, offset))

    @tool("memory_status", "Memory status", **_READ_ONLY)
    async def memory_status(offset: Offset = 0, limit: Limit = None) -> CallToolResult:
        return await run_tool("memory_status", lambda: tools.status(root, offset, limit))

    @tool("memory_health", "Memory health proposal", **_READ_ONLY)
    async def memory_health(offset: Offset = 0, limit: Limit = None) -> CallToolResult:
        return await run_tool("memory_health", lambda: tools.health(root, offset, limit))

    @tool("memory_check", "Check memory files", **_READ_ONLY)
    async def memory_check(
        paths: Annotated[list[str] | None, Field(description="Files to report on (relative to the root); "
                                                             "omit for all.")] = None,
        path: Annotated[str | None, Field(description="With `content`: where the proposed text would be "
                                                      "saved.")] = None,
        content: Annotated[str | None, Field(description="A proposed text, checked as if it were at `path`; "
                                                         "nothing is written.")] = None,
        offset: Offset = 0,
        limit: Limit = None,
    ) -> CallToolResult:
        return await run_tool("memory_check", lambda: tools.check(root, paths, path, content, offset, limit))

    # Not read-only: a preview changes no memory, but keeps a save's text in the user's cache
    # folder for the person's command, and each call mints a new token (so not idempotent).
    @tool("memory_preview", "Preview a change to memory", readOnlyHint=False, destructiveHint=False,
          idempotentHint=False, openWorldHint=False)
    async def memory_preview(
        operation: Annotated[Operation, Field(description="What to do (`init`: create the memory root when there "
                                                          "is none).")],
        path: Annotated[str | None, Field(description="The file, relative to the memory root (all operations "
                                                      "but upgrade, init and undo). delete, recover and purge "
                                                      "take the original path or the `_archive/…` location; "
                                                      "restore an archived file by its `_archive/…` "
                                                      "location.")] = None,
        content: Annotated[str | None, Field(description="save: the file's whole new text.")] = None,
        description: Annotated[str | None, Field(description="save, route: the route's description "
                                                             "(default: the first summary bullet).")] = None,
        reason: Annotated[str | None, Field(description="archive: why, in the user's words (kept in the "
                                                        "archive record).")] = None,
        route: Annotated[bool | str, Field(description="save: the `_index.md` route of a new active file, as the "
                                                       "CLI's `--route`: its description (a string), false for "
                                                       "none (`--no-route`), or true (the default: made from the "
                                                       "first summary bullet).")] = True,
        add_route: Annotated[bool, Field(description="recover: a file archived with no route comes back with "
                                                     "none; true adds the route the preview proposes.")] = False,
        entry: Annotated[str | None, Field(description="undo: the entry id (from memory_history) whose "
                                                       "changes are taken back.")] = None,
        at: Annotated[str | None, Field(description="restore: the entry id (from memory_history) at which "
                                                    "`path` is brought back.")] = None,
        paths: Annotated[list[str] | None, Field(description="undo: only these files of the entry (default: "
                                                             "all it changed).")] = None,
    ) -> CallToolResult:
        return await run_tool("memory_preview", lambda: tools.make_preview(
            root, previews(), operation, path, content, description, reason, route, add_route, entry, at, paths),
            needs_root=operation_needs_root(operation))

    class Confirm(BaseModel):
        confirm: bool = Field(title="Apply this change",
                              description="Yes writes exactly the change shown; no leaves memory as it is.")

    def _unanswered(token: Any) -> "tools.ToolFailure":
        pending = previews().discard(token)
        advice = tools.unanswered_advice(pending) if pending else "Preview again."
        # Never how to switch the question off: the agent reads this (the setting is for
        # people, documented in agents/README.md). A question that got no answer is no yes,
        # and no no either: nobody said it, so nothing is recorded (issue 43); the shell door
        # (`pmem hook pre-shell`) keeps the agent from applying it itself.
        return tools.ToolFailure("not-confirmed", "the client could not ask the user to confirm; nothing was "
                                                  f"written. {advice}", command=pending.command if pending else None)

    def ask_to_confirm(token: str, ctx: Context) -> Elicit[Confirm] | None:
        """The question to the user, where the client can be asked; None: nobody is asked.
        The SDK asks it as the client's revision says: an `elicitation/create` request
        (2025-11-25), or an `input_required` result answered by a second call (2026-07-28).
        The token is not spent here: the second call carries it again."""
        pending = previews().peek(token)
        if pending is None or not elicitation or not _can_elicit(ctx):
            return None
        return Elicit(f"{pending.preview}\n\nApply this change to your memory?", Confirm)

    async def confirmed(pending: "tools.Pending", answer: Any) -> None:
        """Raise ToolFailure unless the user said yes (or nobody could be asked, and the user
        declined nothing in another session)."""
        if answer is None:  # nobody was asked: a change the user declined stays theirs
            if await anyio.to_thread.run_sync(tools.was_declined, pending):
                raise tools.ToolFailure("declined", "the user declined this change in an agent's session; nothing "
                                                    f"was written. {tools.no_advice(pending)}", command=pending.command)
            return
        if answer.action == "accept" and answer.data.confirm is True:
            await anyio.to_thread.run_sync(tools.record_yes, pending)
            return
        if answer.action == "cancel":
            # Dismissed, or nobody there (a headless run): not the user's no, so not recorded
            # (a day of "you declined this" for a question nobody saw was untrue).
            raise tools.ToolFailure("cancelled", "the confirmation was dismissed, or nobody was there to answer it "
                                                 f"(a headless run); nothing was written. "
                                                 f"{tools.unanswered_advice(pending)}", command=pending.command)
        # The user's explicit no (declined, or "no" in the form) is recorded (docs/decisions.md,
        # "A declined change stays declined"): the CLI then applies this change only after its
        # own prompt, at a person's terminal.
        await anyio.to_thread.run_sync(tools.record_no, pending)
        raise tools.ToolFailure("declined", "the change was declined (by the user, or by a headless run that "
                                            "declines when nobody is there); nothing was written. "
                                            f"{tools.no_advice(pending)}", command=pending.command)

    @tool("memory_apply", "Apply a confirmed preview", readOnlyHint=False, destructiveHint=True,
          idempotentHint=False, openWorldHint=False)
    async def memory_apply(
        token: Annotated[str, Field(description="The token memory_preview returned with the preview the user "
                                                "said yes to.")],
        answer: Annotated[ElicitationResult[Confirm], Resolve(ask_to_confirm)],
    ) -> CallToolResult:
        try:
            pending = previews().take(token)  # spent now, whatever happens next
            # A resolver that asks nothing comes back as an accepted answer without data.
            nobody_asked = answer.action == "accept" and answer.data is None
            await confirmed(pending, None if nobody_asked else answer)
        except tools.ToolFailure as exc:
            return _error("memory_apply", exc)
        except Exception as exc:
            return _internal("memory_apply", exc)
        return await run_tool("memory_apply", lambda: tools.apply(root, pending, token),
                              needs_root=operation_needs_root(pending.request.op))

    return server


def _can_elicit(ctx: "Context") -> bool:
    """The client declared form elicitation (an empty `elicitation: {}` means form, as before
    the modes existed), in its `initialize` or, stateless, in the request's `_meta`."""
    try:
        caps = ctx.client_capabilities
    except Exception:  # no session information: do not ask
        return False
    found = getattr(caps, "elicitation", None) if caps is not None else None
    if found is None:
        return False
    form, url = getattr(found, "form", None), getattr(found, "url", None)
    return form is not None or url is None


def _sdk_problem(exc: ImportError) -> str:
    """What to tell the user when the SDK cannot be imported: missing, or the wrong version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("mcp")
    except PackageNotFoundError:
        return SDK_MISSING
    return (f"pmem mcp cannot use the installed MCP SDK (mcp {found}: {type(exc).__name__}); it needs "
            f"{SDK_RANGE}: pip install -U 'pmem-lsp[mcp]'")


def run(root: Path) -> int:
    """Serve `root` over stdio until the client closes it, whether or not the root exists yet
    (each tool then says so and how to create it). 2 when the SDK is missing.

    The session's first messages are answered by the early loop (early.py) while the SDK is
    imported and the server built in a thread; the server then takes the session over."""
    from . import early_answers as early

    listing = early.load_listing() if early.enabled() else None
    if listing is None or not _sdk_line_installed():
        return _run_plain(Path(root))  # which says what is missing
    built: list[Any] = []
    ready = threading.Event()

    def build() -> None:
        try:
            _sdk()
            built.append(build_server(Path(root)))
        except BaseException as exc:  # reported below, in the main thread
            built.append(exc)
        finally:
            ready.set()

    threading.Thread(target=build, name="pmem-mcp-build", daemon=True).start()
    try:
        handover = early.answer_early(ready, listing)
        ready.wait()
    except KeyboardInterrupt:
        return 130
    server = built[0]
    if isinstance(server, BaseException):
        if isinstance(server, ImportError):
            sys.stderr.write(f"{_sdk_problem(server)}\n")
            return 2
        raise server
    return _serve(server, handover)


def _sdk_line_installed() -> bool:
    """The SDK's 2.x line is there, looked for without importing it (its import is what the
    early path saves): the package's `server/mcpserver` folder, which 1.x lacks."""
    from importlib.util import find_spec

    try:
        spec = find_spec("mcp")
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
        return False
    return spec is not None and any(Path(where, "server", "mcpserver").is_dir()
                                    for where in spec.submodule_search_locations or ())


def _run_plain(root: Path) -> int:
    """The server alone, from the session's first byte (no early path)."""
    try:
        _sdk()
    except ImportError as exc:
        sys.stderr.write(f"{_sdk_problem(exc)}\n")
        return 2
    return _serve(build_server(root), None)


def _serve(server: "MCPServer", handover: "Handover | None") -> int:
    import anyio
    from mcp.server.stdio import stdio_server

    from ..engine.redaction import install as install_redaction
    from .handover import streams

    install_redaction()  # after the SDK configured its log handlers, so they are covered too

    async def serve() -> None:
        stdin, stdout = streams(handover) if handover is not None else (None, None)
        async with stdio_server(anyio.wrap_file(stdin) if stdin else None,
                                anyio.wrap_file(stdout) if stdout else None) as (read, write):
            low = server._lowlevel_server
            await low.run(read, write, low.create_initialization_options())

    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        return 130
    return 0
