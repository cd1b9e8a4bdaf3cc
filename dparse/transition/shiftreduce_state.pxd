# cython: language_level=3
"""The arc-standard transition system of the shift-reduce parser: the actions, a state's
signature, the transitions on signatures and the canonical gold derivation (see
shiftreduce_state.pyx)."""

from libc.stdint cimport int32_t

cdef enum:
    SHIFT = 0
    SCAN = 1
    LEFT = 2
    RIGHT = 3
    N_ACTIONS = 4
    # status codes
    OK = 0
    NO_MEMORY = -1
    NOT_PROJECTIVE = -2


ctypedef struct SigC:
    # The signature of a state: everything its features and its successors read.
    int32_t i, j                             # s0 spans i..j-1; j is the queue front
    int32_t s0h, s0l, s0l2, s0r, s0r2        # s0 head, two leftmost left / rightmost right kids
    int32_t s1h, s1l, s1l2, s1r, s1r2        # the same of s1 (-1: none)
    int32_t s2h
    int32_t scanned
    int32_t s0vl, s0vr, s1vl, s1vr           # valencies: left / right dependents of s0, s1


ctypedef struct SentC:
    int n
    const int32_t* tok
    int tagcol
    int system                               # 0 spurious, 1 non-spurious
    int single_root


cdef inline int num_steps(int system, int n) noexcept nogil:
    """T, the number of steps of every derivation of n words: 2n (spurious), 3n (non-spurious)."""
    return (3 if system else 2) * n


cdef inline bint valid(const SentC* s, const SigC* g, int a) noexcept nogil:
    """Whether action a applies to a state with signature g (for every predictor)."""
    if a == SHIFT:
        return g.j <= s.n and (not s.system or g.scanned)
    if a == SCAN:
        return s.system and not g.scanned
    if g.s1h < 0:
        return False
    if a == LEFT:
        return g.s1h != 0 and (not s.system or not g.scanned)
    # RIGHT
    if s.system and not g.scanned:
        return False
    return g.s1h != 0 or not s.single_root or g.j > s.n


cdef inline void apply_shift(const SigC* p, SigC* o) noexcept nogil:
    o.i = p.j
    o.j = p.j + 1
    o.s0h = p.j
    o.s0l = -1
    o.s0l2 = -1
    o.s0r = -1
    o.s0r2 = -1
    o.s1h = p.s0h
    o.s1l = p.s0l
    o.s1l2 = p.s0l2
    o.s1r = p.s0r
    o.s1r2 = p.s0r2
    o.s2h = p.s1h
    o.scanned = 0
    o.s0vl = 0
    o.s0vr = 0
    o.s1vl = p.s0vl
    o.s1vr = p.s0vr


cdef inline void apply_reduce(const SigC* p, const SigC* q, int a, SigC* o) noexcept nogil:
    """The state after reducing q's s0 with its predictor p's s0."""
    o.i = p.i
    o.j = q.j
    if a == LEFT:
        o.s0h = q.s0h
        o.s0l = p.s0h
        o.s0l2 = q.s0l
        o.s0r = q.s0r
        o.s0r2 = q.s0r2
        o.scanned = q.scanned
        o.s0vl = q.s0vl + 1
        o.s0vr = q.s0vr
    else:
        o.s0h = p.s0h
        o.s0l = p.s0l
        o.s0l2 = p.s0l2
        o.s0r = q.s0h
        o.s0r2 = p.s0r
        o.scanned = p.scanned
        o.s0vl = p.s0vl
        o.s0vr = p.s0vr + 1
    o.s1h = p.s1h
    o.s1l = p.s1l
    o.s1l2 = p.s1l2
    o.s1r = p.s1r
    o.s1r2 = p.s1r2
    o.s2h = p.s2h
    o.s1vl = p.s1vl
    o.s1vr = p.s1vr


cdef inline void axiom(SigC* o, int system) noexcept nogil:
    o.i = 0
    o.j = 1
    o.s0h = 0
    o.s0l = o.s0l2 = o.s0r = o.s0r2 = -1
    o.s1h = o.s1l = o.s1l2 = o.s1r = o.s1r2 = -1
    o.s2h = -1
    o.scanned = 1 if system else 0
    o.s0vl = o.s0vr = o.s1vl = o.s1vr = 0


cdef inline void stack_signature(const SigC* stack, int top, SigC* g) noexcept nogil:
    """The signature of the state whose stack is stack[0..top-1] (top >= 1), each element's
    own fields in the s0 fields of its entry: the top entry, with s1 and s2 read from the
    entries below it."""
    g[0] = stack[top - 1]
    if top >= 2:
        g.s1h = stack[top - 2].s0h
        g.s1l = stack[top - 2].s0l
        g.s1l2 = stack[top - 2].s0l2
        g.s1r = stack[top - 2].s0r
        g.s1r2 = stack[top - 2].s0r2
        g.s1vl = stack[top - 2].s0vl
        g.s1vr = stack[top - 2].s0vr
    else:
        g.s1h = g.s1l = g.s1l2 = g.s1r = g.s1r2 = -1
        g.s1vl = g.s1vr = 0
    g.s2h = stack[top - 3].s0h if top >= 3 else -1


cdef int gold_derivation(const SentC* s, const int32_t* heads, int32_t* acts, int32_t* preds,
                         SigC* sigs) noexcept nogil
