# cython: language_level=3
"""The shift-reduce parser's beam search with dynamic programming (Huang and Sagae 2010) over
the transition system of shiftreduce_state.pyx, its packed forest, and :func:`parse`.

States of a step with equal signatures merge (Huang and Sagae's DP): the prefix score c and
inside score v are maxima, the predictor sets pi (states just before the shift of s0's first
word) are united. With x the shift score of a predictor p and y the action score of q (the
scores of shiftreduce_templates.pyx):

    shift  p -> q'        c' = c_p + x_p             v' = 0         pi' = {p}
    scan   q -> q'        c' = c_q + y               v' = v_q + y   pi' = pi(q)
    reduce (p in pi(q))   c' = c_p + x_p + v_q + y   v' = v_p + x_p + v_q + y   pi' = pi(p)

Each step keeps the ``beam`` merged states of highest prefix score; with a gold derivation
(training, forced decoding) the gold state is marked and, with ``force_gold``, kept. The best
final state's best prefix derivation is the tree, which the arc labeler
(shiftreduce_labeler.pyx) labels.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memset

import numpy as np

from cython cimport floating

from dparse._ext.hashing cimport fmix, mix
from dparse.transition.shiftreduce_labeler cimport label_all
from dparse.transition.shiftreduce_state cimport (
    LEFT,
    N_ACTIONS,
    NO_MEMORY,
    OK,
    RIGHT,
    SCAN,
    SHIFT,
    apply_reduce,
    apply_shift,
    axiom,
    num_steps,
    valid,
)
from dparse.transition.shiftreduce_templates cimport score_state

from dparse.transition.shiftreduce_state import oracle

cdef enum:
    AXIOM = -1                               # the creation of the initial state
    NO_DERIVATION = -3                       # constraints left no state in a beam


# ---------------------------------------------------------------------------------------------
# Growable pools

cdef int grow(void** p, int* cap, int need, size_t size) noexcept nogil:
    cdef int c = cap[0]
    cdef void* q
    if need <= c:
        return OK
    if c < 64:
        c = 64
    while c < need:
        c *= 2
    q = realloc(p[0], c * size)
    if q == NULL:
        return NO_MEMORY
    p[0] = q
    cap[0] = c
    return OK


cdef int new_state(SearchC* S) noexcept nogil:
    if grow(<void**>&S.st, &S.cap_st, S.n_st + 1, sizeof(StateC)) != OK:
        return NO_MEMORY
    S.n_st += 1
    return S.n_st - 1


cdef int new_link(SearchC* S, int32_t a, int32_t b, int32_t act, int32_t nxt) noexcept nogil:
    if grow(<void**>&S.ln, &S.cap_ln, S.n_ln + 1, sizeof(LinkC)) != OK:
        return NO_MEMORY
    S.ln[S.n_ln].a = a
    S.ln[S.n_ln].b = b
    S.ln[S.n_ln].act = act
    S.ln[S.n_ln].next = nxt
    S.n_ln += 1
    return S.n_ln - 1


cdef void free_search(SearchC* S) noexcept nogil:
    free(S.st)
    free(S.ln)
    free(S.beam_start)
    free(S.kept)
    free(S.rank)
    free(S.table)


cdef int init_search(SearchC* S, const int32_t[:, ::1] tokens, int tagcol, int system,
                     bint single_root, int beam) noexcept nogil:
    memset(S, 0, sizeof(SearchC))
    S.s.n = tokens.shape[0] - 1
    S.s.tok = &tokens[0, 0]
    S.s.tagcol = tagcol
    S.s.system = system
    S.s.single_root = single_root
    S.beam = beam
    S.T = num_steps(system, S.s.n)
    S.beam_start = <int32_t*>malloc((S.T + 2) * sizeof(int32_t))
    if S.beam_start == NULL:
        return NO_MEMORY
    return OK


# ---------------------------------------------------------------------------------------------
# The merge table's hash and equality of signatures

cdef inline uint64_t sig_hash(const SigC* g) noexcept nogil:
    cdef const int32_t* x = <const int32_t*>g
    cdef uint64_t h = 0x12345
    cdef int k
    for k in range(sizeof(SigC) // sizeof(int32_t)):
        h = mix(h, <uint64_t>(x[k] + 2))
    return fmix(h)


cdef inline bint sig_equal(const SigC* a, const SigC* b) noexcept nogil:
    cdef const int32_t* x = <const int32_t*>a
    cdef const int32_t* y = <const int32_t*>b
    cdef int k
    for k in range(sizeof(SigC) // sizeof(int32_t)):
        if x[k] != y[k]:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# Constraints

cdef inline bint reduce_allowed(const SearchC* S, const SigC* p, const SigC* q,
                                int a) noexcept nogil:
    """Whether reducing q with its predictor p by ``a`` keeps the constraints: the new arc
    is allowed and its dependent, whose subtree is complete, already has its fixed
    dependents (they lie in its span: p's s0 spans p.i..p.j-1, q's q.i..q.j-1). (A SCAN,
    after which s0 takes no left dependent, likewise waits for s0's fixed left ones.)"""
    cdef int head, dep, lo, hi
    if a == LEFT:
        head = q.s0h
        dep = p.s0h
        lo = p.i
        hi = p.j
    else:
        head = p.s0h
        dep = q.s0h
        lo = q.i
        hi = q.j
    return (S.allowed[head * (S.s.n + 1) + dep] != 0 and S.fix_lo[dep] >= lo
            and S.fix_hi[dep] < hi)


# ---------------------------------------------------------------------------------------------
# The beam search

cdef int rank_cmp(const void* a, const void* b) noexcept nogil:
    cdef const RankC* x = <const RankC*>a
    cdef const RankC* y = <const RankC*>b
    if x.c > y.c:
        return -1
    if x.c < y.c:
        return 1
    return -1 if x.idx < y.idx else (1 if x.idx > y.idx else 0)


cdef int offer(SearchC* S, const SigC* g, int step, int act, int p, int q, double c, double v,
               int pred, int gold, int32_t mask) noexcept nogil:
    """Merge a candidate into step ``step`` (the table holds that step's states). ``pred`` is
    the predictor list to copy (-1: none; SHIFT passes its source as ``p`` and gets {p})."""
    cdef uint64_t h = sig_hash(g)
    cdef int32_t slot = <int32_t>(h & mask)
    cdef int r, l, x, found
    cdef StateC* t
    while S.table[slot] >= 0:
        r = S.table[slot]
        if sig_equal(&S.st[r].sig, g):
            break
        slot = (slot + 1) & mask
    r = S.table[slot]
    if r < 0:
        r = new_state(S)
        if r < 0:
            return NO_MEMORY
        S.table[slot] = r
        t = &S.st[r]
        t.sig = g[0]
        t.step = step
        t.c = c
        t.v = v
        t.sh = 0
        t.pred = -1
        t.bc_act = t.bv_act = act
        t.bc_p = t.bv_p = p
        t.bc_q = t.bv_q = q
        t.edges = -1
        t.gold = gold
        t.alive = 0
        if act == SHIFT:
            l = new_link(S, p, -1, 0, -1)
            if l < 0:
                return NO_MEMORY
            S.st[r].pred = l
        else:
            x = pred
            while x >= 0:
                l = new_link(S, S.ln[x].a, -1, 0, S.st[r].pred)
                if l < 0:
                    return NO_MEMORY
                S.st[r].pred = l
                x = S.ln[x].next
    else:
        t = &S.st[r]
        if c > t.c:
            t.c = c
            t.bc_act = act
            t.bc_p = p
            t.bc_q = q
        if v > t.v:
            t.v = v
            t.bv_act = act
            t.bv_p = p
            t.bv_q = q
        t.gold = t.gold or gold
        if act == SHIFT:
            found = 0
            l = t.pred
            while l >= 0:
                if S.ln[l].a == p:
                    found = 1
                    break
                l = S.ln[l].next
            if not found:
                l = new_link(S, p, -1, 0, t.pred)
                if l < 0:
                    return NO_MEMORY
                S.st[r].pred = l
        else:
            x = pred
            while x >= 0:
                found = 0
                l = S.st[r].pred
                while l >= 0:
                    if S.ln[l].a == S.ln[x].a:
                        found = 1
                        break
                    l = S.ln[l].next
                if not found:
                    l = new_link(S, S.ln[x].a, -1, 0, S.st[r].pred)
                    if l < 0:
                        return NO_MEMORY
                    S.st[r].pred = l
                x = S.ln[x].next
    # the creation, for the forest
    l = new_link(S, p, q, act, S.st[r].edges)
    if l < 0:
        return NO_MEMORY
    S.st[r].edges = l
    return OK


cdef int run_search(SearchC* S, const floating* W, int shift) noexcept nogil:
    """Fill the chart: every step's merged candidates and its kept states (``kept``)."""
    cdef int step, b, q, p, a, x, start, count, k, cap, gold, gold_idx, limit
    cdef int created
    cdef int32_t mask
    cdef SigC g
    cdef StateC* sq
    cdef StateC* sp
    cdef double y
    cdef int r = new_state(S)
    if r < 0:
        return NO_MEMORY
    sq = &S.st[r]
    axiom(&sq.sig, S.s.system)
    sq.step = 0
    sq.c = sq.v = sq.sh = 0
    sq.pred = -1
    sq.bc_act = sq.bv_act = AXIOM
    sq.bc_p = sq.bc_q = sq.bv_p = sq.bv_q = -1
    sq.edges = -1
    sq.gold = S.gold_act != NULL
    sq.alive = 1
    if grow(<void**>&S.kept, &S.cap_kept, 1, sizeof(int32_t)) != OK:
        return NO_MEMORY
    S.kept[0] = r
    S.n_kept = 1
    S.beam_start[0] = 0
    S.beam_start[1] = 1
    for step in range(S.T):
        # score the kept states; count the candidates
        count = 0
        for b in range(S.beam_start[step], S.beam_start[step + 1]):
            q = S.kept[b]
            sq = &S.st[q]
            score_state(&S.s, &sq.sig, W, shift, sq.sc)
            sq.sh = sq.sc[SHIFT]
            for a in range(N_ACTIONS):
                if not valid(&S.s, &sq.sig, a):
                    continue
                if a == SHIFT or a == SCAN:
                    count += 1
                else:
                    x = sq.pred
                    while x >= 0:
                        count += 1
                        x = S.ln[x].next
        cap = 16
        while cap < 2 * count:
            cap *= 2
        if grow(<void**>&S.table, &S.cap_table, cap, sizeof(int32_t)) != OK:
            return NO_MEMORY
        for k in range(cap):
            S.table[k] = -1
        mask = cap - 1
        created = S.n_st
        for b in range(S.beam_start[step], S.beam_start[step + 1]):
            q = S.kept[b]
            for a in range(N_ACTIONS):
                sq = &S.st[q]
                if not valid(&S.s, &sq.sig, a):
                    continue
                y = sq.sc[a]
                if a == SHIFT:
                    apply_shift(&sq.sig, &g)
                    gold = sq.gold and S.gold_act != NULL and S.gold_act[step] == SHIFT
                    if offer(S, &g, step + 1, SHIFT, q, -1, sq.c + y, 0.0, -1, gold, mask) != OK:
                        return NO_MEMORY
                elif a == SCAN:
                    if S.allowed != NULL and S.fix_lo[sq.sig.s0h] < sq.sig.i:
                        continue  # s0 would take no more left dependents: it lacks fixed ones
                    g = sq.sig
                    g.scanned = 1
                    gold = sq.gold and S.gold_act != NULL and S.gold_act[step] == SCAN
                    if offer(S, &g, step + 1, SCAN, -1, q, sq.c + y, sq.v + y, sq.pred, gold,
                             mask) != OK:
                        return NO_MEMORY
                else:
                    x = sq.pred
                    while x >= 0:
                        p = S.ln[x].a
                        sq = &S.st[q]
                        sp = &S.st[p]
                        if S.allowed != NULL and not reduce_allowed(S, &sp.sig, &sq.sig, a):
                            x = S.ln[x].next
                            continue
                        apply_reduce(&sp.sig, &sq.sig, a, &g)
                        gold = (sq.gold and sp.gold and S.gold_act != NULL
                                and S.gold_act[step] == a and S.gold_pred[step] == sp.step)
                        if offer(S, &g, step + 1, a, p, q, sp.c + sp.sh + sq.v + y,
                                 sp.v + sp.sh + sq.v + y, sp.pred, gold, mask) != OK:
                            return NO_MEMORY
                        x = S.ln[x].next
        # prune to the beam
        count = S.n_st - created
        if grow(<void**>&S.rank, &S.cap_rank, count, sizeof(RankC)) != OK:
            return NO_MEMORY
        gold_idx = -1
        for k in range(count):
            S.rank[k].c = S.st[created + k].c
            S.rank[k].idx = created + k
            if S.st[created + k].gold:
                gold_idx = created + k
        qsort(S.rank, count, sizeof(RankC), rank_cmp)
        limit = count if count < S.beam else S.beam
        if limit == 0:  # only where constraints pruned every transition
            return NO_DERIVATION
        if grow(<void**>&S.kept, &S.cap_kept, S.n_kept + limit, sizeof(int32_t)) != OK:
            return NO_MEMORY
        start = S.n_kept
        for k in range(limit):
            S.kept[S.n_kept] = S.rank[k].idx
            S.st[S.rank[k].idx].alive = 1
            S.n_kept += 1
        if S.force_gold and gold_idx >= 0 and not S.st[gold_idx].alive:
            S.st[S.kept[S.n_kept - 1]].alive = 0
            S.kept[S.n_kept - 1] = gold_idx
            S.st[gold_idx].alive = 1
        S.beam_start[step + 2] = S.n_kept
    return OK


# ---------------------------------------------------------------------------------------------
# Derivations

cdef int derivation(const SearchC* S, int r, int32_t* out, int32_t* todo) noexcept nogil:
    """The (state, action) pairs of r's best prefix derivation, as out[2k], out[2k+1]; returns
    their number. ``todo`` is work space of 2 * (T + 1) ints."""
    cdef int m = 0, top = 0, x, mode, act, p, q
    cdef const StateC* t
    todo[0] = r
    todo[1] = 0
    top = 1
    while top > 0:
        top -= 1
        x = todo[2 * top]
        mode = todo[2 * top + 1]
        t = &S.st[x]
        act = t.bc_act if mode == 0 else t.bv_act
        if act == AXIOM:
            continue
        if act == SHIFT:
            if mode == 0:
                out[2 * m] = t.bc_p
                out[2 * m + 1] = SHIFT
                m += 1
                todo[2 * top] = t.bc_p
                todo[2 * top + 1] = 0
                top += 1
        elif act == SCAN:
            out[2 * m] = t.bc_q if mode == 0 else t.bv_q
            out[2 * m + 1] = SCAN
            m += 1
            todo[2 * top] = out[2 * m - 2]
            todo[2 * top + 1] = mode
            top += 1
        else:
            p = t.bc_p if mode == 0 else t.bv_p
            q = t.bc_q if mode == 0 else t.bv_q
            out[2 * m] = p
            out[2 * m + 1] = SHIFT
            out[2 * m + 2] = q
            out[2 * m + 3] = act
            m += 2
            todo[2 * top] = p
            todo[2 * top + 1] = mode
            todo[2 * top + 2] = q
            todo[2 * top + 3] = 1
            top += 2
    return m


cdef void heads_of(const SearchC* S, const int32_t* pairs, int m, int32_t* heads) noexcept nogil:
    """The arcs the reduce actions of a derivation add."""
    cdef int k, x, a
    for k in range(m):
        x = pairs[2 * k]
        a = pairs[2 * k + 1]
        if a == LEFT:
            heads[S.st[x].sig.s1h] = S.st[x].sig.s0h
        elif a == RIGHT:
            heads[S.st[x].sig.s0h] = S.st[x].sig.s1h


cdef class Chart:
    """The merged search graph of one sentence (run by :func:`parse`)."""

    cdef SearchC S
    cdef bint ready

    def __dealloc__(self):
        if self.ready:
            free_search(&self.S)

    @property
    def best_score(self) -> float:
        """The prefix score of the best final state."""
        return self.S.st[best_final(&self.S)].c

    @property
    def num_states(self) -> int:
        """Merged states created (kept or not)."""
        return self.S.n_st

    def forest(self):
        """The packed forest of the kept states, as the arrays of
        :class:`dparse.hypergraph.forest.Forest` (vertex_span, vertex_head, edge_head,
        edge_tails, edge_arc, edge_score, goal): scan states folded into their antecedents,
        every final state merged into the goal, states that do not reach it left out."""
        cdef SearchC* S = &self.S
        cdef int N = S.n_st, r, l, k, p, q, a, tp, tq, T = S.T
        vid = np.full(N, -1, dtype=np.int64)
        fold = np.arange(N, dtype=np.int64)
        used = np.zeros(N, dtype=np.uint8)
        cdef int64_t[::1] vv = vid, fv = fold
        cdef unsigned char[::1] uv = used
        for k in range(S.beam_start[T], S.beam_start[T + 1]):
            uv[S.kept[k]] = 1
        # backwards over the states (ids are topological): mark what the goal uses
        for r in range(N - 1, -1, -1):
            if not uv[r] or not S.st[r].alive:
                continue
            l = S.st[r].edges
            while l >= 0:
                a = S.ln[l].act
                if a == SCAN:
                    fv[r] = S.ln[l].b
                    uv[S.ln[l].b] = 1
                elif a == LEFT or a == RIGHT:
                    uv[S.ln[l].a] = 1
                    uv[S.ln[l].b] = 1
                l = S.ln[l].next
        goal_states = set(S.kept[k] for k in range(S.beam_start[T], S.beam_start[T + 1]))
        spans, vheads = [], []
        V = 0
        for r in range(N):
            if uv[r] and S.st[r].alive and fv[r] == r and r not in goal_states:
                vv[r] = V
                V += 1
                spans.append((S.st[r].sig.i, S.st[r].sig.j - 1))
                vheads.append(S.st[r].sig.s0h)
        goal = V
        spans.append((0, S.s.n))
        vheads.append(0)
        for r in goal_states:
            vv[r] = goal
        for r in range(N):
            if fv[r] != r:
                vv[r] = vv[fv[r]]
        e_head, e_tails, e_arc, e_score = [], [], [], []
        for r in range(N):
            if not uv[r] or not S.st[r].alive or fv[r] != r:
                continue
            l = S.st[r].edges
            leaf = S.st[r].bc_act == AXIOM
            if leaf:  # the root's leaf
                e_head.append(vv[r])
                e_tails.append((-1, -1))
                e_arc.append((-1, -1))
                e_score.append(0.0)
            while l >= 0:
                a = S.ln[l].act
                p = S.ln[l].a
                q = S.ln[l].b
                if a == SHIFT and not leaf:
                    leaf = True
                    e_head.append(vv[r])
                    e_tails.append((-1, -1))
                    e_arc.append((-1, -1))
                    e_score.append(0.0)
                elif a == LEFT or a == RIGHT:
                    score = S.st[p].sh + S.st[q].sc[a]
                    tp = fv[p]
                    tq = fv[q]
                    if tp != p:
                        score += S.st[tp].sc[SCAN]
                    if tq != q:
                        score += S.st[tq].sc[SCAN]
                    e_head.append(vv[r])
                    e_tails.append((vv[p], vv[q]))
                    if a == LEFT:
                        e_arc.append((S.st[q].sig.s0h, S.st[p].sig.s0h))
                    else:
                        e_arc.append((S.st[p].sig.s0h, S.st[q].sig.s0h))
                    e_score.append(score)
                l = S.ln[l].next
        eh = np.asarray(e_head, dtype=np.int32)
        order = np.argsort(eh, kind="stable")
        return (np.asarray(spans, dtype=np.int32).reshape(-1, 2),
                np.asarray(vheads, dtype=np.int32),
                eh[order],
                np.asarray(e_tails, dtype=np.int32).reshape(-1, 2)[order],
                np.asarray(e_arc, dtype=np.int32).reshape(-1, 2)[order],
                np.asarray(e_score, dtype=np.float64)[order],
                goal)


def parse(const int32_t[:, ::1] tokens, const floating[::1] weights, int action_bits,
          int label_bits, int n_labels, int tagcol, int system, bint single_root, int beam,
          int32_t[::1] heads, int32_t[::1] labels, const int32_t[::1] gold_heads=None,
          bint keep_chart=False, const uint8_t[:, ::1] allowed=None,
          const int32_t[::1] fixed_heads=None):
    """Beam search for one sentence (n >= 1): fills ``heads`` and ``labels`` (int32 [n+1],
    entry 0 left -1) and returns the best score, or the :class:`Chart` with ``keep_chart``.
    With ``gold_heads`` (a projective tree) the gold state is forced into every beam.

    Constraints: with ``allowed`` (uint8 [n+1, n+1], allowed[h, m]: the arc h -> m may be
    made) and ``fixed_heads`` (int32 [n+1], a word's fixed head or -1), a reduce is made only
    if its arc is allowed and its dependent already holds its fixed dependents, so every
    derivation (and every tree of the forest) has only allowed arcs and every fixed one.
    Returns None (heads untouched) when the constraints leave a beam empty."""
    cdef Chart chart = Chart()
    cdef SearchC* S = &chart.S
    cdef int n = tokens.shape[0] - 1, status, m, k
    cdef int32_t* pairs
    cdef int32_t* todo
    cdef int32_t* lm
    cdef int32_t* rm
    cdef floating* acc
    cdef int32_t[::1] ga, gp, flo, fhi
    if beam < 1:
        raise ValueError("beam must be at least 1")
    if (allowed is None) != (fixed_heads is None):
        raise ValueError("allowed and fixed_heads go together")
    if allowed is not None and (allowed.shape[0] != n + 1 or allowed.shape[1] != n + 1
                                or fixed_heads.shape[0] != n + 1):
        raise ValueError(f"allowed must be [{n + 1}, {n + 1}] and fixed_heads [{n + 1}]")
    if init_search(S, tokens, tagcol, system, single_root, beam) != OK:
        raise MemoryError("shift-reduce chart")
    chart.ready = True
    gacts = gpreds = None
    if gold_heads is not None:
        gacts, gpreds = oracle(gold_heads, system, single_root)
        ga = gacts
        gp = gpreds
        S.gold_act = &ga[0]
        S.gold_pred = &gp[0]
        S.force_gold = 1
    spans = None
    if allowed is not None:
        spans = fixed_spans(fixed_heads)
        flo = spans[0]
        fhi = spans[1]
        S.allowed = &allowed[0, 0]
        S.fix_lo = &flo[0]
        S.fix_hi = &fhi[0]
    pairs = <int32_t*>malloc((4 * S.T + 4) * sizeof(int32_t))
    todo = <int32_t*>malloc((4 * S.T + 8) * sizeof(int32_t))
    lm = <int32_t*>malloc(2 * (n + 1) * sizeof(int32_t))
    acc = <floating*>malloc((n_labels + 1) * sizeof(floating))
    if pairs == NULL or todo == NULL or lm == NULL or acc == NULL:
        free(pairs); free(todo); free(lm); free(acc)
        raise MemoryError("shift-reduce chart")
    rm = lm + n + 1
    with nogil:
        status = run_search(S, &weights[0], 64 - action_bits)
        if status == OK:
            m = derivation(S, best_final(S), pairs, todo)
            for k in range(n + 1):
                heads[k] = -1
                labels[k] = -1
            heads_of(S, pairs, m, &heads[0])
            label_all(&S.s, &heads[0], &labels[0], lm, rm,
                      &weights[N_ACTIONS * (1 << action_bits)], 64 - label_bits, n_labels, acc)
    free(pairs); free(todo); free(lm); free(acc)
    S.gold_act = NULL
    S.gold_pred = NULL
    S.allowed = NULL
    S.fix_lo = S.fix_hi = NULL
    if status == NO_DERIVATION:
        return None
    if status != OK:
        raise MemoryError("shift-reduce chart")
    if keep_chart:
        return chart
    return chart.best_score




def fixed_spans(const int32_t[::1] fixed_heads):
    """int32 [2, n+1]: for each node w, the leftmost and rightmost of w and its fixed
    dependents (``fixed_heads`` int32 [n+1], -1 free)."""
    cdef Py_ssize_t n1 = fixed_heads.shape[0], m
    cdef int h
    out = np.empty((2, n1), dtype=np.int32)
    cdef int32_t[:, ::1] o = out
    for m in range(n1):
        o[0, m] = m
        o[1, m] = m
    for m in range(1, n1):
        h = fixed_heads[m]
        if 0 <= h < n1:
            if m < o[0, h]:
                o[0, h] = m
            if m > o[1, h]:
                o[1, h] = m
    return out
