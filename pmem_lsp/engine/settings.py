"""Settings (docs/design.md §5): pydantic models, read from `.pmem.toml` and from the editor.

What settings do, and their defaults without this model, are in `settings_defaults.py`.

Editor settings override the root's `.pmem.toml`, key by key. Keys use the editor's
camelCase spelling (`core.maxBytes`); snake_case is accepted too.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .findings import Severity
from .settings_defaults import SETTINGS_FILE, SecretsBehaviour, SettingsBehaviour, SettingsError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

_CODE_PREFIX = re.compile(r"^PM\d{0,3}$")


class _Section(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)


class CoreSettings(_Section):
    max_bytes: int = Field(8192, alias="maxBytes", ge=0,
                           description="PM004: largest total size of `_core/`, in bytes.")


class IndexSettings(_Section):
    max_lines: int = Field(200, alias="maxLines", ge=1,
                           description="PM006: most lines `_index.md` may have.")
    max_bytes: int = Field(16384, alias="maxBytes", ge=1,
                           description="PM006: largest size of `_index.md`, in bytes.")


class LargeFileSettings(_Section):
    kb: int = Field(256, ge=1, description="PM005: a memory file larger than this many KiB is raw material.")


class StaleSettings(_Section):
    days: int = Field(90, ge=1, description="PM501: days without a change before an active file is stale "
                      "(the last commit in a git repository, else the modification time).")


class StatusSettings(_Section):
    days: int = Field(14, ge=1, description="PM506: days since a project's status source (`role: current-status`) "
                      "was last updated or verified before it needs verifying.")


class DuplicatesSettings(_Section):
    threshold: float = Field(0.9, ge=0.5, le=1.0,
                             description="PM503: text similarity (Jaccard of word 3-shingles, 0.5 to 1) at or above "
                                         "which two active files are near-duplicates (a shared title alone "
                                         "makes no pair).")


class SecretsSettings(_Section, SecretsBehaviour):
    enabled: bool = Field(True, description="PM401: look for secrets in every zone.")
    allow: list[str] = Field(default_factory=list,
                             description="PM401: regular expressions (Python syntax, searched in the "
                                         "value) of values that are not secrets.")

    @field_validator("allow")
    @classmethod
    def _regexes(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {pattern!r} ({exc})") from None
        return value



class HistorySettings(_Section):
    days: int = Field(90, ge=1, description="History: days an entry is kept (the last 50 entries are always kept); "
                                            "older entries are pruned from the store, at most once a day.")


class DiagnosticsSettings(_Section):
    scope: Literal["root", "changes"] = Field(
        "root", description="What the language server publishes. `root`: every file's findings (editors). "
                            "`changes`: all findings of the files this client opened or changed, and elsewhere "
                            "only the findings that appeared since the server started, so an agent hears what "
                            "its writes did, not the root's old problems (the Claude Code plugin sets it). "
                            "`pmem check` and the hooks are not affected.")


class Settings(_Section, SettingsBehaviour):
    root: str | None = Field(None, description="Memory root to check (default: PMEM_ROOT, else "
                                                     "PERSISTENT_MEMORY_HOME, else ~/.persistent-memory).")
    select: list[str] = Field(default_factory=lambda: ["PM"],
                              description="Rule codes or code prefixes to report (`PM1` = PM100–PM199).")
    ignore: list[str] = Field(default_factory=list,
                              description="Rule codes or code prefixes never to report; wins over `select`.")
    severity: dict[str, Severity] = Field(default_factory=dict,
                                          description="Severity per rule code, e.g. `{\"PM202\": \"information\"}`.")
    core: CoreSettings = Field(default_factory=CoreSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    large_file: LargeFileSettings = Field(default_factory=LargeFileSettings, alias="largeFile")
    stale: StaleSettings = Field(default_factory=StaleSettings)
    status: StatusSettings = Field(default_factory=StatusSettings)
    duplicates: DuplicatesSettings = Field(default_factory=DuplicatesSettings)
    secrets: SecretsSettings = Field(default_factory=SecretsSettings)
    diagnostics: DiagnosticsSettings = Field(default_factory=DiagnosticsSettings)
    history: HistorySettings = Field(default_factory=HistorySettings)
    exclude: list[str] = Field(default_factory=list,
                               description="Globs of root-relative paths never read (`drafts/**`).")
    dialect: Literal["auto", "v0.10", "pmem"] = Field(
        "auto", description="How pmem writes archive records, new route lines and dates: `v0.10` (the "
                            "format's `### path` records, `- path — summary` routes, front matter dates), "
                            "`pmem` (its own `## path` records and `[Title](path)` routes), or `auto`: the "
                            "dialect the root already uses, v0.10 when it shows none.")

    @field_validator("select", "ignore")
    @classmethod
    def _codes(cls, value: list[str]) -> list[str]:
        out = [v.strip().upper() for v in value]
        # Named as written, not upper-cased: a value quoted is masked if it is a likely secret,
        # and an upper-cased token (`GHP_…`) would no longer look like one.
        bad = [v.strip() for v, code in zip(value, out, strict=True) if not _CODE_PREFIX.match(code)]
        if bad:
            raise ValueError(f"not a rule code or prefix: {', '.join(bad)}")
        codes = _rule_codes()
        unknown = [v for v in out if not any(code.startswith(v) for code in codes)]
        if unknown:  # `PM9` would select nothing, and a check would say "No problems"
            raise ValueError(f"no rule has the code or prefix {', '.join(unknown)} (the rules: {_code_ranges(codes)})")
        return out

    @field_validator("severity")
    @classmethod
    def _severity_codes(cls, value: dict[str, Severity]) -> dict[str, Severity]:
        bad = [k for k in value if not re.fullmatch(r"PM\d{3}", k.upper())]
        if bad:
            raise ValueError(f"not a rule code: {', '.join(bad)}")
        codes = _rule_codes()
        unknown = [k for k in value if k.upper() not in codes]
        if unknown:
            raise ValueError(f"no rule has the code {', '.join(unknown)} (the rules: {_code_ranges(codes)})")
        return {k.upper(): v for k, v in value.items()}



def _rule_codes() -> list[str]:
    """Every rule code, in order (the catalogue, imported when settings name codes)."""
    from .catalogue import RULES

    return list(RULES)


def _code_ranges(codes: list[str]) -> str:
    """`PM001–PM007, PM100–PM107, …`: the codes as runs of consecutive numbers."""
    runs: list[list[str]] = []
    for code in codes:
        if runs and int(code[2:]) == int(runs[-1][-1][2:]) + 1:
            runs[-1].append(code)
        else:
            runs.append([code])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _canonical(raw: dict[str, Any], top: bool = True, spelled: dict[str, str] | None = None) -> dict[str, Any]:
    """One spelling per key (the editor's camelCase), so that `max_bytes` in `.pmem.toml` and
    `maxBytes` from the editor are the same key when merged. Rule codes are left alone.
    `spelled` gets each respelled key's spelling in the file, for the error that names it."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = _camel(key) if isinstance(key, str) else key
        if spelled is not None and name != key:
            spelled.setdefault(name, key)
        if isinstance(value, dict) and name != "severity":
            value = _canonical(value, top=False, spelled=spelled)
        out[name] = value
    return out


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _describe(err: ValidationError, source: str, spelled: dict[str, str] | None = None) -> str:
    """The errors, each key as the file spells it (an unknown key respelled in camelCase would
    hide a token's shape from the masking SettingsError does)."""
    parts = []
    for e in err.errors():
        loc = ".".join(str((spelled or {}).get(p, p) if isinstance(p, str) else p) for p in e["loc"]) or "(top level)"
        parts.append(f"{loc}: {e['msg']}")
    return f"{source}: " + "; ".join(parts)


def read_settings_file(root: Path) -> dict[str, Any]:
    """The raw table from `<root>/.pmem.toml`, `{}` when there is none."""
    path = root / SETTINGS_FILE
    try:
        # Non-blocking: a FIFO put there must not hang every pmem command (a review).
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if os.path.lexists(path):  # there, as a link to nothing: unreadable is not missing
            raise SettingsError(f"{path}: cannot be read (a symbolic link to nothing)") from None
        return {}
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        kind = os.fstat(fd).st_mode
        if stat.S_ISDIR(kind):
            raise SettingsError(f"{path}: cannot be read (a folder, not a file)")
        if not stat.S_ISREG(kind):
            raise SettingsError(f"{path}: cannot be read (not a regular file)")
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = handle.read()
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        return tomllib.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc})") from exc


def _validate(raw: dict[str, Any], source: str, spelled: dict[str, str] | None = None) -> Settings:
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        raise SettingsError(_describe(exc, source, spelled)) from exc


def resolve_settings(root: Path, overrides: dict[str, Any] | None = None,
                     overrides_source: str = "editor settings") -> Settings:
    """`.pmem.toml` in the root, then the editor's or command line's overrides on top.

    Each source is validated on its own first, so an error names where the bad key is.
    """
    spelled: dict[str, str] = {}
    raw = _canonical(read_settings_file(root), spelled=spelled)
    settings = _validate(raw, str(root / SETTINGS_FILE), spelled)
    if not overrides:
        return settings
    over = _canonical(overrides, spelled=spelled)
    _validate(over, overrides_source, spelled)
    return _validate(_deep_merge(raw, over), "settings", spelled)


def settings_from_text(text: str, source: str = SETTINGS_FILE) -> Settings:
    """The settings a `.pmem.toml` text holds (SettingsError, a ValueError, when it holds none)."""
    try:
        raw = tomllib.loads(text.lstrip("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{source}: not valid TOML ({exc})") from exc
    spelled: dict[str, str] = {}
    return _validate(_canonical(raw, spelled=spelled), source, spelled)
