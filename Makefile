# Set up and run ralph-desk. `make demo` opens the app on the demo project; `make test` runs everything.
# Each step is skipped when its inputs have not changed since it last ran.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
NPM_DIR := tools/npm

.PHONY: venv install npm demo test lint clean

venv: $(BIN)/python

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,postgres]'
	touch $@

# The external CLIs some tests drive (Claude Code, MCP Inspector, conformance); those tests skip without them.
npm:
	@if [ -f $(NPM_DIR)/package.json ]; then \
		if [ ! -f $(NPM_DIR)/node_modules/.ci-stamp ] \
			|| [ $(NPM_DIR)/package.json -nt $(NPM_DIR)/node_modules/.ci-stamp ] \
			|| [ $(NPM_DIR)/package-lock.json -nt $(NPM_DIR)/node_modules/.ci-stamp ]; then \
			npm ci --prefix $(NPM_DIR) --no-audit --no-fund --loglevel=error && touch $(NPM_DIR)/node_modules/.ci-stamp; \
		fi; \
	fi

demo: install
	$(BIN)/ralph-desk

test: install npm
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q
	$(MAKE) lint

lint: install
	$(BIN)/ruff check
	$(BIN)/mypy
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) $(NPM_DIR)/node_modules .pytest_cache .mypy_cache .ruff_cache
