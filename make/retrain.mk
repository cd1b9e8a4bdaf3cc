# Retraining reproduces the recorded models (issue 47): the slow half of a release check.
#
#   make check-retrain   retrain every en_ewt config of the README's parser table, the en_ewt
#                        tagger and the two tagged pipelines, RETRAIN_JOBS at a time (each on one
#                        core), parse en_ewt test with each, and compare the models' SHA-256 and
#                        scores with results/retrain-en_ewt.json -> results/retrain-en_ewt.md;
#                        fails when one differs (about an hour with RETRAIN_JOBS=2 here, idle)
#   make record-retrain  the same, then writes this run as the record (for a commit that moves
#                        a model on purpose: it says so, and updates the README and results/)
# RETRAIN_ONLY=o1-cle,o2-dd retrains some configs; models go to $(RETRAIN_MODELS).

RETRAIN_JOBS ?= $(or $(JOBS),2)
RETRAIN_ONLY ?=
RETRAIN_MODELS ?= $(MODELS)/retrain
RETRAIN_ARGS = --models $(RETRAIN_MODELS) --data $(DPARSE_DATA) --jobs $(RETRAIN_JOBS) \
	$(if $(RETRAIN_ONLY),--only $(RETRAIN_ONLY))

.PHONY: check-retrain record-retrain

check-retrain: install  ## retrain every recorded en_ewt config, compare models and scores with the record
	$(PYTHON) benchmarks/check_retrain.py $(RETRAIN_ARGS)

record-retrain: install  ## retrain the recorded en_ewt configs and write this run as the record
	$(PYTHON) benchmarks/check_retrain.py $(RETRAIN_ARGS) --update
