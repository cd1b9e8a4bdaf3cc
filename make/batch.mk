# Batch runs past one machine (issue 15): parsing with worker processes or in shards
# (dparse parse --jobs N / --shard I/N) and experiment grids on Dask (dparse grid).
#
#   make grid-smoke     the smoke grid (configs/grids/smoke.yaml: 2 parser types x 2 seeds,
#                       one epoch on en_ewt dev) on $(JOBS) local workers, or CLUSTER=slurm|pbs
#                       -> results/grid-smoke.md
#   make slurm-check    start a single-node SLURM on this machine (../shared/tools, Debian's
#                       slurm-wlm and munge), run the smoke grid through dask-jobqueue, stop
#                       SLURM (whatever the grid did) -> results/grid-smoke-slurm.md
#   make bench-jobs     dparse parse --jobs 1 against --jobs $(JOBS) (default 2), alternated, on
#                       en_ewt test repeated (the jobs section of make bench, alone; the o1-cle
#                       model is trained into $(MODELS) if missing) -> results/bench-jobs.md
#   make greedy-tables JOBS=4 [CLUSTER=slurm]   train the models of the greedy tables as a grid
#                       first (configs/grids/greedy-models-o*.yaml), then build the tables from them
# The other reproduction targets do the same with JOBS or CLUSTER given: umst-tables
# (configs/grids/umst-models.yaml), cube-table1..4 (cube-models-en_ewt.yaml,
# cube-models-table2.yaml), easyfirst-tables (easyfirst-models.yaml), sr-tables
# (sr-models.yaml); ud-table is a grid itself; rerank-tables makes JOBS jackknife folds at a time
# (local processes only). Only the models missing from the folder a table looks in are trained.
# JOBS is the number of workers (local processes or batch jobs); CLUSTER local, slurm or pbs
# (slurm and pbs need `pip install '.[cluster]'`); SLURM_QUEUE, SLURM_WALLTIME, SLURM_MEMORY the
# batch settings. Cells already finished under $(GRID_RUNS) are never rerun.

JOBS ?=
CLUSTER ?= local
SLURM_TOOLS ?= ../shared/tools
SLURM_QUEUE ?= debug
SLURM_WALLTIME ?= 00:30:00
SLURM_MEMORY ?= 2GB
GRID_RUNS ?= $(MODELS)/grids
GRID_WORKERS = $(if $(JOBS),--workers $(JOBS))
GRID_CLUSTER = --cluster $(CLUSTER) $(if $(filter slurm pbs,$(CLUSTER)),--queue $(SLURM_QUEUE) \
	--walltime $(SLURM_WALLTIME) --memory $(SLURM_MEMORY))
# non-empty when the tables' models are to be trained as grids first
BATCH := $(strip $(JOBS)$(filter slurm pbs,$(CLUSTER)))
# $(call models_grid,GRID,FOLDER[,OPTIONS]): train the models of configs/grids/GRID.yaml that
# FOLDER lacks (by name) as a grid, linked into FOLDER
models_grid = $(PYTHON) -m dparse grid configs/grids/$(1).yaml --out $(GRID_RUNS)/$(1) \
	$(GRID_WORKERS) $(GRID_CLUSTER) --models $(2) --missing-only $(3)

.PHONY: grid-smoke slurm-check greedy-models-grid bench-jobs print-%

bench-jobs: install  ## parse --jobs 1 vs --jobs JOBS (2), alternated, o1-cle on en_ewt test x8 -> results/bench-jobs.md
	$(PYTHON) benchmarks/bench.py --data $(DPARSE_DATA) --config configs/en_ewt/o1-cle.yaml \
		--model-dir $(MODELS) --no-decoders --jobs 1$(comma)$(or $(JOBS),2) \
		--out $(RESULTS)/bench-jobs.md

grid-smoke:  ## a 4-cell grid on a local Dask cluster (JOBS=N workers, or CLUSTER=slurm) -> results/grid-smoke.md
	mkdir -p $(RESULTS)
	$(PYTHON) -m dparse grid configs/grids/smoke.yaml --out $(GRID_RUNS)/smoke $(GRID_WORKERS) \
		$(GRID_CLUSTER)
	cp $(GRID_RUNS)/smoke/results.md $(RESULTS)/grid-smoke.md

# The scheduler listens on 127.0.0.1, which the single-node SLURM's jobs reach.
slurm-check:  ## the smoke grid through dask-jobqueue on a single-node SLURM started here, then stopped
	mkdir -p $(RESULTS)
	rm -rf $(GRID_RUNS)/smoke-slurm  # a check: every cell runs, in a batch job
	$(SLURM_TOOLS)/slurm-local-start.sh
	status=0; \
	$(PYTHON) -m dparse grid configs/grids/smoke.yaml --out $(GRID_RUNS)/smoke-slurm \
		--cluster slurm --queue $(SLURM_QUEUE) --walltime $(SLURM_WALLTIME) \
		--memory $(SLURM_MEMORY) --workers $(or $(JOBS),2) --scheduler-host 127.0.0.1 \
		--progress || status=$$?; \
	test $$status -ne 0 || $(PYTHON) -c 'import json, sys; r = json.load(open(sys.argv[1])); \
		jobs = sorted({c.get("batch_job") or "none" for c in r}); print("cells ran in SLURM jobs", jobs); \
		sys.exit("none" in jobs)' $(GRID_RUNS)/smoke-slurm/results.json || status=1; \
	sinfo; $(SLURM_TOOLS)/slurm-local-stop.sh; \
	test $$status -eq 0 && cp $(GRID_RUNS)/smoke-slurm/results.md $(RESULTS)/grid-smoke-slurm.md; \
	exit $$status

# greedy-tables with JOBS or CLUSTER: its models are trained as a grid first and linked into
# $(GREEDY_MODELS) by name, where benchmarks/greedy_tables.py finds (and checks) them.
greedy-models-grid:
	$(foreach k,$(GREEDY_ORDER_LIST),$(call models_grid,greedy-models-o$(k),$(GREEDY_MODELS),\
		$(if $(GREEDY_TREEBANKS),--only treebank=$(GREEDY_TREEBANKS))) &&) true

ifneq ($(BATCH),)
greedy-tables: greedy-models-grid
endif

# make print-VAR: a variable's value (tests compare the grids with the make files' settings)
print-%:
	@echo '$($*)'
