# Neural scores (issue 48): the neural configs of configs/en_ewt/ trained with one torch
# thread, parsed on en_ewt test (words alone, or gold UPOS for a *-gold config) and timed in
# rounds alternated with o1-cle. Needs the neural extra (pip install 'dparse[neural]').
#   make neural-en-ewt [MODELS=models] [NEURAL_CONFIGS="neural-o1 neural-o1-gold"]
#       trains the models missing from MODELS (o1-cle too, the speed reference; the tagged
#       configs share the jackknife kept in $(MODELS)/en_ewt.tagged), then writes
#       results/neural-en_ewt.md (benchmarks/neural_table.py).
#   make neural-decoders [MODELS=models]
#       every second-order decoder (exact, DD, BGI, BGI-PP, improvement, beam) on the scores
#       of $(MODELS)/en_ewt-neural-o2 (trained first when missing, as neural-en-ewt trains
#       it): UAS, LAS, SARC against exact, tokens/sec -> results/neural-decoders.md
#       (benchmarks/neural_decoders.py).

TABLES += neural-en-ewt
neural-en-ewt_DATA := en_ewt
NEURAL_CONFIGS ?= neural-o1 neural-o1-tagged neural-o1-joint neural-o1-gold neural-o2

.PHONY: neural-en-ewt neural-decoders

neural-en-ewt:  ## neural parsers on en_ewt: accuracy, training, speed -> results/neural-en_ewt.md
	@mkdir -p $(RESULTS)
	@test -f $(MODELS)/en_ewt-o1-cle/manifest.json || \
	  $(PYTHON) -m dparse train configs/en_ewt/o1-cle.yaml --out $(MODELS)/en_ewt-o1-cle -q
	$(PYTHON) benchmarks/neural_table.py --models $(MODELS) \
		--configs $(subst $(eval) ,$(comma),$(strip $(NEURAL_CONFIGS))) \
		--reference $(MODELS)/en_ewt-o1-cle --test $(DPARSE_DATA)/en_ewt/test.conllu \
		--out $(RESULTS)/neural-en_ewt.md

neural-decoders:  ## second-order decoders on neural scores -> results/neural-decoders.md
	@mkdir -p $(RESULTS)
	@test -f $(MODELS)/en_ewt-o1-cle/manifest.json || \
	  $(PYTHON) -m dparse train configs/en_ewt/o1-cle.yaml --out $(MODELS)/en_ewt-o1-cle -q
	$(PYTHON) benchmarks/neural_decoders.py --model $(MODELS)/en_ewt-neural-o2 \
		--config configs/en_ewt/neural-o2.yaml \
		--reference $(MODELS)/en_ewt-o1-cle --test $(DPARSE_DATA)/en_ewt/test.conllu \
		--out $(RESULTS)/neural-decoders.md
