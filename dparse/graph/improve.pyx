# cython: language_level=3
"""Post-search improvements by greedy arc swaps (Tchernowitz, Yedidsion and Reichart 2016,
Section 6), in C; returns the trees of the Python reference dparse/graph/improve_reference.py, whose
docstring states the swaps (case 1: u' outside v's subtree, v moves to u'; case 2: u' inside
it, v moves to u' and w, v's child towards u', moves to u), the score conventions (sib[h, m, s],
grand[g, h, m] as in docs/design.md, 'Score arrays and parts'; fewer disallowed arcs first; parts
with a disallowed arc count 0 and are not read), the single-root rule, the scan order and the tie
margin tol.

Each round rebuilds from heads the children lists (ascending by position, so each side's chain
is a contiguous run), a preorder numbering tin and tout = tin + subtree size (u' lies in v's
subtree iff tin[v] <= tin[u'] < tout[v]) and, per word x, the sum of the grandparent parts of
x's outgoing arcs. Then each candidate's score change is computed incrementally from the parts
that touch the changed arcs only:

    arcs      arc[u', v] - arc[u, v]                              (+ arc[u, w] - arc[v, w])
    siblings  v leaves u's chain: its two neighbours there become adjacent, O(1);
              v enters u''s chain between the two modifiers around it, O(deg u')
              (case 2 also: w enters u's chain without v, O(deg u); w leaves v's chain, O(1))
    grand     the parts of the moved arcs (u, v) -> (u', v) (and (v, w) -> (u, w)) and of the
              moved nodes' outgoing arcs: g -> v -> c now with g = u', O(deg v)
              (case 2 also g -> w -> c with g = u, O(deg w))

Cost: O(n^2) once (the allowed arcs, each word's candidate heads) plus the tie margin's scan of
the parts over allowed arcs, O(sum over h of out(h)^2 + in(h) out(h)) with in/out the allowed
in/out-degrees; then per round O(n + sum over the candidate arcs (u', v) of
(deg u' + deg v [+ deg u + deg w in case 2])) with deg the degrees in the current tree, i.e.
O(n + |E| d) for |E| allowed arcs and maximum out-degree d; O(n^2) memory besides the inputs.
"""

from libc.float cimport DBL_MAX
from libc.math cimport INFINITY, fabs
from libc.stdlib cimport free, malloc

from dparse._ext.types cimport (
    DECODE_NO_MEMORY,
    DECODE_OK,
    DECODE_POSITIVE_INF,
    head_t,
    raise_for_status,
    score_t,
)

from dparse.graph.greedy_reference import TIE_TOLERANCE
from dparse.graph.improve_reference import prepare
from dparse.trees import check_tree

cdef score_t RELATIVE_TOL = TIE_TOLERANCE  # the reference's margin, readable without the gil

cdef struct Tree:
    # the current tree over nodes 0..n and what each round derives from it
    Py_ssize_t N           # n + 1
    const unsigned char* allowed  # [N * N]: allowed[h * N + m], the arc h -> m is allowed
    head_t* heads          # [N], heads[0] == -1
    int* first             # [N + 1]: the children of h are kids[first[h]:first[h + 1]]
    int* kids              # [N], ascending within each head
    int* pos               # [N]: kids[pos[m]] == m
    int* tin               # [N]: preorder number
    int* tout              # [N]: tin + subtree size
    int* order             # [N]: nodes in preorder (also scratch)
    int* stack             # [N]: scratch
    score_t* kid_grand     # [N]: sum over x's children c of grand[heads[x], x, c] (x >= 1)


cdef inline score_t S(const score_t* sib, const Tree* t, Py_ssize_t h, Py_ssize_t m,
                      Py_ssize_t s) noexcept nogil:
    """sib[h, m, s] (m == h: s is the innermost modifier of h on its side), 0 unless its arcs
    are allowed."""
    cdef Py_ssize_t N = t.N
    if t.allowed[h * N + s] and (m == h or t.allowed[h * N + m]):
        return sib[(h * N + m) * N + s]
    return 0.0


