# Issue 49: dparse eval's CoNLL 2018 metrics (UPOS ... LAS, CLAS, MLAS, BLEX) against the
# shared task's official scorer, conll18_ud_eval.py (not in this repository: take it from the
# shared task's repository, evaluation_script/, into a scratch folder).
#
#   make conll18-check OFFICIAL=path/conll18_ud_eval.py [CONLL18_SYSTEMS=...] [ONLY=...]
#       scores every system file found under CONLL18_SYSTEMS (files or folders; default: the
#       cells of make ud-table TAGS=predicted, $(GRID_RUNS)/ud-tagged, each against its
#       treebank's test file; also any *.test.conllu, gold from the name's treebank) with both,
#       keeping the systems whose name contains ONLY (default o2-eisner-tagged; ONLY= keeps
#       all), and writes CONLL18_OUT (default results/conll18-metrics.md;
#       benchmarks/conll18_check.py); fails if a metric differs. Seconds per system.

CONLL18_SYSTEMS ?= $(GRID_RUNS)/ud-tagged
ONLY ?= o2-eisner-tagged
CONLL18_OUT ?= $(RESULTS)/conll18-metrics.md

.PHONY: conll18-check

conll18-check:  ## eval's CoNLL 2018 metrics against the official scorer (OFFICIAL=path) -> CONLL18_OUT
	$(if $(OFFICIAL),,$(error OFFICIAL=path/conll18_ud_eval.py is required))
	mkdir -p $(dir $(CONLL18_OUT))
	$(PYTHON) benchmarks/conll18_check.py --official $(OFFICIAL) $(CONLL18_SYSTEMS) \
		$(if $(ONLY),--only $(ONLY)) -o $(CONLL18_OUT)

# Issue 51: dparse eval of systems with their own tokenization (the CoNLL 2018 alignment)
# against the same scorer.
#
#   make conll18-aligned OFFICIAL=path/conll18_ud_eval.py [ALIGNED_RATES=...] [ALIGNED_SOURCES=...]
#       re-tokenizes every treebank's test file under DATA, and each *.test.conllu of
#       ALIGNED_SOURCES (parser outputs, named after their treebank), at each rate of
#       ALIGNED_RATES (benchmarks/retokenize.py: tokens split and merged, multiword tokens
#       dropped, re-expanded and made, sentence breaks moved; tags, heads and relations
#       perturbed; seeds 1, 2, ...) into ALIGNED_WORK, scores each with both and writes
#       results/conll18-aligned.md; fails if a count differs. Seconds per system.

ALIGNED_RATES ?= 0.02 0.1 0.3
ALIGNED_SOURCES ?=
ALIGNED_WORK ?= $(MODELS)/conll18-aligned

.PHONY: conll18-aligned

conll18-aligned:  ## eval of re-tokenized systems against the official scorer (OFFICIAL=path) -> results/conll18-aligned.md
	$(if $(OFFICIAL),,$(error OFFICIAL=path/conll18_ud_eval.py is required))
	mkdir -p $(RESULTS) $(ALIGNED_WORK)
	set -e; seed=0; for src in $(wildcard $(DATA)/*/test.conllu) $(ALIGNED_SOURCES); do \
	  case $$src in */test.conllu) name=$$(basename $$(dirname $$src));; \
	    *) name=$$(basename $$src .test.conllu);; esac; \
	  for rate in $(ALIGNED_RATES); do seed=$$((seed + 1)); \
	    $(PYTHON) benchmarks/retokenize.py $$src --rate $$rate --seed $$seed \
	      -o $(ALIGNED_WORK)/$$name-retok$$rate.test.conllu; \
	  done; done
	$(PYTHON) benchmarks/conll18_check.py --official $(OFFICIAL) --aligned --data-root $(DATA) \
		$(ALIGNED_WORK) -o $(RESULTS)/conll18-aligned.md
