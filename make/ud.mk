# Issue 18: the language-neutral configs (configs/ud/: o1-cle, easyfirst, o2-eisner, o2-dd,
# sr-nonsp-b12) trained and scored on every treebank of the data root, beside the peers' figures.
#
#   make ud-table [DATA=...] [JOBS=N] [CLUSTER=slurm] [UD_TABLE_TREEBANKS=da_ddt,zh_gsd]
#       runs the grid configs/grids/ud.yaml (dparse grid; finished cells under
#       $(GRID_RUNS)/ud are never rerun) on the treebanks present under DATA, then writes
#       results/ud-table.md (benchmarks/ud_table.py). Hours for all 14 treebanks on 2 cores
#       (en_ewt and pt_bosque take most of it); minutes per small treebank.

TABLES += ud-table
ud-table_DATA := da_ddt
UD_TABLE_TREEBANKS ?= $(shell PYTHONPATH=$(PYTHONPATH) $(PYTHON) benchmarks/ud_table.py --present $(DPARSE_DATA))

.PHONY: ud-table

ud-table:  ## configs/ud/* on every treebank in DATA (JOBS=N) -> results/ud-table.md
	mkdir -p $(RESULTS)
	$(PYTHON) -m dparse grid configs/grids/ud.yaml --out $(GRID_RUNS)/ud $(GRID_WORKERS) \
		$(GRID_CLUSTER) --only treebank=$(UD_TABLE_TREEBANKS) \
		|| echo "ud-table: some cells failed (see $(GRID_RUNS)/ud/results.md); table written anyway"
	$(PYTHON) benchmarks/ud_table.py $(GRID_RUNS)/ud -o $(RESULTS)/ud-table.md
