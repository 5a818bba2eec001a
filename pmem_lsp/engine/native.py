"""The optional native core (the `pmem_native` extension, built from native/; docs/native.md).

`CORE` is the extension module when it is installed and not turned off (`PMEM_NATIVE=0`), else
None; callers keep their pure-Python path for None, and that path is the reference: the core
only answers questions the Python code answers too, with the same results
(tests/engine/test_native_differential.py). An extension built for another version of this
code is not used: its `VERSION` must be `EXPECTED` and it must have every function of `FUNCTIONS`
(a build of an older commit of this branch may lack one). The version changes whenever a
function keeps its name but takes or gives something else (0.2.0: `file_record` takes the text
and gives PM404's candidates), so a build from before the change is not used.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

EXPECTED = "0.2.0"
FUNCTIONS = ("instruction_lines", "fast_part", "sketch_hashes", "file_record", "link_targets",
             "volatile_candidates", "secrets_clear")


def load(environ: dict[str, str] | os._Environ[str] = os.environ) -> ModuleType | None:
    """The extension, or None where it is missing, turned off or of another version."""
    if environ.get("PMEM_NATIVE", "").strip().lower() in ("0", "false", "no", "off"):
        return None
    try:
        core = importlib.import_module("pmem_native")
    except ImportError:
        return None
    if getattr(core, "VERSION", None) != EXPECTED or not all(hasattr(core, name) for name in FUNCTIONS):
        return None
    return core


CORE = load()
