# The Python API and the spaCy component (issue 34) against dparse parse on en_ewt test.
#   make bench-api [MODELS=models]
#       trains $(MODELS)/en_ewt-o1-cle if missing, then writes results/api-bench.md
#       (benchmarks/api_bench.py: byte equality, evaluate against eval --json, spaCy against
#       dparse parse, and speeds in alternated rounds), for $(MODELS)/en_ewt-o1-cle-tagged
#       too if it is there (make tagging-en-ewt or make demo train it).

.PHONY: bench-api

bench-api: install  ## the Python API and the spaCy component against dparse parse -> results/api-bench.md
	@mkdir -p $(RESULTS)
	@test -f $(MODELS)/en_ewt-o1-cle/manifest.json || \
	  $(PYTHON) -m dparse train configs/en_ewt/o1-cle.yaml --out $(MODELS)/en_ewt-o1-cle -q
	$(PYTHON) benchmarks/api_bench.py \
		--model $(MODELS)/en_ewt-o1-cle $(wildcard $(MODELS)/en_ewt-o1-cle-tagged) \
		--test $(DPARSE_DATA)/en_ewt/test.conllu --out $(RESULTS)/api-bench.md