cdef inline score_t G(const score_t* grand, const Tree* t, Py_ssize_t g, Py_ssize_t h,
                      Py_ssize_t m) noexcept nogil:
    """grand[g, h, m] for h >= 1, 0 unless its arcs are allowed."""
    cdef Py_ssize_t N = t.N
    if t.allowed[g * N + h] and t.allowed[h * N + m]:
        return grand[(g * N + h) * N + m]
    return 0.0


cdef Py_ssize_t build(Tree* t) noexcept nogil:
    """Children lists and preorder intervals of t.heads; returns the number of nodes reached
    from the root (N iff heads, already range-checked, is a tree)."""
    cdef Py_ssize_t N = t.N, h, m, x, i, top, count = 0
    cdef int* cursor = t.order  # scratch until the preorder fills it
    for h in range(N + 1):
        t.first[h] = 0
    for m in range(1, N):
        t.first[t.heads[m] + 1] += 1
    for h in range(N):
        t.first[h + 1] += t.first[h]
        cursor[h] = t.first[h]
    for m in range(1, N):  # ascending m: each head's children come out sorted
        h = t.heads[m]
        t.kids[cursor[h]] = <int>m
        t.pos[m] = cursor[h]
        cursor[h] += 1
    # preorder from the root; nodes on a cycle are never reached
    t.stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        x = t.stack[top]
        t.tin[x] = <int>count
        t.order[count] = <int>x
        count += 1
        for i in range(t.first[x + 1] - 1, t.first[x] - 1, -1):
            t.stack[top] = t.kids[i]
            top += 1
    if count != N:
        return count
    for x in range(N):
        t.tout[x] = 1
    for i in range(N - 1, 0, -1):  # reverse preorder: subtree sizes, children before parents
        x = t.order[i]
        t.tout[t.heads[x]] += t.tout[x]
    for x in range(N):
        t.tout[x] += t.tin[x]
    return count


cdef inline score_t sib_remove(const score_t* sib, const Tree* t, Py_ssize_t h,
                               Py_ssize_t x) noexcept nogil:
    """Change of h's sibling parts when its child x leaves: x's inner neighbour a (h if x is
    innermost) and outer neighbour b on x's side become adjacent. O(1)."""
    cdef Py_ssize_t p = t.pos[x], a = h, b = -1
    cdef score_t delta
    if x > h:
        if p > t.first[h] and t.kids[p - 1] > h:
            a = t.kids[p - 1]
        if p + 1 < t.first[h + 1]:
            b = t.kids[p + 1]
    else:
        if p + 1 < t.first[h + 1] and t.kids[p + 1] < h:
            a = t.kids[p + 1]
        if p > t.first[h]:
            b = t.kids[p - 1]
    delta = -S(sib, t, h, a, x)
    if b >= 0:
        delta += S(sib, t, h, a, b) - S(sib, t, h, x, b)
    return delta


cdef inline score_t sib_insert(const score_t* sib, const Tree* t, Py_ssize_t h, Py_ssize_t x,
                               Py_ssize_t skip) noexcept nogil:
    """Change of h's sibling parts when x (not a child of h) becomes one, h's child ``skip``
    (or -1) being removed first: x goes between its inner neighbour a (h if none) and outer
    neighbour b on its side. O(deg h)."""
    cdef Py_ssize_t i, c, a = h, b = -1
    cdef score_t delta
    for i in range(t.first[h], t.first[h + 1]):
        c = t.kids[i]
        if c == skip:
            continue
        if x > h:  # right side, innermost first: a the last child in (h, x), b the next
            if c < h:
                continue
            if c < x:
                a = c
            else:
                b = c
                break
        else:  # left side, innermost first: b the last child below x, a the next (below h)
            if c < x:
                b = c
            else:
                if c < h:
                    a = c
                break
    delta = S(sib, t, h, a, x)
    if b >= 0:
        delta += S(sib, t, h, x, b) - S(sib, t, h, a, b)
    return delta


