"""PM401: likely secrets, in every zone. The message names the kind, never the value."""

from __future__ import annotations

from ..findings import Finding
from ..memory_file import MemoryFile
from ..secrets import find_secrets
from ..settings import SecretsSettings


def check_secrets(path: str, doc: MemoryFile, settings: SecretsSettings) -> list[Finding]:
    if not settings.enabled:
        return []
    return [
        Finding(path, m.line, m.start, m.end_line, m.end, "PM401",
                f"likely {m.kind} ({m.hint}): every agent reads memory, so remove it and keep it in a "
                "password manager (or allow it with <!-- pmem: allow-secret -->)")
        for m in find_secrets(doc.lines, settings.allow_patterns, in_sentences=False)
    ]
