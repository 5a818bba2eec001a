"""The compiled gate (the optional extra `pmem-lsp[fast]`): every probe of `_gate.PROBES` in
one hyperscan database, so a text is scanned once whatever the number of keywords. It gives
exactly what `_gate.PureGate` gives (`tests/engine/test_secrets_gate.py` runs both); without
hyperscan, importing this module raises ImportError and the pure gate is used."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import hyperscan  # type: ignore[import-not-found,unused-ignore]

from ._gate import GENERIC_ASCII, GENERIC_CJK, PROBES, Gate

_WORDS = (*GENERIC_ASCII, *GENERIC_CJK)  # after the probes, in PREFILTER's order


class CompiledGate(Gate):
    name = "compiled"

    def __init__(self) -> None:
        self.n_probes = len(PROBES)
        self.sizes = [p.size for p in PROBES] + [len(w.encode()) for w in _WORDS]
        expressions = [p.pattern.encode() for p in PROBES] + [re.escape(w).encode() for w in _WORDS]
        # ASCII case folding only, as `bytes.lower` does for the pure gate.
        flags = [0] * len(PROBES) + [hyperscan.HS_FLAG_CASELESS if w.isascii() else 0 for w in _WORDS]
        self.db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self.db.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions),
                        flags=flags)
        self.local = threading.local()  # a scratch space per thread: the server checks in workers

    def scan(self, data: bytes, text: str, n_lines: int, tokens: bool = True,
             lowered: bytes | None = None) -> tuple[Sequence[Sequence[int]], dict[int, list[str]]]:
        # One pass finds the probes with the words (case folded by hyperscan): `tokens` (the
        # caller's hint that no line can hold a token) and `lowered` save nothing here.
        out: list[list[int]] = [[] for _ in PROBES]
        words: list[tuple[int, int]] = []  # (start, word index)
        sizes, n_probes = self.sizes, self.n_probes

        def found(i: int, _from: int, to: int, _flags: int, _context: object) -> None:
            # Every probe and word has a fixed width: its end gives its start.
            if i < n_probes:
                out[i].append(to - sizes[i])
            else:
                words.append((to - sizes[i], i - n_probes))

        if data:
            scratch = getattr(self.local, "scratch", None)
            if scratch is None:
                scratch = self.local.scratch = hyperscan.Scratch(self.db)
            self.db.scan(data, match_event_handler=found, scratch=scratch)
        for starts in out:  # most are empty: a length test, not a sort call, for those
            if len(starts) > 1:
                starts.sort()
        on_line: dict[int, set[int]] = {}
        ln = at = 0
        for start, w in sorted(words):
            ln += data.count(b"\n", at, start)
            at = start
            on_line.setdefault(ln, set()).add(w)
        candidates = {ln: [_WORDS[w] for w in sorted(ws)] for ln, ws in on_line.items()}
        return out, candidates
