# Fresh machine: `make demo` runs the whole DAG on the demo corpus; `make test-all` runs every test (CI), `make test` the quick ones.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export OMP_WAIT_POLICY := PASSIVE
# The demo's ephemeral Prefect API keeps its database here, apart from any other Prefect install's.
DEMO_PREFECT_HOME := $(CURDIR)/.prefect

.PHONY: setup browser demo test test-all lint bench clean

$(BIN)/pretrain: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e ".[dev]"
	touch $@

# The shipped quality reference's models, trained once here so a fresh output root copies them (about 17 CPU s
# of every first run); rebuilt whole when the reference or the quality code changes.
PREBUILT := pretrain_core/data/quality-models
$(VENV)/.quality-models: $(BIN)/pretrain $(wildcard pretrain_core/data/quality_reference/*) $(wildcard pretrain_core/quality/*.py)
	rm -rf $(PREBUILT)
	$(BIN)/python -m pretrain_core.quality.prebuild
	touch $@

setup: $(BIN)/pretrain $(VENV)/.quality-models

demo: setup
	PREFECT_HOME=$${PREFECT_HOME:-$(DEMO_PREFECT_HOME)} $(BIN)/pretrain run

# The browser tests' Chromium (tests/card, tests/infra/test_ui.py), from the distribution's packages, never a
# browser download: installed when missing and apt-get can, as root; else those tests say why they skip.
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || \
	  echo "no Chromium: the browser tests will skip (Debian: apt-get install chromium)"

test: setup browser
	$(BIN)/pytest -m "not slow" -q -rs

# Everything: the slow end-to-end tests beside the quick suite (they mostly wait on servers, leases and
# subprocesses), then the tests that fit or score through BLAS again under other OpenBLAS kernels, side by side
# (another CPU gets another kernel and other last bits; pytest -m blas lists them). Logs: .test-logs/.
BLAS_KERNELS ?= $(if $(filter x86_64,$(shell uname -m)),Sandybridge Prescott,ARMV8 CORTEXA53)
PYTEST_ALL := $(BIN)/pytest -q -rs -p no:cacheprovider
test-all: setup browser
	mkdir -p .test-logs
	$(PYTEST_ALL) -m slow > .test-logs/slow.log 2>&1 & slow=$$!; \
	$(PYTEST_ALL) -m "not slow"; quick=$$?; \
	wait $$slow; slow=$$?; echo "--- slow tests:"; cat .test-logs/slow.log; \
	test $$quick -eq 0 && test $$slow -eq 0
	pids=""; for kernel in $(BLAS_KERNELS); do \
	  OPENBLAS_CORETYPE=$$kernel $(PYTEST_ALL) -m blas > .test-logs/blas-$$kernel.log 2>&1 & pids="$$pids $$!"; \
	done; status=0; for pid in $$pids; do wait $$pid || status=1; done; \
	for kernel in $(BLAS_KERNELS); do echo "--- blas tests under $$kernel:"; cat .test-logs/blas-$$kernel.log; done; \
	exit $$status

lint: setup
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy pretrain_core pretrain_eval pretrain_cli tasks flows

bench: setup
	$(BIN)/pip install -q -c constraints.txt -e ".[dev,bench]"
	for script in benchmarks/bench_*.py; do $(BIN)/python $$script; done

clean:
	rm -rf outputs/demo
