# Tagging (issue 33): the en_ewt tagger, and o1-cle and o2-eisner trained on gold and on
# jackknifed predicted tags, scored on the test file's words alone beside UDPipe 1's figures
# (results/udpipe1-figures.json, when present).
#   make tagging-en-ewt [MODELS=models] [JOBS=2]
#       trains the models missing from MODELS (the tagged parsers share the jackknife kept in
#       $(MODELS)/en_ewt.tagged), then writes results/tagging-en_ewt.md
#       (benchmarks/tagging_bench.py: accuracies, and speeds in rounds alternated with o1-cle's).
#   make ptb-sample-jackknife [JOBS=2]
#       the built-in 10-fold jackknife of PTB tags (configs/ptb/tagger.yaml) on ptb_sample/dep
#       -> results/ptb-sample-jackknife.md (benchmarks/ptb_jackknife.py); on the full WSJ,
#       make data-ptb-jackknife.

TABLES += tagging-en-ewt
tagging-en-ewt_DATA := en_ewt
TAGGING_PARSERS := o1-cle o2-eisner
TAGGING_JOBS := $(or $(JOBS),2)

TABLES += ptb-sample-jackknife
ptb-sample-jackknife_DATA := ptb_sample

.PHONY: tagging-en-ewt ptb-sample-jackknife

tagging-en-ewt:  ## en_ewt tagger and parsers on predicted tags -> results/tagging-en_ewt.md
	@mkdir -p $(RESULTS)
	@for c in tagger $(TAGGING_PARSERS); do \
	  test -f $(MODELS)/en_ewt-$$c/manifest.json || \
	    $(PYTHON) -m dparse train configs/en_ewt/$$c.yaml --out $(MODELS)/en_ewt-$$c -q || exit 1; \
	done
	@for c in $(TAGGING_PARSERS); do \
	  test -f $(MODELS)/en_ewt-$$c-tagged/manifest.json || \
	    $(PYTHON) -m dparse train configs/en_ewt/$$c-tagged.yaml --out $(MODELS)/en_ewt-$$c-tagged \
	      --work $(MODELS)/en_ewt.tagged --jobs $(TAGGING_JOBS) -q || exit 1; \
	done
	$(PYTHON) benchmarks/tagging_bench.py --models $(MODELS) --treebank en_ewt \
		--test $(DPARSE_DATA)/en_ewt/test.conllu --parsers $(subst $(eval) ,$(comma),$(TAGGING_PARSERS)) \
		--udpipe $(RESULTS)/udpipe1-figures.json --out $(RESULTS)/tagging-en_ewt.md

ptb-sample-jackknife:  ## built-in jackknife of PTB tags on ptb_sample -> results/ptb-sample-jackknife.md
	@mkdir -p $(RESULTS)
	$(PYTHON) benchmarks/ptb_jackknife.py --data $(DPARSE_DATA) --work $(MODELS)/ptb_sample.jackknife \
		--jobs $(TAGGING_JOBS) --out $(RESULTS)/ptb-sample-jackknife.md
