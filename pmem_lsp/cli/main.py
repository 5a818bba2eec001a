"""Entry points: `pmem` and `pmem-lsp` (the same as `pmem serve`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from .. import __version__
from . import exit_codes

if TYPE_CHECKING:  # argparse is imported where a parser is built: a hook inside the root needs none
    import argparse

# Imports of the engine happen inside the commands: `pmem --version` and a hook on a file
# outside the root should not pay for pydantic and the rules (docs/design.md §7). The write
# commands come from engine/lifecycle/registry.py (standard library only), read where needed.
_SEVERITIES = ["error", "warning", "information", "hint"]  # engine.findings.Severity, in order


def _count_arg(value: str) -> int:
    import argparse

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return n


def _codes(value: str) -> list[str]:
    return [c.strip().upper() for c in value.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(prog="pmem", description="Check and safely edit a Persistent Memory root.")
    parser.add_argument("--version", action="version", version=f"pmem {__version__}")
    parser.add_argument("--root", help="memory root (default: $PMEM_ROOT, else $PERSISTENT_MEMORY_HOME, "
                                        "else ~/.persistent-memory)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="report problems in the memory root")
    check.add_argument("paths", nargs="*", metavar="PATH",
                       help="report only these files (the cross-file rules still read the whole root)")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="check the text on stdin as if it were PATH; nothing is written")
    check.add_argument("--format", choices=["text", "json", "github", "sarif"], default="text")
    check.add_argument("--statistics", action="store_true",
                       help="text: how many findings of each rule, instead of the findings")
    check.add_argument("--max-per-code", type=_count_arg, default=10, metavar="N",
                       help="text: show at most N findings of each rule and count the rest (default 10; 0: all)")
    check.add_argument("--select", type=_codes,
                       help="comma-separated rule codes or prefixes to report, instead of the root's `select`")
    check.add_argument("--ignore", type=_codes,
                       help="comma-separated rule codes or prefixes to skip, added to the root's `ignore`")
    check.add_argument("--sort", choices=["file", "severity"], default="file",
                       help="order of the findings: by file and position (default), or errors first")
    check.add_argument("--min-severity", choices=_SEVERITIES, default="hint", help="hide findings below this severity")
    check.add_argument("--fail-on", choices=_SEVERITIES, default="error",
                       help="exit 1 when a finding at or above this severity is reported (default: error)")
    check.add_argument("--no-cache", action="store_true",
                       help="check again even when nothing changed since the last run "
                            "(also PMEM_NO_CACHE=1; the cache is in $XDG_CACHE_HOME/pmem, never in the root)")

    status = sub.add_parser("status", help="what is saved: core size and one line per routed file")
    status.add_argument("--format", choices=["text", "json"], default="text")

    health = sub.add_parser("health", help="propose what to keep, archive or delete (changes nothing)")
    health.add_argument("--format", choices=["text", "json"], default="text")
    health.add_argument("--all", action="store_true", dest="all_items",
                        help="list every item (the text shows the first of each group; JSON always has all)")
    health.add_argument("--no-cache", action="store_true",
                        help="propose again even when nothing changed since the last run (also PMEM_NO_CACHE=1)")

    save = sub.add_parser("save", help="save a memory file (content on stdin), with its route for a new file")
    save.add_argument("path", help="where to save it, relative to the root (`projects/x.md`, `_core/profile.md`)")
    routing = save.add_mutually_exclusive_group()
    routing.add_argument("--route", metavar="DESCRIPTION", dest="description",
                         help="the route's description (default: the first Summary bullet, else the front "
                              "matter's description, else the title)")
    routing.add_argument("--no-route", action="store_true", help="do not add a route for it")
    save.add_argument("--reason", help="why it is saved (shown in the preview)")
    save.add_argument("--content-file", metavar="FILE", help="read the content from FILE instead of stdin")

    route = sub.add_parser("route", help="routes in _index.md")
    route_sub = route.add_subparsers(dest="route_command", metavar="ACTION", required=True)
    route_add = route_sub.add_parser("add", help="add the route for an active file (the PM202 fix)")
    route_add.add_argument("path", help="the active file, relative to the root")
    route_add.add_argument("--description", help="the route's description (default: the first Summary bullet, "
                           "else the front matter's description, else the title: give one where the note has "
                           "no summary, so that agents know when to load it)")

    for cmd in (save, route_add, *_add_write_commands(sub)):
        cmd.add_argument("--format", choices=["text", "json"], default="text")
        confirm = cmd.add_mutually_exclusive_group()
        confirm.add_argument("-y", "--yes", action="store_true", help="apply without asking (for people and scripts)")
        confirm.add_argument("--token", help="apply exactly the preview that printed this token")

    doctor = sub.add_parser("doctor", help="check that every agent on this machine reaches the same memory root")
    doctor.add_argument("--format", choices=["text", "json"], default="text")
    setup = sub.add_parser("setup", help="fix what `pmem doctor` finds for one agent (preview, then asks)")
    setup.add_argument("agent", choices=["claude-code", "codex"])
    setup.add_argument("--format", choices=["text", "json"], default="text")
    setup.add_argument("-y", "--yes", action="store_true", help="apply without asking (for people and scripts)")
    _add_history_commands(sub)

    hook = sub.add_parser("hook", help="agent hooks: check a write before or after it happens (JSON on stdin)")
    hook.add_argument("event", choices=["pre-write", "post-write", "pre-shell"])

    sub.add_parser("mcp", help="serve the memory to agents over MCP (stdio; needs pmem-lsp[mcp])")

    rules = sub.add_parser("rules", help="list the rules, or explain one (`pmem rules PM102`)")
    rules.add_argument("code", nargs="?", help="a rule code to explain")
    rules.add_argument("--format", choices=["text", "markdown", "json"], default="text")

    schema = sub.add_parser("schema", help="print a JSON Schema")
    schema.add_argument("name", choices=["settings", "report"])

    serve = sub.add_parser("serve", help="start the language server (same as pmem-lsp)")
    _add_serve_options(serve)
    return parser


def _add_write_commands(sub: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    """The write commands the registry does not leave to a hand-written parser (save, route),
    each with the arguments its entry takes; the caller adds the confirmation options."""
    from ..engine.lifecycle.registry import MIGRATE_TARGETS, WRITE_OPERATIONS, PathArgument, Surface

    made = []
    for op in WRITE_OPERATIONS:
        if Surface.CLI not in op.surfaces or op.own_cli_parser:
            continue
        cmd = sub.add_parser(op.name, help=op.cli_help)
        if op.path is PathArgument.DIALECT:
            cmd.add_argument("--to", dest="path", choices=list(MIGRATE_TARGETS),
                             help="the dialect to write (default: the root's, docs/decisions.md \"Dialects\")")
        elif op.takes_path:  # one help for all: archive's active path is its "original path" too
            cmd.add_argument("path", help="path relative to the root (original path or current location)")
        if op.reason:
            cmd.add_argument("--reason", help="why it is archived (kept in the record)")
        if op.add_route:
            cmd.add_argument("--add-route", action="store_true",
                             help="also add the proposed route for a file that had none when it was archived")
        made.append(cmd)
    return made


def _add_history_commands(sub: argparse._SubParsersAction) -> None:
    """`history`, `diff`, `restore`, `undo`, `review` (docs/design.md §11; cli/history.py)."""
    from ..engine.lifecycle.registry import BY_NAME

    def confirm_options(cmd: argparse.ArgumentParser, token: bool = True) -> None:
        cmd.add_argument("--format", choices=["text", "json"], default="text")
        group = cmd.add_mutually_exclusive_group()
        group.add_argument("-y", "--yes", action="store_true", help="apply without asking (for people and scripts)")
        if token:
            group.add_argument("--token", help="apply exactly the preview that printed this token")

    history = sub.add_parser("history", help="the root's history: every change pmem saw, newest first")
    history.add_argument("path", nargs="?", help="only the entries that changed this file")
    history.add_argument("--since", metavar="WHEN", help="only entries since WHEN (`2h`, `3d`, `2026-01-31`)")
    history.add_argument("--forget", metavar="PATH", help="drop every kept version of PATH from history")
    confirm_options(history, token=False)

    diff = sub.add_parser("diff", help="what an entry changed, or what changed since an entry or a time")
    diff.add_argument("entry", nargs="?", help="an entry id from `pmem history`")
    diff.add_argument("path", nargs="?", help="only this file")
    diff.add_argument("--since", metavar="ENTRY|WHEN", help="everything changed since this entry or time")
    diff.add_argument("--unreviewed", action="store_true", help="everything changed since the last review")
    diff.add_argument("--format", choices=["text", "json"], default="text")

    restore = sub.add_parser("restore", help=BY_NAME["restore"].cli_help)
    restore.add_argument("path", help="the file, relative to the root")
    restore.add_argument("--at", required=True, metavar="ENTRY", help="the entry id from `pmem history`")
    confirm_options(restore)

    undo = sub.add_parser("undo", help=BY_NAME["undo"].cli_help)
    review = sub.add_parser("review", help="what changed since you last accepted, by writer")
    accepting = review.add_mutually_exclusive_group()
    accepting.add_argument("--accept", nargs="+", metavar="ENTRY", help="mark these entries reviewed")
    accepting.add_argument("--all", action="store_true", dest="accept_all", help="mark everything reviewed")
    review.add_argument("--format", choices=["text", "json"], default="text")

    undo.add_argument("entry", help="the entry id from `pmem history`")
    undo.add_argument("paths", nargs="*", metavar="PATH", help="only these files of the entry")
    confirm_options(undo)


def _run_history_command(root: Path, args: argparse.Namespace, argv: list[str] | None) -> int:
    from . import history

    out, err = sys.stdout, sys.stderr
    if args.command == "history":
        if args.forget:
            return history.run_forget(root, args.forget, args.format, args.yes, sys.stdin, out, err)
        return history.run_history(root, args.path, args.since, args.format, out, err)
    if args.command == "diff":
        return history.run_diff(root, args.entry, args.path, args.since, args.format, out, err, args.unreviewed)
    if args.command == "review":
        return history.run_review(root, args.accept, args.accept_all, args.format, out, err)
    if args.command == "restore":
        return history.run_restore(root, args.path, args.at, args.format, args.yes, args.token, out, err, argv)
    return history.run_undo(root, args.entry, args.paths, args.format, args.yes, args.token, sys.stdin, out, err,
                            argv)


def _add_serve_options(parser: argparse.ArgumentParser) -> None:
    # stdio is the only transport (docs/SECURITY.md: a TCP listener would serve the memory to
    # any local user); `--stdio` is accepted because language clients pass it.
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default and only transport)")


def _fail(message: str) -> int:
    sys.stderr.write(f"pmem: error: {message}\n")
    return exit_codes.ERROR


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        # Asked by hooks, editors and scripts on every start: no parser, no redaction, no engine
        # (engine/native.py imports only the extension and reads native_mirrors.json). One line:
        # the version first, then which engine runs and, for the pure one, why.
        from ..engine.native import describe

        sys.stdout.write(f"pmem {__version__} ({describe()})\n")
        return exit_codes.OK
    args = sys.argv[1:] if argv is None else argv
    hook_text: str | None = None
    if "hook" in args[:3]:
        # A hook on a file outside the root is the common case: no parser, no redaction, no engine.
        from .hook import answer_outside, answer_shell, hook_call

        call = hook_call(args)
        if call is not None:
            hook_text = sys.stdin.read()
            if args[-1] == "pre-shell":
                return answer_shell(hook_text, sys.stderr)
            answered = answer_outside(call[0], hook_text)
            if answered is not None:
                return answered
    from ..engine.redaction import install as install_redaction

    install_redaction()  # no secret value in a log line or a traceback on stderr (docs/SECURITY.md)
    _printable_anywhere()
    try:
        if hook_text is not None:
            # A write inside the root: the hook as the parser would run it, without the parser
            # (issue 25: the agent waits for it on every write of a memory file).
            import io

            from ..engine.zones import discover_root
            from .hook import hook_call, run_hook

            root_arg = hook_call(args)
            assert root_arg is not None
            return run_hook(discover_root(root_arg[0]), args[-1], io.StringIO(hook_text), sys.stdout, sys.stderr,
                            watchdog=True)
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`pmem check | head -1`): nothing more to say, and no traceback
        # from the interpreter's last flush either.
        _stdout_to_devnull()
        return exit_codes.ERROR
    except KeyboardInterrupt:
        # A lifecycle step cut short leaves every file at its source or destination, and
        # `pmem check` names what is left to fix (docs/decisions.md, "Lifecycle").
        sys.stderr.write("\npmem: interrupted; if a change was being applied, run `pmem check` to see "
                         "what is left\n")
        return exit_codes.INTERRUPTED


def _printable_anywhere() -> None:
    """Memory holds CJK and emoji (PM106 itself names `摘要`): on a terminal or pipe whose
    encoding cannot show a character, print an escape instead of failing with a traceback."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        # On UTF-8 too: a file name that is not UTF-8 (lone surrogates) that some output did not
        # escape (engine/names.py) is printed escaped, never a traceback.
        if (encoding != "utf8" or getattr(stream, "errors", "") == "strict") and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return exit_codes.ERROR
    if args.command == "schema":
        from ..schemas import schema_text

        sys.stdout.write(schema_text(args.name))
        return exit_codes.OK
    if args.command == "serve":
        return _serve(args)
    if args.command == "rules":
        from .rules import run_rules

        return run_rules(args.code, args.format, sys.stdout, sys.stderr)

    from ..engine.zones import discover_root

    root = discover_root(args.root)
    if args.command == "hook":
        from .hook import run_hook

        return run_hook(root, args.event, sys.stdin, sys.stdout, sys.stderr, watchdog=True)
    from ..engine.lifecycle.registry import BY_NAME as WRITES
    from ..engine.lifecycle.registry import needs_root

    # History's writes (undo, restore) are made from the history store: `_run_history_command`.
    if args.command in WRITES and WRITES[args.command].entry is None and (not needs_root(args.command)
                                                                          or root.is_dir()):
        return _write(root, args, argv)
    if args.command in ("doctor", "setup"):  # a root that does not exist yet is one of its findings
        from .doctor import run_doctor, run_setup

        if args.command == "doctor":
            return run_doctor(root, args.format, sys.stdout)
        return run_setup(root, args.agent, args.format, args.yes, sys.stdin, sys.stdout, sys.stderr)
    if args.command == "mcp":  # started without a root too: its tools say how to create one
        from ..mcp.server import run

        return run(root)
    if not root.is_dir():
        return _fail(f"memory root {root} does not exist or is not a folder")
    if args.command in ("history", "diff", "restore", "undo", "review"):
        return _run_history_command(root, args, argv)
    if args.command == "status":
        from .status import run_status

        return run_status(root, args.format, sys.stdout)
    return _check_or_health(root, args, cached=argv is None)


