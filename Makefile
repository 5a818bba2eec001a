# Quick start: `make demo` (set-up, then `pmem check` on the bundled demo memory) and
# `make test` (set-up with the test extras, then every test). Both work on a fresh machine.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_TEST := $(VENV)/.installed-test
STAMP_NATIVE := $(VENV)/.installed-native
NATIVE_SOURCES := $(wildcard native/src/*.rs) native/Cargo.toml native/Cargo.lock native/pyproject.toml native/build.sh
DEMO := examples/demo-memory

.PHONY: demo lint test test-fast test-vscode bench install install-test schemas docs clean vscode native bytecode

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The run set-up includes the MCP extra, so `make demo` gives a working `pmem mcp` too.
# `bytecode` compiles the package as `pip install` of a wheel does: an editable install leaves
# that to the first run, which never happens where PYTHONDONTWRITEBYTECODE is set (this machine
# kind sets it); every `pmem` start would then compile the package again (docs/decisions.md,
# "Bytecode at set-up").
$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[mcp]'
	$(MAKE) --no-print-directory bytecode
	touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(MAKE) --no-print-directory bytecode
	touch $@ $(STAMP_RUN)

# Only what is stale is compiled again (a second or less after an edit).
bytecode: | $(BIN)/python
	$(BIN)/python -m compileall -q pmem_lsp

install: $(STAMP_RUN) $(STAMP_NATIVE)
install-test: $(STAMP_TEST)

# The optional native core (native/, docs/native.md): an abi3 wheel built by maturin (PyPI) from
# PyO3 on crates.io, installed into the venv, wherever cargo is found. Without a Rust toolchain
# native/build.sh says so in one line and succeeds (the stamp stays unmade, so it says it again
# next time): pmem runs its pure-Python engine, with the same results. `make install` (hence
# `make demo`), `make test` and `make bench` build it when its sources changed; `make native`
# always does.
$(STAMP_NATIVE): $(NATIVE_SOURCES) | $(STAMP_RUN)
	native/build.sh $(BIN)/python $@

native: | $(STAMP_RUN)
	native/build.sh $(BIN)/python $(STAMP_NATIVE)

# The demo root holds deliberate problems, so `pmem check` exits 1 there; that is the point.
demo: $(STAMP_RUN) $(STAMP_NATIVE)
	@echo "== pmem check on $(DEMO) (it holds deliberate problems) =="
	@$(BIN)/pmem --root $(DEMO) check; status=$$?; \
	  if [ $$status -gt 1 ]; then exit $$status; fi
	@echo
	@echo "== pmem status =="
	@$(BIN)/pmem --root $(DEMO) status

# ruff over every Python file of the repository (the package, benchmarks, tests, editors' helper
# scripts; .venv and node_modules are never linted: ruff skips what .gitignore ignores); mypy
# over the package. Both are configured in pyproject.toml and pinned in the test extras.
# `make test` runs this first.
lint: $(STAMP_TEST)
	$(BIN)/ruff check .
	$(BIN)/mypy pmem_lsp

# With npm on PATH, tests/editors/test_editors_vscode.py also runs `npm ci`, build, unit tests and
# `npm run package` in editors/vscode (the .vsix lands there; node_modules and *.vsix are ignored).
test: $(STAMP_TEST) lint $(STAMP_NATIVE)
	$(BIN)/python -m pytest -q -n auto --dist loadfile

# The in-process tests only: no server, CLI or editor process (marker e2e) and no large
# generated roots (marker slow); see tests/conftest.py.
test-fast: $(STAMP_TEST)
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m "not slow and not e2e"

# The VS Code extension alone: editors/vscode/pmem-lsp-<version>.vsix.
vscode:
	cd editors/vscode && npm ci --no-audit --no-fund && npm run build && npm test && npm run package

# The extension end to end in a real VS Code (code-server 4.139 = VS Code 1.139, in Debian's
# chromium through playwright-core), on a copy of the demo memory: editors/vscode/e2e/README.md.
# Installs its tools once, version-pinned, into .cache/vscode-e2e (Debian packages with apt when
# missing, as root); prints where its screenshots are.
test-vscode: $(STAMP_RUN) vscode
	editors/vscode/e2e/run.sh

# Generated 1k and 10k roots; prints a table and writes benchmarks/results.json; then history's
# recording costs on the 10k root (benchmarks/history-results.json).
bench: $(STAMP_TEST) $(STAMP_NATIVE) bytecode
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/history_bench.py

schemas: $(STAMP_RUN)
	$(BIN)/pmem schema settings > schemas/settings.schema.json
	$(BIN)/pmem schema report > schemas/check-report.schema.json
	@# The VS Code extension's settings are generated from the settings schema.
	@if command -v node >/dev/null; then node editors/vscode/scripts/configuration.mjs; \
	  else echo "node not found: run 'npm run configuration' in editors/vscode later"; fi

docs: $(STAMP_RUN)
	$(BIN)/pmem rules --format markdown > docs/rules.md

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache .ruff_cache native/target
	rm -rf editors/vscode/node_modules editors/vscode/dist editors/vscode/out editors/vscode/*.vsix
	rm -rf .cache/vscode-e2e/run .cache/vscode-e2e/screenshots  # the e2e's tools stay cached
