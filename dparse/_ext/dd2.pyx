# cython: language_level=3
"""Second-order non-projective decoding by dual decomposition: arc + sibling + grandparent parts.

The problem (NP-hard for non-projective trees, McDonald and Pereira 2006): over trees z of
nodes 0..n, maximise

    f(z) = sum_{h->m in z} arc[h, m]                                          first order
         + sum_h sum_sides (sib[h, h, m1] + sib[h, m1, m2] + ... + sib[h, m(k-1), mk])  siblings
         + sum_{g->h->m in z, h != 0} grand[g, h, m]                           grandparents

with m1, m2, ... h's modifiers on one side from the innermost outwards (no stop part).

Decomposition (Koo, Rush, Collins, Jaakkola and Sontag 2010, "Dual decomposition for parsing
with non-projective head automata", their grand-sibling head automata; Martins, Almeida and
Smith 2013, "Turning on the turbo"). Two subproblems, each with its own copy of the arc
indicators, tied by equality constraints:

1. tree: z, a spanning arborescence rooted at 0 (single root if asked), scored by
   arc[h, m] + u[h, m] + w[h, m]; solved exactly by Chu-Liu-Edmonds (dparse/_ext/cle.pxd),
   O(n^2). All first-order scores live here, so with zero second-order parts the first
   iteration already certifies the CLE tree.
2. head automata, one per node h, independently: h chooses its own head b[., h] = g (h >= 1)
   and on each side a chain of modifiers s[h, .] (never g), scored
   -w[g, h] + sum over the chains of (sib parts + grand[g, h, m] - u[h, m]). For each
   candidate g a Viterbi pass over "last modifier taken" per side,
   into(m) = grand[g, h, m] - u[h, m] + max(sib[h, h, m], max_p into(p) + sib[h, p, m])
   over p between h and m, best chain max(0, max_m into(m)); O(k^2) for k candidate
   modifiers, O(k^3) per head with the choice of g. The root has no head and no grandparent
   parts, and under single_root exactly one modifier.
   Constraints s = z (multipliers u) and b = z (multipliers w).

The dual L(u, w) = max of (1) + max of (2) bounds every tree's f from above (a tree with
s = b = z is feasible for both). Projected subgradient descent on L (Rush and Collins 2012,
"A tutorial on dual decomposition and Lagrangian relaxation for inference in natural language
processing"): the subgradient in u[h, m] is z - s, in w[g, h] z - b, and the update is
(u, w) -= alpha * subgradient with the Polyak step alpha = lambda * (L - best f so far) /
||subgradient||^2, lambda starting at ``step`` and halved whenever L has not reached a new
low for PATIENCE iterations (Held-Karp style; Koo et al.'s 1 / (1 + dual increases) decays
too fast with Polyak steps and stalled far from the optimum). The multipliers are
unconstrained, so no projection is needed.

Certificate: every CLE tree z of an iteration is a feasible tree; its full score f(z) is a
lower bound and the lowest L seen an upper bound. When they meet (within ``tol`` relative),
or when both subproblems agree on every arc (then f(z) = L), the best tree found is optimal
and returned with certified = True. Otherwise, at ``max_iter``, the rounding is that best
tree: of all CLE trees seen, the one with the highest f (always a valid tree).

Candidates (pruning): when some tree uses only allowed arcs (the first CLE tree tells) and no
sibling or grandparent part made of allowed arcs is disallowed, the automata consider only
allowed arcs (k = the allowed modifiers of h, g among h's allowed heads): such trees beat
all others, so the bound still holds for the trees that matter. Otherwise every arc.

Cost per iteration: CLE O(n^2), the full score of z O(n^2), and the automata of the heads
whose multipliers changed (only those are re-solved): O(k^3) each, so O(n^4) per iteration in
the worst (unpruned) case, far less with a first-order pruner. Memory O(n^2) besides the
inputs; one allocation per call (plus CLE's own per iteration). Ties go to the lowest index
and to the empty chain, so decoding is deterministic.

Disallowed parts: -inf or NaN in any part array stands for ``floor``, a finite score so low that
a tree with fewer disallowed parts always wins (as dparse/_ext/types.pxd does for arcs; a tree
has at most 3n parts). +inf is an error.
"""

