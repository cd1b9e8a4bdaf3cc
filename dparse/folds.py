"""Jackknife folds: training sentences cut into contiguous blocks in file order.

Used wherever a model must see its training sentences as it sees new ones: the forest
reranker's first-stage forests (:mod:`dparse.rerank.jackknife`) and the second-order pruner's
training graphs (``pruner.train_folds``, :func:`dparse.graph.pruner.train_pruner`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from dparse.errors import ConfigError, DparseError

T = TypeVar("T")


def fold_of_sentences(n_sentences: int, folds: int) -> np.ndarray:
    """int64 [n_sentences]: the fold (1..folds) of each training sentence: contiguous blocks
    in file order, the first ``n_sentences % folds`` one sentence longer than the others."""
    if folds < 2:
        raise ConfigError(f"the jackknife needs at least 2 folds, got {folds}")
    if n_sentences < folds:
        raise DparseError(f"{n_sentences} training sentences cannot be cut into {folds} folds")
    size, extra = divmod(n_sentences, folds)
    lengths = [size + (k < extra) for k in range(folds)]
    return np.repeat(np.arange(1, folds + 1), lengths)


def jackknife_splits(items: Sequence[T], folds: int) -> list[tuple[list[T], list[T]]]:
    """(the other folds, fold k) for k = 1..folds, as :func:`fold_of_sentences` cuts
    ``items``: the held-out parts, in order, are ``items`` in order."""
    fold_of = fold_of_sentences(len(items), folds).tolist()
    return [([x for x, f in zip(items, fold_of, strict=True) if f != k],
             [x for x, f in zip(items, fold_of, strict=True) if f == k])
            for k in range(1, folds + 1)]
