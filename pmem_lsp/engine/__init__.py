"""The engine: memory model, parsers, rules. Plain Python, no editor protocol.

Nothing in this package may import pygls or lsprotocol; the server and the CLI are thin
surfaces over it. Positions are 0-based lines and Python character offsets.
"""