from libc.math cimport INFINITY, fabs
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from dataclasses import dataclass

from numpy.typing import ArrayLike

cimport numpy as cnp

from dparse._ext.cle cimport cle_decode
from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_POSITIVE_INF,
    allowed,
    head_t,
    raise_for_status,
    score_t,
    words_of,
)

from dparse.decoders import Decoder, Heads, as_scores, register_decoder

cnp.import_array()

DEF PATIENCE = 10


cdef struct DD2C:
    Py_ssize_t N           # nodes 0..n, N = n + 1; matrices [N, N], cubes [N, N, N]
    const score_t* arc
    const score_t* sib     # NULL: no sibling parts
    const score_t* grand   # NULL: no grandparent parts (the automata choose no head)
    score_t floor          # stands in for disallowed (-inf, NaN) part scores
    bint single_root
    score_t* W             # [N, N] tree scores arc + u + w at [h, m]
    score_t* u             # [N, N] multipliers of s = z at [h, m]
    score_t* w             # [N, N] multipliers of b = z at [g, h]
    char* S                # [N, N] head automata: m is a modifier of h at [h, m]
    head_t* B              # [N] head automata: the head chosen by h (B[0] = -1)
    score_t* val           # [N] value of h's head automaton
    char* dirty            # [N] h's multipliers changed: its automaton must be re-solved
    score_t* cand          # [N] Viterbi scratch: best way into m
    int* back              # [N] Viterbi scratch: the modifier before m on that way
    head_t* z              # [N] the tree of the current iteration
    int* mods              # [N, N] h's candidate modifiers: right side ascending from h + 1,
                           # then left side descending from h - 1, n_right[h] + n_left[h]
    int* n_right           # [N]
    int* n_left            # [N]
    int* cands             # [N, N] h's candidate heads, n_heads[h] of them
    int* n_heads           # [N]


cdef inline score_t part(const score_t* p, Py_ssize_t i, score_t floor) noexcept nogil:
    return allowed(p[i], floor)


cdef int scan(const score_t* arc, const score_t* sib, const score_t* grand, Py_ssize_t n,
              score_t* floor, bint* clean) noexcept nogil:
    """Sets ``floor`` below every usable finite part score (see the module doc): with lo and hi
    the extreme finite scores of parts a tree can use, a tree of at most 3n parts scores less
    with k + 1 disallowed parts than any with k when floor < lo - 3n (hi - lo). Sets ``clean``
    if no sibling or grandparent part made of allowed arcs is disallowed. Returns
    DECODE_POSITIVE_INF if a usable part scores +inf."""
    cdef Py_ssize_t N = n + 1, g, h, m, p
    cdef score_t lo = INFINITY, hi = -INFINITY, a
    cdef const score_t* row
    clean[0] = True
    for h in range(N):
        for m in range(1, N):
            if m == h:
                continue
            a = arc[h * N + m]
            if a == INFINITY:
                return DECODE_POSITIVE_INF
            if a > -INFINITY:
                lo = a if a < lo else lo
                hi = a if a > hi else hi
    if sib != NULL:
        for h in range(N):
            for p in range(N):
                if p == 0 and h != 0:
                    continue
                row = sib + (h * N + p) * N
                for m in range(1, N):
                    # usable: p == h starts a side, else h < p < m or m < p < h
                    if p != h and not (h < p < m or m < p < h):
                        continue
                    a = row[m]
                    if a == INFINITY:
                        return DECODE_POSITIVE_INF
                    if a > -INFINITY:
                        lo = a if a < lo else lo
                        hi = a if a > hi else hi
                    elif arc[h * N + m] > -INFINITY and (p == h or arc[h * N + p] > -INFINITY):
                        clean[0] = False
    if grand != NULL:
        for g in range(N):
            for h in range(1, N):
                if h == g:
                    continue
                row = grand + (g * N + h) * N
                for m in range(1, N):
                    if m == h or m == g:
                        continue
                    a = row[m]
                    if a == INFINITY:
                        return DECODE_POSITIVE_INF
                    if a > -INFINITY:
                        lo = a if a < lo else lo
                        hi = a if a > hi else hi
                    elif arc[g * N + h] > -INFINITY and arc[h * N + m] > -INFINITY:
                        clean[0] = False
    floor[0] = 0.0 if lo == INFINITY else lo - (3 * n + 1) * (hi - lo + 1.0)
    return DECODE_OK


