"""Hypergraphs of packed dependency forests: the :class:`Forest` arrays, their file format
(:mod:`dparse.hypergraph.forest_io`) and the algorithms over them (Viterbi, lazy k-best, forest
oracle, counting) in :mod:`dparse.hypergraph.hypergraph`."""

from dparse.hypergraph.forest import Forest

__all__ = ["Forest"]
