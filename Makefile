# Every target here is what CI calls; keep them the single source of truth.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
export COMPACTION_OFFLINE ?= 1

.PHONY: install demo test lint format typecheck check bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[openai,anthropic,server,dev]'

demo: install
	$(BIN)/compaction compact examples/session.json --target-ratio 0.15 -o /tmp/compaction-demo.json --receipt /tmp/compaction-demo.receipt.json
	@echo
	@echo "compacted transcript: /tmp/compaction-demo.json   receipt (with every original): /tmp/compaction-demo.receipt.json"

test: install
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

format: install
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

typecheck: install
	$(BIN)/mypy

check: lint typecheck test

bench: install
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