cdef inline score_t kids_grand(const score_t* grand, const Tree* t, Py_ssize_t g,
                               Py_ssize_t h, Py_ssize_t skip) noexcept nogil:
    """Sum of grand[g, h, c] over h's children c != skip (h >= 1). O(deg h)."""
    cdef Py_ssize_t i
    cdef score_t total = 0.0
    for i in range(t.first[h], t.first[h + 1]):
        if t.kids[i] != skip:
            total += G(grand, t, g, h, t.kids[i])
    return total


cdef inline bint finite(score_t x) noexcept nogil:
    return fabs(x) <= DBL_MAX  # false for NaN and +-inf


cdef inline bint row_max(const score_t* row, const int* index, Py_ssize_t first,
                         Py_ssize_t last, int skip, score_t* largest) noexcept nogil:
    """Raises largest to the largest |row[index[i]]|, first <= i < last, index[i] != skip;
    False if one of them is not finite."""
    cdef Py_ssize_t i
    cdef score_t x
    for i in range(first, last):
        if index[i] == skip:
            continue
        x = fabs(row[index[i]])
        if not x <= DBL_MAX:  # NaN or inf
            return False
        if x > largest[0]:
            largest[0] = x
    return True


cdef int tie_margin(const score_t* arc, const score_t* sib, const score_t* grand,
                    Py_ssize_t N, const int* in_first, const int* in_heads, const int* out_first,
                    const int* out_kids, score_t* tol) noexcept nogil:
    """tol = TIE_TOLERANCE * (1 + the largest |weight| of an allowed arc or of a part over
    allowed arcs); the allowed arcs are h -> out_kids[out_first[h]:out_first[h + 1]] and
    in_heads[in_first[m]:in_first[m + 1]] -> m. Returns a status: such parts must be finite."""
    cdef Py_ssize_t g, h, m, i, first, last
    cdef score_t largest = 0.0
    for h in range(N):
        for i in range(out_first[h], out_first[h + 1]):
            largest = max(largest, fabs(arc[h * N + out_kids[i]]))
    if sib != NULL:  # sib[h, m, s]: h -> s allowed, and m == h or h -> m allowed between
        for h in range(N):
            first, last = out_first[h], out_first[h + 1]
            if not row_max(&sib[(h * N + h) * N], out_kids, first, last, -1, &largest):
                return IMPROVE_SIB_NOT_FINITE
            for i in range(first, last):  # m = out_kids[i]; s farther out on its side
                m = out_kids[i]
                if not row_max(&sib[(h * N + m) * N], out_kids, i + 1 if m > h else first,
                               last if m > h else i, -1, &largest):
                    return IMPROVE_SIB_NOT_FINITE
    if grand != NULL:  # grand[g, h, m]: g -> h and h -> m allowed, m != g
        for h in range(1, N):
            for i in range(in_first[h], in_first[h + 1]):
                g = in_heads[i]
                if not row_max(&grand[(g * N + h) * N], out_kids, out_first[h],
                               out_first[h + 1], g, &largest):
                    return IMPROVE_GRAND_NOT_FINITE
    tol[0] = RELATIVE_TOL * (1.0 + largest)
    return DECODE_OK


