# The second-order pruner (issue 18, part 4): old (perceptron-trained labeled model, absolute
# threshold) against new (configs/en_ewt/o2-eisner.yaml's pruner section: tree CRF) and small
# (new with the small-data settings: relative threshold 0.003, jackknifed training graphs).
#
#   make pruner-table   heads per word and gold recall on held-out data for every treebank
#                       setup under $(DATA) (dev file, or a jackknife of the training file
#                       where the setup trains on dev or has no dev file); o2-eisner and o2-dd
#                       with the old and the new pruner on en_ewt dev and (small) da_ddt test:
#                       UAS, LAS, tokens/sec beside o1-cle's in the same run
#                                                                    -> results/pruner-table.md
#
# PRUNER_TREEBANKS=en_ewt,da_ddt restricts the pruner rows, PRUNER_PARSERS the parser rows
# (empty: none), PRUNER_CONFIGS its configs; PRUNER_TRAIN=no reports missing models instead
# of training them; models are found or trained in $(MODELS)/pruner; PRUNER_MODELS='NAME=DIR ...'
# names model directories outright (e.g. en_ewt-o1-cle=models/en_ewt-o1-cle).

PRUNER_TREEBANKS ?=
PRUNER_PARSERS ?= en_ewt,da_ddt
PRUNER_MODELS ?=
PRUNER_CONFIGS ?= o2-eisner,o2-dd
PRUNER_TRAIN ?= yes

.PHONY: pruner-table
TABLES += pruner-table
pruner-table_DATA := en_ewt da_ddt
pruner-table:  ## second-order pruner old vs new: heads/word, recall, o2 accuracy and speed -> results/pruner-table.md
	$(PYTHON) benchmarks/pruner_table.py --data $(DPARSE_DATA) \
		--models $(MODELS)/pruner --out $(RESULTS)/pruner-table.md \
		--parsers '$(PRUNER_PARSERS)' --configs $(PRUNER_CONFIGS) $(if $(PRUNER_TREEBANKS),--treebanks $(PRUNER_TREEBANKS)) \
		$(foreach m,$(PRUNER_MODELS),--model $(m)) $(if $(filter no,$(PRUNER_TRAIN)),--no-train)
