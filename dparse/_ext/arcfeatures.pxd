# cython: language_level=3
"""The layout of the first-order weight vector, shared with the higher-order extractors."""

from libc.stdint cimport int64_t


cdef class FeatureSpace:
    cdef readonly int arc_bits, lab_bits, n_labels
    cdef readonly int64_t lab_offset, size
