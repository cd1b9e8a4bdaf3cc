# cython: language_level=3
"""Greedy inference BGI and BGI-PP with beam search, arc + sibling + grandparent parts, in C:
the data structures and the small inline helpers that its modules share.

Tchernowitz, Yedidsion and Reichart (2016): Algorithm 1 (BGI), Algorithm 2 (BGI-PP), beam search
(Section 6), with the data structures of Section 5 / Appendix A, in four pieces:
- greedy_structs.pxd (this file): one sentence's arrays (Graph), one partial tree (State), the
  search's scratch arrays (Scratch) and the layout of the sibling parts (sib_part);
- greedy_parts.pyx: the arc lists, probabilities and weight tables, the empty tree's DSs, and
  their updates as an arc is added and the arcs it rules out are lost (add_arc);
- greedy_witness.pyx: which arcs keep the partial tree completable with allowed arcs (a witness
  per partial tree, dominators of its component graph: arc_safe);
- greedy_search.pyx: the candidates' values, the beam, the search and the Python entry point
  ``greedy``.
Together they return the tree and beam value of the Python reference
dparse/graph/greedy_reference.py, whose docstring is the contract (parts with forbidden arcs B,
disallowed arcs, single_root, tie rule, beam order, duplicates).

Notation: E the allowed arcs (finite scores; ids in index order h * (n+1) + m), q(a) the arc
probability (BGI-PP: the per-word softmax of alpha * score; BGI: 1), T the partial tree, a part
undecided while neither lost nor gained. Each iteration adds the possible arc e = (u, v) with the
lowest a * loss_e - b * gain_e (BGI: a = b = 1; BGI-PP: a = beta, b = 1 - beta), where
lostArcs(e) = In(v) - e (the other arcs into v) + Cyc(e) (the arcs into r = top(u) from v's
component) + under single_root, when u = 0, Root - e (the other root arcs). In the costs: n
words, N = n + 1, |E| allowed arcs, n_in the largest in-degree and d_h the out-degree of h
(part order k = 2).

Data structures of one partial tree (Appendix A), updated as arcs are added and lost:
- G[a], per possible arc: the sum over the undecided parts p with a in A(p) of
  W_p * q(A(p) - T - a). DS (a), the partial-loss sum of a, is q(a) G[a] (the parts'
  probabilities given T); G[e] is the BGI-PP gain sum of e (given T + e).
- F[a]: the sum over the undecided sibling parts with a in B of W_p * q(A(p) - T), the parts
  lost when a is added (not kept for root arcs under single_root: never read).
- H[low], per arc low = (h, m): the sum over the grandparent parts (g, h, m) with a possible top
  arc of W q(g, h). Groot[a], R2 (single_root): the same for the sibling parts of two root arcs,
  per root arc and in all.
- BGI only: Gb[a], the parts that adding a completes (A - T = {a}, no possible arc of B left);
  pend[b], the parts with A in T waiting only for b, their last possible arc of B (gained when b
  is lost); nB, per sibling part, its possible arcs of B.
- a lost flag per sibling part (a grandparent part's state follows from its two arcs'), a dead
  flag per arc, and the list of possible arcs, compacted as they die.
DS (b) of Appendix A, the arc pairs, needs no storage at second order: one part at most holds a
given pair, and while both arcs are possible its value is W q q, an O(1) lookup. The weights read
are first copied from the dense [N^3] inputs into compact tables (per head and pair of its
arcs; per top arc and low arc).
"""

from libc.stdint cimport int32_t, uint8_t, uint64_t

from dparse._ext.types cimport score_t


cdef struct Graph:
    Py_ssize_t N, E, S, d0       # nodes, allowed arcs, sibling part slots, root arcs
    bint sr, pp, bgi, has_sib, has_grand
    bint pruned                  # some arc is disallowed (else every arc keeps a tree completable)
    double la, gb                # value = la * loss - gb * gain
    const score_t* arc           # the inputs, dense: [N*N], [N*N*N], [N*N*N] (or NULL)
    const score_t* sib
    const score_t* grand
    int32_t* aid                 # [N*N] id of the allowed arc (h, m), else -1
    int32_t* ah                  # [E] head
    int32_t* am                  # [E] modifier
    double* q                    # [E] probability (BGI: 1); q[-1] == 0
    int32_t* out_start           # [N+1] h's arcs: ids out_start[h] .. out_start[h+1]-1
    int32_t* split               # [N] how many of h's arcs go left (m < h)
    int32_t* in_start            # [N+1] arcs into m: in_arcs[in_start[m] .. in_start[m+1]-1]
    int32_t* in_arcs             # [E] heads ascending
    int32_t* sbase               # [N] h's sibling parts: sbase[h] + inner * d_h + outer
    double* wsib                 # [S] their weights (slots that are no part: never read)
    # the grandparent parts (x, y, z) of a top arc t = (x, y): weights gw[gbase[t] + low -
    # out_start[y]] for the low arc low = (y, z) (0 if z == x); gw has Gtot + 1 entries
    int32_t* gbase               # [E]
    double* gw
    Py_ssize_t Gtot
    # single_root with grandparent parts: for a = (x, y), grand[0, x, y] * q(0, x) * q(a)
    # (0 if (0, x) is not allowed)
    double* rootw                # [E]
    # one partial tree's block of arrays: byte offsets and size
    Py_ssize_t off_G, off_F, off_H, off_Gb, off_pend, off_Groot
    Py_ssize_t off_heads, off_top, off_wit, off_alist, off_nB, off_dead, off_lost, block_size


