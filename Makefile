# Set-up is part of every target: a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
JAX_VERSIONS ?= 0.10 0.11 0.12
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-jax test-device check bench docs-images clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/jaxscope examples/basics.py::predict

# the checkers first (seconds), then the suite in $(TEST_PROCESSES) processes (pytest-xdist; 1: in this
# one); tests/test_architecture.py runs the import contracts
TEST_PROCESSES ?= 2
test: $(STAMP) check
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q $(if $(filter-out 1,$(TEST_PROCESSES)),-n $(TEST_PROCESSES)) $(PYTEST_ARGS)

# the worker on every supported JAX (0.10, 0.11, 0.12; .ci/test-jax): e.g. make test-jax JAX_VERSIONS=0.12
test-jax: $(STAMP)
	JAX_VERSIONS="$(JAX_VERSIONS)" .ci/test-jax

# on a machine with an accelerator (a TPU VM), with its own JAX: no set-up (such a machine may have no
# index); the checkout on PYTHONPATH. tests/device/record_fixtures.py records the fixtures CI replays
test-device:
	PYTHONPATH=$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH} JAXSCOPE_DEVICE_TESTS=1 $(PYTHON) -m pytest -q -s -p no:cacheprovider tests/device $(PYTEST_ARGS)

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# one SVG per tutorial (its JAXSCOPE_MAIN function, with its own inputs), light and dark
docs-images: $(STAMP)
	mkdir -p docs/images
	for f in examples/*.py; do \
		name=$$(basename $$f .py); \
		$(BIN)/jaxscope export $$f -o docs/images/$$name.svg || exit 1; \
		$(BIN)/jaxscope export $$f --theme dark -o docs/images/$$name.dark.svg || exit 1; \
	done

# performance benchmark (issue 10); not a test. e.g. make bench BENCH_ARGS="--quick" or "--only gpt-10k"
bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/html_page.py

clean:
	rm -rf $(VENV) .venv-jax-* build .pytest_cache .mypy_cache .ruff_cache