cdef score_t full_score(const DD2C* d, const head_t* heads) noexcept nogil:
    """f(heads): arcs + sibling chains + grandparent parts, disallowed parts at the floor."""
    cdef Py_ssize_t N = d.N, h, m, prev
    cdef score_t total = 0.0, floor = d.floor
    for m in range(1, N):
        h = heads[m]
        total += part(d.arc, h * N + m, floor)
        if d.grand != NULL and h != 0:
            total += part(d.grand, (heads[h] * N + h) * N + m, floor)
    if d.sib != NULL:
        for h in range(N):
            prev = h
            for m in range(h + 1, N):  # right side, innermost first
                if heads[m] == h:
                    total += part(d.sib, (h * N + prev) * N + m, floor)
                    prev = m
            prev = h
            for m in range(h - 1, 0, -1):  # left side, innermost first
                if heads[m] == h:
                    total += part(d.sib, (h * N + prev) * N + m, floor)
                    prev = m
    return total


cdef score_t chain(DD2C* d, Py_ssize_t h, const int* ms, Py_ssize_t k,
                   const score_t* grow, Py_ssize_t g, bint mark) noexcept nogil:
    """Best chain of modifiers of h among ms[0..k-1] (one side, innermost first; never g) under
    sibling parts plus unary(m) = -u[h, m] (+ grow[m] = grand[g, h, m] unless grow is NULL);
    returns its score (0: the empty chain) and, if ``mark``, sets it in S[h, .].

    Pushed forward so the inner loop reads sib[h, p, .] along one row, with cand(m) the best
    way into m: into(m) = unary(m) + cand(m),
    cand(m) = max(sib[h, h, m], max_{p between h and m} into(p) + sib[h, p, m])."""
    cdef Py_ssize_t N = d.N, i, j, p, m, end = -1
    cdef score_t floor = d.floor, best = 0.0, val, into_p
    cdef const score_t* u = d.u + h * N
    cdef const score_t* row
    cdef score_t* cand = d.cand
    if d.sib == NULL:  # no sibling parts: every paying modifier is taken
        for i in range(k):
            m = ms[i]
            if m != g:
                val = -u[m] + (part(grow, m, floor) if grow != NULL else 0.0)
                if val > 0.0:
                    best += val
                    if mark:
                        d.S[h * N + m] = 1
        return best
    row = d.sib + (h * N + h) * N
    for i in range(k):
        m = ms[i]
        cand[m] = part(row, m, floor)
        d.back[m] = <int>h
    for i in range(k):
        p = ms[i]
        if p == g:
            continue
        into_p = cand[p] - u[p] + (part(grow, p, floor) if grow != NULL else 0.0)
        if into_p > best:
            best = into_p
            end = p
        row = d.sib + (h * N + p) * N
        for j in range(i + 1, k):
            m = ms[j]
            val = into_p + part(row, m, floor)
            if val > cand[m]:
                cand[m] = val
                d.back[m] = <int>p
    while mark and end != h and end >= 0:
        d.S[h * N + end] = 1
        end = d.back[end]
    return best


