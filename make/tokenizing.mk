# Tokenizing (issue 51): a tokenizer trained on each UD treebank of the data root with
# `# text` in its test file, its test file's raw text tokenized and scored by the CoNLL 2018
# alignment (Tokens, Sentences, Words F1), the exact round trip of the text, and speed.
#   make tokenize-ud [MODELS=models] [UDPIPE=udpipe.tsv]
#       trains the tokenizers into $(MODELS)/tokenize-ud (configs/ud/tokenizer.yaml), then
#       writes results/tokenize-ud.md (benchmarks/tokenize_ud.py); UDPIPE: UDPipe 1's F1 per
#       treebank (treebank, Tokens, Sentences, Words; tab-separated) to set beside.

TABLES += tokenize-ud
tokenize-ud_DATA := en_ewt

.PHONY: tokenize-ud

tokenize-ud:  ## tokenizers from raw text on every UD treebank -> results/tokenize-ud.md
	@mkdir -p $(RESULTS) $(MODELS)/tokenize-ud
	$(PYTHON) benchmarks/tokenize_ud.py --data-root $(DPARSE_DATA) --models $(MODELS)/tokenize-ud \
		$(if $(UDPIPE),--udpipe $(UDPIPE)) -o $(RESULTS)/tokenize-ud.md
