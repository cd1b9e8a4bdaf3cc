# Issue 49: dparse eval's CoNLL 2018 metrics (UPOS ... LAS, CLAS, MLAS, BLEX) against the
# shared task's official scorer, conll18_ud_eval.py (not in this repository: take it from the
# shared task's repository, evaluation_script/, into a scratch folder).
#
#   make conll18-check OFFICIAL=path/conll18_ud_eval.py [CONLL18_SYSTEMS=...] [ONLY=...]
#       scores every system file found under CONLL18_SYSTEMS (files or folders; default: the
#       cells of make ud-table TAGS=predicted, $(GRID_RUNS)/ud-tagged, each against its
#       treebank's test file; also any *.test.conllu, gold from the name's treebank) with both,
#       keeping the systems whose name contains ONLY (default o2-eisner-tagged; ONLY= keeps
#       all), and writes results/conll18-metrics.md (benchmarks/conll18_check.py); fails if a
#       metric differs. Seconds per system.

CONLL18_SYSTEMS ?= $(GRID_RUNS)/ud-tagged
ONLY ?= o2-eisner-tagged

.PHONY: conll18-check

conll18-check:  ## eval's CoNLL 2018 metrics against the official scorer (OFFICIAL=path) -> results/conll18-metrics.md
	$(if $(OFFICIAL),,$(error OFFICIAL=path/conll18_ud_eval.py is required))
	mkdir -p $(RESULTS)
	$(PYTHON) benchmarks/conll18_check.py --official $(OFFICIAL) $(CONLL18_SYSTEMS) \
		$(if $(ONLY),--only $(ONLY)) -o $(RESULTS)/conll18-metrics.md
