"""Timing helpers shared by the benchmarks: repeated-call timing and length bins.

- :func:`seconds_per_call`: a stable per-call time of a fast function (median of 5 batches).
- :func:`length_bins`: per-sentence times grouped by sentence length (LENGTH_BINS), the mean
  length and mean seconds of each bin: the points of a time-against-n plot on real data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

LENGTH_BINS = (1, 6, 11, 16, 21, 31, 41, 61, 1000)  # bin edges: [1, 6), [6, 11), ...


def seconds_per_call(fn: Callable[[], object], budget: float) -> float:
    """Median over 5 batches of the mean time per call; batches sized to ``budget`` seconds."""
    fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    reps = max(1, int(budget / 5 / once))
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    return float(np.median(times))


def length_bins(lengths: Sequence[int], seconds: Mapping[str, Sequence[float]],
                edges: Sequence[int] = LENGTH_BINS) -> list[dict]:
    """One dict per non-empty bin: "bin" ("lo-hi"), "sentences", "n" (mean length) and, for
    each name of ``seconds`` (name -> seconds per sentence, aligned with ``lengths``), the mean
    seconds per sentence of the bin."""
    n = np.asarray(lengths)
    times = {name: np.asarray(s, float) for name, s in seconds.items()}
    bins = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        inside = (n >= lo) & (n < hi)
        if inside.any():
            bins.append({"bin": f"{lo}-{min(hi - 1, int(n.max()))}",
                         "sentences": int(inside.sum()), "n": float(n[inside].mean()),
                         **{name: float(s[inside].mean()) for name, s in times.items()}})
    return bins
