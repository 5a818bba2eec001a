"""What the native core mirrors of the Python code, per use, and the digest of each (docs/native.md).

The core (native/) answers some questions the Python code answers, and some of its answers are
verdicts of "nothing here" that make a rule return early. When the Python side of such a pair
changes and the Rust side does not, the core would hide what the new Python code finds. So:

- `MIRRORS` names, per use (a "group"), every Python function, pattern and table its Rust twin
  follows, and that twin (file and function);
- native_mirrors.json, generated from it (`python -m pmem_lsp.engine.native_mirrors`), holds the
  SHA-256 of each group's Python source as committed;
- the build carries, per group, the digest its Rust was written for (`WRITTEN_FOR_<GROUP>`);
- at run time pmem_lsp/engine/native.py compares the build's digests with native_mirrors.json
  only (no source is read: that would cost every start, `pmem --version` and hooks included)
  and uses the core for a group only where they are equal;
- tests/engine/test_native_mirrors.py, which needs no Rust, recomputes the digests from the
  source and fails on any change, naming the Rust twin to check. So a changed function fails
  `make test` on every machine, and once its digest is written the built core steps aside for
  that group until its Rust twin is checked and `WRITTEN_FOR_<GROUP>` set to the same digest.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

JSON_PATH = Path(__file__).with_name("native_mirrors.json")

_E = "pmem_lsp.engine"
# group -> (the Rust twin, who uses the core for it, the Python names it mirrors as
# "module:attribute.path").
MIRRORS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "blocks": (
        "native/src/lib.rs: scan_fast (fast_part, and file_record's block scan)",
        "engine/markdown.py (scan_blocks), engine/memory_file.py (the record)",
        tuple(f"{_E}.markdown:{n}" for n in (
            "_fast_part", "_cut", "_quote_line", "_inline_start", "_thematic", "_fence_open", "_RE_ATX",
            "_RE_FENCE_RUN", "_RE_CLOSING_FENCE", "_RE_SETEXT", "_RE_THEMATIC_LINE", "_RE_ORDERED",
            "_RE_ATX_TRAILING_ONLY", "_RE_ATX_TRAILING", "_SPECIAL_START", "_HTML_OPEN", "_KINDS"))),
    "record": (
        "native/src/record.rs: file_record (split_lines, front_matter_end, Doc::preamble, metadata_line, "
        "links, find_links, refdef, mask_code_spans, summary, dates; links None where the text holds `$` and `](`)",
        "engine/memory_file.py (MemoryFile.__init__)",
        (f"{_E}.line_index:split_lines", f"{_E}.memory_file:_front_matter_end",
         f"{_E}.memory_file:MemoryFile._preamble",
         f"{_E}.memory_file:MemoryFile._leads_in", f"{_E}.memory_file:MemoryFile._skip_blank_and_comments",
         f"{_E}.memory_file:parse_metadata_line", f"{_E}.memory_file:MemoryFile.links",
         f"{_E}.memory_file:find_links", f"{_E}.memory_file:reference_definition",
         # not mirrored: the core hands a text holding `$` over, since these mask its math
         f"{_E}.memory_file:MemoryFile._math_masks", f"{_E}.memory_file:mask_math",
         f"{_E}.memory_file:_inline_math_end",
         f"{_E}.memory_file:mask_code_spans", f"{_E}.memory_file:MemoryFile.section_of",
         f"{_E}.memory_file:MemoryFile.section_end", f"{_E}.memory_file:MemoryFile.summary_headings",
         f"{_E}.memory_file:MemoryFile.summary", f"{_E}.memory_file:MemoryFile.date_fields",
         f"{_E}.memory_file:SUMMARY_TITLES", f"{_E}.memory_file:_RE_METADATA", f"{_E}.memory_file:RE_INLINE_LINK",
         f"{_E}.memory_file:_RE_REFDEF", f"{_E}.memory_file:_RE_FRONT_DATE", f"{_E}.memory_file:_RE_LEGACY_DATE")),
    "summary": (
        "native/src/record.rs: summary_clean, is_placeholder_ascii (the record's `summary_clean` verdict)",
        "engine/rules/summary.py (check_summary returns early)",
        (f"{_E}.rules.summary:check_summary", f"{_E}.rules.summary:is_placeholder", f"{_E}.rules.summary:_PLACEHOLDERS",
         f"{_E}.rules.summary:_RE_PLACEHOLDER_PREFIX", f"{_E}.rules.summary:_RE_ANGLE_PLACEHOLDER",
         f"{_E}.memory_file:SUMMARY_TITLES")),
    "concluded": (
        "native/src/record.rs: bullets_unconcluded (the record's verdict)",
        "engine/rules/concluded.py (PM502 skips the Summary's bullets)",
        (f"{_E}.rules.concluded:concluded_line", f"{_E}.rules.concluded:_concluded_bullet",
         f"{_E}.rules.concluded:_EN_BULLET", f"{_E}.rules.concluded:_ZH_BULLET")),
    "pointers": (
        "native/src/record.rs: absolute_hint (the record's verdict)",
        "engine/rules/source_paths.py (PM403's first test)",
        (f"{_E}.rules.source_paths:source_pointers", f"{_E}.rules.source_paths:_ABSOLUTE_HINT")),
    "link_targets": (
        "native/src/record.rs: link_targets, normalize_target, normpath",
        "engine/rules/broken_links.py (PM402's link paths)",
        (f"{_E}.rules.broken_links:_link_paths", f"{_E}.rules.broken_links:_python_path",
         f"{_E}.rules.broken_links:is_wikilink_text", f"{_E}.paths:normalize_target",
         f"{_E}.paths:strip_fragment", f"{_E}.paths:_SCHEME", f"{_E}.paths:_DRIVE")),
    "pm404": (
        "native/src/lib.rs: has_anchor, instruction_candidate (instruction_lines, and file_record's candidates)",
        "engine/rules/instructions.py (PM404's candidate lines)",
        (f"{_E}.rules.instructions:instruction_kinds", f"{_E}.rules.instructions:_blank",
         f"{_E}.rules.instructions:mask_code_spans", f"{_E}.rules.instructions:_LINK_TEXT",
         f"{_E}.rules.instructions:_QUOTED", f"{_E}.rules.instructions:_PATTERNS")),
    "sketch": (
        "native/src/lib.rs: sketch_hashes, sketch_hashes_wide (is_wide_sketch_char); "
        "native/src/record.rs: sketch (SKETCH_MIN_LINE, SKETCH_COUNT)",
        "engine/rules/duplicates.py (the near-duplicate sketch)",
        (f"{_E}.rules.duplicates:_ascii_hashes", f"{_E}.rules.duplicates:_build_sketch",
         f"{_E}.rules.duplicates:MIN_LINE", f"{_E}.rules.duplicates:SKETCH",
         f"{_E}.rules.duplicates:_ODD_ASCII_SPACE")),
    "shingles": (
        "native/src/lib.rs: text_shingles, is_shingle_break, is_cjk_break, is_cjk_word "
        "(word_shingles hashes the Python's words), "
        "Shingles (text_shingle_array, word_shingle_array: len and common for similarity)",
        "engine/rules/duplicates.py (the near-duplicate shingles)",
        (f"{_E}.rules.duplicates:_build_shingles", f"{_E}.rules.duplicates:similarity", f"{_E}.rules.duplicates:_TOKEN",
         f"{_E}.rules.duplicates:_CJK", f"{_E}.rules.duplicates:MIN_WORDS")),
    "pm208": (
        "native/src/lib.rs: volatile_candidates (PM208_PATTERNS)",
        "engine/rules/route_facts.py (PM208's prefilter)",
        (f"{_E}.rules.route_facts:volatile_kinds", f"{_E}.rules.route_facts:_route_facts",
         f"{_E}.rules.route_facts:VOLATILE", f"{_E}.rules.route_facts:_may_state",
         f"{_E}.rules.route_facts:_PR_WORDS")),
    "routes": (
        "native/src/routes.rs: link_route, wiki_route, inline_link_route, angle_route, code_route, "
        "description, plain_path, plain_spaced_path, ends_in_md",
        "engine/index_routes.py (parse_route_text)",
        (f"{_E}.index_routes:parse_route_text", f"{_E}.index_routes:_CORE_FORMS",
         f"{_E}.index_routes:read_route_text", f"{_E}.index_routes:_match_target",
         f"{_E}.index_routes:_unwrap_emphasis", f"{_E}.index_routes:_description", f"{_E}.index_routes:_SEPARATORS",
         f"{_E}.index_routes:_RE_WIKI", f"{_E}.index_routes:_RE_ANGLE", f"{_E}.index_routes:_RE_CODE",
         f"{_E}.index_routes:_code_target", f"{_E}.memory_file:RE_INLINE_LINK", f"{_E}.paths:normalize_target",
         f"{_E}.paths:_normal", f"{_E}.paths:strip_fragment", f"{_E}.paths:unescape_bytes",
         f"{_E}.paths:_SCHEME", f"{_E}.paths:_DRIVE")),
    "secrets": (
        "native/src/secrets.rs: doors, line_mask, line_doors, fold "
        "(secrets_clear, secret_doors_lines, and the record's verdict and doors)",
        "engine/rules/secrets.py (PM401 returns early)",
        tuple(f"{_E}.{n}" for n in (
            "secrets:find_secrets", "secrets:_find_secrets", "secrets:_joined", "secrets:find_in_name",
            "secrets:_key_named", "secrets:_RUN_TABLE", "secrets:_RUN", "rules.secrets:check_secrets",
            "rules.secrets:_in_linked_paths", "rules.secrets:_LINKED_PATH", "secrets._markup:fold",
            "secrets._markup:_clusters", "secrets._markup:may_hold", "secrets._markup:_PIECE",
            "secrets._disguise:fold", "secrets._disguise:disguised", "secrets._disguise:joins",
            "secrets._disguise:_BREAK", "secrets._disguise:_TAIL", "secrets._disguise:_HEAD",
            "secrets._disguise:_FOLD", "secrets._disguise:INVISIBLE", "secrets._disguise:MIN_JOINED",
            "secrets._pem:find_pem", "secrets._pem:find_putty", "secrets._pem:_BEGIN", "secrets._pem:_PUTTY",
            "secrets._gate:PureGate.scan", "secrets._generic:PREFILTER"))),
}


def _text(value: Any) -> str:
    """What a mirrored object contributes to its group's digest: a function's source, a
    pattern's source and flags, a table's sorted items."""
    value = getattr(value, "func", value)  # `once` and cached_property hold the function
    if isinstance(value, re.Pattern) or type(value).__name__ == "_Lazy":  # lazy_re's stand-in compiles here
        return f"{value.pattern!r}/{value.flags}"
    if inspect.isfunction(value) or inspect.ismethod(value):
        return inspect.getsource(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_text(v)}" for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(value, (set, frozenset)):
        return repr(sorted(value, key=repr))
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_text(v) for v in value) + ")"
    return repr(value)


def resolve(name: str) -> Any:
    module, _, path = name.partition(":")
    value: Any = importlib.import_module(module)
    for part in path.split("."):
        value = inspect.getattr_static(value, part) if inspect.isclass(value) else getattr(value, part)
    return value


def current_digests() -> dict[str, str]:
    """The digest of each group's Python source as it is now (imports the engine)."""
    return {group: hashlib.sha256("\n".join(_text(resolve(n)) for n in names).encode()).hexdigest()
            for group, (_, _, names) in MIRRORS.items()}


def committed_digests() -> dict[str, str]:
    """The digests native_mirrors.json holds (cheap: no engine module is imported)."""
    with JSON_PATH.open(encoding="utf-8") as f:
        return {group: entry["digest"] for group, entry in json.load(f).items()}


def write() -> None:
    digests = current_digests()
    data = {group: {"digest": digests[group], "rust": rust, "used_by": used_by, "python": list(names)}
            for group, (rust, used_by, names) in MIRRORS.items()}
    JSON_PATH.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":  # python -m pmem_lsp.engine.native_mirrors: write the digests
    write()
    sys.stdout.write(f"wrote {JSON_PATH}\n")
