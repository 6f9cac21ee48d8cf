# `make bench` and `make test` install what is missing, then run.
VENV ?= .venv
STAMP := $(VENV)/.vcsbench-installed
BENCH_REPOS ?= 1000

.PHONY: bench test lint unit install clean-sandboxes reference

bench: $(STAMP)
	$(VENV)/bin/vcsbench study markus2013 --backends all --repos $(BENCH_REPOS) --out results/local/markus2013.json

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

# The reference results in results/reference (root: they use tmpfs, ext4, xfs, btrfs sandboxes).
REF := results/reference
PYTEST_BENCH := $(VENV)/bin/python -m pytest benchmarks --benchmark-only -p no:cacheprovider -o filterwarnings=default -q --benchmark-columns=min,median,iqr,ops,rounds

reference: $(STAMP)
	mkdir -p $(REF)
	$(VENV)/bin/vcsbench doctor --calibrate | tee $(REF)/calibrate.txt
	$(VENV)/bin/vcsbench study markus2013 --repos 10000 --fs tmpfs --out $(REF)/markus2013-tmpfs.json
	$(VENV)/bin/vcsbench study markus2013 --repos 10000 --fs ext4 --out $(REF)/markus2013-ext4.json
	$(PYTEST_BENCH) --vcs-fs tmpfs,ext4,xfs,btrfs --vcs-repos 200 --benchmark-json $(REF)/matrix.json
	$(PYTEST_BENCH) --vcs-fs tmpfs,ext4 --vcs-payloads many-files,large --vcs-repos 20 --benchmark-json $(REF)/large-payloads.json
	$(VENV)/bin/vcsbench report $(REF)/matrix.json $(REF)/large-payloads.json --format md --plots $(REF)/plots > $(REF)/report.md
	$(VENV)/bin/vcsbench compare $(REF)/markus2013-tmpfs.json $(REF)/markus2013-ext4.json > $(REF)/compare-markus2013-tmpfs-ext4.txt
	$(VENV)/bin/vcsbench run --backends git-cli --ops create+commit --payloads hello --repos 200 --fs tmpfs --backend-option git-cli:template=empty --out $(REF)/git-cli-empty-template.json
	$(VENV)/bin/vcsbench run --backends git-cli --ops create+commit --payloads hello --repos 200 --fs tmpfs --out $(REF)/git-cli-default-template.json
	$(VENV)/bin/vcsbench compare $(REF)/git-cli-default-template.json $(REF)/git-cli-empty-template.json > $(REF)/compare-git-cli-template.txt
