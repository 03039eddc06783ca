# Two commands on a fresh machine with Python 3.11 and make: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DATA   ?= ./data
PORT   ?= 8000

# Python keeps its compiled bytecode (__pycache__) even where the environment says not to (PYTHONDONTWRITEBYTECODE=1
# on this project's machines): otherwise every test worker, `caie` subprocess and served front compiles the service
# and its libraries from source again, about 3 s of a core each (docs/performance.md, "Test suite wall time").
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run screenshots lint test test-engines test-hostile bench bench-sparql wrk browser strace virtuoso clean

# uv installs the same packages as pip from the same index, in about a fifth of the time (docs/performance.md).
# The vaccine-education domain is a plugin package of its own (examples/vaccine, docs/architecture.md), installed
# next to the engine: the worked example, its checks and its demonstration chatbot come from it. The bed-nets domain
# (examples/bednets, the second worked example) is one too, for its own check: tests judge through its entry point.
# The environment has uv and no pip: installed by the interpreter's own pip (3 s, where a venv with pip and pip's
# upgrade took 10 s of a fresh clone's `make test`); an interpreter without pip gets a venv with pip instead.
$(STAMP): pyproject.toml examples/vaccine/pyproject.toml examples/bednets/pyproject.toml
	$(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install --quiet uv 2>/dev/null \
		|| ($(PYTHON) -m venv --clear $(VENV) && $(BIN)/pip install --quiet uv)
	$(BIN)/uv pip install --python $(BIN)/python --quiet -e '.[test]' -e examples/vaccine -e examples/bednets
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/caie serve --data-dir $(DATA) --port $(PORT) --examples

# The workspace pages' screenshots in docs/images/workspace/ (docs/workspace.md): the worked example served as by
# `make run`, in a temporary directory, each page opened in Chromium by the person who acts there; about 4 minutes.
screenshots: $(STAMP) browser
	$(BIN)/python docs/screenshots.py

# Page tests drive a real Chromium (Debian's package) with Playwright (a [test] extra, launched on it: no browser
# download); install it when it is missing.
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

# strace holds fast-lane fronts before they are ready (tests/api/test_restart.py); install it when it is missing.
strace:
	@command -v strace >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq strace >/dev/null)

# What the page tests inject into pages: axe-core, pinned in tests/js/package-lock.json (npm ci; node_modules is not
# committed). Node.js and npm from Debian when they are missing.
JS_STAMP := tests/js/node_modules/.package-lock.json
$(JS_STAMP): tests/js/package.json tests/js/package-lock.json
	@command -v npm >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null)
	npm ci --prefix tests/js --no-audit --no-fund --silent

# Remote-store tests also run on a real Virtuoso 7: Debian's binaries (virtuoso-t, isql-vt) at 7.2.5.1. Only the
# -bin package: the full virtuoso-opensource-7 would also register and start a system-wide server on 1111/8890;
# the tests start their own (tests/virtuoso.py, docs/stores.md). Install it when it is missing.
virtuoso:
	@command -v virtuoso-t >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq virtuoso-opensource-7-bin >/dev/null)

# The checked code (docs/architecture.md): ruff's lint and format check over the tree, mypy strict on service/ (its
# settings in pyproject.toml). The import contract (layers, no cycles) is a test: tests/test_import_contract.py.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Two pytest workers (pytest-xdist), a test file each at a time, the longest first (tests/scheduling.py): the machine
# has two cores and many tests wait on servers (oxigraph, Virtuoso, Chromium, caie serve). Session fixtures are per
# worker.
# The lint runs first (ruff takes a second); mypy (about 20 s of a core from cold) runs beside the tests, its verdict
# read when they end, so a type error fails the run without making it longer. Its incremental cache is kept in the
# user's cache directory, as a CI's cache would be: mypy checks every file's hash against it, so a fresh clone of
# unchanged files is checked in a few seconds and a changed file is checked again.
MYPY_CACHE_DIR ?= $(HOME)/.cache/ob-caie/mypy
export MYPY_CACHE_DIR
test: $(STAMP) browser strace $(JS_STAMP) virtuoso
	$(BIN)/ruff check --quiet .
	$(BIN)/ruff format --check --quiet .
	$(BIN)/mypy > .mypy.out 2>&1 & mypy=$$!; \
	$(BIN)/pytest -q -n 2 --dist loadfile --no-loadscope-reorder; tests=$$?; \
	wait $$mypy; typed=$$?; cat .mypy.out; rm -f .mypy.out; \
	test $$tests -eq 0 && test $$typed -eq 0

# Every test on a remote store (oxigraph serve and Virtuoso: the `store` fixture's remote parameters) and the
# whole-service runs on Virtuoso (the worked example compared with the embedded store, a 50,000-triple write,
# kill -9 mid-write): apart from `make test` to keep it under 420 s; CI runs both (.ci/run).
test-engines: $(STAMP) virtuoso
	$(BIN)/pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m engines

# Every attack of issue 23 against a live `caie serve` (tests/hostile, docs/protection.md "Hostile tests"), /health
# timed throughout, and schemathesis's coverage phase (docs/api.md): a few minutes, apart from `make test` to keep it
# under 420 s.
test-hostile: $(STAMP)
	$(BIN)/pytest -q -m hostile

bench: $(STAMP)
	$(BIN)/python bench/load_graph.py

# SPARQL under load (docs/performance.md): our /sparql against oxigraph serve, driven by Debian's wrk.
wrk:
	@command -v wrk >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq wrk >/dev/null)

bench-sparql: $(STAMP) wrk
	$(BIN)/python bench/sparql_load.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis tests/js/node_modules test-artifacts