def _write(root: Path, args: argparse.Namespace, argv: list[str] | None) -> int:
    from ..engine.lifecycle.preview import Request
    from .writes import run_write

    content = None
    if args.command == "save":
        content = _read_content(args.content_file)
        if content is None:
            return exit_codes.ERROR
    reason = getattr(args, "reason", None)
    if args.command == "archive" and not reason:
        reason = "archived with `pmem archive`"  # the engine's default says "from the editor"
    request = Request(args.command, getattr(args, "path", None), reason, content,
                      getattr(args, "description", None), not getattr(args, "no_route", False),
                      add_route=getattr(args, "add_route", False))
    spent = None
    if args.command == "save" and args.content_file is not None:
        from ..engine.pending_saves import forget_file

        def spent() -> None:  # a preview's kept text, applied by the person: spent
            forget_file(args.content_file)
    return run_write(root, request, fmt=args.format, yes=args.yes, token=args.token, argv=argv, applied=spent)


def _read_content(content_file: str | None) -> str | None:
    """The text to save, from `--content-file` or stdin, strict UTF-8 (a BOM is dropped)."""
    try:
        if content_file is not None:
            with open(content_file, "rb") as fh:
                data = fh.read()
        else:
            if sys.stdin.isatty():
                sys.stderr.write("pmem: reading the content to save from the terminal; end it with Ctrl-D\n")
            data = sys.stdin.buffer.read()
    except OSError as exc:
        _fail(f"cannot read {content_file or 'stdin'}: {exc.strerror or exc}")
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        _fail(f"the content is not valid UTF-8 (byte {exc.start}); nothing was saved")
        return None


