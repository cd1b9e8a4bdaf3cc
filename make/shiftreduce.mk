# Beam shift-reduce parsing with dynamic programming (Hayashi, Kondo and Matsumoto 2013,
# Sections 2-4): spurious and non-spurious systems, packed forests.
#
#   make sr-models   train the non-spurious and spurious beam-12 models and the beam-1 baseline
#                    -> $(MODELS)/en_ewt-sr-{nonsp-b12,sp-b12,b1} (logs in $(RESULTS)/shiftreduce/)
#   make sr-tables   Table 2 shape (UAS with/without punctuation, CPU sec. per sentence with
#                    forest writing, beams 8..128), Table 3 shape (distinct trees among the
#                    K best of spurious forests), Figure 4 shape (1-best / K-best / forest oracle)
#                    and speed next to o1-cle -> results/sr-tables.md

TABLES += sr-tables
sr-tables_DATA := en_ewt

SR_OUT := $(RESULTS)/shiftreduce
SR_MODELS := sr-nonsp-b12 sr-sp-b12 sr-b1

.PHONY: sr-models sr-tables sr-models-grid

# With JOBS=N or CLUSTER=slurm the missing models are trained first as a grid
# (configs/grids/sr-models.yaml; make/batch.mk), before the rules below look for them.
sr-models-grid:
	$(call models_grid,sr-models,$(MODELS))

define SR_MODEL_RULE
$(MODELS)/en_ewt-$(1)/weights.bin: configs/en_ewt/$(1).yaml
	@mkdir -p $(SR_OUT)
	$(PYTHON) -m dparse train configs/en_ewt/$(1).yaml --out $(MODELS)/en_ewt-$(1) \
		2> $(SR_OUT)/$(1).train.log || (cat $(SR_OUT)/$(1).train.log; exit 1)
endef
$(foreach m,$(SR_MODELS),$(eval $(call SR_MODEL_RULE,$(m))))

sr-models: $(if $(BATCH),sr-models-grid) $(SR_MODELS:%=$(MODELS)/en_ewt-%/weights.bin)  ## train the shift-reduce models (beam 12 both systems, beam 1)

sr-tables: sr-models $(MODELS)/en_ewt-o1-cle/weights.bin  ## Tables 2-3 / Figure 4 of the forest-reranking paper (parser half) -> results/sr-tables.md
	$(PYTHON) benchmarks/sr_tables.py --data $(DPARSE_DATA) --nonsp $(MODELS)/en_ewt-sr-nonsp-b12 \
		--sp $(MODELS)/en_ewt-sr-sp-b12 --b1 $(MODELS)/en_ewt-sr-b1 \
		--ref $(MODELS)/en_ewt-o1-cle --out $(RESULTS)/sr-tables.md
