# Forest reranking on the shift-reduce packed forests (Hayashi, Kondo and Matsumoto 2013,
# Sections 5-6).
#
#   make rerank-models   the rerankers of en_ewt: local and non-local, on the non-spurious and
#                        the spurious beam-12 forests, and the non-spurious ones without guide
#                        features -> $(MODELS)/en_ewt-rerank-{local,nonlocal}-{nonsp,sp}[-noguide]
#                        (first stages and 10-fold jackknifed forests in
#                        $(MODELS)/en_ewt-sr-{nonsp,sp}-b12.jackknife, made RERANK_JOBS folds
#                        at a time; logs in $(RESULTS)/rerank/)
#   make rerank-tables   Tables 4-7 and 9-10 shapes (forest statistics, training time, test UAS
#                        and seconds per sentence at beams 8-64 with local and non-local
#                        reranking, with and without guide features) and the pipeline's speed
#                        next to o1-cle, with o2-eisner's UAS -> results/rerank-tables.md
#   make rerank-table14  the non-spurious system with local and non-local reranking on
#                        pt_bosque (configs/pt_bosque/) -> results/rerank-table14.md
#
# Training every en_ewt model takes about two hours on 2 cores (the jackknife: 20 first-stage
# trainings of about 4 minutes; each reranker a few minutes).

TABLES += rerank-tables rerank-table14
rerank-tables_DATA := en_ewt
rerank-table14_DATA := pt_bosque

# jackknife folds trained at a time (local processes; on a cluster, run `dparse train --fold I`
# as a job array, README)
RERANK_JOBS ?= $(or $(JOBS),2)
RERANK_OUT := $(RESULTS)/rerank
RERANK_EN := local-nonsp nonlocal-nonsp local-sp nonlocal-sp local-nonsp-noguide nonlocal-nonsp-noguide
RERANK_SET_nonsp :=
RERANK_SET_sp := --set rerank.first_stage=sr-sp-b12.yaml
RERANK_SET_noguide := --set rerank.guide=false

.PHONY: rerank-models rerank-tables rerank-table14

# $(MODELS)/<treebank>-rerank-<kind>-<system>[-noguide]/weights.bin
# $(1) treebank, $(2) kind (local, nonlocal), $(3) system (nonsp, sp), $(4) -noguide or empty
define RERANK_MODEL_RULE
$(MODELS)/$(1)-rerank-$(2)-$(3)$(4)/weights.bin: configs/$(1)/rerank-$(2).yaml
	@mkdir -p $(RERANK_OUT)
	$(PYTHON) -m dparse train configs/$(1)/rerank-$(2).yaml --out $(MODELS)/$(1)-rerank-$(2)-$(3)$(4) \
		--work $(MODELS)/$(1)-sr-$(3)-b12.jackknife --jobs $(RERANK_JOBS) \
		--set name=$(1)-rerank-$(2)-$(3)$(4) $(RERANK_SET_$(3)) $(if $(4),$(RERANK_SET_noguide)) \
		2> $(RERANK_OUT)/$(1)-rerank-$(2)-$(3)$(4).train.log \
		|| (cat $(RERANK_OUT)/$(1)-rerank-$(2)-$(3)$(4).train.log; exit 1)
endef
$(foreach k,local nonlocal,$(foreach s,nonsp sp,$(eval $(call RERANK_MODEL_RULE,en_ewt,$(k),$(s),))))
$(foreach k,local nonlocal,$(eval $(call RERANK_MODEL_RULE,en_ewt,$(k),nonsp,-noguide)))
$(foreach k,local nonlocal,$(eval $(call RERANK_MODEL_RULE,pt_bosque,$(k),nonsp,)))

# the models of one first stage share its jackknife: made by the first, reused by the others
$(MODELS)/en_ewt-rerank-nonlocal-nonsp/weights.bin: | $(MODELS)/en_ewt-rerank-local-nonsp/weights.bin
$(MODELS)/en_ewt-rerank-local-nonsp-noguide/weights.bin: | $(MODELS)/en_ewt-rerank-local-nonsp/weights.bin
$(MODELS)/en_ewt-rerank-nonlocal-nonsp-noguide/weights.bin: | $(MODELS)/en_ewt-rerank-local-nonsp/weights.bin
$(MODELS)/en_ewt-rerank-nonlocal-sp/weights.bin: | $(MODELS)/en_ewt-rerank-local-sp/weights.bin

rerank-models: $(RERANK_EN:%=$(MODELS)/en_ewt-rerank-%/weights.bin)  ## train the en_ewt forest rerankers (about two hours)

$(MODELS)/en_ewt-o2-eisner/weights.bin: configs/en_ewt/o2-eisner.yaml
	$(PYTHON) -m dparse train configs/en_ewt/o2-eisner.yaml --out $(MODELS)/en_ewt-o2-eisner -q

rerank-tables: rerank-models $(MODELS)/en_ewt-o1-cle/weights.bin $(MODELS)/en_ewt-o2-eisner/weights.bin  ## Tables 4-7, 9-10 of the forest-reranking paper -> results/rerank-tables.md
	$(PYTHON) benchmarks/rerank_tables.py --models $(MODELS) --name en_ewt-rerank \
		--work $(MODELS) --work-prefix en_ewt-sr --work-suffix=-b12.jackknife \
		--logs $(RERANK_OUT) --test $(DPARSE_DATA)/en_ewt/test.conllu --guide \
		--ref $(MODELS)/en_ewt-o1-cle --o2 $(MODELS)/en_ewt-o2-eisner --out $(RESULTS)/rerank-tables.md

rerank-table14: $(MODELS)/pt_bosque-rerank-local-nonsp/weights.bin $(MODELS)/pt_bosque-rerank-nonlocal-nonsp/weights.bin $(MODELS)/en_ewt-o1-cle/weights.bin  ## Table 14 shape on pt_bosque -> results/rerank-table14.md
	$(PYTHON) benchmarks/rerank_tables.py --models $(MODELS) --name pt_bosque-rerank \
		--systems nonsp --work $(MODELS) --work-prefix pt_bosque-sr --work-suffix=-b12.jackknife \
		--logs $(RERANK_OUT) --test $(DPARSE_DATA)/pt_bosque/test.conllu --beams 12 \
		--ref $(MODELS)/en_ewt-o1-cle --ref-speed-only --out $(RESULTS)/rerank-table14.md

$(MODELS)/pt_bosque-rerank-nonlocal-nonsp/weights.bin: | $(MODELS)/pt_bosque-rerank-local-nonsp/weights.bin
