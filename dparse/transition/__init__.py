"""Transition-based parsing: beam shift-reduce with dynamic programming and packed forests
(:mod:`dparse.transition.shiftreduce`, Hayashi, Kondo and Matsumoto 2013, Sections 2-4) and
easy-first non-directional parsing (:mod:`dparse.transition.easyfirst`, Goldberg and Elhadad
2010); the ``shiftreduce`` config section (:mod:`.sections`), its check (:mod:`.checks`) and
the two families' records in the registry (:mod:`.family`)."""
