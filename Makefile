# Chronicle: `make run` serves the API on the embedded store; `make test` runs every test
# on SQLite and (when it can be had) PostgreSQL; `make lint`; `make bench`.

VENV ?= .venv
PYTHON ?= python3
HOST ?= $(or $(CHRONICLE_HOST),127.0.0.1)
PORT ?= $(or $(CHRONICLE_PORT),8000)

# The PostgreSQL that `make test` starts (if installed) and tests against.
PG_HOST ?= 127.0.0.1
PG_PORT ?= 5432
PG_USER ?= postgres
PG_TEST_DB ?= chronicle_test
TEST_DATABASE_URL ?= postgresql://$(PG_USER)@$(PG_HOST):$(PG_PORT)/$(PG_TEST_DB)
PYTEST_ARGS ?=
BENCH_ARGS ?=

BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.chronicle-run.stamp
DEV_STAMP := $(VENV)/.chronicle-dev.stamp

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.ONESHELL:
.DEFAULT_GOAL := help
.PHONY: help run demo test faults lint bench postgres chromium clean schema js

help:
	@echo "make run    serve the GraphQL API (GraphiQL) on http://$(HOST):$(PORT)/graphql, SQLite store in ./var"
	@echo "make demo   record the demo campaign in the store of make run (./var); prints its id and a GM token"
	@echo "make test   install dev tools into $(VENV) and run all tests on SQLite and PostgreSQL"
	@echo "make faults the heavy fault loads (tests/faults, marker faults); restarts the local PostgreSQL"
	@echo "make lint   ruff (check and format) on domain projections api tests scripts bench; mypy on domain"
	@echo "make bench  run the benchmarks in bench/ (BENCH_ARGS=\"--size 10k --store postgres\"; see bench/README.md)"
	@echo "make schema write the GraphQL schema to schema.graphql"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when pyproject.toml is newer than the stamp.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)
	@# readable logs at a terminal; deployments keep the JSON default (docs/operations.md)
	CHRONICLE_HOST=$(HOST) CHRONICLE_PORT=$(PORT) CHRONICLE_LOG_FORMAT=$${CHRONICLE_LOG_FORMAT:-text} exec $(BIN)/chronicle serve

# The README's first look: creates .venv on first use, like `make run`, and records the demo
# campaign in the same store (CHRONICLE_DATABASE_URL, default ./var).
demo: $(RUN_STAMP)
	$(BIN)/chronicle demo

# Make sure the local PostgreSQL is up and the test database exists. Prints the test
# database URL as the last line of stdout, or nothing when PostgreSQL cannot be had
# (the reason goes to stderr).
postgres:
	@if ! command -v pg_isready >/dev/null 2>&1; then echo "make: PostgreSQL is not installed" >&2; exit 0; fi
	if ! pg_isready -q -h $(PG_HOST) -p $(PG_PORT) && command -v pg_ctlcluster >/dev/null 2>&1; then
	  echo "make: starting PostgreSQL $$(ls /etc/postgresql)" >&2
	  pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start >&2 || true
	  for _ in $$(seq 30); do pg_isready -q -h $(PG_HOST) -p $(PG_PORT) && break; sleep 1; done
	fi
	if ! pg_isready -q -h $(PG_HOST) -p $(PG_PORT); then
	  echo "make: no PostgreSQL answers at $(PG_HOST):$(PG_PORT)" >&2; exit 0
	fi
	psql=(psql -h $(PG_HOST) -p $(PG_PORT) -U $(PG_USER) -d postgres -v ON_ERROR_STOP=1 -X -q)
	if ! exists=$$("$${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$(PG_TEST_DB)'"); then
	  echo "make: cannot connect to PostgreSQL at $(PG_HOST):$(PG_PORT) as $(PG_USER)" >&2; exit 0
	fi
	if [ "$$exists" != 1 ] && ! "$${psql[@]}" -c 'CREATE DATABASE "$(PG_TEST_DB)"' >&2; then
	  echo "make: cannot create database $(PG_TEST_DB)" >&2; exit 0
	fi
	echo "$(TEST_DATABASE_URL)"

