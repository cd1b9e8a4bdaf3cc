"""Forest reranking (Hayashi, Kondo and Matsumoto 2013, Sections 5-6): stacked parsing on the
packed forests of the shift-reduce parser (:mod:`dparse.transition`).

- :mod:`dparse.rerank.jackknife`: the training forests, each fold parsed by a first-stage model
  trained on the other folds with the gold state forced into the beam;
- :mod:`dparse.rerank.model`: the reranker (hyperedge-factored local features, non-local
  features by cube pruning over the forest, equations 1-4), its averaged-perceptron training
  and the line search of beta; features and decoding in :mod:`dparse.rerank.reranker`;
- :mod:`dparse.rerank.sections`, :mod:`dparse.rerank.checks` and :mod:`dparse.rerank.family`:
  the ``rerank`` config section, its check and the family's record in the registry
  (:mod:`dparse.families`).
"""
