# groundstate — `make run` starts the server on the embedded SQLite default; `make test` runs every test.
VENV   ?= .venv
PY     := $(VENV)/bin/python
GS     := $(VENV)/bin/groundstate
STAMP  := $(VENV)/.installed
SERVER := $(VENV)/.installed-server
DOCS   := $(VENV)/.installed-docs
PG_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/postgres
EXTRAS ?= dev,train,verl,docs,adapters
DOCS_PORT ?= 8008
# llama.cpp (the tests' OpenAI-compatible model server) is built from source: a portable AVX2 build, not one
# tuned to the building CPU, whose AMX kernels crash in VMs that do not expose AMX state
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
# OpenEnv's client has a virtual environment of its own: the `openenv` package pins an older `mcp` than ours
OPENENV_VENV  ?= .venv-openenv
OPENENV_STAMP := $(OPENENV_VENV)/.installed
# verifiers 0.4 likewise pins an older `mcp` and `openai` (trainer/adapters/verifiers_env.py)
VERIFIERS_VENV  ?= .venv-verifiers
VERIFIERS_STAMP := $(VERIFIERS_VENV)/.installed
# NeMo Gym 0.7 needs Python 3.13 and pins `mcp<2` and `openai==2.44` (trainer/adapters/nemo_gym_server.py)
NEMO_GYM_VENV   ?= .venv-nemo-gym
NEMO_GYM_STAMP  := $(NEMO_GYM_VENV)/.installed
# the first Python 3.13 that runs (pyenv's shim answers `command -v` even when 3.13 is not selected)
PYTHON313       ?= $(shell for p in python3.13 $$HOME/.pyenv/versions/3.13*/bin/python3; do \
                     $$p -c 'import sys' >/dev/null 2>&1 && { command -v $$p; break; }; done)

.PHONY: install openenv-client verifiers-env nemo-gym-env run test test-fast lint validate validate-pg docs docs-build train-smoke bench bench-floor bench-wave bench-grpo bench-server soak clean

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

# the docs site alone: MkDocs and the trainer's light measures (no torch, no Verl)
$(DOCS): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[docs]'
	touch $(DOCS)

install: $(STAMP)

# the tests run examples/openenv_client.py with this interpreter (GROUNDSTATE_OPENENV_PYTHON)
$(OPENENV_STAMP): examples/requirements-openenv.txt
	python3 -m venv $(OPENENV_VENV)
	$(OPENENV_VENV)/bin/python -m pip install -q --upgrade pip
	$(OPENENV_VENV)/bin/python -m pip install -q -r examples/requirements-openenv.txt
	touch $(OPENENV_STAMP)

openenv-client: $(OPENENV_STAMP)

# the tests run `vf-eval groundstate_verifiers` with this interpreter's scripts (GROUNDSTATE_VERIFIERS_PYTHON)
$(VERIFIERS_STAMP): examples/requirements-verifiers.txt
	python3 -m venv $(VERIFIERS_VENV)
	$(VERIFIERS_VENV)/bin/python -m pip install -q --upgrade pip
	$(VERIFIERS_VENV)/bin/python -m pip install -q -r examples/requirements-verifiers.txt
	touch $(VERIFIERS_STAMP)

verifiers-env: $(VERIFIERS_STAMP)

# the tests run examples/nemo_gym_episode.py with this interpreter (GROUNDSTATE_NEMO_GYM_PYTHON)
$(NEMO_GYM_STAMP): examples/requirements-nemo-gym.txt
	$(PYTHON313) -m venv $(NEMO_GYM_VENV)
	$(NEMO_GYM_VENV)/bin/python -m pip install -q --upgrade pip
	$(NEMO_GYM_VENV)/bin/python -m pip install -q --ignore-requires-python -r examples/requirements-nemo-gym.txt
	touch $(NEMO_GYM_STAMP)

nemo-gym-env: $(NEMO_GYM_STAMP)

# `make run PORT=8010 HOST=0.0.0.0`: unset, `serve` reads GROUNDSTATE_PORT / GROUNDSTATE_HOST, else 8000 on
# loopback. Only the server is installed here; `make install` adds the trainer (eval, train, report).
run: $(SERVER)
	$(GS) serve $(if $(PORT),--port $(PORT)) $(if $(HOST),--host $(HOST))

lint: install
	$(PY) -m ruff check .
	$(PY) -m mypy

test-fast: install
	$(PY) -m pytest -m "not slow and not postgres" -q

validate: install
	$(GS) tasks validate --backend sqlite

validate-pg: install
	$(GS) tasks validate --backend postgresql --pg-url $(PG_URL)

