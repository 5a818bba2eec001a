"""The `exclude` setting's globs, matched in time linear in a path's length.

A glob is read as a sequence of tokens: a literal character, `?` (one character, not `/`),
`*` (any characters but `/`), `**/` (nothing, or anything ending in `/`) and `**` not followed
by `/` (anything at all). Trailing `/` are dropped, and a path matches when the glob matches
it whole or a leading part of it followed by `/` (a folder covers everything in it).

The tokens are matched by an automaton, never by a backtracking regular expression: a
pattern such as `**/**/**/**/**/**/**/**/drafts` or `**/d/**/d/**/d/**/d/**/x` takes
exponential or high-polynomial time in `re` on a deep path. Here the whole set of globs is one
NFA whose state sets are computed lazily and remembered (a DFA built as paths need it), so a
path costs one dictionary look-up per character, whatever the patterns.
"""

from __future__ import annotations

_LIT, _ONE, _STAR, _ANY, _DIRS = range(5)  # token kinds, which are NFA state kinds too
_INNER, _END, _REST = range(5, 8)  # NFA state kinds only
_UNBOUNDED = (_STAR, _ANY, _DIRS)  # may match nothing: a state of this kind leads on unread


def _glob_tokens(glob: str) -> list[tuple[int, str]]:
    """`(kind, character)` tokens of one glob; runs of `*`/`**` that mean the same are one."""
    glob = glob.strip().removeprefix("./")
    tokens: list[tuple[int, str]] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            token, i = (_DIRS, ""), i + 3
        elif glob.startswith("**", i):
            token, i = (_ANY, ""), i + 2
        elif glob[i] == "*":
            token, i = (_STAR, ""), i + 1
        elif glob[i] == "?":
            token, i = (_ONE, ""), i + 1
        else:
            token, i = (_LIT, glob[i]), i + 1
        if tokens and token[0] in _UNBOUNDED and tokens[-1][0] in _UNBOUNDED:
            # `**/**/` = `**/`, `*` `*` = `*`, and `**` next to any of them is just `**`.
            if token[0] == _ANY or tokens[-1][0] == _ANY:
                tokens[-1] = (_ANY, "")
                continue
            if token == tokens[-1]:
                continue
        tokens.append(token)
    while tokens and tokens[-1] == (_LIT, "/"):
        tokens.pop()
    return tokens


class _DState:
    """A set of NFA states, with the transitions out of it found so far."""

    __slots__ = ("nfa", "next", "accept", "final")

    def __init__(self, nfa: frozenset[int], accept: bool, final: bool | None) -> None:
        self.nfa = nfa
        self.next: dict[str, _DState] = {}
        self.accept = accept
        self.final = final  # True: every longer path matches; False: none does; None: read on


class GlobSet:
    """Does a root-relative path match any of some exclude globs? Linear in the path's length."""

    # Forget the remembered state sets when they hold this many NFA states in all, so that
    # memory stays bounded whatever the patterns and paths (each step adds at most one set).
    _MAX_SIZE = 1 << 16

    def __init__(self, globs: list[str]) -> None:
        # NFA states, one entry in each list: kind, literal character, next state and, for
        # `**/`, its inner state. Kinds are the token kinds, plus _INNER (inside `**/`, which
        # then must end with `/`), _END (the glob matched; only `/` may follow) and _REST
        # (after that `/`: anything goes, the path matches).
        self._kind: list[int] = []
        self._char: list[str] = []
        self._to: list[int] = []
        self._inner: list[int] = []
        starts = []
        for glob in globs:
            tokens = _glob_tokens(glob)
            base = len(self._kind)
            end = base + len(tokens)
            starts.append(base)
            inners = []
            for n, (kind, char) in enumerate(tokens):
                self._add(kind, char, base + n + 1)
                if kind == _DIRS:
                    inners.append(base + n)
            self._add(_END, "", end + 1)
            self._add(_REST, "", end + 1)
            for state in inners:  # `**/`: once it has read a character, it must end with `/`
                inner = self._add(_INNER, "", self._to[state])
                self._inner[state] = self._inner[inner] = inner
        self._start_set = self._closure(starts)
        self._reset()

    def _add(self, kind: int, char: str, to: int) -> int:
        self._kind.append(kind)
        self._char.append(char)
        self._to.append(to)
        self._inner.append(-1)
        return len(self._kind) - 1

    def _closure(self, states: list[int]) -> frozenset[int]:
        """`states` and all the states reachable from them without reading a character."""
        seen = set(states)
        todo = list(states)
        while todo:
            state = todo.pop()
            if self._kind[state] in _UNBOUNDED and self._to[state] not in seen:
                seen.add(self._to[state])
                todo.append(self._to[state])
        return frozenset(seen)

    def _reset(self) -> None:
        self._dstates: dict[frozenset[int], _DState] = {}
        self._size = 0
        self._start = self._dstate(self._start_set)

    def _dstate(self, nfa: frozenset[int]) -> _DState:
        found = self._dstates.get(nfa)
        if found is None:
            kinds = [self._kind[s] for s in nfa]
            final = True if _REST in kinds else (False if not nfa else None)
            found = self._dstates[nfa] = _DState(nfa, _END in kinds or _REST in kinds, final)
            self._size += len(nfa) + 1
        return found

    def _step(self, dstate: _DState, ch: str) -> _DState:
        out: list[int] = []
        slash = ch == "/"
        for state in dstate.nfa:
            kind, to = self._kind[state], self._to[state]
            if kind == _LIT:
                if ch == self._char[state]:
                    out.append(to)
            elif kind == _ONE:
                if not slash:
                    out.append(to)
            elif kind == _STAR:
                if not slash:
                    out.append(state)
            elif kind in (_ANY, _REST):
                out.append(state)
            elif kind in (_DIRS, _INNER):
                out.append(self._inner[state])
                if slash:
                    out.append(to)
            elif kind == _END:
                if slash:
                    out.append(to)
        if self._size >= self._MAX_SIZE:
            self._reset()
        nxt = self._dstate(self._closure(out))
        dstate.next[ch] = nxt
        return nxt

    def match(self, rel: str) -> bool:
        dstate = self._start
        for ch in rel:
            dstate = dstate.next.get(ch) or self._step(dstate, ch)
            if dstate.final is not None:
                return dstate.final
        return dstate.accept