cdef void solve_head(DD2C* d, Py_ssize_t h) noexcept nogil:
    """Head automaton of h (subproblem 2): its modifiers S[h, .], its head B[h] and val[h]."""
    cdef Py_ssize_t N = d.N, g, i, m, arg = -1
    cdef score_t best = -INFINITY, val
    cdef const int* right = d.mods + h * N
    cdef const int* left = right + d.n_right[h]
    cdef Py_ssize_t nr = d.n_right[h], nl = d.n_left[h]
    cdef const score_t* grow
    memset(d.S + h * N, 0, N)
    d.B[h] = -1
    if h == 0 and d.single_root:  # exactly one root child, no grandparent parts
        for i in range(nr):
            m = right[i]
            val = -d.u[m] + (part(d.sib, m, d.floor) if d.sib != NULL else 0.0)
            if val > best:
                best = val
                arg = m
        d.S[arg] = 1
        d.val[0] = best
        return
    if h == 0 or d.grand == NULL:
        d.val[h] = chain(d, h, right, nr, NULL, -1, True) + chain(d, h, left, nl, NULL, -1, True)
        return
    for i in range(d.n_heads[h]):  # max_g -w[g, h] + right(g) + left(g)
        g = d.cands[h * N + i]
        grow = d.grand + (g * N + h) * N
        val = (-d.w[g * N + h] + chain(d, h, right, nr, grow, g, False)
               + chain(d, h, left, nl, grow, g, False))
        if val > best:
            best = val
            arg = g
    grow = d.grand + (arg * N + h) * N
    chain(d, h, right, nr, grow, arg, True)
    chain(d, h, left, nl, grow, arg, True)
    d.B[h] = <head_t>arg
    d.val[h] = best


cdef void candidates(DD2C* d, bint restrict) noexcept nogil:
    """Fills the candidate modifier and head lists: every arc, or (``restrict``) only the
    allowed ones."""
    cdef Py_ssize_t N = d.N, h, m, k
    for h in range(N):
        d.n_heads[h] = 0
    for h in range(N):
        k = 0
        for m in range(h + 1, N):
            if not restrict or d.arc[h * N + m] > -INFINITY:
                d.mods[h * N + k] = <int>m
                k += 1
                d.cands[m * N + d.n_heads[m]] = <int>h
                d.n_heads[m] += 1
        d.n_right[h] = <int>k
        for m in range(h - 1, 0, -1):
            if not restrict or d.arc[h * N + m] > -INFINITY:
                d.mods[h * N + k] = <int>m
                k += 1
                d.cands[m * N + d.n_heads[m]] = <int>h
                d.n_heads[m] += 1
        d.n_left[h] = <int>(k - d.n_right[h])