cdef struct State:
    double value                 # beamVal: the sum of the chosen values
    double R2
    uint64_t hash                # xor of the arcs' keys: equal trees have equal hashes
    int32_t ndis                 # disallowed arcs in the tree
    int32_t rootchild
    int32_t slot                 # its index in the pool of 2 * width partial trees
    int32_t nalive               # alist[0 .. nalive-1]: the possible arcs (and some dead ones)
    int32_t wstate               # pruned graphs: 1 wit is a witness, 0 none known yet, -1 the
                                 # tree cannot be completed with allowed arcs (see witness_build)
    int32_t wroot                # the witness's root word (single_root before any root arc)
    char* block
    double* G
    double* F
    double* H                    # H[-1] == 0
    double* Gb
    double* pend
    double* Groot
    int32_t* heads
    int32_t* top
    int32_t* wit                 # [N] a witness: a tree of allowed arcs (single-rooted under
                                 # single_root) containing the partial tree's arcs
    int32_t* alist
    int32_t* nB
    uint8_t* dead                # [E] 1 once the arc is in the tree or impossible
    uint8_t* lost                # [S] 1 once the sibling part is lost


cdef struct Pair:
    double Cs                    # the arcs into r from component t: sum of K
    double CG                    # and of their grandparent parts (y, r, t): W * q(y, r)


cdef struct Scratch:
    double* K                    # [E] per-iteration death value K of the i-th possible arc
    int32_t* pidx                # [E] and its entry of pair
    double* inK                  # [N]
    double* Rv                   # [N] single_root: grandparent pairs (0, x, v) of root arc (0, v)
    Pair* pair                   # [N*N] pair[t*N + r], all 0 between iterations
    # for a = (x, y): cgw[a] = grand[x, y, t] * q(a) (0 unless a part) for t = cgtop[a], the
    # last top of x seen (a cache shared by the beam's trees)
    int32_t* cgtop               # [E]
    double* cgw                  # [E]
    int32_t* lostlist            # [E]
    uint8_t* mark                # [E] 1: lost in this step, 2: and its B role processed
    # the component graph of one partial tree (find_safe): nodes its tops, edges its possible
    # arcs top(x) -> y, out-edges of t: cadj[cstart[t] .. cstart[t+1]-1]
    int32_t* cstart              # [N+1]
    int32_t* cadj                # [E] the arc ids
    int32_t* po                  # [N] postorder number in a search from the root
    int32_t* idom                # [N] immediate dominator (the root's: itself)
    int32_t* order               # [N] the tops by postorder
    int32_t* stack               # [N]
    int32_t* cursor              # [N] the search's next out-edge of each top
    uint8_t* seen                # [N]
    uint8_t* good                # [N] single_root, no root arc yet: the top may take one
    uint8_t* fromroot            # [N] the top has a possible arc from the root's component
    int known                    # arc_safe on the current tree: 0 nothing known yet,
                                 # 1 find_safe found the dominators, 2 every arc is safe (or
                                 # none), 3 only fromroot is filled


cdef struct SibPart:
    Py_ssize_t id
    double W
    int32_t a_in                 # the inner arc, -1 for an innermost part (h, h, s)
    int32_t a_out
    int32_t lo, hi               # B: the arc ids lo .. hi-1 (h's allowed arcs in between)


cdef inline void sib_part(const Graph* g, Py_ssize_t h, Py_ssize_t i, Py_ssize_t j,
                          SibPart* p) noexcept nogil:
    """The sibling part of head h with inner arc h's i-th, outer arc its j-th (i == j: the
    innermost part (h, h, m_j)): id, weight, A and B (see the module doc)."""
    cdef Py_ssize_t o0 = g.out_start[h], d = g.out_start[h + 1] - o0, sp = g.split[h]
    p.id = g.sbase[h] + i * d + j
    p.W = g.wsib[p.id]
    p.a_out = <int32_t>(o0 + j)
    if i == j:
        p.a_in = -1
        if j >= sp:
            p.lo = <int32_t>(o0 + sp)
            p.hi = <int32_t>(o0 + j)
        else:
            p.lo = <int32_t>(o0 + j + 1)
            p.hi = <int32_t>(o0 + sp)
    else:
        p.a_in = <int32_t>(o0 + i)
        if j >= sp:
            p.lo = <int32_t>(o0 + i + 1)
            p.hi = <int32_t>(o0 + j)
        else:
            p.lo = <int32_t>(o0 + j + 1)
            p.hi = <int32_t>(o0 + i)
