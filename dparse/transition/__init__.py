"""Transition-based parsing: beam shift-reduce with dynamic programming and packed forests
(:mod:`dparse.transition.shiftreduce`, Hayashi, Kondo and Matsumoto 2013, Sections 2-4)."""

from dparse.transition.shiftreduce import ShiftReduceModel, train

__all__ = ["ShiftReduceModel", "train"]
