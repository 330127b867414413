# Two commands do everything: `make report` and `make test`.
# Each creates .venv (idempotently) and installs the project into it first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2
PYTEST_ARGS ?=

.PHONY: report test lab venv lint bench fuzz clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { \
	  echo "cannot create a virtual environment: install Python's venv module (Debian: apt-get install python3-venv)" >&2; \
	  rm -rf $(VENV); exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

report: $(STAMP)
	$(BIN)/workbench report --out reports --jobs $(JOBS)

test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check workbench tests benchmarks notebooks
	$(BIN)/mypy

lab: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,lab]'
	cd notebooks && ../$(BIN)/jupyter lab

fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzzing --cases $${FUZZ_CASES:-2000} --save

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf reports .pytest_cache
