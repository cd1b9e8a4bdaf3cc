# Zhang and McDonald (2012), generalized higher-order Eisner parsing with cube pruning (see
# docs/design.md, 'Papers'): Tables 1-4 shaped reports (benchmarks/cube_tables.py) and decoder
# scaling.
#
#   make cube-table1    exact 1st/2nd/3rd-order parsers and the cube model on en_ewt test:
#                       UAS, LAS, tokens/sec                          -> results/cube-table1.md
#   make cube-table2    o1-eisner, o2-eisner and o3-cube on the other treebanks under $(DATA)
#                       (CUBE_TREEBANKS=tr_imst,el_gdt restricts them) -> results/cube-table2.md
#   make cube-table3    feature-group ablation on en_ewt (configs/en_ewt/o3-cube-*.yaml)
#                                                                     -> results/cube-table3.md
#   make cube-table4    the o3-cube model with k = 2, 5, 10, with and without recombination:
#                       UAS, LAS, tokens/sec, search errors           -> results/cube-table4.md
#   make cube-scaling   cube vs exact third-order decoding time against sentence length on
#                       random pruned part scores, fitted exponents   -> results/cube-scaling.md
#                       (log-log plots: results/plots/cube-scaling.{png,svg})
#   make cube-configs   rewrite the Table 3 configs from configs/en_ewt/o3-cube.yaml
#
# Models are found in $(MODELS) (then in each CUBE_REUSE folder) as <config name>, e.g.
# models/en_ewt-o3-cube, and trained there when missing; CUBE_MODELS='o3-cube=/tmp/o3/x ...'
# names model directories outright, CUBE_REFERENCE the o1-cle model of the reference speed.
# With JOBS=N or CLUSTER=slurm the missing models of a table are trained first as a grid
# (configs/grids/cube-models-en_ewt.yaml, cube-models-table2.yaml; make/batch.mk).

CUBE_TREEBANKS ?=
CUBE_PUNCT ?= include
CUBE_REUSE ?=
CUBE_MODELS ?=
CUBE_REFERENCE ?=
CUBE_ARGS = --data $(DPARSE_DATA) --models $(MODELS) --punct $(CUBE_PUNCT) \
	$(foreach r,$(CUBE_REUSE),--reuse $(r)) $(foreach m,$(CUBE_MODELS),--model $(m)) \
	$(if $(CUBE_REFERENCE),--reference $(CUBE_REFERENCE))

.PHONY: cube-table1 cube-table2 cube-table3 cube-table4 cube-scaling cube-configs \
	cube-models-grid1 cube-models-grid2 cube-models-grid3 cube-models-grid4

TABLES += cube-table1 cube-table2 cube-table3 cube-table4 cube-scaling
cube-table1_DATA := en_ewt
cube-table2_DATA :=
cube-table3_DATA := en_ewt
cube-table4_DATA := en_ewt
cube-scaling_DATA :=

cube-table1:  ## cube-pruning paper Table 1 (exact 1st-3rd order vs cube, en_ewt) -> results/cube-table1.md
cube-table2:  ## cube-pruning paper Table 2 (every other treebank) -> results/cube-table2.md
cube-table3:  ## cube-pruning paper Table 3 (feature-group ablation, en_ewt) -> results/cube-table3.md
cube-table4:  ## cube-pruning paper Table 4 (k, recombination, search errors) -> results/cube-table4.md
cube-table1 cube-table2 cube-table3 cube-table4: cube-table%:
	$(PYTHON) benchmarks/cube_tables.py table$* $(CUBE_ARGS) \
		--out $(RESULTS)/cube-table$*.md $(if $(CUBE_TREEBANKS),--treebanks $(CUBE_TREEBANKS))

# the configs (of configs/grids/cube-models-en_ewt.yaml) that each en_ewt table needs
CUBE_GRID_1 := o1-cle,o1-eisner,o2-eisner,o3-exact,o3-cube
CUBE_GRID_3 := o1-cle,o3-cube-none,o3-cube-sib,o3-cube-carreras,o3-cube-koo,o3-cube
CUBE_GRID_4 := o1-cle,o3-cube

cube-models-grid1 cube-models-grid3 cube-models-grid4: cube-models-grid%:
	$(call models_grid,cube-models-en_ewt,$(MODELS),--only config=$(CUBE_GRID_$*))

cube-models-grid2:
	$(call models_grid,cube-models-table2,$(MODELS),$(if $(CUBE_TREEBANKS),--only treebank=$(CUBE_TREEBANKS)))

ifneq ($(BATCH),)
cube-table1 cube-table2 cube-table3 cube-table4: cube-table%: cube-models-grid%
endif

cube-scaling:  ## cube pruning vs exact third-order decoding time against n -> results/cube-scaling.md
	$(PYTHON) benchmarks/cube_scaling.py --out $(RESULTS)/cube-scaling.md \
		--plot $(RESULTS)/plots/cube-scaling

cube-configs:  ## rewrite configs/en_ewt/o3-cube-*.yaml (Table 3 rows) from o3-cube.yaml
	$(PYTHON) benchmarks/cube_tables.py write-configs
