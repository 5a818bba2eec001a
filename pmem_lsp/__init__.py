"""pmem-lsp: a language server and CLI for Persistent Memory roots."""

import os

__version__ = "0.1.0"

# pydantic looks for plugins (third-party observability hooks) by scanning every installed
# distribution's entry points the first time a model is built: ~20 ms of an agent's hook,
# which waits for pmem on every write (docs/performance.md). pmem uses none; a person who
# wants them for pmem's models sets the variable themselves.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
