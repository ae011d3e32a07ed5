# The two entry points of README.md: `make run` (the quickstart) and `make test` (the whole suite).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	@scripts/check-env.sh $(PYTHON)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# The class archive of Spark's driver JVM (sparkcat jvm-archive): made once (~25 s), it halves
# every later Spark session's start; a machine that cannot make one only starts slower.
setup: $(STAMP)
	@$(BIN)/sparkcat jvm-archive --if-missing || echo "sparkcat: continuing without the class archive"

# Kafka's quickstart: FileStreamSource (test.txt) -> Kafka (embedded broker) -> FileStreamSink
# (test.sink.txt), both connectors running as Spark streaming queries. Ctrl-C stops it cleanly.
run: setup
	@test -f test.txt || printf 'foo\nbar\n' > test.txt
	$(BIN)/sparkcat standalone config/connect-standalone.properties \
		config/connect-file-source.properties config/connect-file-sink.properties

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/python -m pytest tests/unit -q

# Two pytest-xdist workers, whole modules each (tests/conftest.py says how the suite is split:
# the modules that start JVMs of their own run one after another in one lane): ~14 min on two
# cores instead of ~24 in one process. TEST_WORKERS=1 runs it in one process.
TEST_WORKERS ?= 2

test: setup lint typecheck
	$(BIN)/python -m pytest -q $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile)

bench: setup
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist src/*.egg-info
