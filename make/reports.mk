# Reports, plots and tree pictures (dparse eval --detail --plot, dparse show, search errors).
#
#   make reports-en-ewt   every config of configs/en_ewt/ that has a trained model
#                         $(MODELS)/en_ewt-<config> parses en_ewt test; all of them in one
#                         dparse eval --detail (side by side, significance against the first)
#                         -> results/reports-en_ewt.md, figures in results/plots/en_ewt/
#                         (overview.png/svg: the four panels, every system in one figure)
#   make reports-search   dd2 certificates on planted scores by sentence length, plus search
#                         errors and certificates under every second-order en_ewt model found
#                         -> results/search-reports.md, figures in results/plots/
#   make reports-trees    an HTML page of the first en_ewt test sentences as parsed by the first
#                         model found, marked against gold -> results/plots/en_ewt/trees.html
#
#   make reports-models   trains every en_ewt config that has no model yet (many hours on one
#                         core: the third-order and ablation configs take 10-50 min each; with
#                         JOBS=N or CLUSTER=slurm as a grid first, configs/grids/en_ewt-models.yaml);
#                         `make reports-models reports-en-ewt` draws every config in one figure
#
# Only reports-models trains (the others list configs without a model, with the command that
# trains them); the figures need matplotlib (pip install -e '.[plot]'). REPORTS_PUNCT sets the
# punctuation rule (default upos), REPORTS_TREES the sentences drawn (default 1-20).

REPORTS_PUNCT ?= upos
REPORTS_TREES ?= 1-20
REPORTS_OUT := $(RESULTS)/reports
REPORTS_TEST := $(DPARSE_DATA)/en_ewt/test.conllu
# trainable configs: every en_ewt parser config on gold tags (not the tuning grids, the
# tokenizer, the tagger or the parsers trained on its tags, which make tagged-en-ewt compares,
# nor the neural parsers, which need the neural extra and have their own results:
# results/neural-en_ewt.md)
REPORTS_CONFIGS := $(filter-out %-grid tagger tokenizer %-tagged neural-%,$(basename $(notdir $(wildcard configs/en_ewt/*.yaml))))
REPORTS_FOUND = $(foreach c,$(REPORTS_CONFIGS),$(if $(wildcard $(MODELS)/en_ewt-$(c)/config.yaml),$(c)))

.PHONY: reports-en-ewt reports-search reports-trees reports-models

# With JOBS=N or CLUSTER=slurm every config but the forest rerankers (which `dparse train`
# builds from jackknifed forests) trains as a grid first (configs/grids/en_ewt-models.yaml,
# make/batch.mk); the loop trains what is still missing then.
reports-models:  ## train every en_ewt config without a model under $(MODELS) (hours; JOBS=N), for reports-en-ewt
ifneq ($(BATCH),)
	$(call models_grid,en_ewt-models,$(MODELS))
endif
	@for c in $(REPORTS_CONFIGS); do \
	  test -f $(MODELS)/en_ewt-$$c/config.yaml && continue; \
	  echo "reports-models: training $$c"; \
	  $(PYTHON) -m dparse train configs/en_ewt/$$c.yaml --out $(MODELS)/en_ewt-$$c || exit 1; \
	done

# $(REPORTS_OUT)/en_ewt-<config>.test.conllu: the model's parse of en_ewt test (stderr kept: speed)
$(REPORTS_OUT)/en_ewt-%.test.conllu: $(MODELS)/en_ewt-%/config.yaml
	@mkdir -p $(REPORTS_OUT)
	$(PYTHON) -m dparse parse $(MODELS)/en_ewt-$* $(REPORTS_TEST) -o $@ 2> $(REPORTS_OUT)/en_ewt-$*.parse.log
	@cat $(REPORTS_OUT)/en_ewt-$*.parse.log

reports-en-ewt:  ## breakdowns and plots of every trained en_ewt config, side by side -> results/reports-en_ewt.md
	@if [ -z "$(strip $(REPORTS_FOUND))" ]; then \
	  echo "reports-en-ewt: no trained model under $(MODELS)/en_ewt-<config>; train one with e.g."; \
	  echo "  dparse train configs/en_ewt/o1-cle.yaml --out $(MODELS)/en_ewt-o1-cle"; exit 2; fi
	@for c in $(filter-out $(REPORTS_FOUND),$(REPORTS_CONFIGS)); do \
	  echo "reports-en-ewt: no model for $$c (dparse train configs/en_ewt/$$c.yaml --out $(MODELS)/en_ewt-$$c)"; done
	$(MAKE) --no-print-directory $(REPORTS_FOUND:%=$(REPORTS_OUT)/en_ewt-%.test.conllu)
	@mkdir -p $(RESULTS)/plots/en_ewt
	{ echo "# en_ewt test: breakdowns of every trained config"; echo; \
	  echo "$$(date -u +%Y-%m-%d); machine: 2 shared cores; punctuation $(REPORTS_PUNCT)."; \
	  echo "Figures: $(RESULTS)/plots/en_ewt/ (overview.png). Parse speed of each model, same run:"; \
	  echo; for c in $(REPORTS_FOUND); do echo "- $$c: $$(tail -n 1 $(REPORTS_OUT)/en_ewt-$$c.parse.log)"; done; \
	  echo; echo '```'; \
	  $(PYTHON) -m dparse eval $(REPORTS_TEST) $(REPORTS_OUT)/en_ewt-$(firstword $(REPORTS_FOUND)).test.conllu \
	    $(foreach c,$(wordlist 2,999,$(REPORTS_FOUND)),--other $(REPORTS_OUT)/en_ewt-$(c).test.conllu) \
	    --punct $(REPORTS_PUNCT) --detail --plot $(RESULTS)/plots/en_ewt; \
	  echo '```'; } > $(RESULTS)/reports-en_ewt.md.tmp
	mv $(RESULTS)/reports-en_ewt.md.tmp $(RESULTS)/reports-en_ewt.md
	@echo "wrote $(RESULTS)/reports-en_ewt.md and $(RESULTS)/plots/en_ewt/"

reports-search:  ## search errors and dd2 certificates by sentence length -> results/search-reports.md
	$(PYTHON) benchmarks/search_reports.py --out $(RESULTS)/search-reports.md \
		--plots $(RESULTS)/plots \
		$(if $(wildcard $(MODELS)/en_ewt-o2-*/config.yaml),--gold $(REPORTS_TEST) \
		$(foreach m,$(wildcard $(MODELS)/en_ewt-o2-*/config.yaml),--model $(patsubst %/,%,$(dir $(m)))))

reports-trees:  ## an HTML page of en_ewt test trees marked against gold -> results/plots/en_ewt/trees.html
	@if [ -z "$(strip $(REPORTS_FOUND))" ]; then echo "reports-trees: no trained en_ewt model under $(MODELS)"; exit 2; fi
	$(MAKE) --no-print-directory $(REPORTS_OUT)/en_ewt-$(firstword $(REPORTS_FOUND)).test.conllu
	@mkdir -p $(RESULTS)/plots/en_ewt
	$(PYTHON) -m dparse show $(REPORTS_OUT)/en_ewt-$(firstword $(REPORTS_FOUND)).test.conllu \
		--gold $(REPORTS_TEST) --sent $(REPORTS_TREES) -o $(RESULTS)/plots/en_ewt/trees.html
