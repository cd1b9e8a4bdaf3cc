# Tchernowitz, Yedidsion and Reichart (2016), greedy graph-based inference (see docs/design.md,
# 'Papers').
#
#   make greedy-tune     tune the bgi-pp options (alpha, beta, then |B| and s) and the ensemble
#                        gammas on en_ewt dev, for each order in GREEDY_ORDERS
#                        -> results/greedy-tune-o1.md, results/greedy-tune-o2.md
#   make greedy-scaling  greedy decoding time against sentence length -> results/greedy-scaling.md
#                        (log-log plots: results/plots/greedy-scaling-{synthetic,real}.{png,svg})
#   make greedy-tables   Tables 1 and 2: exact (CLE) / dual decomposition, BGI, BGI-PP, BGI-PP+i,
#                        BGI-PP+i+b and their ensembles, on every treebank under $(DATA)
#                        -> results/greedy-tables.md
#   make greedy-ensemble the second-order BGI-PP+i+b model biased towards dual decomposition (the
#                        paper's ensemble) and towards several parsers at once (DD, second-order
#                        Eisner, easy-first), gammas tuned on en_ewt dev -> results/greedy-ensemble.md
#   make greedy-speed    o2-bgi-pp-ib against o2-dd (the same pruner), alternated in one run
#                        (A B A B A B), on en_ewt test and GREEDY_SPEED_TREEBANKS' test files (the
#                        en_ewt o2-dd config and configs/ud/o2-bgi-pp-ib.yaml pointed at them; a
#                        treebank without a train file trains on dev) -> results/greedy-speed.md
# GREEDY_TREEBANKS=en_ewt,el_gdt restricts the tables to some setups, GREEDY_ORDERS=1 to one
# order. Greedy models go to $(GREEDY_MODELS); exact ones are reused from $(MODELS) (as
# `make demo` and `make bench` train them) and $(MODELS)/umst when trained with the same config.
# Second-order models take about 10 minutes each to train on en_ewt.

GREEDY_TREEBANKS ?=
GREEDY_ORDERS ?= 1,2
GREEDY_PUNCT ?= include
GREEDY_MODELS ?= $(MODELS)/greedy
GREEDY_GRID ?= configs/en_ewt/greedy-grid.yaml
GREEDY_OUT := $(RESULTS)/greedy
GREEDY_EXACT_1 := o1-cle
GREEDY_EXACT_2 := o2-dd
greedy_comma := ,
GREEDY_ORDER_LIST := $(subst $(greedy_comma), ,$(GREEDY_ORDERS))

# $(call greedy_model,FOLDER,CONFIG): train configs/en_ewt/CONFIG.yaml into FOLDER/en_ewt-CONFIG
# unless a model is there
greedy_model = test -f $(1)/en_ewt-$(2)/weights.bin || \
	$(PYTHON) -m dparse train configs/en_ewt/$(2).yaml --out $(1)/en_ewt-$(2) -q

.PHONY: greedy-tune greedy-tables greedy-tune-o1 greedy-tune-o2 greedy-scaling greedy-ensemble \
	greedy-speed

greedy-tune: $(addprefix greedy-tune-o,$(GREEDY_ORDER_LIST))  ## tune greedy decoding and ensemble gammas on en_ewt dev -> results/greedy-tune-o*.md

# the model trained with bgi-pp, and the exact parser's dev output for the ensemble gammas
greedy-tune-o1 greedy-tune-o2: greedy-tune-o%:
	mkdir -p $(GREEDY_OUT)
	$(call greedy_model,$(MODELS),$(GREEDY_EXACT_$*))
	$(call greedy_model,$(GREEDY_MODELS),o$*-bgi-pp)
	$(PYTHON) -m dparse parse $(MODELS)/en_ewt-$(GREEDY_EXACT_$*) \
		$(DPARSE_DATA)/en_ewt/dev.conllu -o $(GREEDY_OUT)/en_ewt-$(GREEDY_EXACT_$*).dev.conllu
	$(PYTHON) benchmarks/greedy_tune.py --model $(GREEDY_MODELS)/en_ewt-o$*-bgi-pp \
		--dev $(DPARSE_DATA)/en_ewt/dev.conllu \
		--other $(GREEDY_OUT)/en_ewt-$(GREEDY_EXACT_$*).dev.conllu \
		--grid $(GREEDY_GRID) --punct $(GREEDY_PUNCT) --out $(RESULTS)/greedy-tune-o$*.md

