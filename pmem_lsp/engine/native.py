"""The optional native core (the `pmem_native` extension, built from native/; docs/native.md).

`CORE` is the extension module when it is installed and not turned off (`PMEM_NATIVE=0`), else
None; callers keep their pure-Python path for None, and that path is the reference: the core
only answers questions the Python code answers too, with the same results
(tests/engine/test_native_differential.py). An extension built for another version of this
code is not used: its `VERSION` must be `EXPECTED` and it must have every function of `FUNCTIONS`.

The core steps aside per use ("group", native_mirrors.py): `core_for(group, ...)` is the core
only where, for each group, the digest of the Python code the build was written for
(`WRITTEN_FOR_<GROUP>`) is the digest native_mirrors.json holds for the code as committed. A
Python function changed and its Rust twin not yet checked: that group runs the pure path,
slower and never wrong. Only the committed digests are read here, never the source (that costs
about 40 ms of imports and `inspect`; tests/engine/test_native_mirrors.py holds the JSON to the
source, with no Rust needed).
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from types import ModuleType

EXPECTED = "0.6.0"
FUNCTIONS = ("instruction_lines", "fast_part", "sketch_hashes", "file_record", "link_targets",
             "volatile_candidates", "secrets_clear", "secret_doors_lines", "link_route")
_MIRRORS_JSON = Path(__file__).with_name("native_mirrors.json")


def load(environ: dict[str, str] | os._Environ[str] = os.environ) -> tuple[ModuleType | None, str]:
    """The extension (or None where it is missing, turned off or of another version) and, for
    None, why."""
    if environ.get("PMEM_NATIVE", "").strip().lower() in ("0", "false", "no", "off"):
        return None, "turned off by PMEM_NATIVE"
    try:
        core = importlib.import_module("pmem_native")
    except ImportError:
        return None, "the native core is not installed"
    version = getattr(core, "VERSION", None)
    if version != EXPECTED or not all(hasattr(core, name) for name in FUNCTIONS):
        return None, f"the installed native core is {version}, this code expects {EXPECTED} (make native)"
    return core, ""


def stale_groups(core: ModuleType | None) -> list[str]:
    """The groups whose committed Python digest is not the one `core` was written for."""
    if core is None:
        return []
    with _MIRRORS_JSON.open(encoding="utf-8") as f:
        committed = {group: entry["digest"] for group, entry in json.load(f).items()}
    return [group for group, digest in committed.items()
            if getattr(core, f"WRITTEN_FOR_{group.upper()}", None) != digest]


CORE, WHY_NOT = load()
STALE = stale_groups(CORE)


def core_for(*groups: str) -> ModuleType | None:
    """The core, where it was written for the Python code of every one of `groups`; else None."""
    return None if CORE is None or any(g in STALE for g in groups) else CORE


def describe() -> str:
    """Which engine runs and, for the pure one, why (`pmem --version`)."""
    if CORE is None:
        return f"pure-Python engine: {WHY_NOT}"
    if STALE:
        return (f"native core {CORE.VERSION}, but the pure-Python path for {', '.join(STALE)}: "
                "the build was written for other Python code there (make native)")
    return f"native core {CORE.VERSION}"