test: install lint openenv-client verifiers-env nemo-gym-env
	GROUNDSTATE_OPENENV_PYTHON=$(OPENENV_VENV)/bin/python GROUNDSTATE_VERIFIERS_PYTHON=$(VERIFIERS_VENV)/bin/python \
		GROUNDSTATE_NEMO_GYM_PYTHON=$(NEMO_GYM_VENV)/bin/python $(PY) -m pytest -q -n 2 --durations=25
	$(MAKE) --no-print-directory validate validate-pg docs-build

# the docs site (mkdocs.yml): built with --strict (broken links or anchors, missing snippets, settings without a
# description fail), or served while you edit (NO_MKDOCS_2_WARNING: without Material's end-of-life banner on every build)
docs-build: $(DOCS)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

docs: $(DOCS)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve -a 127.0.0.1:$(DOCS_PORT)

# the small training recipe (two cores): a server on SMOKE_PORT, a warm start of SmolLM2 on four starter tasks'
# gold calls (as tests/trainer/test_train_local.py's), then one GRPO step on the starter train tasks (no probe,
# no pool); prints where the model is. Not yet timed on an idle machine (issue #32 asks for ten minutes).
SMOKE_PORT ?= 8011
SMOKE_OUT  ?= runs/train-smoke
train-smoke: install
	@mkdir -p $(SMOKE_OUT); \
	$(GS) serve --port $(SMOKE_PORT) > $(SMOKE_OUT)/server.log 2>&1 & server=$$!; trap "kill $$server" EXIT; \
	until $(PY) -c "import httpx; httpx.get('http://127.0.0.1:$(SMOKE_PORT)/healthz').raise_for_status()" \
	    2>/dev/null; do sleep 1; done; \
	set -e; url=http://127.0.0.1:$(SMOKE_PORT); \
	$(GS) train warm-start --server $$url --task starter-renew-101 --task starter-renew-102 \
	    --task starter-return-101 --task starter-return-102 --epochs 3 --lr 3e-5 --threads 2 --out $(SMOKE_OUT)/warm; \
	$(GS) train local --server $$url --domains starter --model $(SMOKE_OUT)/warm --steps 1 --tasks-per-step 2 \
	    --episodes-per-task 4 --micro-batch 4 --max-new-tokens 48 --max-turns 3 --lr 1e-4 --threads 2 \
	    --out $(SMOKE_OUT)/grpo; \
	echo "train-smoke: the trained model is $(SMOKE_OUT)/grpo/final (step log $(SMOKE_OUT)/grpo/); evaluate it with" \
	     "groundstate eval --policy local:$(SMOKE_OUT)/grpo/final --domains starter"

# issue #12's figures, each against the floor of the stack, in under 5 minutes on an idle 2-core machine
bench: install
	$(PY) benchmarks/floor.py
	$(PY) benchmarks/wave.py --workers 1,2
	$(PY) benchmarks/server_time.py --backends sqlite

# the server against a no-op app with its routes, in the same run, then 1, 2, 4 workers on SQLite and
# PostgreSQL: every figure as a ratio (about 2.5 minutes)
bench-floor: install
	$(PY) benchmarks/floor.py

# 144 episodes at once, 20 gold calls each, then score; 1, 2 and 4 workers, SQLite then PostgreSQL (~6 min)
bench-wave: install
	$(PY) benchmarks/wave.py
	$(PY) benchmarks/wave.py --backend postgresql

# a GRPO step's burst (128 to 1,024 episodes, 2 s median think time) against the server and the no-op floor,
# SQLite then PostgreSQL; on an idle machine (docs/performance, docs/training/cluster.md#capacity)
bench-grpo: install
	$(PY) benchmarks/grpo_step.py --sweep 128,256,512,1024 --out benchmarks/results/grpo_step_sqlite.json
	$(PY) benchmarks/grpo_step.py --sweep 128,256,512,1024 --backend postgresql \
		--server-env GROUNDSTATE_DB_POOL_SIZE=16 --out benchmarks/results/grpo_step_postgresql.json

# the server's own work per episode, in process, for every read tool (about 1 minute)
bench-server: install
	$(PY) benchmarks/server_time.py

# 10 minutes, 144 concurrent episodes through deploy/run-local.sh (HAProxy + 3 replicas; needs haproxy, curl)
soak: install
	$(PY) benchmarks/soak.py

clean:
	rm -rf $(VENV) $(OPENENV_VENV) $(VERIFIERS_VENV) $(NEMO_GYM_VENV) .groundstate .pytest_cache .ruff_cache
