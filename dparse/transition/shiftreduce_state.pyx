# cython: language_level=3
"""The arc-standard transition system of the shift-reduce parser (Huang and Sagae 2010), with
and without spurious ambiguity (Hayashi, Kondo and Matsumoto 2013, Sections 2-3), and the
canonical gold derivation of a tree.

Nodes 0..n, node 0 the root, which starts on the stack. A state is
``l : (i, j, s2 | s1 | s0) : pi`` (step l, s0 spanning words i..j-1, the queue front j):

- SHIFT pushes word j. Spurious system: always valid while j <= n. Non-spurious: only when s0
  has been scanned; the pushed word is unscanned (``w_j*``).
- SCAN (non-spurious only) marks s0 scanned: after it s0 takes no more left dependents.
- LEFT makes s1 a left dependent of s0 (never the root). Non-spurious: only while s0 is
  unscanned, so all left dependents come before the scan and each tree has one derivation.
- RIGHT makes s0 a right dependent of s1. Non-spurious: only once s0 is scanned. With
  ``single_root`` the root takes its one dependent when the queue is empty.

Every derivation takes T = 2n steps (spurious) or 3n (non-spurious). The signature of a state
(what its features can read) is the span, the queue front, the positions of the heads, two
leftmost left and two rightmost right children of s0 and s1, the head of s2, the scan flag and
the valencies of s0 and s1 (:c:type:`SigC`); the transitions (shiftreduce_state.pxd, inline)
map signatures to signatures. The beam search (shiftreduce_search.pyx) merges the states of a
step with equal signatures.
"""

from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc

import numpy as np


cdef int gold_derivation(const SentC* s, const int32_t* heads, int32_t* acts, int32_t* preds,
                         SigC* sigs) noexcept nogil:
    """The canonical derivation of the projective tree ``heads``: acts[l], the predictor step of
    each reduce in preds[l] (else -1), and the signature before each step in sigs[l]
    (l = 0..T). Returns NOT_PROJECTIVE if the tree has no derivation."""
    cdef int n = s.n, T = num_steps(s.system, n), l, top, k, a, m
    cdef int32_t* missing = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    cdef SigC* stack = <SigC*>malloc((n + 2) * sizeof(SigC))
    cdef int32_t* pstep = <int32_t*>malloc((n + 2) * sizeof(int32_t))
    cdef SigC g
    cdef int status = OK
    if missing == NULL or stack == NULL or pstep == NULL:
        free(missing)
        free(stack)
        free(pstep)
        return NO_MEMORY
    for k in range(n + 1):
        missing[k] = 0
    for k in range(1, n + 1):
        if heads[k] < 0 or heads[k] > n:
            status = NOT_PROJECTIVE
            break
        missing[heads[k]] += 1
    # The stack holds full element signatures in s0 fields; the state signature is assembled.
    axiom(&stack[0], s.system)
    pstep[0] = -1
    top = 1
    g = stack[0]
    for l in range(T):
        if status != OK:
            break
        stack_signature(stack, top, &g)
        sigs[l] = g
        preds[l] = -1
        a = -1
        if (top >= 2 and valid(s, &g, LEFT) and heads[g.s1h] == g.s0h):
            a = LEFT
        elif s.system and not g.scanned:
            a = SCAN
        elif (top >= 2 and valid(s, &g, RIGHT) and heads[g.s0h] == g.s1h
              and missing[g.s0h] == 0):
            a = RIGHT
        elif g.j <= n:
            a = SHIFT
        if a < 0:
            status = NOT_PROJECTIVE
            break
        acts[l] = a
        if a == SHIFT:
            apply_shift(&g, &stack[top])
            stack[top].s1h = -1
            pstep[top] = l
            stack[top].j = g.j + 1
            top += 1
        elif a == SCAN:
            stack[top - 1].scanned = 1
        else:
            preds[l] = pstep[top - 1]
            m = g.s1h if a == LEFT else g.s0h
            missing[heads[m]] -= 1
            apply_reduce(&stack[top - 2], &stack[top - 1], a, &g)
            g.j = stack[top - 1].j
            stack[top - 2] = g
            top -= 1
    if status == OK:
        stack_signature(stack, 1, &sigs[T])
        if top != 1:
            status = NOT_PROJECTIVE
    free(missing)
    free(stack)
    free(pstep)
    return status


def oracle(const int32_t[::1] heads, int system, bint single_root=True):
    """The canonical gold derivation of a projective tree: (actions int32 [T], predictor step
    of each reduce int32 [T] (-1 for shift and scan)). ValueError if there is none."""
    cdef SentC s
    cdef int n = heads.shape[0] - 1
    cdef int T = num_steps(system, n)
    acts = np.zeros(T, dtype=np.int32)
    preds = np.zeros(T, dtype=np.int32)
    cdef int32_t[::1] av = acts, pv = preds
    cdef SigC* sigs = <SigC*>malloc((T + 1) * sizeof(SigC))
    s.n = n
    s.tok = NULL
    s.tagcol = 0
    s.system = system
    s.single_root = single_root
    status = gold_derivation(&s, &heads[0], &av[0] if T else NULL, &pv[0] if T else NULL, sigs)
    free(sigs)
    if status != OK:
        raise ValueError("the tree has no derivation in this system (not projective, or "
                         "several root dependents with single_root)")
    return acts, preds

