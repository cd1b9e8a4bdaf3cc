# cython: language_level=3
"""The shift-reduce parser's beam search with dynamic programming: the merged search graph of a
sentence and its best derivation (see shiftreduce_search.pyx)."""

from libc.stdint cimport int32_t, uint8_t

from cython cimport floating

from dparse.transition.shiftreduce_state cimport SentC, SigC


ctypedef struct StateC:
    SigC sig
    int32_t step
    double c, v, sh                          # prefix, inside, shift score (once expanded)
    double sc[4]                             # action scores (once expanded)
    int32_t pred                             # head of its predictor list (-1: none)
    int32_t bc_act, bc_p, bc_q               # creation of the best prefix derivation
    int32_t bv_act, bv_p, bv_q               # creation of the best inside derivation
    int32_t edges                            # head of its creation list
    int32_t gold
    int32_t alive                            # kept in the beam


ctypedef struct LinkC:
    # A list cell: in a predictor list, ``a`` is the predictor state; in a creation list, the
    # action ``act`` applied to predictor ``a`` (SHIFT, reduces) and/or state ``b`` (SCAN,
    # reduces). ``next`` is the next cell (-1: end).
    int32_t a, b, act, next


ctypedef struct RankC:
    double c
    int32_t idx


cdef struct SearchC:
    SentC s
    int beam
    int T
    StateC* st
    int n_st, cap_st
    LinkC* ln
    int n_ln, cap_ln
    int32_t* beam_start                      # [T+2] survivors of step l: kept[beam_start[l]:..]
    int32_t* kept
    int n_kept, cap_kept
    RankC* rank
    int cap_rank
    int32_t* table
    int cap_table
    # gold (training / forced decoding): action and predictor step per step; -1 none
    const int32_t* gold_act
    const int32_t* gold_pred
    int force_gold
    # constraints (NULL: none): allowed[h * (n+1) + m], whether a reduce may add the arc h -> m;
    # fix_lo[w] .. fix_hi[w], the span of w and its fixed dependents, which w's subtree must
    # cover before w is reduced (its fixed dependents attached)
    const uint8_t* allowed
    const int32_t* fix_lo
    const int32_t* fix_hi


cdef void free_search(SearchC* S) noexcept nogil

cdef int init_search(SearchC* S, const int32_t[:, ::1] tokens, int tagcol, int system,
                     bint single_root, int beam) noexcept nogil

cdef int run_search(SearchC* S, const floating* W, int shift) noexcept nogil

cdef int derivation(const SearchC* S, int r, int32_t* out, int32_t* todo) noexcept nogil

cdef void heads_of(const SearchC* S, const int32_t* pairs, int m, int32_t* heads) noexcept nogil


cdef inline int best_final(const SearchC* S) noexcept nogil:
    """The best of the kept final states."""
    return S.kept[S.beam_start[S.T]]
