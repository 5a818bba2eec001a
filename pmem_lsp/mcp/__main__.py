"""`python -m pmem_lsp.mcp [--root DIR]`: the MCP server, as `pmem mcp` runs it."""

import argparse
import sys

from ..engine.zones import discover_root
from .server import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pmem_lsp.mcp", description="Serve a memory root over MCP (stdio).")
    parser.add_argument("--root", help="the memory root (default: $PMEM_ROOT, else "
                                              "$PERSISTENT_MEMORY_HOME, else ~/.persistent-memory)")
    args = parser.parse_args(argv)
    return run(discover_root(args.root))


if __name__ == "__main__":
    sys.exit(main())
