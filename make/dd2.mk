# dd2 certificates (issue 18): plain dual decomposition against dual decomposition + branch and
# bound (configs/en_ewt/o2-dd.yaml's decoder options) on every treebank under $(DATA).
#
#   make dd2-certificates   certified share, UAS/LAS and tokens/sec (o1-cle reference in the same
#                           run) per treebank -> results/dd2-certificates.md (+ .json)
# DD2_TREEBANKS=zh_gsd,da_ddt restricts it to some setups (benchmarks/common.py); o2-dd and
# o1-cle models are trained into $(MODELS)/dd2 unless present there (<treebank>-o2-dd, -o1-cle).

DD2_TREEBANKS ?=

TABLES += dd2-certificates
dd2-certificates_DATA :=
dd2-certificates:  ## dd2 certified share before/after branch and bound, every treebank -> results/dd2-certificates.md
	$(PYTHON) benchmarks/dd2_certificates.py --data $(DPARSE_DATA) --models $(MODELS)/dd2 \
		--out $(RESULTS)/dd2-certificates.md $(if $(DD2_TREEBANKS),--treebanks $(DD2_TREEBANKS))