def _check_or_health(root: Path, args: argparse.Namespace, cached: bool = False) -> int:
    """`pmem check` or `pmem health`. `cached`: the `pmem` process itself (not `main([...])`
    called from Python) may replay the last identical whole-root check (check_cache.py)."""
    cache = None
    if (cached and args.command in ("check", "health") and not args.no_cache
            and getattr(args, "stdin_filename", None) is None):
        from ..engine.user_cache import disabled_by_env
        from .check_cache import CheckCache

        if not disabled_by_env():
            cache = CheckCache(str(root), sys.argv[1:])
            hit = cache.lookup()
            if hit is not None:
                out, err, status = hit
                sys.stderr.write(err)
                sys.stdout.write(out)
                return status
    import gc

    # A check builds long-lived objects per file and frees few, and makes almost no garbage
    # cycles: the collector only walks them again and again (docs/decisions.md, "The collector
    # (measured again)"). The `pmem` process ends after one check, so it does not collect at
    # all; `main([...])` called from a Python process that goes on only collects rarely.
    if cached:
        gc.disable()
    else:
        gc.set_threshold(50_000, 50, 100)
    from ..engine.findings import Severity
    from ..engine.settings_defaults import SettingsError, settings_for
    from ..engine.zones import looks_like_root

    overrides: dict = {}
    if getattr(args, "select", None):
        overrides["select"] = args.select
    try:
        settings = settings_for(root, overrides, overrides_source="command line")
        if getattr(args, "ignore", None):
            # Ignoring from the command line adds to what the root ignores (like ruff's
            # --ignore), so `--ignore PM003` does not bring the root's ignored rules back.
            settings = settings_for(root, {**overrides, "ignore": settings.ignore + args.ignore},
                                        overrides_source="command line")
    except SettingsError as exc:
        return _fail(str(exc))
    import io

    out_buffer, err_buffer = io.StringIO(), io.StringIO()  # the output kept for the cache
    out_stream: TextIO = out_buffer if cache is not None else sys.stdout
    err_stream: TextIO = err_buffer if cache is not None else sys.stderr
    from ..engine.pool import jobs_for

    jobs_problem = jobs_for(0)[1]  # PMEM_JOBS (engine/pool.py)
    if jobs_problem:
        err_stream.write(f"pmem: warning: {jobs_problem}\n")
    if not looks_like_root(root):
        err_stream.write(f"pmem: warning: {root} has no _index.md, _core/ or _archive/; is it a memory root?\n")
    states: list = []
    records = None
    if cached and not args.no_cache:
        from ..engine.entry_cache import Records
        from ..engine.user_cache import disabled_by_env as records_off

        if not records_off():
            records = Records(root, settings)  # per-file: a changed root costs its changed files
    if args.command == "health":
        from .health import run_health

        status = run_health(root, settings, args.format, out_stream, all_items=args.all_items, states=states,
                            records=records)
    else:
        from .check import run_check_command

        status = run_check_command(root, settings, args.paths, args.stdin_filename, args.format,
                                   Severity(args.min_severity), Severity(args.fail_on), statistics=args.statistics,
                                   max_per_code=args.max_per_code, out=out_stream, err=err_stream, states=states,
                                   sort=args.sort, records=records)
    if cache is not None:
        out, err = out_buffer.getvalue(), err_buffer.getvalue()
        sys.stderr.write(err)
        sys.stdout.write(out)
        sys.stdout.flush()
        # PM403 asked `stat` about these paths outside the root: their answers are in the key.
        from ..engine.rules.source_paths import checked_outside_paths

        outside = [path for state in states for path in checked_outside_paths(state)]
        cache.store(out, err, status, outside)
    if records is not None:
        sys.stdout.flush()
        for state in states:
            records.store(state)
    if cached:
        _KEPT_TO_THE_END[:] = states  # freed by no one: `run` ends the process
    return status


