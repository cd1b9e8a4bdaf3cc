# Issue 18: the language-neutral configs (configs/ud/: o1-cle, easyfirst, o2-eisner, o2-dd,
# sr-nonsp-b12) trained and scored on every treebank of the data root, beside the peers' figures.
#
#   make ud-table [DATA=...] [JOBS=N] [CLUSTER=slurm] [UD_TABLE_TREEBANKS=da_ddt,zh_gsd]
#       runs the grid configs/grids/ud.yaml (dparse grid; finished cells under
#       $(GRID_RUNS)/ud are never rerun) on the treebanks present under DATA, then writes
#       results/ud-table.md (benchmarks/ud_table.py). Hours for all 14 treebanks on 2 cores
#       (en_ewt and pt_bosque take most of it); minutes per small treebank.
#
# Issue 33, item 5: the same on predicted tags.
#
#   make ud-table TAGS=predicted [DATA=...] [JOBS=N] [CLUSTER=slurm] [UD_TABLE_TREEBANKS=...]
#       runs the grid configs/grids/ud-tagged.yaml (the tagger, o1-cle and o2-eisner trained
#       on 10-fold jackknifed tags; the same treebanks, configs/grids/treebanks/ud.yaml) under
#       $(GRID_RUNS)/ud-tagged, then writes results/ud-table-tagged.md
#       (benchmarks/ud_table_tagged.py): the tagger's accuracies and the parsers' UAS / LAS
#       from the test files' words alone, beside the gold-tag figures of the cells under
#       $(GRID_RUNS)/ud (make ud-table's) where they exist, and UDPipe 1's figures from
#       $(UD_TABLE_PEERS) if that file exists (its format and how its figures are obtained:
#       benchmarks/ud_table_tagged.py). TAGS unset or gold: the gold-tag table above.
#
# Issue 48, item 5: the neural first-order parser from words alone on the same treebanks.
#
#   make ud-table SCORER=neural [DATA=...] [JOBS=N] [CLUSTER=slurm] [UD_TABLE_TREEBANKS=...]
#       runs the grid configs/grids/ud-neural.yaml (configs/ud/neural-o1.yaml: a BiLSTM-biaffine
#       network reading FORM only, with UPOS, XPOS and FEATS heads, trained on one torch
#       thread; each cell parses the test file from its words alone) under
#       $(GRID_RUNS)/ud-neural, then writes results/ud-table-neural.md
#       (benchmarks/ud_table_neural.py): its UAS / LAS beside o2-eisner-tagged and
#       o1-cle-tagged of the cells under $(GRID_RUNS)/ud-tagged (make ud-table TAGS=predicted)
#       where they exist, the LAS margin over o2-eisner-tagged and on how many treebanks it is
#       above (issue 48's target: 11 of the 14), speeds and training times. Needs the neural
#       extra (pip install 'dparse[neural]'). Hours: en_ewt alone trains 20 epochs of a
#       minute or two. TAGS is not read. SCORER unset or linear: the tables above (TAGS
#       chooses which).

TABLES += ud-table
ud-table_DATA := da_ddt
UD_TABLE_TREEBANKS ?= $(shell PYTHONPATH=$(PYTHONPATH) $(PYTHON) benchmarks/ud_table.py --present $(DPARSE_DATA))
UD_TABLE_PEERS ?= $(RESULTS)/udpipe1-figures.json
TAGS ?= gold
SCORER ?= linear

.PHONY: ud-table

ud-table:  ## configs/ud/* on every treebank in DATA (JOBS=N) -> results/ud-table.md; TAGS=predicted: tagger, o1-cle, o2-eisner on predicted tags -> results/ud-table-tagged.md; SCORER=neural: neural-o1 from words alone -> results/ud-table-neural.md
	$(if $(filter-out gold predicted,$(TAGS)),$(error TAGS=$(TAGS): expected gold or predicted))
	$(if $(filter-out linear neural,$(SCORER)),$(error SCORER=$(SCORER): expected linear or neural))
	mkdir -p $(RESULTS)
ifeq ($(SCORER),neural)
	$(PYTHON) -m dparse grid configs/grids/ud-neural.yaml --out $(GRID_RUNS)/ud-neural \
		$(GRID_WORKERS) $(GRID_CLUSTER) --only treebank=$(UD_TABLE_TREEBANKS) \
		|| echo "ud-table: some cells failed (see $(GRID_RUNS)/ud-neural/results.md); table written anyway"
	$(PYTHON) benchmarks/ud_table_neural.py $(GRID_RUNS)/ud-neural \
		--tagged-grid $(GRID_RUNS)/ud-tagged -o $(RESULTS)/ud-table-neural.md
else ifeq ($(TAGS),predicted)
	$(PYTHON) -m dparse grid configs/grids/ud-tagged.yaml --out $(GRID_RUNS)/ud-tagged \
		$(GRID_WORKERS) $(GRID_CLUSTER) --only treebank=$(UD_TABLE_TREEBANKS) \
		|| echo "ud-table: some cells failed (see $(GRID_RUNS)/ud-tagged/results.md); table written anyway"
	$(PYTHON) benchmarks/ud_table_tagged.py $(GRID_RUNS)/ud-tagged --gold-grid $(GRID_RUNS)/ud \
		--peers $(UD_TABLE_PEERS) -o $(RESULTS)/ud-table-tagged.md
else
	$(PYTHON) -m dparse grid configs/grids/ud.yaml --out $(GRID_RUNS)/ud $(GRID_WORKERS) \
		$(GRID_CLUSTER) --only treebank=$(UD_TABLE_TREEBANKS) \
		|| echo "ud-table: some cells failed (see $(GRID_RUNS)/ud/results.md); table written anyway"
	$(PYTHON) benchmarks/ud_table.py $(GRID_RUNS)/ud -o $(RESULTS)/ud-table.md
endif