cdef int search(const score_t* arc, const score_t* sib, const score_t* grand,
                const int* in_first, const int* in_heads, Tree* t, int rounds,
                bint single_root, score_t tol) noexcept nogil:
    """The rounds of best swaps on t (built for round 0); returns DECODE_OK."""
    cdef Py_ssize_t N = t.N, r, i, k, v, u, hu, u2, w, hp
    cdef Py_ssize_t best_v, best_u, best_u2, best_w
    cdef int fixed, best_fixed = 0, bad_uv, bad_vw
    cdef score_t gain, best_gain = 0.0, a_uv, removed, g_uv
    cdef head_t* heads = t.heads
    cdef const unsigned char* allowed = t.allowed
    for r in range(rounds):
        if r > 0:
            build(t)
        if grand != NULL:
            for v in range(1, N):
                t.kid_grand[v] = kids_grand(grand, t, heads[v], v, -1)
        best_v = best_u = best_u2 = best_w = -1
        for v in range(1, N):
            u = heads[v]
            hu = heads[u] if u > 0 else -1
            bad_uv = not allowed[u * N + v]
            a_uv = 0.0 if bad_uv else arc[u * N + v]
            removed = sib_remove(sib, t, u, v) if sib != NULL else 0.0
            g_uv = G(grand, t, hu, u, v) if grand != NULL and u > 0 else 0.0
            for i in range(in_first[v], in_first[v + 1]):
                u2 = in_heads[i]
                if u2 == u:
                    continue
                if t.tin[v] <= t.tin[u2] < t.tout[v]:
                    # case 2: T - {(u, v), (v, w)} + {(u2, v), (u, w)}, w v's child above u2
                    w = -1
                    for k in range(t.first[v], t.first[v + 1]):
                        w = t.kids[k]
                        if t.tin[w] <= t.tin[u2] < t.tout[w]:
                            break
                    if not allowed[u * N + w]:
                        continue
                    bad_vw = not allowed[v * N + w]
                    fixed = bad_uv + bad_vw
                    gain = arc[u2 * N + v] + arc[u * N + w] - a_uv
                    if not bad_vw:
                        gain -= arc[v * N + w]
                    if sib != NULL:
                        gain += (removed + sib_insert(sib, t, u, w, v) + sib_remove(sib, t, v, w)
                                 + sib_insert(sib, t, u2, v, -1))
                    if grand != NULL:
                        hp = u if u2 == w else heads[u2]  # the head of u2 in T'
                        gain += (G(grand, t, hp, u2, v) - g_uv
                                 + kids_grand(grand, t, u2, v, w) - t.kid_grand[v]
                                 + kids_grand(grand, t, u, w, -1) - t.kid_grand[w])
                        if u > 0:
                            gain += G(grand, t, hu, u, w)
                else:
                    # case 1: T - {(u, v)} + {(u2, v)}; under single_root u != 0 here (every
                    # word is in the root word's subtree), so only u2 == 0 adds a root word
                    if single_root and u2 == 0:
                        continue
                    w = -1
                    fixed = bad_uv
                    gain = arc[u2 * N + v] - a_uv
                    if sib != NULL:
                        gain += removed + sib_insert(sib, t, u2, v, -1)
                    if grand != NULL:
                        gain += kids_grand(grand, t, u2, v, -1) - t.kid_grand[v] - g_uv
                        if u2 > 0:
                            gain += G(grand, t, heads[u2], u2, v)
                if (fixed > 0 or gain > tol) and (
                    best_v < 0 or fixed > best_fixed
                    or (fixed == best_fixed and gain > best_gain + tol)
                ):
                    best_v, best_u, best_u2, best_w = v, u, u2, w
                    best_fixed, best_gain = fixed, gain
        if best_v < 0:
            break
        heads[best_v] = <head_t>best_u2
        if best_w >= 0:
            heads[best_w] = <head_t>best_u
    return DECODE_OK


