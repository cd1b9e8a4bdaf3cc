# cython: language_level=3
"""The shift-reduce parser's arc labeler: the transitions are unlabeled, and a multi-class
perceptron classifier labels every arc of the finished tree (its own or any other, e.g. a
reranker's). Its features are the words, tags, direction and distance of the head and the
dependent, the dependent's outer children, neighbours and suffix, and the grandparent's tag;
each picks a row of ``n_labels`` weights from ``label_offset = 4 * 2**action_bits`` on (after
the action weights of shiftreduce_templates.pyx).
"""

from libc.stdint cimport int32_t, uint64_t
from libc.string cimport memset

import numpy as np

from cython cimport floating

from dparse._ext.hashing cimport distance_bin
from dparse._ext.tokens cimport SUFFIX, WORD
from dparse._ext.weights cimport add_row
from dparse.transition.shiftreduce_state cimport N_ACTIONS
from dparse.transition.shiftreduce_templates cimport NONE_ID, attr, fkey, row_of


cdef int label_keys(const SentC* s, const int32_t* heads, const int32_t* lmost,
                    const int32_t* rmost, int m, uint64_t* out) noexcept nogil:
    """The feature keys of m's arc in the tree ``heads`` (lmost, rmost: its outer children, of
    :func:`outer_children`); returns their number."""
    cdef int h = heads[m], tc = s.tagcol, k = 0
    cdef uint64_t hw = attr(s, h, WORD), ht = attr(s, h, tc)
    cdef uint64_t mw = attr(s, m, WORD), mt = attr(s, m, tc)
    cdef uint64_t dd = <uint64_t>(distance_bin(m - h if m > h else h - m) * 2 + (m > h))
    cdef uint64_t ml = attr(s, lmost[m], tc), mr = attr(s, rmost[m], tc)
    cdef uint64_t mp = attr(s, m - 1, tc) if m - 1 != h else NONE_ID
    cdef uint64_t mn = attr(s, m + 1, tc) if m + 1 != h else NONE_ID
    cdef uint64_t gt = attr(s, heads[h], tc) if h > 0 else NONE_ID
    out[k] = fkey(100, mw, 0, 0, 0); k += 1
    out[k] = fkey(101, mt, 0, 0, 0); k += 1
    out[k] = fkey(102, mw, mt, 0, 0); k += 1
    out[k] = fkey(103, hw, 0, 0, 0); k += 1
    out[k] = fkey(104, ht, 0, 0, 0); k += 1
    out[k] = fkey(105, ht, mt, 0, 0); k += 1
    out[k] = fkey(106, hw, mt, 0, 0); k += 1
    out[k] = fkey(107, ht, mw, 0, 0); k += 1
    out[k] = fkey(108, hw, mw, 0, 0); k += 1
    out[k] = fkey(109, ht, mt, dd, 0); k += 1
    out[k] = fkey(110, mt, dd, 0, 0); k += 1
    out[k] = fkey(111, mw, dd, 0, 0); k += 1
    out[k] = fkey(112, mt, ml, mr, 0); k += 1
    out[k] = fkey(113, ht, mt, ml, mr); k += 1
    out[k] = fkey(114, mt, mp, mn, dd); k += 1
    out[k] = fkey(115, gt, ht, mt, dd); k += 1
    out[k] = fkey(116, hw, ht, mt, dd); k += 1
    out[k] = fkey(117, mw, mt, dd, ht); k += 1
    out[k] = fkey(118, mw, ht, dd, 0); k += 1
    out[k] = fkey(119, hw, mw, dd, 0); k += 1
    out[k] = fkey(120, attr(s, m + 1, WORD), mt, 0, 0); k += 1
    out[k] = fkey(121, attr(s, m - 1, WORD), mt, 0, 0); k += 1
    out[k] = fkey(122, attr(s, m, SUFFIX), mt, 0, 0); k += 1
    out[k] = fkey(123, attr(s, lmost[m], WORD), mt, 0, 0); k += 1
    out[k] = fkey(124, attr(s, rmost[m], WORD), mt, 0, 0); k += 1
    out[k] = fkey(125, gt, ht, mw, dd); k += 1
    out[k] = fkey(126, ht, attr(s, h + 1, tc), mt, dd); k += 1
    out[k] = fkey(127, ht, attr(s, h - 1, tc), mt, dd); k += 1
    return k


cdef void outer_children(int n, const int32_t* heads, int32_t* lmost,
                         int32_t* rmost) noexcept nogil:
    """lmost[h] / rmost[h]: the farthest left / right dependent of h (-1: none)."""
    cdef int m, h
    for m in range(n + 1):
        lmost[m] = -1
        rmost[m] = -1
    for m in range(1, n + 1):
        h = heads[m]
        if h < 0:
            continue
        if m < h and (lmost[h] < 0 or m < lmost[h]):
            lmost[h] = m
        if m > h and (rmost[h] < 0 or m > rmost[h]):
            rmost[h] = m


cdef int best_label(const SentC* s, const int32_t* heads, const int32_t* lmost,
                    const int32_t* rmost, int m, const floating* W, int shift, int L,
                    floating* acc, uint64_t* rows, int* n_rows) noexcept nogil:
    cdef uint64_t keys[MAX_LABEL_FEATURES]
    cdef int k, nk = label_keys(s, heads, lmost, rmost, m, keys), best = 0
    for k in range(L):
        acc[k] = 0
    for k in range(nk):
        rows[k] = row_of(keys[k], shift) * L
        add_row(acc, W + rows[k], L)
    n_rows[0] = nk
    for k in range(1, L):
        if acc[k] > acc[best]:
            best = k
    return best


cdef void label_all(const SentC* s, const int32_t* heads, int32_t* labels, int32_t* lm,
                    int32_t* rm, const floating* W, int shift, int L,
                    floating* acc) noexcept nogil:
    """labels[1..n] = the classifier's label of each word's arc in the tree ``heads``; lm, rm:
    work space of n + 1 entries each, acc of L."""
    cdef uint64_t rows[MAX_LABEL_FEATURES]
    cdef int k, nr
    outer_children(s.n, heads, lm, rm)
    for k in range(1, s.n + 1):
        labels[k] = best_label(s, heads, lm, rm, k, W, shift, L, acc, rows, &nr)


def label_tree(const int32_t[:, ::1] tokens, const floating[::1] weights, int action_bits,
               int label_bits, int n_labels, int tagcol, const int32_t[::1] heads):
    """The label ids (int32 [n+1], entry 0 -1) the arc classifier gives the arcs of the tree
    ``heads`` (int32 [n+1], any tree, e.g. a reranker's): what
    :func:`dparse.transition.shiftreduce_search.parse` does with its own tree."""
    cdef SentC s
    cdef int n = tokens.shape[0] - 1
    if heads.shape[0] != n + 1 or n < 1:
        raise ValueError("heads must have n + 1 entries, n >= 1")
    memset(&s, 0, sizeof(SentC))
    s.n = n
    s.tok = &tokens[0, 0]
    s.tagcol = tagcol
    labels = np.full(n + 1, -1, dtype=np.int32)
    cdef int32_t[::1] lv = labels
    cdef int32_t[::1] work = np.empty(2 * (n + 1), dtype=np.int32)
    cdef floating[::1] acc = np.empty(max(n_labels, 1), dtype=np.asarray(weights).dtype)
    with nogil:
        label_all(&s, &heads[0], &lv[0], &work[0], &work[n + 1],
                  &weights[N_ACTIONS * (1 << action_bits)], 64 - label_bits, n_labels, &acc[0])
    return labels

