# `make bench` and `make test` install what is missing, then run.
VENV ?= .venv
STAMP := $(VENV)/.vcsbench-installed
TEST_STAMP := $(VENV)/.vcsbench-test-tools
BENCH_REPOS ?= 1000

.PHONY: bench test lint unit install clean-sandboxes reference corpus

# As root, `make bench` runs in a loop-mounted ext4 sandbox, where the device's IO is measured
# (tmpfs has no block device); otherwise in the study's default sandbox. BENCH_FS overrides.
BENCH_FS ?= $(shell [ "$$(id -u)" = 0 ] && echo ext4)

bench: $(STAMP)
	$(if $(filter ext4,$(BENCH_FS)),@echo "make bench: on a loop-mounted ext4 (root): device IO measured; BENCH_FS=tmpfs: faster without a device")
	$(VENV)/bin/vcsbench study markus2013 --repos $(BENCH_REPOS) $(if $(BENCH_FS),--fs $(BENCH_FS)) --out results/local/markus2013.json

test: lint unit

lint: $(STAMP)
	$(VENV)/bin/ruff check vcsbench tests benchmarks examples tools
	$(VENV)/bin/mypy

# Two passes: most tests in two pytest-xdist workers; then, alone on the machine, the ones whose
# bounds are wall times or signals (marked serial), which a busy neighbour makes flaky. Each
# with its temporary files on a tmpfs of its own (tools/tmpfs-tests.sh says why).
unit: $(STAMP) $(TEST_STAMP)
	tools/tmpfs-tests.sh $(VENV)/bin/python -m pytest tests -n 2 -m "not serial" --durations=10
	tools/tmpfs-tests.sh $(VENV)/bin/python -m pytest tests -m serial --durations=5

install: $(STAMP)

$(STAMP): pyproject.toml tools/bootstrap.sh
	VENV=$(VENV) tools/bootstrap.sh
	touch $@

$(TEST_STAMP): $(STAMP)
	VENV=$(VENV) tools/bootstrap.sh test-tools
	touch $@

# The reference corpus of real histories (docs/histories.md): release series from PyPI,
# checked against the SHA-256s in fixtures/corpus/, built into ~/.cache/vcsbench/corpus
# ($$VCSBENCH_CORPUS), used as history:corpus:NAME.
corpus: $(STAMP)
	$(VENV)/bin/python -m vcsbench.workload.corpus pytz

clean-sandboxes: $(STAMP)
	$(VENV)/bin/vcsbench cleanup

# The reference results in results/reference (root: they use tmpfs, ext4, xfs, btrfs sandboxes).
# Result files are gzip'd JSON (every round kept); plots are PNG, so the set stays small.
REF := results/reference
PYTEST_BENCH := $(VENV)/bin/python -m pytest benchmarks --benchmark-only -p no:cacheprovider -o filterwarnings=default -q --benchmark-columns=min,median,iqr,ops,rounds --vcs-progress=none

