"""Online learners with parameter averaging over a flat weight vector.

Both learners see one sentence at a time as the sparse difference ``delta = phi(gold) -
phi(predicted)`` (indices into the weight vector and values) and the cost of the prediction:

- ``perceptron``: the structured perceptron (Collins 2002), step 1 whenever the prediction is wrong.
- ``pa``: cost-augmented passive-aggressive (Crammer et al. 2006, PA-I), the MIRA-style
  learner of McDonald et al. (2005): step ``min(C, (cost - w . delta) / ||delta||^2)``, where the
  prediction came from cost-augmented decoding.

Averaging uses the usual trick: alongside ``w`` keep ``u``, the sum of ``c * update``, where c
counts the instances seen; the average of all weight vectors so far is ``w - u / c``.
"""

from __future__ import annotations

import numpy as np

from dparse._ext.sparsevec import add_update, gather_dot, squared_norm
from dparse.aligned import aligned_empty, aligned_zeros

LEARNERS = ("perceptron", "pa")
AVERAGE_CHUNK = 1 << 20  # weights averaged at a time (bounds the float64 temporaries)


def combine(idx: np.ndarray, val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum the values of repeated indices and drop zeros: a canonical sparse vector (int64
    indices, increasing; float64 values), what the learner's dot products take."""
    idx = np.asarray(idx, dtype=np.int64)
    if idx.size == 0:
        return idx, np.asarray(val, dtype=np.float64)
    unique, inverse = np.unique(idx, return_inverse=True)
    sums = np.bincount(inverse, weights=val, minlength=unique.size)
    keep = sums != 0.0
    return unique[keep], sums[keep]


class AveragedLearner:
    """Weights (float64 [size]) trained online, with their running average."""

    def __init__(self, size: int, method: str = "pa", C: float = 1.0) -> None:
        if method not in LEARNERS:
            raise ValueError(f"unknown learner {method!r}; choose one of {', '.join(LEARNERS)}")
        self.method = method
        self.C = C
        self.w = aligned_zeros(size, np.float64)  # aligned for the blocked feature layout
        self.u = aligned_zeros(size, np.float64)
        self.c = 1
        # a bit mask of the updated weights, uint8 [(size + 7) // 8], if set (dparse.mixing)
        self.touched: np.ndarray | None = None

    @property
    def cost_augmented(self) -> bool:
        """Whether predictions for this learner come from cost-augmented decoding."""
        return self.method == "pa"

    def update(self, idx: np.ndarray, val: np.ndarray, cost: float) -> float:
        """Learn from one instance given delta = phi(gold) - phi(pred); returns the step size."""
        idx, val = combine(idx, val)
        if idx.size == 0:
            return 0.0
        if self.method == "perceptron":
            step = 1.0
        else:
            loss = cost - self.score(idx, val)
            if loss <= 0.0:
                return 0.0
            step = min(self.C, loss / squared_norm(val))
        add_update(self.w, self.u, idx, val, step, float(self.c), self.touched)
        return step

    def score(self, idx: np.ndarray, val: np.ndarray) -> float:
        """w . delta for a sparse delta as :func:`combine` gives it, summed in a fixed order
        (:mod:`dparse._ext.sparsevec`: the same bits on every CPU, unlike BLAS)."""
        return gather_dot(self.w, idx, val)

    def tick(self) -> None:
        """Count one instance (call after every sentence, updated or not)."""
        self.c += 1

    def averaged(self) -> np.ndarray:
        """The averaged weights as float32 (what a saved model holds): :func:`average`."""
        return average(self.w, self.u, self.c)


def average(w: np.ndarray, u: np.ndarray, c: int) -> np.ndarray:
    """``w - u / c`` (float64 [size] each) as float32, 64-byte aligned; computed a chunk at a
    time, so that no float64 copy of the weights is made."""
    out = aligned_empty(w.size, np.float32)
    for start in range(0, w.size, AVERAGE_CHUNK):
        stop = start + AVERAGE_CHUNK
        out[start:stop] = w[start:stop] - u[start:stop] / c
    return out
