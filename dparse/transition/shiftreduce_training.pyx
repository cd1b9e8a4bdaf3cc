# cython: language_level=3
"""Training of the shift-reduce parser: one averaged-perceptron step per sentence (the
``w``/``u`` trick of :class:`dparse.learning.AveragedLearner`) on the beam of
shiftreduce_search.pyx, with early update (Collins and Roark 2004) or max violation (Huang et
al. 2012), against the canonical gold derivation (shiftreduce_state.pyx); a merged state that
holds the gold prefix but whose best prefix scores higher counts as a violation (the gold
cannot win from there). The arc labeler (shiftreduce_labeler.pyx) takes a perceptron step on
every gold arc. A shard's learner of :mod:`dparse.mixing` also has every written weight marked
in its ``touched`` bit mask.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

from dparse._ext.weights cimport mark
from dparse.transition.shiftreduce_labeler cimport (
    MAX_LABEL_FEATURES,
    best_label,
    outer_children,
)
from dparse.transition.shiftreduce_search cimport (
    SearchC,
    best_final,
    derivation,
    free_search,
    heads_of,
    init_search,
    run_search,
)
from dparse.transition.shiftreduce_state cimport (
    N_ACTIONS,
    NO_MEMORY,
    OK,
    SentC,
    SigC,
    gold_derivation,
)
from dparse.transition.shiftreduce_templates cimport (
    MAX_FEATURES,
    row_of,
    score_state,
    state_keys,
)

cdef enum:
    # update kinds
    EARLY = 0
    MAX_VIOLATION = 1

UPDATES = {"early": EARLY, "max-violation": MAX_VIOLATION}


cdef inline void add_at(double* w, double* u, uint8_t* t, int64_t i, double val,
                        double cval) noexcept nogil:
    """w[i] += val, u[i] += cval, and bit i of t set (t NULL: no marks)."""
    w[i] += val
    u[i] += cval
    if t != NULL:
        mark(t, i)


cdef inline void update_state(const SentC* s, const SigC* g, int a, double val, double cval,
                              double* w, double* u, uint8_t* t, int shift) noexcept nogil:
    """w += val * phi(g, a), u += cval * phi(g, a); bit i of t set at every index written (t
    NULL: no marks)."""
    cdef uint64_t keys[MAX_FEATURES]
    cdef int k, m = state_keys(s, g, keys)
    for k in range(m):
        add_at(w, u, t, row_of(keys[k], shift) * N_ACTIONS + a, val, cval)


def train_sentence(const int32_t[:, ::1] tokens, const int32_t[::1] gold_heads,
                   const int32_t[::1] gold_labels, double[::1] w, double[::1] u, double c,
                   int action_bits, int label_bits, int n_labels, int tagcol, int system,
                   bint single_root, int beam, int update, uint8_t[::1] touched=None):
    """One perceptron step on one sentence (a projective tree): beam search against the gold
    derivation, then an early (``update`` 0) or max-violation (1) update of the action weights,
    and a perceptron step of the label classifier on every gold arc; ``touched`` (a bit mask
    over ``w``, uint8 [(len(w) + 7) // 8]; None: not kept) has the bit of every index written
    set. Returns a dict of counts:
    updated (0/1), steps (searched before the update), correct (arcs of the best tree),
    label_correct, status (0, or -2 if the tree has no derivation)."""
    cdef SearchC S
    cdef int n = tokens.shape[0] - 1, status, T, l, k, m, best, viol_step, gm, nr, h, lab, pl
    cdef int32_t* pairs = NULL
    cdef int32_t* todo = NULL
    cdef int32_t* lm = NULL
    cdef int32_t* rm
    cdef int32_t* ph = NULL
    cdef int32_t* acts = NULL
    cdef int32_t* preds = NULL
    cdef SigC* sigs = NULL
    cdef double* acc = NULL
    cdef double* gscore = NULL
    cdef double sc[4]
    cdef double viol, bestv
    cdef uint64_t rows[MAX_LABEL_FEATURES]
    cdef int shift = 64 - action_bits, lshift = 64 - label_bits
    cdef int64_t loff = N_ACTIONS * (1 << action_bits)
    cdef int updated = 0, searched = 0, correct = 0, label_correct = 0
    if u.shape[0] != w.shape[0] or (touched is not None
                                    and touched.shape[0] != (w.shape[0] + 7) // 8):
        raise ValueError("w and u must have the same size, and touched a bit for each weight")
    cdef uint8_t* marks = &touched[0] if touched is not None else NULL
    if init_search(&S, tokens, tagcol, system, single_root, beam) != OK:
        raise MemoryError("shift-reduce chart")
    T = S.T
    with nogil:
        pairs = <int32_t*>malloc((4 * T + 4) * sizeof(int32_t))
        todo = <int32_t*>malloc((4 * T + 8) * sizeof(int32_t))
        lm = <int32_t*>malloc(3 * (n + 1) * sizeof(int32_t))
        acts = <int32_t*>malloc((2 * T + 2) * sizeof(int32_t))
        sigs = <SigC*>malloc((T + 1) * sizeof(SigC))
        acc = <double*>malloc((n_labels + T + 2) * sizeof(double))
        status = OK
        if (pairs == NULL or todo == NULL or lm == NULL or acts == NULL or sigs == NULL
                or acc == NULL):
            status = NO_MEMORY
        if status == OK:
            rm = lm + n + 1
            ph = lm + 2 * (n + 1)
            preds = acts + T + 1
            gscore = acc + n_labels
            status = gold_derivation(&S.s, &gold_heads[0], acts, preds, sigs)
        if status == OK:
            S.gold_act = acts
            S.gold_pred = preds
            status = run_search(&S, &w[0], shift)
        if status == OK:
            # gold prefix scores: gscore[l] is the score of the gold derivation's first l steps
            gscore[0] = 0
            for l in range(T):
                score_state(&S.s, &sigs[l], &w[0], shift, sc)
                gscore[l + 1] = gscore[l] + sc[acts[l]]
            # where to update: the first step whose beam lost the gold (early), or the step of
            # largest violation among those whose best state is not gold (max violation)
            viol_step = -1
            bestv = -1e300
            for l in range(1, T + 1):
                best = S.kept[S.beam_start[l]]
                gm = 0
                for k in range(S.beam_start[l], S.beam_start[l + 1]):
                    if S.st[S.kept[k]].gold:
                        gm = 1
                if update == EARLY:
                    if not gm:
                        viol_step = l
                        break
                elif not S.st[best].gold or S.st[best].c > gscore[l] + 1e-9:
                    # a merged gold state whose best prefix is not the gold one is lost too
                    viol = S.st[best].c - gscore[l]
                    if viol > bestv:
                        bestv = viol
                        viol_step = l
            # the best final tree
            m = derivation(&S, best_final(&S), pairs, todo)
            for k in range(n + 1):
                ph[k] = -1
            heads_of(&S, pairs, m, ph)
            for k in range(1, n + 1):
                correct += ph[k] == gold_heads[k]
            if viol_step < 0 and correct < n:
                viol_step = T
            if viol_step > 0:
                updated = 1
                searched = viol_step
                best = S.kept[S.beam_start[viol_step]]
                m = derivation(&S, best, pairs, todo)
                for l in range(viol_step):
                    update_state(&S.s, &sigs[l], acts[l], 1.0, c, &w[0], &u[0], marks, shift)
                for k in range(m):
                    update_state(&S.s, &S.st[pairs[2 * k]].sig, pairs[2 * k + 1], -1.0, -c,
                                 &w[0], &u[0], marks, shift)
            else:
                searched = T
            # labels, on the gold tree
            outer_children(n, &gold_heads[0], lm, rm)
            for k in range(1, n + 1):
                lab = gold_labels[k]
                if lab < 0:
                    continue
                pl = best_label(&S.s, &gold_heads[0], lm, rm, k, &w[loff], lshift, n_labels,
                                acc, rows, &nr)
                if pl == lab:
                    label_correct += 1
                    continue
                for h in range(nr):
                    add_at(&w[0], &u[0], marks, loff + rows[h] + lab, 1.0, c)
                    add_at(&w[0], &u[0], marks, loff + rows[h] + pl, -1.0, -c)
        free(pairs); free(todo); free(lm); free(acts); free(sigs); free(acc)
        free_search(&S)
    if status == NO_MEMORY:
        raise MemoryError("shift-reduce chart")
    return {"updated": updated, "steps": searched, "total_steps": T, "correct": correct,
            "label_correct": label_correct, "status": status}
