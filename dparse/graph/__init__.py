"""Graph-based parsers: first order (:mod:`.model`), second order (:mod:`.secondorder`) and
third order with cube pruning (:mod:`.thirdorder`, Zhang and McDonald 2012) over a first-order
pruner (:mod:`.pruner`); their decoders (:mod:`.decoders`), training (:mod:`.training`), the
greedy inference of Tchernowitz et al. 2016 (:mod:`.greedy_reference`, :mod:`.improve_reference`,
in C in dparse/graph/greedy_search.pyx with the modules it cimports, and improve.pyx) and parser
combination (:mod:`.ensemble`); exact arc marginals and log partition functions
(:mod:`.marginals`: inside-outside over Eisner's chart, the matrix-tree theorem); the
``pruner`` and ``ensemble`` config sections (:mod:`.sections`), their check (:mod:`.checks`)
and the family's record in the registry (:mod:`.family`)."""
