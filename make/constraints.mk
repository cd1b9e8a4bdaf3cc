# Constrained parsing (issue 49): en_ewt test with 0%, 10%, 30% and 50% of the gold arcs fixed.
#
#   make constraints-en_ewt   parse en_ewt test with every en_ewt model found under
#                             $(CONSTRAINTS_MODELS) (graph: en_ewt-o1-cle, -o1-eisner, -o1-bgi-pp,
#                             -o2-eisner, -o2-dd, -o2-bgi-pp-ib, -o3-cube, -o3-exact; en_ewt-easyfirst,
#                             -sr-nonsp-b12, -o1-umst-uf-lep, -rerank-local: make check-retrain trains
#                             them into $(MODELS)/retrain), unconstrained and with the fixed arcs kept
#                             (--constraints keep), and score the free arcs
#                             -> results/constraints-en_ewt.md (+ .json); about 20 minutes here

CONSTRAINTS_MODELS ?= $(MODELS)/retrain

TABLES += constraints-en_ewt
constraints-en_ewt_DATA := en_ewt
.PHONY: constraints-en_ewt
constraints-en_ewt:  ## UAS/LAS of the free arcs with 0/10/30/50% of gold arcs fixed, every family's decoder -> results/constraints-en_ewt.md
	$(PYTHON) benchmarks/constraints_table.py --test $(DPARSE_DATA)/en_ewt/test.conllu \
		--models $(CONSTRAINTS_MODELS) --out $(RESULTS)/constraints-en_ewt.md