reference: $(STAMP) corpus
	mkdir -p $(REF)
	$(VENV)/bin/vcsbench doctor --calibrate | tee $(REF)/calibrate.txt
	$(VENV)/bin/vcsbench study markus2013 --repos 10000 --fs tmpfs --progress none --out $(REF)/markus2013-tmpfs.json.gz
	$(VENV)/bin/vcsbench study markus2013 --repos 10000 --fs ext4 --progress none --out $(REF)/markus2013-ext4.json.gz
	for study in git-fsync markus-today svn-storage git-storage; do \
		$(VENV)/bin/vcsbench study $$study --progress none --out $(REF)/$$study.json.gz || exit 1; \
	done
	$(PYTEST_BENCH) --vcs-fs tmpfs,ext4,xfs,btrfs --vcs-repos 200 --benchmark-json $(REF)/matrix.json.gz
	$(PYTEST_BENCH) --vcs-fs tmpfs,ext4 --vcs-payloads many-files,large --vcs-repos 20 --benchmark-json $(REF)/large-payloads.json.gz
	rm -rf $(REF)/plots
	$(VENV)/bin/vcsbench report $(REF)/matrix.json.gz $(REF)/large-payloads.json.gz --format md --plots $(REF)/plots --plot-kinds summary,latency,footprint --out $(REF)
	$(VENV)/bin/vcsbench compare $(REF)/markus2013-tmpfs.json.gz $(REF)/markus2013-ext4.json.gz > $(REF)/compare-markus2013-tmpfs-ext4.txt
	$(VENV)/bin/vcsbench run --backends 'git-cli,git-cli[template=empty]' --ops create+commit --payloads hello --repos 200 --fs tmpfs --progress none --out $(REF)/git-cli-templates.json.gz
	$(VENV)/bin/vcsbench report $(REF)/git-cli-templates.json.gz > $(REF)/git-cli-templates.md
	$(VENV)/bin/vcsbench run --backends 'git-pygit2[version=1.12.2],git-pygit2[version=1.14.1],git-pygit2[version=1.15.1],git-pygit2[version=1.18.2],git-pygit2[version=1.21.0]' --ops create,create+commit,commit,clone,log --payloads hello --fs tmpfs,ext4 --repos 300 --progress none --out $(REF)/pygit2-releases.json.gz
	$(VENV)/bin/vcsbench report $(REF)/pygit2-releases.json.gz > $(REF)/pygit2-releases.md
	$(VENV)/bin/vcsbench study distance --progress none --out $(REF)/distance.json.gz
	$(VENV)/bin/vcsbench study ghe2015 --out $(REF)/ghe2015.json.gz
	rm -rf $(REF)/ghe2015-plots
	$(VENV)/bin/vcsbench report $(REF)/ghe2015.json.gz --plots $(REF)/ghe2015-plots > /dev/null
	$(VENV)/bin/vcsbench run --backends 'git-cli[remote=apache-git],git-cli[remote=apache-git-https],git-cli[remote=git-ssh],git-cli[remote=git-daemon]' --ops clone,publish --payloads submission --repos 100 --fs tmpfs --progress none --out $(REF)/transports-git.json.gz
	$(VENV)/bin/vcsbench run --backends 'svn-cli[remote=apache-svn],svn-cli[remote=apache-svn-https],svn-cli[remote=svn-ssh],svn-cli[remote=svnserve]' --ops checkout,publish --payloads submission --repos 100 --fs tmpfs --progress none --out $(REF)/transports-svn.json.gz
	$(VENV)/bin/vcsbench run --backends 'hg-cli[remote=apache-hg],hg-cli[remote=apache-hg-https],hg-cli[remote=hg-ssh]' --ops clone,publish --payloads submission --repos 60 --fs tmpfs --progress none --out $(REF)/transports-hg.json.gz
	$(VENV)/bin/vcsbench report $(REF)/transports-git.json.gz $(REF)/transports-svn.json.gz $(REF)/transports-hg.json.gz > $(REF)/transports.md
	$(VENV)/bin/vcsbench study markus2011 --out $(REF)/markus2011.json.gz
	$(VENV)/bin/vcsbench study markus2011 --profile hdd --out $(REF)/markus2011-hdd.json.gz
	rm -rf $(REF)/load-plots
	$(VENV)/bin/vcsbench report $(REF)/markus2011.json.gz --plots $(REF)/load-plots > /dev/null
	$(VENV)/bin/vcsbench study commit-graph --progress none --out $(REF)/commit-graph.json.gz
	$(VENV)/bin/vcsbench study bitmaps --progress none --out $(REF)/bitmaps.json.gz
	$(VENV)/bin/vcsbench study fsfs-format --progress none --out $(REF)/fsfs-format-warm.json.gz
	$(VENV)/bin/vcsbench study fsfs-format --cache cold --progress none --out $(REF)/fsfs-format-cold.json.gz
	$(VENV)/bin/vcsbench study fsfs-format --cache cold --profile usb-stick --progress none --out $(REF)/fsfs-format-usb.json.gz
	$(VENV)/bin/vcsbench run --backends 'git-pygit2,git-pygit2[age=0],svn-fs,svn-fs[age=0]' --ops commit --payloads submission --repos 1000 --fs 'ext4:size=32G,mkfs=-N 4000000' --age term:students=1000,assignments=10,commits=1-30 --progress none --out $(REF)/population.json.gz
	$(VENV)/bin/vcsbench report $(REF)/population.json.gz --block-size 250 > $(REF)/population.md
	$(VENV)/bin/vcsbench run --backends git-cli,svn-cli,hg-cli --ops 'create+commit,commit,clone,checkout,log,checkout[back=100],diff[back=100],update[back=100]' --payloads history:corpus:pytz,submission --repos 20 --fs tmpfs --perturbation off --progress none --out $(REF)/histories.json.gz
