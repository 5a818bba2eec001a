"""Entry points: `pmem` and `pmem-lsp` (the same as `pmem serve`)."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..engine.findings import Severity
from ..engine.redaction import install as install_redaction
from ..engine.root_state import RootState
from ..engine.settings import SettingsError, resolve_settings
from ..engine.zones import discover_root, looks_like_root
from . import exit_codes

_LIFECYCLE = ("upgrade", "archive", "delete", "recover", "purge", "init")
_SEVERITIES = [s.value for s in Severity]


def _count_arg(value: str) -> int:
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
    parser = argparse.ArgumentParser(prog="pmem", description="Check and safely edit a Persistent Memory root.")
    parser.add_argument("--version", action="version", version=f"pmem {__version__}")
    parser.add_argument("--root", help="memory root (default: $PMEM_ROOT, else ~/.persistent-memory)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="report problems in the memory root")
    check.add_argument("--format", choices=["text", "json", "github", "sarif"], default="text")
    check.add_argument("--statistics", action="store_true",
                       help="text: how many findings of each rule, instead of the findings")
    check.add_argument("--max-per-code", type=_count_arg, default=10, metavar="N",
                       help="text: show at most N findings of each rule and count the rest (default 10; 0: all)")
    check.add_argument("--select", type=_codes,
                       help="comma-separated rule codes or prefixes to report, instead of the root's `select`")
    check.add_argument("--ignore", type=_codes,
                       help="comma-separated rule codes or prefixes to skip, added to the root's `ignore`")
    check.add_argument("--min-severity", choices=_SEVERITIES, default="hint", help="hide findings below this severity")
    check.add_argument("--fail-on", choices=_SEVERITIES, default="error",
                       help="exit 1 when a finding at or above this severity is reported (default: error)")

    sub.add_parser("status", help="what is saved: core size and one line per routed file")

    health = sub.add_parser("health", help="propose what to keep, archive or delete (changes nothing)")
    health.add_argument("--format", choices=["text", "json"], default="text")

    for op, text in (("upgrade", "create the missing lifecycle folders and archive index"),
                     ("archive", "move an active file to _archive/ and record it"),
                     ("delete", "move an archived file to the trash (recoverable for 30 days)"),
                     ("recover", "bring an archived or trashed file back with its route"),
                     ("purge", "permanently delete a trashed file past its recover-by date"),
                     ("init", "create a new memory root")):
        cmd = sub.add_parser(op, help=text)
        if op not in ("upgrade", "init"):
            cmd.add_argument("path", help="path relative to the root (original path or current location)")
        if op == "archive":
            cmd.add_argument("--reason", help="why it is archived (kept in the record)")
        cmd.add_argument("-y", "--yes", action="store_true", help="apply without asking")

    rules = sub.add_parser("rules", help="list the rules, or explain one (`pmem rules PM102`)")
    rules.add_argument("code", nargs="?", help="a rule code to explain")
    rules.add_argument("--format", choices=["text", "markdown"], default="text")

    schema = sub.add_parser("schema", help="print a JSON Schema")
    schema.add_argument("name", choices=["settings", "report"])

    serve = sub.add_parser("serve", help="start the language server (same as pmem-lsp)")
    _add_serve_options(serve)
    return parser


def _add_serve_options(parser: argparse.ArgumentParser) -> None:
    # stdio is the only transport (docs/SECURITY.md: a TCP listener would serve the memory to
    # any local user); `--stdio` is accepted because language clients pass it.
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default and only transport)")


def _fail(message: str) -> int:
    sys.stderr.write(f"pmem: error: {message}\n")
    return exit_codes.ERROR




def main(argv: list[str] | None = None) -> int:
    install_redaction()  # no secret value in a log line or a traceback on stderr (docs/SECURITY.md)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # A lifecycle step cut short leaves every file at its source or destination, and
        # `pmem check` names what is left to fix (docs/decisions.md, "Lifecycle").
        sys.stderr.write("\npmem: interrupted; if a change was being applied, run `pmem check` to see "
                         "what is left\n")
        return exit_codes.INTERRUPTED


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

    root = discover_root(args.root)
    if args.command in _LIFECYCLE and (args.command == "init" or root.is_dir()):
        from .lifecycle import run_lifecycle

        return run_lifecycle(root, args.command, getattr(args, "path", None), getattr(args, "reason", None), args.yes)
    if not root.is_dir():
        return _fail(f"memory root {root} does not exist or is not a folder")
    if args.command == "status":
        from .status import run_status

        return run_status(root, sys.stdout)

    overrides: dict = {}
    if getattr(args, "select", None):
        overrides["select"] = args.select
    try:
        settings = resolve_settings(root, overrides, overrides_source="command line")
        if getattr(args, "ignore", None):
            # Ignoring from the command line adds to what the root ignores (like ruff's
            # --ignore), so `--ignore PM003` does not bring the root's ignored rules back.
            settings = resolve_settings(root, {**overrides, "ignore": settings.ignore + args.ignore},
                                        overrides_source="command line")
    except SettingsError as exc:
        return _fail(str(exc))
    if not looks_like_root(root):
        sys.stderr.write(f"pmem: warning: {root} has no _index.md, _core/ or _archive/; is it a memory root?\n")
    if args.command == "health":
        from .health import run_health

        return run_health(root, settings, args.format, sys.stdout)
    from .check import run_check

    state = RootState.scan(root, settings)
    return run_check(state, args.format, Severity(args.min_severity), Severity(args.fail_on),
                     statistics=args.statistics, max_per_code=args.max_per_code)


def _serve(args: argparse.Namespace) -> int:
    from ..server.app import start

    return start()


def serve_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pmem-lsp", description="The Persistent Memory language server.")
    parser.add_argument("--version", action="version", version=f"pmem-lsp {__version__}")
    _add_serve_options(parser)
    return _serve(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