cdef int dd2_decode(const score_t* arc, const score_t* sib, const score_t* grand,
                    Py_ssize_t n, bint single_root, int max_iter, score_t step, score_t tol,
                    head_t* heads, DD2ResultC* result) noexcept nogil:
    cdef Py_ssize_t N = n + 1, h, m, i
    cdef DD2C d
    cdef char* block
    cdef int status, it, stall = 0, ds, db, zs
    cdef score_t dual, primal, alpha, norm2, lam = step
    cdef bint clean
    status = scan(arc, sib, grand, n, &d.floor, &clean)
    if status != DECODE_OK:
        return status
    block = <char*>malloc(3 * N * N * sizeof(score_t) + 2 * N * sizeof(score_t)
                          + (2 * N * N + 4 * N) * sizeof(int) + 2 * N * sizeof(head_t)
                          + N * N + N)
    if block == NULL:
        return DECODE_NO_MEMORY
    d.N = N
    d.arc = arc
    d.sib = sib
    d.grand = grand
    d.single_root = single_root
    d.W = <score_t*>block
    d.u = d.W + N * N
    d.w = d.u + N * N
    d.val = d.w + N * N
    d.cand = d.val + N
    d.back = <int*>(d.cand + N)
    d.mods = d.back + N
    d.cands = d.mods + N * N
    d.n_right = d.cands + N * N
    d.n_left = d.n_right + N
    d.n_heads = d.n_left + N
    d.B = <head_t*>(d.n_heads + N)
    d.z = d.B + N
    d.S = <char*>(d.z + N)
    d.dirty = d.S + N * N
    for i in range(N * N):
        d.W[i] = part(arc, i, d.floor)
        d.u[i] = d.w[i] = 0.0
    memset(d.dirty, 1, N)
    # the automata consider allowed arcs only when some tree of allowed arcs exists and no
    # part of such a tree is disallowed (then every such tree beats every other one)
    status = cle_decode(d.W, n, single_root, d.z)
    if status != DECODE_OK:
        free(block)
        return status
    for m in range(1, N):
        clean = clean and arc[d.z[m] * N + m] > -INFINITY
    candidates(&d, clean)
    result.certified = False
    result.dual = INFINITY
    result.primal = -INFINITY
    for it in range(1, max_iter + 1):
        result.iterations = it
        for h in range(N):
            if d.dirty[h]:
                solve_head(&d, h)
                d.dirty[h] = 0
        status = cle_decode(d.W, n, single_root, d.z)
        if status != DECODE_OK:
            break
        primal = full_score(&d, d.z)
        if primal > result.primal:
            result.primal = primal
            for m in range(N):
                heads[m] = d.z[m]
        dual = 0.0  # L = tree value + head automata values
        for m in range(1, N):
            dual += d.W[d.z[m] * N + m]
        for h in range(N):
            dual += d.val[h]
        if dual < result.dual:
            result.dual = dual
            stall = 0
        else:
            stall += 1
            if stall >= PATIENCE:
                lam *= 0.5
                stall = 0
        if result.dual - result.primal <= tol * (1.0 + fabs(result.dual)):
            result.certified = True
            break
        norm2 = 0.0  # squared norm of the subgradient (z - s, z - b)
        for m in range(1, N):
            for h in range(N):
                if h != m:
                    zs = d.z[m] == h
                    ds = zs - d.S[h * N + m]
                    db = zs - (d.B[m] == h) if grand != NULL else 0
                    norm2 += ds * ds + db * db
        if norm2 == 0.0:  # the subproblems agree: f(z) = L up to rounding
            result.certified = True
            break
        alpha = lam * (dual - result.primal) / norm2
        for m in range(1, N):
            for h in range(N):
                if h == m:
                    continue
                zs = d.z[m] == h
                ds = zs - d.S[h * N + m]
                if ds != 0:
                    d.u[h * N + m] -= alpha * ds
                    d.W[h * N + m] -= alpha * ds
                    d.dirty[h] = 1
                if grand != NULL:
                    db = zs - (d.B[m] == h)
                    if db != 0:
                        d.w[h * N + m] -= alpha * db
                        d.W[h * N + m] -= alpha * db
                        d.dirty[m] = 1
    free(block)
    return status


def dd2(const score_t[:, ::1] arc not None, const score_t[:, :, ::1] sib=None,
        const score_t[:, :, ::1] grand=None, bint single_root=True, int max_iter=500,
        double step=1.0, double tol=1e-9):
    """Second-order non-projective tree by dual decomposition (see the module doc).

    arc: float64 [n+1, n+1], ``arc[h, m]`` scores h -> m; sib: float64 [n+1, n+1, n+1] or None,
    ``sib[h, m, s]`` scores m, s consecutive modifiers of h on one side (s farther; m == h: s is
    the innermost); grand: float64 [n+1, n+1, n+1] or None, ``grand[g, h, m]`` scores g -> h -> m.
    All C-contiguous; -inf or NaN marks a disallowed part, +inf is a ValueError. single_root:
    exactly one word attached to the root. max_iter >= 1 caps the subgradient iterations;
    step > 0 scales the Polyak step; tol >= 0 is the relative duality gap taken as closed.

    Returns (heads, certified, iterations, dual, primal): heads int32 [n+1] (heads[0] == -1), a
    valid tree; certified: it is a best tree; dual: an upper bound on every tree's score;
    primal: the heads' score (with disallowed parts at the floor, see the module doc).
    """
    cdef Py_ssize_t n = words_of(arc)
    cdef cnp.npy_intp size = n + 1
    cdef cnp.ndarray heads = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT32, 0)
    cdef const score_t* sib_p = NULL
    cdef const score_t* grand_p = NULL
    cdef DD2ResultC result
    cdef int status
    if sib is not None and not sib.shape[0] == sib.shape[1] == sib.shape[2] == n + 1:
        raise ValueError(f"sib scores must have shape [n+1, n+1, n+1] with n + 1 = {n + 1}")
    if grand is not None and not grand.shape[0] == grand.shape[1] == grand.shape[2] == n + 1:
        raise ValueError(f"grand scores must have shape [n+1, n+1, n+1] with n + 1 = {n + 1}")
    if sib is not None:
        sib_p = &sib[0, 0, 0]
    if grand is not None:
        grand_p = &grand[0, 0, 0]
    if max_iter < 1 or not step > 0.0 or not tol >= 0.0:
        raise ValueError(f"need max_iter >= 1, step > 0 and tol >= 0, got {max_iter}, {step}, "
                         f"{tol}")
    with nogil:
        status = dd2_decode(&arc[0, 0], sib_p, grand_p, n, single_root, max_iter, step, tol,
                            <head_t*>cnp.PyArray_DATA(heads), &result)
    if status == DECODE_POSITIVE_INF:
        raise ValueError("part scores must not be +inf")
    raise_for_status(status)
    return heads, bool(result.certified), result.iterations, result.dual, result.primal


