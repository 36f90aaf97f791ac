# groundstate — `make run` starts the server on the embedded SQLite default; `make test` runs every test.
VENV   ?= .venv
PY     := $(VENV)/bin/python
GS     := $(VENV)/bin/groundstate
STAMP  := $(VENV)/.installed
SERVER := $(VENV)/.installed-server
PG_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/postgres
EXTRAS ?= dev,train,verl

.PHONY: install run test test-fast lint validate validate-pg bench clean

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0   # the CPU build first; an open range would pull a CUDA build
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $(STAMP)

# the server alone: light (no torch, no model runtimes)
$(SERVER): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $(SERVER)

install: $(STAMP)

run: $(SERVER)
	$(GS) serve

lint: install
	$(PY) -m ruff check .
	$(PY) -m mypy

test-fast: install
	$(PY) -m pytest -m "not slow and not postgres" -q

validate: install
	$(GS) tasks validate --backend sqlite

validate-pg: install
	$(GS) tasks validate --backend postgresql --pg-url $(PG_URL)

test: install lint
	$(PY) -m pytest -q
	$(MAKE) --no-print-directory validate validate-pg

bench: install
	$(PY) benchmarks/episode_overhead.py

clean:
	rm -rf $(VENV) .groundstate .pytest_cache .ruff_cache
