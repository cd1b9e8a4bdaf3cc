# cython: language_level=3
"""The integer encoding of a sentence that every feature extractor reads (see dparse/vocab.py).

``tokens`` is int32 [n+1, NCOLS]; row 0 is the artificial root, whose attributes are ROOT_ID.
Positions outside 0..n read as BOS_ID (left) and EOS_ID (right).
"""

from libc.stdint cimport int32_t

cdef enum:
    # Token columns.
    WORD = 0
    LEMMA = 1
    UPOS = 2
    XPOS = 3
    PREFIX = 4
    SUFFIX = 5
    NCOLS = 6
    # Ids of the special symbols in every vocabulary.
    UNK_ID = 0
    ROOT_ID = 1
    BOS_ID = 2
    EOS_ID = 3


cdef inline int token_attr(const int32_t* tok, int n, int i, int col) noexcept nogil:
    """Attribute ``col`` of position i, with BOS/EOS ids outside 0..n."""
    if i < 0:
        return BOS_ID
    if i > n:
        return EOS_ID
    return tok[i * NCOLS + col]
