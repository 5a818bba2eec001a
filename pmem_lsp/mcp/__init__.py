"""`pmem mcp`: the memory root as MCP tools for agents (docs/design.md §10).

`tools.py` does the work with the engine alone; `server.py` serves it with the MCP SDK, which is
an optional extra (`pip install 'pmem-lsp[mcp]'`) and imported only when the server starts.
"""
