# StorWatt developer entry points. `make run` and `make test` do all set-up themselves.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
OUT    ?= out

.PHONY: run test test-fast test-package fuzz-soak lint bench gui demo package clean system-deps

# The suite waits as much as it computes (runs, timeouts, child processes), so it runs in
# more pytest-xdist workers than there are cores (docs/performance.md, "suite" rows: the
# whole suite took 399 s with 4 workers, 358 s with 6, on the same quiet 2-core machine).
TEST_WORKERS ?= 6
# Whole files to a worker, heaviest first (tests/suite_guards.py, longest_first): a module's
# fixtures are built once, and the packaging build and crash drills start at once, not last.
TEST_DIST := --dist loadfile --no-loadscope-reorder
# Bytecode is written even where the shell sets PYTHONDONTWRITEBYTECODE (this build machine
# does): without it every worker re-ran pytest's assertion rewriting (4.4 → 2.4 s CPU to
# collect) and every child `python -m app.cli.main` compiled the station anew (0.25 s each).
# __pycache__ is ignored by git.
TEST_ENV := QT_QPA_PLATFORM=offscreen PYTHONDONTWRITEBYTECODE=
# compiled once before the workers start: on a fresh clone every worker (and every child
# station) otherwise compiled the same modules at the same moment
COMPILED := app ui drivers verifier bench

# Debian/Ubuntu packages (Qt's xcb libraries, fio, Xvfb, PostgreSQL …): checked on every run
# with one dpkg-query call, installed only when something is missing (README, "fresh machine").
system-deps:
	@scripts/install-system-deps.sh

# order-only: python3-venv must be there before the venv is made, but a check that finds
# everything installed must not rebuild the venv
$(STAMP): pyproject.toml | system-deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,package]'
	touch $(STAMP)

venv: $(STAMP)

# Opens the station on the built-in simulated lab; without a display the same
# run happens in the terminal and the report is written to $(OUT)/.
run: system-deps $(STAMP)
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		$(VENV)/bin/storwatt gui --lab sim; \
	else \
		echo "No display found: running the demo sequence headless on the simulated lab."; \
		$(VENV)/bin/storwatt run --lab sim --method demo --taxonomy online-3 --controller --protection \
			--connectivity network --max-drives 96 --out $(OUT); \
	fi

test: system-deps $(STAMP)
	$(TEST_ENV) $(PY) -m compileall -q -j 0 $(COMPILED)
	$(TEST_ENV) $(PY) -m pytest -n $(TEST_WORKERS) $(TEST_DIST) -m "not package" $(PYTEST_ARGS)

# The packaging build and its installed self-test (tests marked `package`): one PyInstaller
# build waits 105–190 s on a child process, so it runs once in a tier of its own — `.ci/run`'s
# own stage with its own stamp — and its wait no longer eats the suite's real-time ceiling
# (issue 36).
test-package: system-deps $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -m package $(PYTEST_ARGS)

# Before each commit (README, "Testing"): everything that needs no real process, network,
# real-time wait or fio — ≤ 90 s. The whole suite (`make test`) before each stop.
FAST_TIER := not realtime and not slow and not fio and not process
# The fast tier only computes, so its workers contend for the cores: on the same 2-core machine
# and tree it took 86 s with 4 workers against 104 s with 6, its tests' CPU 156 s against 184 s
# (docs/performance.md, "suite" rows).
FAST_WORKERS ?= 4
test-fast: lint
	$(TEST_ENV) $(PY) -m compileall -q -j 0 $(COMPILED)
	$(TEST_ENV) $(PY) -m pytest -n $(FAST_WORKERS) $(TEST_DIST) -m "$(FAST_TIER)" $(PYTEST_ARGS)

# The differential fuzzer's soak (docs/conformance.md, "Differential fuzzer"): FUZZ_RUNS
# generated runs, each verified against the station, from a fresh seed (FUZZ_SEED to repeat
# one); a disagreement is printed with its seed and the run's whole recipe.
FUZZ_RUNS ?= 200
FUZZ_SEED ?=
fuzz-soak: $(STAMP)
	$(TEST_ENV) STORWATT_FUZZ_RUNS=$(FUZZ_RUNS) STORWATT_FUZZ_SEED=$(FUZZ_SEED) nice -n 10 \
		$(PY) -m pytest -p no:cacheprovider -q tests/test_differential_fuzz.py -k generated \
		--hypothesis-show-statistics $(PYTEST_ARGS)

# The linter and the type checker (pyproject.toml, [tool.ruff] and [tool.mypy]; README,
# "Testing"). A suppression names its code (ruff PGH003/PGH004) and is still needed (RUF100,
# mypy's warn_unused_ignores); the grep asks each one for its reason after the code.
# mypy's cache (.mypy_cache, ignored by git) makes a warm run a few seconds.
LINTED := app ui drivers verifier bench tests packaging tools
SUPPRESSION := (noqa: *[A-Z]+[0-9]+(, *[A-Z]+[0-9]+)*|type: *ignore\[[a-z-]+(, *[a-z-]+)*\])
lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/mypy
	@if grep -rnE --include='*.py' '# *$(SUPPRESSION) *$$' $(LINTED); then \
		echo "lint: each noqa / type: ignore above needs its reason after the code"; exit 1; fi

bench: $(STAMP)
	$(PY) -m bench.run_all

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache

# Lab-PC deliverables (docs/install.md): PyInstaller bundle, .deb and .tar.gz in dist/.
PACKAGE_STAMP := $(VENV)/.package-installed

$(PACKAGE_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[package]'
	touch $@

package: $(PACKAGE_STAMP)
	PY="$(abspath $(PY))" DIST=dist packaging/linux/build.sh
