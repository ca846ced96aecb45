# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SHARED ?= ../shared

.PHONY: run test lint typecheck unit conformance bench clean browser bytecode

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,ray,live]'
	$(MAKE) --no-print-directory bytecode
	touch $(STAMP)

# The editable install leaves src/ uncompiled, and an environment that sets
# PYTHONDONTWRITEBYTECODE (this project's machine does) never writes the bytecode it compiles:
# every command would compile its modules again at start (about 0.2 CPU s). Compiling them here,
# as a wheel's install does, lets each start read them; a source edited since is compiled again
# in memory, as before, until the next `make bytecode`.
bytecode:
	$(BIN)/python -m compileall -q src >/dev/null

# The schedule and explain commands have their own examples in README (examples/scenarios/).
run: $(STAMP) bytecode
	@$(BIN)/topospread simulate examples/simulations/zone-outage.yaml

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# The HTML reports' tests open them in Debian's headless Chromium: found on PATH, or installed
# here (as root, with apt-get); otherwise those tests skip, saying why.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "make: installing Debian's chromium for the HTML report tests"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; } || \
	    echo "make: could not install chromium: the HTML report tests will skip"; \
	  else echo "make: no chromium, and no root to install it: the HTML report tests will skip"; fi; }

unit: $(STAMP) browser
	$(BIN)/pytest

conformance: $(STAMP)
	$(BIN)/topospread conformance $(SHARED)/conformance

test: lint typecheck unit conformance

# Benchmarks measure speed; tests never time anything. Every scheduler_perf-style workload runs
# in its own process (bench/run.py); pick some or shrink them with BENCH_ARGS, e.g.
# `make bench BENCH_ARGS="--quick"` or `make bench BENCH_ARGS="TopologySpreading --max-seconds 60"`.
# `make bench BENCH_ARGS="--compare"` runs each scheduling workload on the fast and the reference
# path too and prints their ratio (the reference run capped by --reference-seconds, default 60).
BENCH_ARGS ?=
bench: $(STAMP) bytecode
	$(BIN)/python bench/schedule_1000.py 1000 1000
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info
