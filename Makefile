# dparse: build, test, benchmark and reproduce the papers' tables.
# Every reproduced table is a target that takes DATA= (the data root, default ../shared/data)
# and writes its report under results/. Targets of each part live in make/*.mk.

PYTHON ?= python3
DATA ?= ../shared/data
export DPARSE_DATA := $(abspath $(DATA))
# The scripts under benchmarks/ import dparse from this checkout (as `python -m dparse` does
# from here), installed or not. ($(shell) sees no exported variable before make 4.4: pass it.)
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))
RESULTS ?= results
# TRAIN_WORKERS=N: every `dparse train` that a target runs trains its parser on N local workers
# (dparse train --workers, iterative parameter mixing); a tagger on one core.
ifdef TRAIN_WORKERS
export DPARSE_TRAIN_WORKERS := $(TRAIN_WORKERS)
endif
comma := ,
MODELS ?= models

.PHONY: install deps build build-debug test test-full test-fast lint bench demo tables clean help

help:  ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

# deps installs the package (editable) and its dependencies without compiling: each target that
# needs the extensions compiles them in place once, optimized (build) or bounds-checked (test).
deps:
	DPARSE_NO_EXT=1 $(PYTHON) -m pip install -q --disable-pip-version-check -e '.[dev]'

install: deps build  ## install dparse and its dependencies (editable), optimized build

build:  ## build the Cython extensions in place, optimized (-O3, no bounds checks)
	$(PYTHON) setup.py -q build_ext --inplace

# The debug build compiles in build/debug, so that build/lib keeps the optimized modules that an
# in-place optimized build copies from when its sources have not changed.
BUILD_DEBUG = DPARSE_DEBUG=1 $(PYTHON) setup.py -q build_ext --inplace \
	--build-lib build/debug/lib --build-temp build/debug/temp

build-debug:  ## build the Cython extensions in place with bounds checks (DPARSE_DEBUG=1)
	$(BUILD_DEBUG)

# make test runs the suite on the bounds-checked build, then puts back the optimized build that
# was in place, if any (make build or make install makes one): its compiled files are set aside before the debug
# build and moved back after the tests, pass or fail (a copy, not a rebuild: well under a
# second). It says which build it leaves. (No $(MAKE) in the recipe: make -n would run it.)
# It runs the tests not marked slow, on PYTEST_WORKERS processes (pytest-xdist; each test file
# on one of them, so that a file's fixtures are made once); make test-full runs them all, the
# full-size trainings marked slow too.
MODE_FILE := dparse/_ext/BUILD_MODE
EXT_KEEP := build/optimized-ext
# the compiled files of every extension (generated C and C++ too), wherever its .pyx lives
EXT_FILES = find dparse \( -name '*.so' -o -name '*.c' -o -name '*.cpp' \) -type f
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL = $(if $(filter-out 0 1,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadfile)
# pyproject.toml leaves the tests marked slow out of plain pytest; test-full asks for them too
test: PYTEST_MARK :=
test-full: PYTEST_MARK := -m "slow or not slow"

test: deps  ## install, run the test suite (not slow) with bounds checks, restore the optimized build
test-full: deps  ## as make test, with the tests marked slow (full-size trainings) too
test test-full:
	@rm -rf $(EXT_KEEP); \
	if grep -qx optimized $(MODE_FILE) 2>/dev/null; then \
	  mkdir -p $(EXT_KEEP); \
	  { echo $(MODE_FILE); $(EXT_FILES); } | while read -r f; do cp -p --parents "$$f" $(EXT_KEEP)/; done; \
	fi; \
	restore() { \
	  if [ -d $(EXT_KEEP) ]; then \
	    (cd $(EXT_KEEP) && find . -type f) | while read -r f; do \
	      f=$${f#./}; tmp="$${f%/*}/.$${f##*/}.tmp"; \
	      cp -p "$(EXT_KEEP)/$$f" "$$tmp" && mv -f "$$tmp" "$$f"; \
	    done; \
	    rm -rf $(EXT_KEEP); \
	    echo "make test: the optimized build is back in place"; \
	  else \
	    echo "make test: left the bounds-checked (debug) build; make build gives the optimized one"; \
	  fi; \
	}; \
	trap restore EXIT; \
	$(BUILD_DEBUG) && $(PYTHON) -m pytest -q $(PYTEST_PARALLEL) $(PYTEST_MARK)

test-fast: deps build  ## optimized build, tests not marked slow
	$(PYTHON) -m pytest -q $(PYTEST_PARALLEL)

lint:  ## ruff over the package, tests and scripts
	$(PYTHON) -m ruff check dparse tests data_scripts benchmarks

# The demo trains o1-cle on en_ewt's gold tags and parses test with them, then the same parser
# on predicted tags (configs/en_ewt/o1-cle-tagged.yaml: its tagger, a 10-fold jackknife of the
# training file, the parser), which parses test from its words alone (--tags predict: every
# tag column predicted), and prints both reports (the second with the tagging accuracies).
demo: install  ## train o1-cle on en_ewt on gold and on predicted tags, parse test, print both reports
	@mkdir -p $(RESULTS)
	$(PYTHON) -m dparse train configs/en_ewt/o1-cle.yaml --out $(MODELS)/en_ewt-o1-cle
	$(PYTHON) -m dparse parse $(MODELS)/en_ewt-o1-cle $(DPARSE_DATA)/en_ewt/test.conllu -o $(RESULTS)/en_ewt-o1-cle.test.conllu
	$(PYTHON) -m dparse train configs/en_ewt/o1-cle-tagged.yaml --out $(MODELS)/en_ewt-o1-cle-tagged \
		--work $(MODELS)/en_ewt.tagged --jobs 2
	$(PYTHON) -m dparse parse $(MODELS)/en_ewt-o1-cle-tagged $(DPARSE_DATA)/en_ewt/test.conllu \
		--tags predict -o $(RESULTS)/en_ewt-o1-cle-tagged.test.conllu
	@echo "== o1-cle on gold tags (en_ewt test)"
	$(PYTHON) -m dparse eval $(DPARSE_DATA)/en_ewt/test.conllu $(RESULTS)/en_ewt-o1-cle.test.conllu
	@echo "== o1-cle on predicted tags, parsing the test file's words alone"
	$(PYTHON) -m dparse eval $(DPARSE_DATA)/en_ewt/test.conllu $(RESULTS)/en_ewt-o1-cle-tagged.test.conllu

bench: install  ## speed, accuracy, memory; read/write/eval tok/s -> results/bench.md, plots in results/plots/
	$(PYTHON) benchmarks/bench.py --data $(DPARSE_DATA) --out $(RESULTS)/bench.md \
		--plots $(RESULTS)/plots \
		$(if $(JOBS),--jobs 1$(comma)$(JOBS))

clean:  ## remove build products
	rm -rf build
	$(EXT_FILES) -delete

-include make/*.mk
