"""The settings' behaviour, and the default settings without the settings model.

`settings.py`'s pydantic model is the one definition of what a setting is, what it may hold and
what it defaults to; it costs ~100 ms to import (pydantic, then building the model), which an
agent pays on every write it makes through a hook (issue 25: post-write ≤ 300 ms on a 10k-file
root). A root with no `.pmem.toml` and no overrides needs no validation at all, only the
defaults: `settings_for` gives them from `DEFAULTS`, a plain copy of `Settings().model_dump()`
that a test keeps equal to the model's (tests/engine/test_settings.py), and imports the model
only when there is something to validate.

What settings *do* (`enabled`, `severity_for`, `excluded`, `allow_patterns`) is written once,
here, and shared by the model and the defaults.
"""

from __future__ import annotations

import os
import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .globs import GlobSet

if TYPE_CHECKING:
    from .findings import Severity
    from .settings import Settings

SETTINGS_FILE = ".pmem.toml"

# Codes split out of an older one: settings that name the older code keep covering the new
# one (PM209 route-description-missing was part of PM206 route-malformed; docs/decisions.md).
SPLIT_FROM = {"PM209": "PM206"}

# `Settings().model_dump()`, by field name. Change a default in settings.py and this with it:
# tests/engine/test_settings.py fails while they differ.
DEFAULTS: dict[str, Any] = {
    "root": None,
    "select": ["PM"],
    "ignore": [],
    "severity": {},
    "core": {"max_bytes": 8192},
    "index": {"max_lines": 200, "max_bytes": 16384},
    "large_file": {"kb": 256},
    "stale": {"days": 90},
    "status": {"days": 14},
    "duplicates": {"threshold": 0.9},
    "secrets": {"enabled": True, "allow": []},
    "diagnostics": {"scope": "root"},
    "history": {"days": 90},
    "exclude": [],
    "dialect": "auto",
}


class SettingsError(ValueError):
    """Settings that cannot be used; the message says where and why, with any likely secret it
    quotes (a key or a value of the file, its path) masked: it reaches hooks' block reasons,
    stderr and MCP replies, which agents read."""

    def __init__(self, message: str) -> None:
        from .secrets import mask_text  # only when settings fail: the hooks' fast path never needs it

        super().__init__(mask_text(message))


class SecretsBehaviour:
    """What `[secrets]` does; the model's section and the defaults' share it."""

    if TYPE_CHECKING:
        allow: list[str]

    @cached_property
    def allow_patterns(self) -> list[re.Pattern[str]]:
        return [re.compile(p) for p in self.allow]


class SettingsBehaviour:
    """What the top-level settings do with rule codes and paths."""

    if TYPE_CHECKING:
        select: list[str]
        ignore: list[str]
        severity: dict[str, Severity]
        exclude: list[str]

    def enabled(self, code: str) -> bool:
        codes = (code, SPLIT_FROM[code]) if code in SPLIT_FROM else (code,)
        if any(c.startswith(p) for c in codes for p in self.ignore):
            return False
        return any(c.startswith(p) for c in codes for p in self.select)

    def severity_for(self, code: str) -> Severity | None:
        """The user's severity for `code`, or for the code it was split from."""
        found = self.severity.get(code)
        if found is None and code in SPLIT_FROM:
            found = self.severity.get(SPLIT_FROM[code])
        return found

    @cached_property
    def _exclude_matcher(self) -> GlobSet | None:
        return GlobSet(self.exclude) if self.exclude else None

    def excluded(self, rel: str) -> bool:
        matcher = self._exclude_matcher
        return matcher is not None and matcher.match(rel)


class _Frozen:
    """Read-only attributes from a table (a section's table becomes a section)."""

    def __init__(self, values: dict[str, Any], sections: dict[str, type[_Frozen]] | None = None) -> None:
        for key, value in values.items():
            if isinstance(value, dict) and sections is not None and key in sections:
                value = sections[key](value)
            elif isinstance(value, (list, dict)):
                value = type(value)(value)  # each instance its own copy, as the model's factories
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"settings are read-only ({key})")


class _Section(_Frozen):
    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)


class _Secrets(_Section, SecretsBehaviour):
    pass


class _Defaults(_Frozen, SettingsBehaviour):
    def __init__(self) -> None:
        sections: dict[str, type[_Frozen]] = {key: _Secrets if key == "secrets" else _Section
                                              for key, value in DEFAULTS.items()
                                              if isinstance(value, dict) and key != "severity"}
        super().__init__(DEFAULTS, sections)


def default_settings() -> Settings:
    """The defaults, read exactly as the model's (attribute for attribute, a test checks), but
    without importing it. Typed as the model: every reader only reads attributes."""
    return cast("Settings", _Defaults())


def settings_data(settings: Settings) -> dict[str, Any]:
    """The settings as plain data, by field name (`model_dump(mode="json")`), for either kind."""
    if isinstance(settings, _Defaults):
        import copy

        return copy.deepcopy(DEFAULTS)
    return settings.model_dump(mode="json")


def settings_for(root: Path, overrides: dict[str, Any] | None = None,
                 overrides_source: str = "editor settings") -> Settings:
    """`resolve_settings`: the defaults when the root has no settings file and there are no
    overrides (nothing to validate), else the model validating them (SettingsError as there)."""
    if not overrides and not os.path.lexists(root / SETTINGS_FILE):
        return default_settings()
    from .settings import resolve_settings

    return resolve_settings(root, overrides, overrides_source)
