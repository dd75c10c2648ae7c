# The README's two commands are `make run` and `make test`; CI runs `.ci/run` = `make test`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: run demo test lint bench setup clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,mcp,serve,embed,postgres]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/memstrata serve --port $${PORT:-8765}

demo: $(STAMP)
	$(BIN)/memstrata demo

test: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/memstrata bench ops
	$(BIN)/memstrata bench search
	$(BIN)/memstrata bench locomo ../shared/data/locomo10_dev.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
