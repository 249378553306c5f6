# The two commands a new machine needs: `make demo` and `make test`. Everything else is a step of those.
SHELL := /bin/bash
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)
INSTALLED := $(VENV)/.dashdock-installed
TEST_INSTALLED := $(VENV)/.dashdock-test-installed
FRONTEND_SOURCES := $(shell find src style schema -type f 2>/dev/null) package.json tsconfig.json

.PHONY: demo test test-fast test-ts test-server test-ui bench install test-deps build chromium lint clean

## make demo: install, then run JupyterLab with dashdock and a real LocalCluster doing sample work
demo: build
	$(BIN)/python demo/run_demo.py

## make test: install what the tests need (Chromium included) and run every test
# Two runs: the server suite uses pytest-jupyter's event loop, the browser suite playwright's.
# Each a test file per xdist worker at a time (files share their module fixtures). The server
# suite waits on clusters and restarts more than it computes (a third of the CPU idle on two
# workers), so it runs on four: 386 s against 520 s on two. The browser suite keeps the two
# cores busy (Chromium, Lab, the sample cluster its controller runs for all of them: ui-tests/
# conftest.py), so it runs on two.
# Each suite prints its time; pytest prints its 15 slowest tests (addopts in pyproject.toml).
PYTEST := $(BIN)/python -m pytest -p no:cacheprovider --dist loadfile
SERVER_PYTEST := $(PYTEST) -n 4
UI_PYTEST := $(PYTEST) -n 2
test: build test-deps chromium test-ts
	@start=$$(date +%s); $(SERVER_PYTEST) tests; status=$$?; \
	  echo "server suite: $$(( $$(date +%s) - start )) s"; exit $$status
	@start=$$(date +%s); $(UI_PYTEST) ui-tests; status=$$?; \
	  echo "browser suite: $$(( $$(date +%s) - start )) s"; exit $$status

## make test-fast: the inner loop: TypeScript units and the server suite without its slow tests
test-fast: build test-deps test-ts
	$(SERVER_PYTEST) -m "not slow" tests

## make test-ts: TypeScript unit tests of pure frontend modules (ts-tests/, compiled by
## tsconfig.test.json into build/ts-tests/, run by node's built-in test runner)
test-ts: build
	jlpm run test

test-server: build test-deps
	$(SERVER_PYTEST) tests

test-ui: build test-deps chromium
	$(UI_PYTEST) ui-tests

## make bench: print relay figures (direct vs dashdock vs jupyter-server-proxy when installed)
bench: build test-deps chromium
	$(BIN)/python bench/run_all.py

install: $(INSTALLED)
test-deps: $(TEST_INSTALLED)

# Once the extension is linked, a reinstall writes the wheel's install.json through the link into
# the build, and the next reinstall then finds two files for one path in the wheel and fails.
DEVELOP_COPY := dashdock/labextension/install.json

# A virtual environment with dashdock installed in development mode (the build compiles the
# frontend with jlpm, which ships with jupyterlab) and the lab extension linked into it: what
# `make demo` runs, nothing more.
$(INSTALLED): pyproject.toml package.json yarn.lock
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "jupyterlab>=4.1,<5" "hatchling>=1.5" "hatch-jupyter-builder>=0.5" editables
	rm -f $(DEVELOP_COPY)
	$(BIN)/pip install -q --no-build-isolation -e .
	$(BIN)/jupyter labextension develop --overwrite . >/dev/null
	touch $@

# What the tests, linters and benchmarks need besides (pytest, playwright, a real JupyterHub, ...).
$(TEST_INSTALLED): pyproject.toml | $(INSTALLED)
	rm -f $(DEVELOP_COPY)
	$(BIN)/pip install -q --no-build-isolation -e ".[test]"
	touch $@

# Rebuild the frontend when its sources change (the editable install built it once already).
build: $(INSTALLED) dashdock/labextension/package.json

dashdock/labextension/package.json: $(FRONTEND_SOURCES) | $(INSTALLED)
	jlpm install --immutable
	jlpm build
	touch $@

# Browser downloads are blocked here: the UI tests drive Debian's Chromium through playwright.
chromium:
	@command -v chromium >/dev/null || { \
	  echo "Installing Chromium from Debian's packages (needs root)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

lint: build test-deps
	$(BIN)/ruff check dashdock tests ui-tests bench demo
	$(BIN)/ruff format --check dashdock tests ui-tests bench demo
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_layout.py
	node_modules/.bin/tsc --noEmit -p .
	node_modules/.bin/tsc --noEmit -p tsconfig.test.json
	jlpm run lint:check

clean:
	rm -rf lib dashdock/labextension tsconfig.tsbuildinfo build/ts-tests node_modules $(VENV)
