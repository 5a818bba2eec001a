"""The shell door: an agent running a pmem write with `--yes` or `--token` through its shell.

Every preview hands the model a ready command; the model adding `--yes` (or the token it was
given) and running it through its Bash tool would write the memory with nobody asked. The
`pre-shell` hook (Claude Code's `PreToolUse` on `Bash`) asks `confirmed_write` of the command
and blocks it; the person applies the change themselves, at their terminal.

The test is on the command's words, not on a parse of the shell's grammar: a model that reads
the refusal and tries again reaches for quoting, `sh -c`, `env`, a variable or a pipe, and a
grammar walk misses what it does not model. So the words are taken as the shell would split
them (quotes removed, operators apart, and each quoted string split again: `sh -c "pmem …"`),
and the command is a confirmed write when, in that order, a word names pmem (`pmem`,
`…/bin/pmem`, `pmem_lsp…`), a later word is a write subcommand, and some word after the pmem
one confirms it: `-y`, `--yes` or `--token` or an abbreviation argparse would take for them
(`--ye`, `--tok=…`), or a program that gives a command a terminal to answer at (`script`,
`expect`, `unbuffer`). What remains open — a name built at run time (`p=pm; ${p}em`), a
program written to a file and run, other shells — is said in agents/README.md, and history
records such writes whoever made them.
"""

from __future__ import annotations

import re
import shlex

WRITES = frozenset({"save", "route", "upgrade", "archive", "delete", "recover", "purge", "init", "migrate",
                    "undo", "restore", "setup"})
# Programs that give a command a terminal, where pmem's own prompt would take a "y" piped in.
TERMINALS = frozenset({"script", "expect", "unbuffer", "socat", "empty", "ptyrun"})
_PMEM_WORD = re.compile(r"(?:^|/)pmem(?:$|_lsp)|pmem_lsp")
_MAX_DEPTH = 4  # `sh -c "bash -c '…'"`: deep enough for any honest command


def _words(command: str, depth: int = 0) -> list[str]:
    """The command's words as the shell splits them, each quoted string split again."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = ""  # `#` inside a word is no comment to the shell either
        words = list(lexer)
    except ValueError:  # unbalanced quotes: the shell would refuse it; judge the plain words
        words = command.split()
    out: list[str] = []
    for word in words:
        if depth < _MAX_DEPTH and (any(c.isspace() for c in word) or any(c in word for c in ";&|`$(")):
            out.extend(_words(word.replace("`", " ").replace("$(", " ").replace(")", " "), depth + 1))
        else:
            out.append(word)
    return out


def _confirms(word: str, migrate: bool) -> bool:
    """Does `word` confirm a pmem write (argparse takes any unambiguous prefix of a long option)?"""
    if word == "-y" or (word.startswith("-") and not word.startswith("--") and "y" in word[1:]):
        return True
    name = word.split("=", 1)[0]
    if len(name) < 3 or not name.startswith("--"):
        return False
    if "--yes".startswith(name):
        return True
    # `--to` is migrate's own option (an exact name wins over an abbreviation); elsewhere it
    # abbreviates `--token`.
    return "--token".startswith(name) and not (migrate and name == "--to")


def _is_option(word: str, name: str) -> bool:
    """`word` is `name` or an abbreviation argparse takes for it (`--acc`), with or without `=…`."""
    given = word.split("=", 1)[0]
    return len(given) >= 4 and given.startswith("--") and name.startswith(given)


def _reviews(rest: list[str]) -> bool:
    """`pmem review --accept …` / `--all`: only the person accepts a review (docs/design.md §11),
    with or without a confirmation."""
    return "review" in rest and any(_is_option(w, "--accept") or _is_option(w, "--all") for w in rest)


def confirmed_write(command: str) -> str | None:
    """The write subcommand when `command` runs a pmem write that is confirmed without the
    person (or could be), or accepts a review; None for every other command."""
    if "pmem" not in command:
        return None  # the common case, in one substring test
    words = _words(command)
    for i, word in enumerate(words):
        if not _PMEM_WORD.search(word):
            continue
        rest = words[i + 1:]
        if _reviews(rest):
            return "review"
        write = next((w for w in rest if w in WRITES), None)
        if write is None and "history" in rest and any(_is_option(w, "--forget") for w in rest):
            write = "history --forget"
        if write is None:
            continue
        migrate = "migrate" in rest
        if any(_confirms(w, migrate) for w in rest) or any(w.rsplit("/", 1)[-1] in TERMINALS for w in words[:i]):
            return write
    return None
