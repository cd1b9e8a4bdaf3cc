# cython: language_level=3
"""The Python side of the shift-reduce parser's action feature templates
(shiftreduce_templates.pxd): their version :data:`TEMPLATES_VERSION`, the tag column
:data:`PAIRED_TAGS`, the layout of the weights (:func:`layout_size`: the action rows, then the
label classifier's from ``label_offset = 4 * 2**action_bits`` on) and the score of an action
sequence (:func:`score_actions`).
"""

from libc.stdint cimport int32_t

import numpy as np

from cython cimport floating

from dparse.transition.shiftreduce_state cimport (
    LEFT,
    SCAN,
    SHIFT,
    apply_reduce,
    apply_shift,
    axiom,
    stack_signature,
    valid,
)

#: The ``tagcol`` that makes the templates read the pair (XPOS, UPOS) as the tag.
PAIRED_TAGS = PAIRED
#: The version of the action feature templates (state_keys in shiftreduce_templates.pxd), saved
#: with a model (models of other versions are refused).
TEMPLATES_VERSION = 3


def layout_size(int action_bits, int label_bits, int n_labels) -> int:
    """Length of the weight vector: 4 * 2**action_bits action weights, then
    2**label_bits * n_labels label weights."""
    return N_ACTIONS * (1 << action_bits) + (1 << label_bits) * max(n_labels, 1)


def score_actions(const int32_t[:, ::1] tokens, const floating[::1] weights, int action_bits,
                  int tagcol, int system, bint single_root, const int32_t[::1] actions):
    """Run an action sequence without search: (its total score, heads int32 [n+1]).
    ValueError if an action is not valid where it is taken."""
    cdef SentC s
    cdef int n = tokens.shape[0] - 1, l, top = 1, a
    cdef double sc[4]
    cdef double total = 0
    cdef SigC g
    stack = np.zeros((n + 2, sizeof(SigC) // sizeof(int32_t)), dtype=np.int32)
    cdef int32_t[:, ::1] sv = stack
    cdef SigC* st = <SigC*>&sv[0, 0]
    heads = np.full(n + 1, -1, dtype=np.int32)
    cdef int32_t[::1] hv = heads
    s.n = n
    s.tok = &tokens[0, 0]
    s.tagcol = tagcol
    s.system = system
    s.single_root = single_root
    axiom(&st[0], system)
    for l in range(actions.shape[0]):
        stack_signature(st, top, &g)
        a = actions[l]
        if not 0 <= a < N_ACTIONS or not valid(&s, &g, a):
            raise ValueError(f"action {a} is not valid at step {l}")
        score_state(&s, &g, &weights[0], 64 - action_bits, sc)
        total += sc[a]
        if a == SHIFT:
            apply_shift(&g, &st[top])
            top += 1
        elif a == SCAN:
            st[top - 1].scanned = 1
        else:
            if a == LEFT:
                hv[g.s1h] = g.s0h
            else:
                hv[g.s0h] = g.s1h
            apply_reduce(&st[top - 2], &st[top - 1], a, &g)
            g.j = st[top - 1].j
            st[top - 2] = g
            top -= 1
    return total, heads
