# Set up and run ralph-desk. `make demo` opens the app on the demo project; `make test` runs everything.
# Each step is skipped when its inputs have not changed since it last ran.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
NPM_DIR := tools/npm

.PHONY: venv install npm demo test test-postgres lint clean wheel app package-test

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

# The suites run on every core (pytest-xdist); tests that share something a second worker would disturb
# are marked `xdist_group` and run on one worker, one after another.
PARALLEL := -n auto --dist loadgroup

test: install npm
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(PARALLEL)
	@if [ -n "$$RALPH_DESK_TEST_POSTGRES_URL" ] || .ci/postgres --check; then $(MAKE) test-postgres; \
	else echo "PostgreSQL is not installed: skipped make test-postgres (.ci/postgres installs it)"; fi
	$(MAKE) package-test
	$(MAKE) lint

# The database suites again with every test on a fresh PostgreSQL database of its own, plus
# tests/postgres: on the server at $RALPH_DESK_TEST_POSTGRES_URL, else on the one .ci/postgres starts.
POSTGRES_SUITES := tests/store tests/services tests/mcp_server tests/loop tests/postgres

test-postgres: install npm
	@url="$${RALPH_DESK_TEST_POSTGRES_URL:-}"; [ -n "$$url" ] || url="$$(.ci/postgres)" || exit 1; \
	echo "PostgreSQL suites on the server at $${url#*@}"; \
	RALPH_TEST_DB=postgres RALPH_DESK_TEST_POSTGRES_URL="$$url" QT_QPA_PLATFORM=offscreen \
		$(BIN)/python -m pytest -q $(PARALLEL) --durations=5 $(POSTGRES_SUITES)

# The installable forms: the wheel and sdist in dist/, and the one-folder app dist/ralph-desk/.
wheel: install
	$(BIN)/python -m build --outdir dist .

app: install
	bash packaging/build

# Build the wheel (into a temporary folder) and the app, then install and run both as a user would.
package-test: app
	RALPH_PACKAGING_TESTS=1 RALPH_DESK_APP=dist/ralph-desk/ralph-desk QT_QPA_PLATFORM=offscreen \
		$(BIN)/python -m pytest -q --durations=5 tests/packaging/test_wheel.py tests/packaging/test_frozen_app.py

lint: install
	$(BIN)/ruff check
	$(BIN)/mypy
	$(BIN)/mypy --platform win32  # the Windows branches (process groups, the lock)
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) $(NPM_DIR)/node_modules .pytest_cache .mypy_cache .ruff_cache build dist
