# `make bench` and `make test` install what is missing, then run.
VENV ?= .venv
STAMP := $(VENV)/.vcsbench-installed
BENCH_REPOS ?= 1000

.PHONY: bench test lint unit install clean-sandboxes

bench: $(STAMP)
	$(VENV)/bin/vcsbench study markus2013 --repos $(BENCH_REPOS) --out results/local/markus2013.json

test: lint unit

lint: $(STAMP)
	$(VENV)/bin/ruff check vcsbench tests benchmarks
	$(VENV)/bin/mypy

unit: $(STAMP)
	$(VENV)/bin/python -m pytest tests

install: $(STAMP)

$(STAMP): pyproject.toml tools/bootstrap.sh
	VENV=$(VENV) tools/bootstrap.sh
	touch $@

clean-sandboxes: $(STAMP)
	$(VENV)/bin/vcsbench cleanup
