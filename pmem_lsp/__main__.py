"""`python -m pmem_lsp` starts the language server, for editors that configure an interpreter."""

import sys

from .cli.main import serve_main

sys.exit(serve_main())
