# Data preparation targets and the table registry behind `make tables` (see data_scripts/README.md).
#
# Registering a reproduced table (in the part's own make/<part>.mk):
#
#   TABLES += greedy-table1
#   greedy-table1_DATA := conll06-07/english conll06-07/czech   # paths under $(DATA) it reads
#   greedy-table1:  ## Table 1 of the greedy-inference paper -> results/greedy-table1.md
#   	$(PYTHON) ... --data $(DPARSE_DATA) --out $(RESULTS)/greedy-table1.md
#
# `make tables` runs every registered table whose data paths all exist under $(DATA) and prints
# a skip line naming the missing paths for the others (`make -k tables` goes on past a failing
# table, `make -j2 tables` runs two at once); `make list-tables` shows each table's data status.

TABLES ?=
UD_VERSION ?= r2.13
UD_TREEBANKS ?= UD_English-EWT UD_Turkish-IMST UD_Greek-GDT UD_Portuguese-Bosque \
	UD_Bulgarian-BTB UD_Danish-DDT UD_German-GSD UD_Japanese-GSD UD_Dutch-Alpino \
	UD_Slovenian-SSJ UD_Swedish-Talbanken UD_Chinese-GSD
CONLL06 ?=
CONLL07 ?=
WSJ ?=
TAGGER_TRAIN ?=
TAGGER_TAG ?=

# the paths of table $(1)'s DATA list that do not exist under $(DPARSE_DATA)
table_missing = $(strip $(foreach p,$($(1)_DATA),$(if $(wildcard $(DPARSE_DATA)/$(p)),,$(p))))

.PHONY: tables list-tables data-ud data-conll data-ptb data-ptb-jackknife

tables:  ## run every reproduced table whose data is present (skips the others, saying why)
	@if [ -z "$(strip $(TABLES))" ]; then echo "tables: no table targets registered"; \
	else $(MAKE) --no-print-directory $(addprefix run-table-,$(TABLES)); fi

run-table-%:
	@missing="$(call table_missing,$*)"; \
	if [ -n "$$missing" ]; then \
		echo "skip $*: missing data under $(DPARSE_DATA): $$missing"; \
	else \
		mkdir -p $(RESULTS) && $(MAKE) --no-print-directory $*; \
	fi

list-tables:  ## the registered tables, their data and whether it is present
	@$(foreach t,$(TABLES),echo "$(t): $(if $(call table_missing,$(t)),MISSING $(call table_missing,$(t)),ready) [$($(t)_DATA)]";) true

data-ud:  ## download the UD treebanks into DATA (UD_VERSION=r2.13, UD_TREEBANKS=...)
	$(PYTHON) -m dparse data ud-download $(UD_VERSION) $(UD_TREEBANKS) --dest $(DPARSE_DATA)

data-conll:  ## lay out CoNLL 2006/2007 (CONLL06=dir CONLL07=dir) -> DATA/conll06-07
	@if [ -z "$(CONLL06)$(CONLL07)" ]; then \
		echo "data-conll: set CONLL06=<CoNLL-X data dir> and/or CONLL07=<CoNLL 2007 data dir>"; \
		exit 2; fi
	$(PYTHON) -m dparse data conll-layout $(if $(CONLL06),--conll2006 $(CONLL06)) \
		$(if $(CONLL07),--conll2007 $(CONLL07)) --out $(DPARSE_DATA)/conll06-07

data-ptb:  ## convert WSJ (WSJ=.../parsed/mrg/wsj) -> DATA/ptb/{train,dev,test}.conll
	@if [ -z "$(WSJ)" ]; then echo "data-ptb: set WSJ=<dir with sections 00..24 of .mrg files>"; \
		exit 2; fi
	mkdir -p $(DPARSE_DATA)/ptb
	for split in train dev test; do \
		$(PYTHON) -m dparse data ptb2dep --wsj-root $(WSJ) --split $$split \
			-o $(DPARSE_DATA)/ptb/$$split.conll || exit $$?; \
	done

# data-ptb-jackknife: dparse's tagger (configs/ptb/tagger.yaml, dev chooses its epochs), or
# yours with TAGGER_TRAIN='cmd {train} {model}' and TAGGER_TAG='cmd {model} {input} {output}'.
data-ptb-jackknife:  ## 10-way jackknife POS tags on PTB train -> DATA/ptb/train.jackknife.conll
	$(PYTHON) -m dparse data jackknife $(DPARSE_DATA)/ptb/train.conll \
		-o $(DPARSE_DATA)/ptb/train.jackknife.conll \
		$(if $(TAGGER_TRAIN)$(TAGGER_TAG),--train-cmd '$(TAGGER_TRAIN)' --tag-cmd '$(TAGGER_TAG)',\
		--tagger-config configs/ptb/tagger.yaml --dev $(DPARSE_DATA)/ptb/dev.conll --jobs $(or $(JOBS),2))
