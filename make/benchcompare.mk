# Issue 19: speed of this build against a reference commit, measured in the same run.
#
#   make bench-compare REF=95f0cda   -> results/bench-compare.md (+ .json)
#
# REF is checked out and built in its own worktree under $(BENCH_WORK) (kept for later runs);
# each build trains its own models there (cached by commit), then the two builds parse the same
# test files alternately, $(BENCH_PAIRS) pairs. BENCH_EPOCHS=N trains N epochs instead of the
# configs' (stated in the table); BENCH_CONFIGS and BENCH_TREEBANKS choose the rows (NAME@ref:
# both builds train REF's configs/en_ewt/NAME.yaml, so that accuracy compares the builds);
# BENCH_TRAIN_PAIRS alternated 3-epoch trainings of o1-cle on el_gdt time training;
# BENCH_LOAD_PAIRS alternated loads of each model in fresh processes time loading (issue 34).

REF ?= 95f0cda
BENCH_WORK ?= /tmp/bench-ref
BENCH_PAIRS ?= 3
BENCH_CONFIGS ?= o1-cle,o2-dd,o2-dd@ref
BENCH_TREEBANKS ?= en_ewt,el_gdt
BENCH_EPOCHS ?=
BENCH_TRAIN_PAIRS ?= 2
BENCH_LOAD_PAIRS ?= 5

.PHONY: bench-compare
bench-compare:  ## this build vs REF=<commit>: parse tok/s, load time, training time, memory, UAS/LAS
	$(PYTHON) benchmarks/bench_compare.py --ref $(REF) --work $(BENCH_WORK) \
		--pairs $(BENCH_PAIRS) --configs $(BENCH_CONFIGS) --treebanks $(BENCH_TREEBANKS) \
		--data $(DPARSE_DATA) --out $(RESULTS)/bench-compare.md \
		--train-pairs $(BENCH_TRAIN_PAIRS) --load-pairs $(BENCH_LOAD_PAIRS) $(if $(BENCH_EPOCHS),--epochs $(BENCH_EPOCHS))
