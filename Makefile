# dparse: build, test, benchmark and reproduce the papers' tables.
# Every reproduced table is a target that takes DATA= (the data root, default ../shared/data)
# and writes its report under results/. Targets of each part live in make/*.mk.

PYTHON ?= python3
DATA ?= ../shared/data
export DPARSE_DATA := $(abspath $(DATA))
RESULTS ?= results
MODELS ?= models

.PHONY: install build test test-fast lint bench demo tables clean help

help:  ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

install:  ## install dparse and its dependencies (editable, optimized build)
	$(PYTHON) -m pip install -q -e '.[dev]'

build:  ## rebuild the Cython extensions in place
	$(PYTHON) setup.py -q build_ext --inplace

test:  ## run the whole test suite
	$(PYTHON) -m pytest -q

test-fast:  ## run the tests, skipping those marked slow
	$(PYTHON) -m pytest -q -m "not slow"

lint:  ## ruff over the package, tests and scripts
	$(PYTHON) -m ruff check dparse tests data_scripts benchmarks

demo: ## train the first-order CLE parser on en_ewt, parse test, print the report
	$(PYTHON) -m dparse train configs/en_ewt/o1-cle.yaml --out $(MODELS)/en_ewt-o1-cle
	$(PYTHON) -m dparse parse $(MODELS)/en_ewt-o1-cle $(DPARSE_DATA)/en_ewt/test.conllu -o $(RESULTS)/en_ewt-o1-cle.test.conllu
	$(PYTHON) -m dparse eval $(DPARSE_DATA)/en_ewt/test.conllu $(RESULTS)/en_ewt-o1-cle.test.conllu

bench:  ## speed, accuracy and memory table -> results/bench.md
	$(PYTHON) benchmarks/bench.py --data $(DPARSE_DATA) --out $(RESULTS)/bench.md

clean:
	rm -rf build dparse/_ext/*.c dparse/_ext/*.so

-include make/*.mk
