# cython: language_level=3
"""Second-order non-projective decoding by dual decomposition (arc + sibling + grandparent)."""

from dparse._ext.types cimport head_t, score_t


cdef struct DD2ResultC:
    bint certified         # the returned tree is optimal (duality gap closed)
    int iterations         # subgradient iterations run, over all nodes (each solves every
                           # subproblem once)
    int nodes              # branch-and-bound nodes solved after the root (0: none needed)
    score_t dual           # an upper bound on every tree's score: the root's lowest dual
                           # value, or the highest bound of a node left open
    score_t primal         # full second-order score of the returned tree


cdef int dd2_decode(const score_t* arc, const score_t* sib, const score_t* grand,
                    Py_ssize_t n, bint single_root, int max_iter, score_t step, score_t tol,
                    int max_nodes, int node_iter, head_t* heads,
                    DD2ResultC* result) noexcept nogil
# Best (certified) or good (rounded) tree for the C-contiguous float64 parts over nodes 0..n:
# arc [n+1, n+1] (arc[h*(n+1)+m]: h -> m), sib [n+1, n+1, n+1] (sib[(h*(n+1)+m)*(n+1)+s]: m, s
# consecutive modifiers of h, m == h the start) and grand [n+1, n+1, n+1]
# (grand[(g*(n+1)+h)*(n+1)+m]: g -> h -> m); sib or grand may be NULL (no such parts). Writes
# heads[0..n] (heads[0] = -1) and ``result``. max_iter >= 1 subgradient iterations at the root;
# step > 0 scales the Polyak step; tol >= 0 is the relative duality gap accepted as closed;
# max_nodes >= 0 branch-and-bound nodes of node_iter >= 1 iterations each if the root's gap
# stays open. Returns DECODE_OK, DECODE_NO_MEMORY,
# DECODE_POSITIVE_INF or DECODE_TOO_LONG (see dparse/_ext/types.pxd); n >= 1.
