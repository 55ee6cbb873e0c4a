# Two entry points for a fresh machine: `make demo` and `make test`. Each creates .venv and
# installs the package with the pinned torch from constraints.txt before doing its job.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test check lint-self docs report-screenshot clean

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/torchdoctor demo

# One intra-op thread per test process: two xdist workers already fill the two cores, and
# oversubscribed OpenMP threads make tiny-model tests 10-25x slower on a busy machine.
# Timing-based diagnoses (marked `timing`, tests/conftest.py) run afterwards, one at a time.
test: $(VENV)/.installed
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not timing"
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -rR -m timing

lint-self: $(VENV)/.installed
	$(BIN)/torchdoctor lint src bench tools

# The repository's own gates (CI runs them before the tests): ruff, ruff format, mypy with a
# baseline that only shrinks (tools/mypy_baseline.py), and torchdoctor linting itself.
check: $(VENV)/.installed
	$(BIN)/ruff check src tests bench tools
	$(BIN)/ruff format --check src tests bench tools
	$(BIN)/python tools/mypy_baseline.py
	$(MAKE) --no-print-directory lint-self

# The rule catalogues (from the rule docstrings) and the technique cross-reference (from
# src/torchdoctor/techniques.py) are generated; tests fail when they are stale.
docs: $(VENV)/.installed
	$(BIN)/python -m torchdoctor.diagnose.catalogue > docs/diagnose-rules.md
	$(BIN)/python -m torchdoctor.lint.catalogue > docs/lint-rules.md
	$(BIN)/python -m torchdoctor.techniques > docs/techniques.md

# The HTML report rendered by a real headless Chromium (apt-get install -y chromium): diagnoses a
# planted script with --html and writes build/report.png to look at.
report-screenshot: $(VENV)/.installed
	$(BIN)/python tools/report_screenshot.py

clean:
	rm -rf $(VENV) .pytest_cache
