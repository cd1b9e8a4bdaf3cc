# One model trained on several workers by iterative parameter mixing (issue 35).
#
#   make mixing-speed      o1-cle and o2-eisner on en_ewt, trained with 1 and 2 local workers in
#                          turn (MIXING_ROUNDS rounds: 1, 2, 1, 2), wall time and test scores;
#                          o1-cle on MIXING_TREEBANKS once each -> results/mixing-speed.md
#   make mixing-speed-perceptron  the same for easy-first and shift-reduce (sr-nonsp-b12) on
#                          en_ewt -> results/mixing-speed-perceptron.md
#   make mixing-scaling    o1-cle on en_ewt with 1, 2, 4 and 8 shards run one after another on one
#                          core (--cluster inline): epoch time per shard, traffic per epoch, test
#                          scores, projected speed-up -> results/mixing-scaling.md and a plot
#   make mixing-slurm      o2-eisner with --workers 2 on a single-node SLURM started here
#                          (../shared/tools) and on local workers: the weights must be the same
#                          bytes -> results/mixing-slurm.md
# Every `dparse train` of the make targets takes TRAIN_WORKERS=N (the Makefile exports it as
# DPARSE_TRAIN_WORKERS, the default of --workers; taggers train on one core).

MIXING_ROUNDS ?= 2
MIXING_TREEBANKS ?= el_gdt tr_imst
MIXING_RUNS ?= $(MODELS)/mixing
# memory of a SLURM worker job (a second-order worker holds about 1 GB)
MIXING_SLURM_MEMORY ?= 4GB

.PHONY: mixing-speed mixing-speed-perceptron mixing-scaling mixing-slurm

mixing-speed: install  ## train with 1 and 2 workers alternated: time, test scores -> results/mixing-speed.md
	@mkdir -p $(RESULTS)
	$(PYTHON) benchmarks/mixing_speed.py --data $(DPARSE_DATA) --rounds $(MIXING_ROUNDS) \
		--system en_ewt-o1-cle=configs/en_ewt/o1-cle.yaml \
		--system en_ewt-o2-eisner=configs/en_ewt/o2-eisner.yaml \
		$(foreach t,$(MIXING_TREEBANKS),--system $(t)-o1-cle=configs/ud/o1-cle.yaml@data.train=$(t)/train.conllu@data.dev=$(t)/dev.conllu@data.test=$(t)/test.conllu@name=$(t)-o1-cle) \
		--out $(RESULTS)/mixing-speed.md

mixing-speed-perceptron: install  ## easy-first, shift-reduce with 1 and 2 workers -> results/mixing-speed-perceptron.md
	@mkdir -p $(RESULTS)
	$(PYTHON) benchmarks/mixing_speed.py --data $(DPARSE_DATA) --rounds $(MIXING_ROUNDS) \
		--system en_ewt-easyfirst=configs/en_ewt/easyfirst.yaml \
		--system en_ewt-sr-nonsp-b12=configs/en_ewt/sr-nonsp-b12.yaml \
		--out $(RESULTS)/mixing-speed-perceptron.md

mixing-scaling: install  ## 1, 2, 4, 8 shards simulated on one core -> results/mixing-scaling.md
	@mkdir -p $(RESULTS)/plots
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
	$(PYTHON) benchmarks/mixing_scaling.py --config configs/en_ewt/o1-cle.yaml \
		--data $(DPARSE_DATA) --shards 1,2,4,8 --out $(RESULTS)/mixing-scaling.md \
		--plot $(RESULTS)/plots/mixing-scaling

# The scheduler listens on 127.0.0.1, which the single-node SLURM's jobs reach.
mixing-slurm: install  ## o2-eisner on 2 SLURM workers and 2 local ones: the same weights
	@mkdir -p $(RESULTS) $(MIXING_RUNS)
	$(PYTHON) -m dparse train configs/en_ewt/o2-eisner.yaml --workers 2 -q \
		--out $(MIXING_RUNS)/o2-eisner-local2
	$(SLURM_TOOLS)/slurm-local-start.sh
	status=0; \
	$(PYTHON) -m dparse train configs/en_ewt/o2-eisner.yaml --workers 2 -q --cluster slurm \
		--queue $(SLURM_QUEUE) --walltime $(SLURM_WALLTIME) --memory $(MIXING_SLURM_MEMORY) \
		--scheduler-host 127.0.0.1 --out $(MIXING_RUNS)/o2-eisner-slurm2 || status=$$?; \
	$(SLURM_TOOLS)/slurm-local-stop.sh; test $$status -eq 0 || exit $$status
	$(PYTHON) benchmarks/mixing_slurm.py $(MIXING_RUNS)/o2-eisner-local2 \
		$(MIXING_RUNS)/o2-eisner-slurm2 --out $(RESULTS)/mixing-slurm.md