@dataclass(frozen=True)
class DD2Result:
    """One dd2 call: the tree and how it was found (see :func:`dd2`)."""

    heads: Heads            # int32 [n+1], heads[0] == -1
    certified: bool         # heads is a best tree (the duality gap closed)
    iterations: int         # subgradient iterations run
    dual: float             # upper bound on every tree's score
    primal: float           # the score of heads


@register_decoder
class DualDecomposition2(Decoder):
    """Second-order non-projective decoder (arc + sibling + grandparent parts) by dual
    decomposition with projected subgradient (Koo et al. 2010); see dparse/_ext/dd2.pyx.

    Approximate in general, exact when it certifies. ``last`` holds the :class:`DD2Result` of
    the latest call; ``calls``, ``certified`` and ``iterations`` count over all calls since
    :meth:`reset_stats` (``certified_share`` is the share of calls solved to certified
    optimality). Options (``max_iter``, ``step``, ``tol``) default to the constructor's.
    """

    name = "dd2"
    exact = False
    projective = False
    parts = ("arc", "sib", "grand")

    def __init__(self, max_iter: int = 500, step: float = 1.0, tol: float = 1e-9) -> None:
        self.max_iter = max_iter
        self.step = step
        self.tol = tol
        self.last: DD2Result | None = None
        self.reset_stats()

    def reset_stats(self) -> None:
        """Zeroes the call, certificate and iteration counters."""
        self.calls = 0
        self.certified = 0
        self.iterations = 0

    @property
    def certified_share(self) -> float:
        """Share of calls since the last reset whose tree is certified optimal (0 if none)."""
        return self.certified / self.calls if self.calls else 0.0

    def decode(
        self,
        arc: ArrayLike,
        *,
        single_root: bool = True,
        sib: ArrayLike | None = None,
        grand: ArrayLike | None = None,
        max_iter: int | None = None,
        step: float | None = None,
        tol: float | None = None,
    ) -> Heads:
        """Best (certified) or rounded tree; the arguments as for :meth:`solve`."""
        return self.solve(
            arc, single_root=single_root, sib=sib, grand=grand, max_iter=max_iter, step=step,
            tol=tol,
        ).heads

    def solve(
        self,
        arc: ArrayLike,
        *,
        single_root: bool = True,
        sib: ArrayLike | None = None,
        grand: ArrayLike | None = None,
        max_iter: int | None = None,
        step: float | None = None,
        tol: float | None = None,
    ) -> DD2Result:
        """Decodes arc float64 [n+1, n+1] with optional sib and grand float64 [n+1, n+1, n+1]
        (missing parts score 0) and records the call; returns the full :class:`DD2Result`."""
        arc = as_scores(arc)
        size = arc.shape[0]
        sib = None if sib is None else self._check_part("sib", sib, size)
        grand = None if grand is None else self._check_part("grand", grand, size)
        heads, certified, iterations, dual, primal = dd2(
            arc, sib, grand, single_root,
            self.max_iter if max_iter is None else max_iter,
            self.step if step is None else step,
            self.tol if tol is None else tol,
        )
        self.last = DD2Result(heads, certified, iterations, dual, primal)
        self.calls += 1
        self.certified += certified
        self.iterations += iterations
        return self.last