# The root states of the last `pmem check` or `pmem health` the `pmem` process itself ran,
# kept until `run` ends the process. Freeing what a check built is work nobody waits for: every
# file's parse, findings and caches, some 65 ms of a 10k-file check (docs/decisions.md,
# "The process ends without freeing").
_KEPT_TO_THE_END: list = []


def run() -> NoReturn:
    """The `pmem` command: `main()`, then the end of the process. After a check or health, the
    output is flushed and the exit handlers run as at any exit, and the process ends without
    freeing its objects; every other command exits as usual."""
    status = main()
    if not _KEPT_TO_THE_END:
        sys.exit(status)
    import atexit
    import contextlib

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError as exc:
        _stdout_to_devnull()
        if not isinstance(exc, BrokenPipeError):  # the reader gone: as `main` ends; else said
            with contextlib.suppress(OSError):
                os.write(2, f"pmem: the output could not be written: {exc.strerror or exc}\n".encode())
        status = exit_codes.ERROR
    atexit._run_exitfuncs()  # what the interpreter's exit runs first (logging's flush, finalizers)
    os._exit(status)


def _stdout_to_devnull() -> None:
    """What is left in stdout's buffer goes nowhere: no traceback from a later flush."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _serve(args: argparse.Namespace) -> int:
    # The early path answers the editor's first messages before the full server is imported.
    from ..server.early_path import serve

    return serve()


def serve_main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="pmem-lsp", description="The Persistent Memory language server.")
    parser.add_argument("--version", action="version", version=f"pmem-lsp {__version__}")
    _add_serve_options(parser)
    return _serve(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    run()
