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
   arc[h, m] + u[h, m] + w[h, m]; solved exactly by Chu-Liu-Edmonds (dparse/graph/cle.pxd),
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
and returned with certified = True. Otherwise, after ``max_iter`` iterations, the gap is
closed by branch and bound, or the rounding is returned: of all CLE trees seen, the one with
the highest f (always a valid tree).

Branch and bound (for the sentences whose gap stays open: a relaxation that is not tight, or
a subgradient that stalls). A node bans some arcs: they get -inf in the tree subproblem and
leave the automata's candidate lists, so the node's dual bounds every tree avoiding them (and
is -inf when no tree does; CLE then returns a tree with a banned arc). A node whose gap stays
open after ``node_iter`` iterations, warm-started from its parent's multipliers, splits on
the arc h -> m whose three copies (z, s, b) disagreed most over its last half of iterations
(the ergodic average nearest 1/2): one child fixes h -> m (bans m's other heads), the other
bans it. Every CLE tree of every node is a tree of the whole problem and may become the
incumbent, the lower bound of all nodes' Polyak steps. Nodes are solved best-first by their
upper bounds (a child starts from its parent's); a node below the incumbent is closed. The
incumbent is certified when no open node's bound exceeds it; at most ``max_nodes`` nodes are
solved, and the highest open bound is then reported as the dual. A node with nothing to split
on (the disagreement only at fixed arcs) gets one more ``node_iter`` iterations as a child of
its own. Every step keeps the bounds valid, so a certified tree is a best tree.

Options: the defaults (step 1, 500 iterations, no branch and bound) are plain dual
decomposition; configs/en_ewt/o2-dd.yaml sets its own (step 2, 100 iterations, then up to 100
branch-and-bound nodes of 20 iterations), which certify far more sentences in less time
(results/dd2-certificates.md).

Candidates (pruning): when some tree uses only allowed arcs (the first CLE tree tells) and no
sibling or grandparent part made of allowed arcs is disallowed, the automata consider only
allowed arcs (k = the allowed modifiers of h, g among h's allowed heads): such trees beat
all others, so the bound still holds for the trees that matter. Otherwise every arc.

Cost per iteration: CLE O(n^2), the full score of z O(n), and the automata of the heads
whose multipliers changed (only those are re-solved): O(k^3) each, so O(n^4) per iteration in
the worst (unpruned) case, far less with a first-order pruner. At most max_iter + max_nodes *
node_iter iterations per call. Memory O(n^2) besides the inputs, plus 2 (n+1)^2 multipliers
kept by each branch-and-bound node with a child not yet solved (at most max_nodes + 1 of them).
Ties go to the lowest index and to the empty chain, so decoding is deterministic.

Disallowed parts: -inf or NaN in any part array stands for ``floor``, a finite score so low that
a tree with fewer disallowed parts always wins (as dparse/_ext/types.pxd does for arcs; a tree
has at most 3n parts). +inf is an error.
"""

from libc.math cimport INFINITY, fabs
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from dataclasses import dataclass

from numpy.typing import ArrayLike

cimport numpy as cnp

from dparse.graph.cle cimport cle_decode
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

# option defaults (the dd2 function and decoder)
MAX_ITER = 500
STEP = 1.0
TOL = 1e-9
MAX_NODES = 0
NODE_ITER = 50


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
    bint restrict          # candidates are the allowed arcs only (see "Candidates")
    char* banned           # [N, N] branch and bound: h -> m excluded from this node at [h, m]
    char* fixed            # [N] branch and bound: m's head fixed (its other heads banned)
    int* usage             # [N, N] z + s + b at [h, m] summed over the counted iterations
    int counted            # iterations summed into usage


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


cdef score_t full_score(DD2C* d, const head_t* heads) noexcept nogil:
    """f(heads): arcs + sibling chains + grandparent parts, disallowed parts at the floor.
    O(n): the chains are followed outwards from each head, right side with the words in
    ascending order, left side descending (``d.back`` [N] holds each head's last modifier)."""
    cdef Py_ssize_t N = d.N, h, m
    cdef score_t total = 0.0, floor = d.floor
    cdef int* last = d.back
    for m in range(1, N):
        h = heads[m]
        total += part(d.arc, h * N + m, floor)
        if d.grand != NULL and h != 0:
            total += part(d.grand, (heads[h] * N + h) * N + m, floor)
    if d.sib != NULL:
        for h in range(N):
            last[h] = <int>h
        for m in range(1, N):  # right sides, innermost first
            h = heads[m]
            if h < m:
                total += part(d.sib, (h * N + last[h]) * N + m, floor)
                last[h] = <int>m
        for h in range(N):
            last[h] = <int>h
        for m in range(N - 1, 0, -1):  # left sides, innermost first
            h = heads[m]
            if h > m:
                total += part(d.sib, (h * N + last[h]) * N + m, floor)
                last[h] = <int>m
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
        if arg >= 0:  # else every root arc is banned: no tree, the value stays -inf
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
    d.val[h] = best
    if arg < 0:  # every head of h is banned: no tree, the value stays -inf
        return
    grow = d.grand + (arg * N + h) * N
    chain(d, h, right, nr, grow, arg, True)
    chain(d, h, left, nl, grow, arg, True)
    d.B[h] = <head_t>arg


cdef inline bint candidate(const DD2C* d, Py_ssize_t h, Py_ssize_t m) noexcept nogil:
    """h -> m is open to the head automata: not banned, and allowed unless every arc is."""
    return not d.banned[h * d.N + m] and (not d.restrict or d.arc[h * d.N + m] > -INFINITY)


cdef void candidates(DD2C* d) noexcept nogil:
    """Fills the candidate modifier and head lists with the arcs :func:`candidate` opens."""
    cdef Py_ssize_t N = d.N, h, m, k
    for h in range(N):
        d.n_heads[h] = 0
    for h in range(N):
        k = 0
        for m in range(h + 1, N):
            if candidate(d, h, m):
                d.mods[h * N + k] = <int>m
                k += 1
                d.cands[m * N + d.n_heads[m]] = <int>h
                d.n_heads[m] += 1
        d.n_right[h] = <int>k
        for m in range(h - 1, 0, -1):
            if candidate(d, h, m):
                d.mods[h * N + k] = <int>m
                k += 1
                d.cands[m * N + d.n_heads[m]] = <int>h
                d.n_heads[m] += 1
        d.n_left[h] = <int>(k - d.n_right[h])


cdef inline Py_ssize_t arc_head(const DD2C* d, Py_ssize_t m, Py_ssize_t k) noexcept nogil:
    """The k-th head h of the arcs h -> m where the subgradient can be nonzero: m's candidate
    heads (k < n_heads[m]; the head automata use no other arc), then (k == n_heads[m]) the
    tree's head z[m] if it is not a candidate (a banned arc, when no tree avoids the bans);
    -1 for that last one otherwise."""
    if k < d.n_heads[m]:
        return d.cands[m * d.N + k]
    return -1 if candidate(d, d.z[m], m) else d.z[m]


cdef inline bint closes(score_t bound, score_t primal, score_t tol) noexcept nogil:
    """The upper bound ``bound`` meets the lower bound ``primal`` within ``tol`` (relative)."""
    return bound <= primal or bound - primal <= tol * (1.0 + fabs(bound))


cdef int subgradient(DD2C* d, int iters, score_t tol, score_t* lam, score_t* bound,
                     bint* closed, head_t* heads, DD2ResultC* result) noexcept nogil:
    """Up to ``iters`` subgradient iterations from the current multipliers (see the module doc)
    over the trees avoiding the banned arcs. Lowers ``bound`` to the lowest dual value seen,
    halves ``lam`` on stalls, raises result.primal (with ``heads``) to the best tree seen;
    ``closed``: the bound met result.primal (no better tree here). Over the second half of the
    iterations sums z + s + b into ``usage`` for :func:`branching_arc`."""
    cdef Py_ssize_t N = d.N, h, m, k
    cdef int status, it, stall = 0, ds, db, zs, zb
    cdef score_t dual, primal, alpha, norm2
    cdef bint count
    closed[0] = False
    memset(d.usage, 0, N * N * sizeof(int))
    d.counted = 0
    for it in range(iters):
        result.iterations += 1
        for h in range(N):
            if d.dirty[h]:
                solve_head(d, h)
                d.dirty[h] = 0
        status = cle_decode(d.W, N - 1, d.single_root, d.z)
        if status != DECODE_OK:
            return status
        primal = full_score(d, d.z)  # every z is a tree of the whole problem
        if primal > result.primal:
            result.primal = primal
            memcpy(heads, d.z, N * sizeof(head_t))
        dual = 0.0  # L = tree value + head automata values (-inf: no tree avoids the bans)
        for m in range(1, N):
            dual += d.W[d.z[m] * N + m]
        for h in range(N):
            dual += d.val[h]
        if dual < bound[0]:
            bound[0] = dual
            stall = 0
        else:
            stall += 1
            if stall >= PATIENCE:
                lam[0] *= 0.5
                stall = 0
        if closes(bound[0], result.primal, tol):
            closed[0] = True
            return DECODE_OK
        count = 2 * (it + 1) > iters
        d.counted += count
        norm2 = 0.0  # squared norm of the subgradient (z - s, z - b)
        for m in range(1, N):
            for k in range(d.n_heads[m] + 1):  # s and b are 0 off the candidates: see arc_head
                h = arc_head(d, m, k)
                if h < 0:
                    continue
                zs = d.z[m] == h
                zb = d.B[m] == h
                ds = zs - d.S[h * N + m]
                db = zs - zb if d.grand != NULL else 0
                norm2 += ds * ds + db * db
                if count:
                    d.usage[h * N + m] += zs + d.S[h * N + m] + (zb if d.grand != NULL else 0)
        if norm2 == 0.0:  # the subproblems agree: this node's best tree is z, f(z) = L
            if dual < bound[0]:
                bound[0] = dual
            closed[0] = True
            return DECODE_OK
        alpha = lam[0] * (dual - result.primal) / norm2
        for m in range(1, N):
            for k in range(d.n_heads[m] + 1):
                h = arc_head(d, m, k)
                if h < 0:
                    continue
                zs = d.z[m] == h
                ds = zs - d.S[h * N + m]
                if ds != 0:
                    d.u[h * N + m] -= alpha * ds
                    d.W[h * N + m] -= alpha * ds
                    d.dirty[h] = 1
                if d.grand != NULL:
                    db = zs - (d.B[m] == h)
                    if db != 0:
                        d.w[h * N + m] -= alpha * db
                        d.W[h * N + m] -= alpha * db
                        d.dirty[m] = 1
    return DECODE_OK


cdef struct NodeC:
    int parent             # the node this one was branched from (-1: the root)
    int h, m               # the branching arc h -> m (-1, -1: none, the parent's bans)
    bint fix               # this side: h -> m fixed (m's other heads banned); else banned
    bint open              # not yet solved
    score_t bound          # upper bound on the node's trees (its parent's, then its own)
    score_t* mult          # [2 N N] u then w after solving, its children's start (owned;
                           # freed once they are all loaded)
    int waiting            # children not yet loaded


cdef Py_ssize_t branching_arc(const DD2C* d) noexcept nogil:
    """The arc h -> m (as h * N + m) whose copies z, s, b disagreed most over the counted
    iterations (usage nearest half its range), m's head not yet fixed; -1 if none did."""
    cdef Py_ssize_t N = d.N, h, m, arg = -1
    cdef int total = d.counted * (3 if d.grand != NULL else 2), c, spread, best = 0
    for m in range(1, N):
        if d.fixed[m]:
            continue
        for h in range(N):
            if h == m or d.banned[h * N + m]:
                continue
            c = d.usage[h * N + m]
            spread = c if c < total - c else total - c
            if spread > best:
                best = spread
                arg = h * N + m
    return arg


cdef void load_node(DD2C* d, NodeC* nodes, int k) noexcept nogil:
    """Sets the bans of node k (its branching decisions up to the root) and its starting
    multipliers, its parent's last (freed once every child has them); rebuilds W and the
    candidate lists and marks every automaton dirty."""
    cdef Py_ssize_t N = d.N, g, i
    cdef NodeC* parent = nodes + nodes[k].parent
    cdef const NodeC* node = nodes + k
    memset(d.banned, 0, N * N)
    memset(d.fixed, 0, N)
    memcpy(d.u, parent.mult, N * N * sizeof(score_t))
    memcpy(d.w, parent.mult + N * N, N * N * sizeof(score_t))
    parent.waiting -= 1
    if parent.waiting == 0:
        free(parent.mult)
        parent.mult = NULL
    while node.parent >= 0:  # node.h < 0: no decision of its own
        if node.h >= 0 and node.fix:
            d.fixed[node.m] = 1
            for g in range(N):
                if g != node.h:
                    d.banned[g * N + node.m] = 1
        elif node.h >= 0:
            d.banned[node.h * N + node.m] = 1
        node = nodes + node.parent
    for i in range(N * N):
        d.W[i] = -INFINITY if d.banned[i] else part(d.arc, i, d.floor) + d.u[i] + d.w[i]
    candidates(d)
    memset(d.dirty, 1, N)


cdef int branch(DD2C* d, NodeC* nodes, int* count, int k, Py_ssize_t arc) noexcept nogil:
    """Appends node k's two children on ``arc`` (h * N + m: fixed, banned), both starting from
    the current multipliers (kept in node k) and node k's bound; for arc -1 (nothing to split
    on) one child with node k's own bans, to run more iterations. DECODE_NO_MEMORY if out of
    memory."""
    cdef Py_ssize_t N = d.N
    cdef int side
    cdef NodeC* child
    nodes[k].mult = <score_t*>malloc(2 * N * N * sizeof(score_t))
    if nodes[k].mult == NULL:
        return DECODE_NO_MEMORY
    memcpy(nodes[k].mult, d.u, N * N * sizeof(score_t))
    memcpy(nodes[k].mult + N * N, d.w, N * N * sizeof(score_t))
    nodes[k].waiting = 0
    for side in range(2 if arc >= 0 else 1):
        child = nodes + count[0]
        count[0] += 1
        nodes[k].waiting += 1
        child.mult = NULL
        child.parent = k
        child.h = <int>(arc // N) if arc >= 0 else -1
        child.m = <int>(arc % N) if arc >= 0 else -1
        child.fix = side == 0
        child.open = True
        child.bound = nodes[k].bound
    return DECODE_OK


cdef int branch_and_bound(DD2C* d, NodeC* nodes, int max_nodes, int node_iter, score_t tol,
                          score_t step, head_t* heads, DD2ResultC* result) noexcept nogil:
    """Branch and bound over arcs after an unclosed root (nodes[0], solved, its multipliers in
    d): best-first on the nodes' upper bounds, each node solved by subgradient (``node_iter``
    iterations) warm-started from its parent's multipliers and split on :func:`branching_arc`
    while its gap stays open, at most ``max_nodes`` nodes solved. Every node starts from the
    step scale ``step`` (the root's has decayed over its many iterations, and so would a
    parent's: measured worse). Sets result.certified when every node closed and
    result.dual to the highest bound left open (at least result.primal)."""
    cdef int count = 1, k, best, status = DECODE_OK
    cdef score_t lam
    cdef bint closed
    status = branch(d, nodes, &count, 0, branching_arc(d))
    while status == DECODE_OK:
        best = -1
        for k in range(count):
            if nodes[k].open and (best < 0 or nodes[k].bound > nodes[best].bound):
                best = k
        if best < 0 or closes(nodes[best].bound, result.primal, tol):
            break  # every open node is beaten by the incumbent
        if result.nodes == max_nodes:
            break
        k = best
        load_node(d, nodes, k)
        nodes[k].open = False
        result.nodes += 1
        lam = step
        status = subgradient(d, node_iter, tol, &lam, &nodes[k].bound, &closed, heads, result)
        if status == DECODE_OK and not closed:
            status = branch(d, nodes, &count, k, branching_arc(d))
    result.dual = result.primal
    for k in range(count):
        if nodes[k].open and nodes[k].bound > result.dual:
            result.dual = nodes[k].bound
        free(nodes[k].mult)
    result.certified = status == DECODE_OK and closes(result.dual, result.primal, tol)
    return status


cdef int dd2_decode(const score_t* arc, const score_t* sib, const score_t* grand,
                    Py_ssize_t n, bint single_root, int max_iter, score_t step, score_t tol,
                    int max_nodes, int node_iter, head_t* heads,
                    DD2ResultC* result) noexcept nogil:
    cdef Py_ssize_t N = n + 1, m, i
    cdef DD2C d
    cdef char* block
    cdef NodeC* nodes
    cdef int status
    cdef score_t lam = step, bound = INFINITY
    cdef bint clean, closed
    status = scan(arc, sib, grand, n, &d.floor, &clean)
    if status != DECODE_OK:
        return status
    block = <char*>malloc(3 * N * N * sizeof(score_t) + 2 * N * sizeof(score_t)
                          + (3 * N * N + 4 * N) * sizeof(int) + 2 * N * sizeof(head_t)
                          + 2 * N * N + 2 * N)
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
    d.usage = d.cands + N * N
    d.n_right = d.usage + N * N
    d.n_left = d.n_right + N
    d.n_heads = d.n_left + N
    d.B = <head_t*>(d.n_heads + N)
    d.z = d.B + N
    d.S = <char*>(d.z + N)
    d.banned = d.S + N * N
    d.dirty = d.banned + N * N
    d.fixed = d.dirty + N
    memset(d.banned, 0, N * N)
    memset(d.fixed, 0, N)
    memset(d.dirty, 1, N)
    for i in range(N * N):
        d.W[i] = part(arc, i, d.floor)
        d.u[i] = d.w[i] = 0.0
    # the automata consider allowed arcs only when some tree of allowed arcs exists and no
    # part of such a tree is disallowed (then every such tree beats every other one)
    status = cle_decode(d.W, n, single_root, d.z)
    if status != DECODE_OK:
        free(block)
        return status
    for m in range(1, N):
        clean = clean and arc[d.z[m] * N + m] > -INFINITY
    d.restrict = clean
    candidates(&d)
    result.iterations = result.nodes = 0
    result.primal = -INFINITY
    status = subgradient(&d, max_iter, tol, &lam, &bound, &closed, heads, result)
    result.dual = bound
    result.certified = status == DECODE_OK and closed
    if status == DECODE_OK and not closed and max_nodes > 0:
        # each solved node adds at most two: 2 (max_nodes + 1) records with the root's
        nodes = <NodeC*>malloc((2 * max_nodes + 3) * sizeof(NodeC))
        if nodes == NULL:
            status = DECODE_NO_MEMORY
        else:
            nodes[0].parent = -1
            nodes[0].open = False
            nodes[0].bound = bound
            nodes[0].mult = NULL
            status = branch_and_bound(&d, nodes, max_nodes, node_iter, tol, step, heads, result)
            free(nodes)
    free(block)
    return status


def dd2(const score_t[:, ::1] arc not None, const score_t[:, :, ::1] sib=None,
        const score_t[:, :, ::1] grand=None, bint single_root=True, int max_iter=MAX_ITER,
        double step=STEP, double tol=TOL, int max_nodes=MAX_NODES, int node_iter=NODE_ITER):
    """Second-order non-projective tree by dual decomposition (see the module doc).

    arc: float64 [n+1, n+1], ``arc[h, m]`` scores h -> m; sib: float64 [n+1, n+1, n+1] or None,
    ``sib[h, m, s]`` scores m, s consecutive modifiers of h on one side (s farther; m == h: s is
    the innermost); grand: float64 [n+1, n+1, n+1] or None, ``grand[g, h, m]`` scores g -> h -> m.
    All C-contiguous; -inf or NaN marks a disallowed part, +inf is a ValueError. single_root:
    exactly one word attached to the root. max_iter >= 1 caps the subgradient iterations of the
    root; step > 0 scales the Polyak step; tol >= 0 is the relative duality gap taken as closed;
    max_nodes >= 0 caps the branch-and-bound nodes solved when the root's gap stays open (0:
    plain dual decomposition), node_iter >= 1 the iterations of each.

    Returns (heads, certified, iterations, dual, primal, nodes): heads int32 [n+1]
    (heads[0] == -1), a valid tree; certified: it is a best tree; iterations: subgradient
    iterations over all nodes; dual: an upper bound on every tree's score; primal: the heads'
    score (with disallowed parts at the floor, see the module doc); nodes: branch-and-bound
    nodes solved after the root.
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
    if max_iter < 1 or not step > 0.0 or not tol >= 0.0 or max_nodes < 0 or node_iter < 1:
        raise ValueError(f"need max_iter >= 1, step > 0, tol >= 0, max_nodes >= 0 and "
                         f"node_iter >= 1, got {max_iter}, {step}, {tol}, {max_nodes}, "
                         f"{node_iter}")
    with nogil:
        status = dd2_decode(&arc[0, 0], sib_p, grand_p, n, single_root, max_iter, step, tol,
                            max_nodes, node_iter, <head_t*>cnp.PyArray_DATA(heads), &result)
    if status == DECODE_POSITIVE_INF:
        raise ValueError("part scores must not be +inf")
    raise_for_status(status)
    return (heads, bool(result.certified), result.iterations, result.dual, result.primal,
            result.nodes)


@dataclass(frozen=True)
class DD2Result:
    """One dd2 call: the tree and how it was found (see :func:`dd2`)."""

    heads: Heads            # int32 [n+1], heads[0] == -1
    certified: bool         # heads is a best tree (the duality gap closed)
    iterations: int         # subgradient iterations run, over all branch-and-bound nodes
    dual: float             # upper bound on every tree's score
    primal: float           # the score of heads
    nodes: int = 0          # branch-and-bound nodes solved after the root


@register_decoder
class DualDecomposition2(Decoder):
    """Second-order non-projective decoder (arc + sibling + grandparent parts) by dual
    decomposition with projected subgradient (Koo et al. 2010), and branch and bound over arcs
    for the sentences whose duality gap stays open; see dparse/graph/dd2.pyx.

    Approximate in general, exact when it certifies. ``last`` holds the :class:`DD2Result` of
    the latest call; ``calls``, ``certified``, ``iterations`` and ``nodes`` count over all calls
    since :meth:`reset_stats` (``certified_share`` is the share of calls solved to certified
    optimality). Options (``max_iter``, ``step``, ``tol``, ``max_nodes``, ``node_iter``; see
    :func:`dd2`) default to the constructor's.
    """

    name = "dd2"
    exact = False
    projective = False
    parts = ("arc", "sib", "grand")

    def __init__(self, max_iter: int = MAX_ITER, step: float = STEP, tol: float = TOL,
                 max_nodes: int = MAX_NODES, node_iter: int = NODE_ITER) -> None:
        self.max_iter = max_iter
        self.step = step
        self.tol = tol
        self.max_nodes = max_nodes
        self.node_iter = node_iter
        self.last: DD2Result | None = None
        self.reset_stats()

    def reset_stats(self) -> None:
        """Zeroes the call, certificate, iteration and node counters."""
        self.calls = 0
        self.certified = 0
        self.iterations = 0
        self.nodes = 0

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
        max_nodes: int | None = None,
        node_iter: int | None = None,
    ) -> Heads:
        """Best (certified) or rounded tree; the arguments as for :meth:`solve`."""
        return self.solve(
            arc, single_root=single_root, sib=sib, grand=grand, max_iter=max_iter, step=step,
            tol=tol, max_nodes=max_nodes, node_iter=node_iter,
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
        max_nodes: int | None = None,
        node_iter: int | None = None,
    ) -> DD2Result:
        """Decodes arc float64 [n+1, n+1] with optional sib and grand float64 [n+1, n+1, n+1]
        (missing parts score 0) and records the call; returns the full :class:`DD2Result`."""
        arc = as_scores(arc)
        size = arc.shape[0]
        sib = None if sib is None else self._check_part("sib", sib, size)
        grand = None if grand is None else self._check_part("grand", grand, size)
        heads, certified, iterations, dual, primal, nodes = dd2(
            arc, sib, grand, single_root,
            self.max_iter if max_iter is None else max_iter,
            self.step if step is None else step,
            self.tol if tol is None else tol,
            self.max_nodes if max_nodes is None else max_nodes,
            self.node_iter if node_iter is None else node_iter,
        )
        self.last = DD2Result(heads, certified, iterations, dual, primal, nodes)
        self.calls += 1
        self.certified += certified
        self.iterations += iterations
        self.nodes += nodes
        return self.last
