"""Every exit status `pmem` uses, in one place (documented in the README's "The command line").

- 0: done (check: nothing at or above `--fail-on`; a write command: applied, or nothing to do;
  a "no" at the prompt);
- 1: `check` found something at or above `--fail-on`;
- 2: usage or I/O error, or a refusal (the safety contract, a stale preview);
- 3: a write command previewed and not confirmed (no `--yes`, stdin not a terminal);
- 130: interrupted (Ctrl-C) while a change was applied.
"""

OK = 0
FINDINGS = 1
ERROR = 2  # usage, I/O, or a refusal: nothing was changed
NOT_CONFIRMED = 3
INTERRUPTED = 130  # the shell's code for Ctrl-C
