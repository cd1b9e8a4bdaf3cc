# Levi, Reichart and Rappoport (2016), edge-linear undirected MST parsing (see docs/design.md,
# 'Papers').
#
#   make umst-tables    Tables 1 and 2 on every treebank under $(DATA) -> results/umst-tables.md
#   make umst-scaling   U-MST vs CLE inference time against edges   -> results/umst-scaling.md
#                       log-log plots: results/plots/umst-scaling-{n,time-m}.{png,svg}
#   make umst-prune     length-dictionary pruning figures on en_ewt  -> results/umst-prune.md
# UMST_TREEBANKS=en_ewt,tr_imst restricts the tables to some setups; models are reused from
# $(MODELS)/umst when present. With JOBS=N or CLUSTER=slurm the missing models are trained first
# as a grid (configs/grids/umst-models.yaml, make/batch.mk).

UMST_TREEBANKS ?=
UMST_PUNCT ?= include

TABLES += umst-tables
umst-tables_DATA := en_ewt
umst-tables:  ## Tables 1-2 of the undirected-MST paper (all treebanks) -> results/umst-tables.md
	$(PYTHON) benchmarks/umst_tables.py --data $(DPARSE_DATA) --models $(MODELS)/umst \
		--punct $(UMST_PUNCT) --out $(RESULTS)/umst-tables.md \
		$(if $(UMST_TREEBANKS),--treebanks $(UMST_TREEBANKS))

umst-models-grid:
	$(call models_grid,umst-models,$(MODELS)/umst,$(if $(UMST_TREEBANKS),--only treebank=$(UMST_TREEBANKS)))

ifneq ($(BATCH),)
umst-tables: umst-models-grid
endif

TABLES += umst-scaling
umst-scaling_DATA :=
umst-scaling:  ## U-MST (KKT, Boruvka) vs CLE decoding time against edges -> results/umst-scaling.md
	$(PYTHON) benchmarks/umst_scaling.py --out $(RESULTS)/umst-scaling.md \
		--plot $(RESULTS)/plots/umst-scaling \
		$(if $(wildcard $(DPARSE_DATA)/en_ewt/test.conllu),--train $(DPARSE_DATA)/en_ewt/train.conllu \
		--treebank $(DPARSE_DATA)/en_ewt/test.conllu)

TABLES += umst-prune
umst-prune_DATA := en_ewt/train.conllu en_ewt/test.conllu
umst-prune:  ## length-dictionary pruning on en_ewt test (longest arc; 0.99 quantile)
	mkdir -p $(RESULTS)
	$(PYTHON) -m dparse prune learn $(DPARSE_DATA)/en_ewt/train.conllu \
		-o $(RESULTS)/en_ewt.lendict.json
	$(PYTHON) -m dparse prune learn $(DPARSE_DATA)/en_ewt/train.conllu --quantile 0.99 \
		-o $(RESULTS)/en_ewt.lendict-q99.json
	{ echo "# Length-dictionary pruning, en_ewt test"; echo; \
	  echo "- longest arc (the paper):"; \
	  $(PYTHON) -m dparse prune eval $(DPARSE_DATA)/en_ewt/test.conllu \
		--dictionary $(RESULTS)/en_ewt.lendict.json; \
	  echo "- 0.99 quantile:"; \
	  $(PYTHON) -m dparse prune eval $(DPARSE_DATA)/en_ewt/test.conllu \
		--dictionary $(RESULTS)/en_ewt.lendict-q99.json; } > $(RESULTS)/umst-prune.md
	cat $(RESULTS)/umst-prune.md