cdef int improve_core(const score_t* arc, const score_t* sib, const score_t* grand,
                      Py_ssize_t n, int rounds, bint single_root, head_t* heads) noexcept nogil:
    """Improves the tree heads [n+1] in place under arc [n+1, n+1] and sib, grand
    [n+1, n+1, n+1] (NULL: no such parts); returns a status (DECODE_OK, DECODE_NO_MEMORY,
    DECODE_POSITIVE_INF, IMPROVE_*), heads unchanged unless DECODE_OK."""
    cdef Py_ssize_t N = n + 1, h, m, k
    cdef int status
    cdef score_t a, tol = 0.0
    cdef Tree t
    for m in range(1, N):
        if heads[m] < 0 or heads[m] > n or heads[m] == m:
            return IMPROVE_NOT_A_TREE
    if heads[0] != -1:
        return IMPROVE_NOT_A_TREE
    # int work space: Tree's 6 arrays of N and first [N + 1]; the candidate heads of each m,
    # ascending, in_heads[in_first[m]:in_first[m + 1]]; the allowed children of each h,
    # out_kids[out_first[h]:out_first[h + 1]] (for tie_margin)
    cdef int* ints = <int*>malloc((9 * N + 3 + 2 * N * N) * sizeof(int))
    cdef unsigned char* allowed = <unsigned char*>malloc(N * N)
    cdef score_t* kid_grand = <score_t*>malloc(N * sizeof(score_t))
    if ints == NULL or allowed == NULL or kid_grand == NULL:
        free(ints)
        free(allowed)
        free(kid_grand)
        return DECODE_NO_MEMORY
    t.N = N
    t.allowed = allowed
    t.heads = heads
    t.kids = ints
    t.pos = ints + N
    t.tin = ints + 2 * N
    t.tout = ints + 3 * N
    t.order = ints + 4 * N
    t.stack = ints + 5 * N
    t.first = ints + 6 * N
    t.kid_grand = kid_grand
    cdef int* in_first = ints + 7 * N + 1
    cdef int* out_first = ints + 8 * N + 2
    cdef int* in_heads = ints + 9 * N + 3
    cdef int* out_kids = in_heads + N * N
    if build(&t) != N or (single_root and t.first[1] - t.first[0] != 1):
        status = IMPROVE_NOT_A_TREE
    else:
        status = DECODE_OK
        for h in range(N):
            for m in range(N):
                a = arc[h * N + m]
                allowed[h * N + m] = m > 0 and h != m and a > -INFINITY  # false for NaN
                if allowed[h * N + m] and a == INFINITY:
                    status = DECODE_POSITIVE_INF
    if status == DECODE_OK:
        k = 0
        for m in range(N):
            in_first[m] = <int>k
            for h in range(N):
                if allowed[h * N + m]:
                    in_heads[k] = <int>h
                    k += 1
        in_first[N] = <int>k
        k = 0
        for h in range(N):
            out_first[h] = <int>k
            for m in range(N):
                if allowed[h * N + m]:
                    out_kids[k] = <int>m
                    k += 1
        out_first[N] = <int>k
        status = tie_margin(arc, sib, grand, N, in_first, in_heads, out_first, out_kids, &tol)
    if status == DECODE_OK and rounds > 0:
        status = search(arc, sib, grand, in_first, in_heads, &t, rounds, single_root, tol)
    free(ints)
    free(allowed)
    free(kid_grand)
    return status


def improve_tree(heads, arc, sib=None, grand=None, int rounds=5, bint single_root=True):
    """Up to ``rounds`` rounds of the best arc swap (Section 6; see the module doc and
    dparse/graph/improve_reference.py) on the tree ``heads`` int [n+1] under arc float64 [n+1, n+1]
    and optional sib, grand float64 [n+1, n+1, n+1].

    Returns a new int32 [n+1] tree (the input is not modified). ValueError for malformed
    scores or if heads is not a tree (with ``single_root``: one with exactly one root word).
    """
    tree, arc, sib, grand = prepare(heads, arc, sib, grand, rounds)
    cdef const score_t[:, ::1] A = arc
    cdef const score_t[:, :, ::1] sib_view, grand_view
    cdef const score_t* sib_ptr = NULL
    cdef const score_t* grand_ptr = NULL
    if sib is not None:
        sib_view = sib
        sib_ptr = &sib_view[0, 0, 0]
    if grand is not None:
        grand_view = grand
        grand_ptr = &grand_view[0, 0, 0]
    cdef head_t[::1] H = tree
    cdef Py_ssize_t n = A.shape[0] - 1
    cdef int status
    with nogil:
        status = improve_core(&A[0, 0], sib_ptr, grand_ptr, n, rounds, single_root, &H[0])
    if status == IMPROVE_NOT_A_TREE:
        check_tree(tree, single_root=single_root)  # raises, saying why
        raise AssertionError(f"improve_core rejected the tree {tree.tolist()}")
    if status == IMPROVE_SIB_NOT_FINITE or status == IMPROVE_GRAND_NOT_FINITE:
        name = "sib" if status == IMPROVE_SIB_NOT_FINITE else "grand"
        raise ValueError(f"{name} scores must be finite (a part over allowed arcs is not)")
    raise_for_status(status)
    return tree