TABLES += greedy-tables
greedy-tables_DATA := en_ewt
greedy-tables:  ## Tables 1-2 of the greedy-inference paper (all treebanks) -> results/greedy-tables.md
	$(PYTHON) benchmarks/greedy_tables.py --data $(DPARSE_DATA) --models $(GREEDY_MODELS) \
		--reuse $(MODELS) --reuse $(MODELS)/umst --orders $(GREEDY_ORDERS) \
		--punct $(GREEDY_PUNCT) --out $(RESULTS)/greedy-tables.md \
		$(if $(GREEDY_TREEBANKS),--treebanks $(GREEDY_TREEBANKS))

TABLES += greedy-ensemble
greedy-ensemble_DATA := en_ewt
greedy-ensemble:  ## greedy ensembles with one and several other parsers on en_ewt -> results/greedy-ensemble.md
	$(PYTHON) benchmarks/greedy_ensemble.py --data $(DPARSE_DATA) --models $(GREEDY_MODELS) \
		--reuse $(MODELS) --out $(RESULTS)/greedy-ensemble.md

TABLES += greedy-scaling
greedy-scaling_DATA :=
greedy-scaling:  ## greedy decoding time against sentence length, fitted exponent -> results/greedy-scaling.md
	mkdir -p $(RESULTS)
	$(PYTHON) benchmarks/greedy_scaling.py --out $(RESULTS)/greedy-scaling.md \
		--plot $(RESULTS)/plots/greedy-scaling \
		$(if $(wildcard $(MODELS)/en_ewt-o2-dd/weights.bin),--model $(MODELS)/en_ewt-o2-dd \
		--treebank $(DPARSE_DATA)/en_ewt/test.conllu)

GREEDY_SPEED_TREEBANKS ?= el_gdt sl_ssj pt_bosque
GREEDY_SPEED_ROUNDS ?= 11

# $(call greedy_files,TREEBANK): --set overrides pointing a config at the treebank's files
# (train on dev, no dev file, when it has no train file) and naming the model TREEBANK-...
greedy_files = --set data.test=$(1)/test.conllu --set decoder.single_root=auto \
	$(if $(wildcard $(DPARSE_DATA)/$(1)/train.conllu),--set data.train=$(1)/train.conllu \
	--set data.dev=$(1)/dev.conllu,--set data.train=$(1)/dev.conllu --set data.dev=null)

# $(call greedy_ud_model,TREEBANK,CONFIG_FILE,NAME): train CONFIG_FILE on TREEBANK into
# $(GREEDY_MODELS)/TREEBANK-NAME unless a model is there
greedy_ud_model = (test -f $(GREEDY_MODELS)/$(1)-$(3)/weights.bin || \
	$(PYTHON) -m dparse train $(2) --out $(GREEDY_MODELS)/$(1)-$(3) -q \
	--set name=$(1)-$(3) $(call greedy_files,$(1)))

greedy_speed = PYTHONPATH=. $(PYTHON) benchmarks/greedy_speed.py --rounds $(GREEDY_SPEED_ROUNDS)

TABLES += greedy-speed
greedy-speed_DATA := en_ewt el_gdt sl_ssj pt_bosque
greedy-speed:  ## o2-bgi-pp-ib against o2-dd, alternated, en_ewt + GREEDY_SPEED_TREEBANKS -> results/greedy-speed.md
	mkdir -p $(GREEDY_OUT)
	$(call greedy_model,$(MODELS),o2-dd)
	$(call greedy_model,$(GREEDY_MODELS),o2-bgi-pp-ib)
	$(greedy_speed) --test $(DPARSE_DATA)/en_ewt/test.conllu --label en_ewt/test.conllu \
		--system o2-dd=$(MODELS)/en_ewt-o2-dd \
		--system o2-bgi-pp-ib=$(GREEDY_MODELS)/en_ewt-o2-bgi-pp-ib --out $(GREEDY_OUT)/speed-en_ewt.md
	$(foreach tb,$(GREEDY_SPEED_TREEBANKS),\
		$(call greedy_ud_model,$(tb),configs/en_ewt/o2-dd.yaml,o2-dd) && \
		$(call greedy_ud_model,$(tb),configs/ud/o2-bgi-pp-ib.yaml,o2-bgi-pp-ib) && \
		$(greedy_speed) --test $(DPARSE_DATA)/$(tb)/test.conllu --label $(tb)/test.conllu \
		--system o2-dd=$(GREEDY_MODELS)/$(tb)-o2-dd \
		--system o2-bgi-pp-ib=$(GREEDY_MODELS)/$(tb)-o2-bgi-pp-ib --out $(GREEDY_OUT)/speed-$(tb).md &&) true
	(echo "# o2-bgi-pp-ib against o2-dd, alternated (make greedy-speed)"; \
		for tb in en_ewt $(GREEDY_SPEED_TREEBANKS); do \
		echo; echo "## $$tb"; echo; cat $(GREEDY_OUT)/speed-$$tb.md; done) > $(RESULTS)/greedy-speed.md
