"""pmem-lsp: a language server and CLI for Persistent Memory roots."""

__version__ = "0.1.0"
