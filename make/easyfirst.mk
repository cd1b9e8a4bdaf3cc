# Easy-first non-directional parsing (Goldberg and Elhadad 2010): Tables 2-4 shaped reports.
#
#   make easyfirst-tables   Table 2 shape (en_ewt test) and Table 3 shape (CoNLL 2007 esp, eus
#                           test; projectivized training) next to the first-order CLE parser,
#                           Table 4 oracle combinations (dparse oracle), speed (heap vs scan),
#                           feature extractions per sentence, projectivization counts
#                           -> results/easyfirst-tables.md
#   make easyfirst-bench    just the speed / extraction rows -> results/easyfirst-bench.md
#
# Models go to $(MODELS)/<set>-<parser>, parses and logs to $(RESULTS)/easyfirst/. With JOBS=N or
# CLUSTER=slurm the missing models are trained first as a grid (configs/grids/easyfirst-models.yaml,
# whose treebank overrides are the EF_SET_<set> below; make/batch.mk).

TABLES += easyfirst-tables
easyfirst-tables_DATA := en_ewt conll2007_nltk/esp.train conll2007_nltk/eus.train

EF_OUT := $(RESULTS)/easyfirst
EF_SETS := en_ewt esp eus
EF_PARSERS := easyfirst o1-cle
EF_CONFIG_easyfirst := configs/en_ewt/easyfirst.yaml
EF_CONFIG_o1-cle := configs/en_ewt/o1-cle.yaml
EF_TEST_en_ewt := en_ewt/test.conllu
EF_TEST_esp := conll2007_nltk/esp.test
EF_TEST_eus := conll2007_nltk/eus.test
EF_ENC_en_ewt := utf-8
EF_ENC_esp := utf-8
EF_ENC_eus := latin-1
# CoNLL 2007 sets: no dev file (the last epoch is kept), their own tag sets; Basque has
# several root words per sentence (punctuation) and no prepositions.
EF_SET_en_ewt :=
EF_SET_esp := --set data.train=conll2007_nltk/esp.train --set data.dev=null \
	--set data.test=conll2007_nltk/esp.test --set features.prepositions=sp \
	--set features.coordinators=cc
EF_SET_eus := --set data.train=conll2007_nltk/eus.train --set data.dev=null \
	--set data.test=conll2007_nltk/eus.test --set data.encoding=latin-1 \
	--set features.prepositions= --set features.coordinators=LOT_JNT \
	--set decoder.single_root=false

.PHONY: easyfirst-tables easyfirst-bench easyfirst-models-grid

easyfirst-models-grid:
	$(call models_grid,easyfirst-models,$(MODELS))

# $(MODELS)/<set>-<parser>/weights.bin: train (the log keeps the training time)
define EF_MODEL_RULE
$(MODELS)/$(1)-$(2)/weights.bin: $(EF_CONFIG_$(2))
	@mkdir -p $(EF_OUT)
	$(PYTHON) -m dparse train $(EF_CONFIG_$(2)) --out $(MODELS)/$(1)-$(2) -q \
		--set name=$(1)-$(2) $(EF_SET_$(1)) 2> $(EF_OUT)/$(1)-$(2).train.log \
		|| (cat $(EF_OUT)/$(1)-$(2).train.log; exit 1)

$(EF_OUT)/$(1)-$(2).test.conllu: $(MODELS)/$(1)-$(2)/weights.bin
	$(PYTHON) -m dparse parse $(MODELS)/$(1)-$(2) $(DPARSE_DATA)/$(EF_TEST_$(1)) \
		--encoding $(EF_ENC_$(1)) -o $$@
endef
$(foreach s,$(EF_SETS),$(foreach p,$(EF_PARSERS),$(eval $(call EF_MODEL_RULE,$(s),$(p)))))

EF_PARSES := $(foreach s,$(EF_SETS),$(foreach p,$(EF_PARSERS),$(EF_OUT)/$(s)-$(p).test.conllu))

# Table 4: the per-sentence oracle of the two parsers (dparse oracle)
define EF_ORACLE_RULE
$(EF_OUT)/$(1)-oracle.json: $(EF_OUT)/$(1)-easyfirst.test.conllu $(EF_OUT)/$(1)-o1-cle.test.conllu
	$(PYTHON) -m dparse oracle $(DPARSE_DATA)/$(EF_TEST_$(1)) $$^ --names NONDIR,MST \
		--encoding $(EF_ENC_$(1)) --json > $$@.tmp && mv $$@.tmp $$@ \
		|| echo "dparse oracle failed or is missing: Table 4 on $(1) left out"
endef
$(foreach s,$(EF_SETS),$(eval $(call EF_ORACLE_RULE,$(s))))

easyfirst-tables: $(if $(BATCH),easyfirst-models-grid) $(EF_PARSES) $(EF_SETS:%=$(EF_OUT)/%-oracle.json)  ## Tables 2-4 of the easy-first paper -> results/easyfirst-tables.md
	$(PYTHON) benchmarks/easyfirst_tables.py --data $(DPARSE_DATA) --parses $(EF_OUT) \
		--models $(MODELS) --out $(RESULTS)/easyfirst-tables.md

easyfirst-bench: $(MODELS)/en_ewt-easyfirst/weights.bin $(MODELS)/en_ewt-o1-cle/weights.bin  ## easy-first speed rows -> results/easyfirst-bench.md
	$(PYTHON) benchmarks/easyfirst_tables.py --data $(DPARSE_DATA) --models $(MODELS) \
		--bench-only --out $(RESULTS)/easyfirst-bench.md