# Headless Chromium for the browser tests (tests/e2e/test_export_browser.py, test_graphiql_offline.py).
# Installed with apt-get only when /usr/bin/chromium is missing and we may (root, apt-get present);
# otherwise the tests skip with their reason (and fail under CI=true). The README says so.
chromium:
	@if [ -x /usr/bin/chromium ]; then exit 0; fi
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	  echo "make: installing chromium (apt-get, as root) for the browser tests" >&2
	  apt-get update -qq >&2 || true
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2 \
	    || echo "make: could not install chromium; the browser test will skip (fail under CI=true)" >&2
	else
	  echo "make: /usr/bin/chromium is missing (install the Debian package chromium); the browser test skips" >&2
	fi

# The GraphQL schema as SDL (tests/integration/test_graphql_schema.py fails when it is stale).
schema: $(RUN_STAMP)
	$(BIN)/python -m api.graphql.export schema.graphql

# The npm GraphQL client for the e2e tests (tests/e2e/js): `npm ci` when node exists and the lock
# file is newer than the installed packages; otherwise the JS test skips (fails under CI=true).
js:
	@if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	  echo "make: node/npm not installed; the npm GraphQL client test skips" >&2; exit 0
	fi
	if [ ! -f tests/e2e/js/node_modules/.package-lock.json ] || [ tests/e2e/js/package-lock.json -nt tests/e2e/js/node_modules/.package-lock.json ]; then
	  (cd tests/e2e/js && npm ci --no-audit --no-fund --loglevel=error) >&2
	fi

# A CHRONICLE_TEST_DATABASE_URL already in the environment is used as it is.
test: $(DEV_STAMP) chromium js
	@if [ -n "$${CHRONICLE_TEST_DATABASE_URL:-}" ]; then
	  url="$$CHRONICLE_TEST_DATABASE_URL"
	else
	  url=$$($(MAKE) --no-print-directory -s postgres | tail -n 1)
	fi
	if [ -n "$$url" ]; then
	  export CHRONICLE_TEST_DATABASE_URL="$$url"
	else
	  unset CHRONICLE_TEST_DATABASE_URL
	  echo "======================================================================"
	  echo " NOTICE: PostgreSQL is not available, so the PostgreSQL half of the"
	  echo " suite is SKIPPED. To enable it: install PostgreSQL (apt-get install"
	  echo " postgresql; make test then starts it and creates $(PG_TEST_DB)), or"
	  echo " set CHRONICLE_TEST_DATABASE_URL=postgresql://USER@HOST:PORT/DBNAME."
	  echo "======================================================================"
	  if [ "$${CI:-}" = true ]; then echo "make: CI=true: PostgreSQL is required" >&2; exit 1; fi
	fi
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The heavy fault-injection loads (tests/faults, marker `faults`; `make test` runs their fast
# versions and excludes these). Needs PostgreSQL; one test restarts the local cluster
# (pg_ctlcluster), which interrupts anyone else's tests on it: run it on a machine of your own.
faults: $(DEV_STAMP)
	@if [ -n "$${CHRONICLE_TEST_DATABASE_URL:-}" ]; then
	  url="$$CHRONICLE_TEST_DATABASE_URL"
	else
	  url=$$($(MAKE) --no-print-directory -s postgres | tail -n 1)
	fi
	if [ -z "$$url" ]; then echo "make: the fault suite needs PostgreSQL (see make test)" >&2; exit 1; fi
	export CHRONICLE_TEST_DATABASE_URL="$$url"
	$(BIN)/python -m pytest -m faults -s -p no:logging tests/faults $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check domain projections api tests scripts bench
	$(BIN)/ruff format --check domain projections api tests scripts bench
	$(BIN)/mypy domain

# The benchmarks (bench/README.md): PostgreSQL as for the tests, started if needed.
bench: $(DEV_STAMP)
	@if [ -z "$${CHRONICLE_BENCH_DATABASE_URL:-}" ]; then
	  url=$$($(MAKE) --no-print-directory -s postgres | tail -n 1)
	  if [ -n "$$url" ]; then export CHRONICLE_BENCH_DATABASE_URL="$$url"; fi
	fi
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
