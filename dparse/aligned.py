"""Weight vectors aligned to 64-byte cache lines.

The blocked feature layout (``FeatureSpace(..., layout="blocked")``) puts the features of one
template key in a block of 16 weights; a block is one cache line of float32 weights (two of
float64) only if the vector starts on a line boundary, which numpy does not promise.
"""

from __future__ import annotations

import numpy as np

LINE_BYTES = 64


def _aligned(size: int, dtype: np.dtype | type, allocate) -> np.ndarray:
    """A 1-d view of ``size`` items of ``dtype`` starting on a 64-byte boundary, inside a byte
    buffer made by ``allocate`` (np.empty or np.zeros)."""
    dtype = np.dtype(dtype)
    buffer = allocate(size * dtype.itemsize + LINE_BYTES, dtype=np.uint8)
    start = -buffer.ctypes.data % LINE_BYTES
    return buffer[start:start + size * dtype.itemsize].view(dtype)


def aligned_empty(size: int, dtype: np.dtype | type) -> np.ndarray:
    """An uninitialized 1-d array of ``size`` items of ``dtype`` starting on a 64-byte boundary."""
    return _aligned(size, dtype, np.empty)


def aligned_zeros(size: int, dtype: np.dtype | type) -> np.ndarray:
    """``np.zeros(size, dtype)`` starting on a 64-byte boundary (zeroed lazily by the system,
    as np.zeros is: pages never written take no memory)."""
    return _aligned(size, dtype, np.zeros)


def aligned_copy(array: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
    """A 64-byte aligned contiguous 1-d copy of ``array`` (converted to ``dtype`` if given)."""
    out = aligned_empty(array.size, array.dtype if dtype is None else dtype)
    out[:] = array.reshape(-1)
    return out
