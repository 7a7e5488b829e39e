# Two entry points: `make run` (main job) and `make test` (the whole check).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

.PHONY: install run test check check-postgresql bench shots-check
install: $(STAMP)

run: $(STAMP)
	$(BIN)/stratagate serve $(if $(PORT),--port $(PORT))

# `make test` first installs the Debian packages pip cannot (chromium, a CJK font, PostgreSQL);
# `make check` is the same check without touching the system.
test: $(STAMP)
	.ci/system-packages
	$(MAKE) --no-print-directory check

check: $(STAMP)
	$(BIN)/ruff format --check stratagate_plugin tests benchmarks
	$(BIN)/ruff check stratagate_plugin tests benchmarks
	$(BIN)/mypy
	BIN=$(BIN) .ci/pytest-passes

# The suite again with every memory on the private PostgreSQL server (tests/backend.py); the
# browser tests stay on SQLite (their app server starts before a test's redirection, and the
# web tests already run the same app on PostgreSQL). `check` runs it beside the SQLite pass.
check-postgresql: $(STAMP)
	$(BIN)/pytest --backend postgresql --ignore-glob='tests/test_browser_*'

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py

# Every browser test twice into two folders, every screenshot compared byte for byte.
shots-check: $(STAMP)
	PYTEST=$(BIN)/pytest .ci/shots-check
