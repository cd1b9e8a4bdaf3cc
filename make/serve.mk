# dparse serve under load (docs/serve.md):
#   make bench-serve [MODELS=models] [SERVE_SECONDS=60]
#       trains $(MODELS)/en_ewt-o1-cle and $(MODELS)/en_ewt-o1-eisner if missing, serves both with
#       --workers 2 and writes results/serve-en_ewt.md (benchmarks/serve_load.py: en_ewt test
#       sentence by sentence equal to dparse parse, 16 clients for SERVE_SECONDS, memory, 10,000
#       requests of random bytes). Needs the serve extra (make deps installs it with dev).

SERVE_SECONDS ?= 60

.PHONY: bench-serve

bench-serve: install  ## dparse serve: 16 clients on en_ewt test, against dparse parse -> results/serve-en_ewt.md
	@mkdir -p $(RESULTS)
	@for name in o1-cle o1-eisner; do \
	  test -f $(MODELS)/en_ewt-$$name/manifest.json || \
	  $(PYTHON) -m dparse train configs/en_ewt/$$name.yaml --out $(MODELS)/en_ewt-$$name -q; \
	done
	$(PYTHON) benchmarks/serve_load.py --model $(MODELS)/en_ewt-o1-cle \
		--model $(MODELS)/en_ewt-o1-eisner --test $(DPARSE_DATA)/en_ewt/test.conllu \
		--workers 2 --clients 16 --seconds $(SERVE_SECONDS) --abuse 10000 \
		--out $(RESULTS)/serve-en_ewt.md
