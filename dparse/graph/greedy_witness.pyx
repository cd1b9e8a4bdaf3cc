# cython: language_level=3
"""Greedy inference BGI and BGI-PP (Tchernowitz, Yedidsion and Reichart 2016): which arcs keep
the partial tree completable with allowed arcs, in C (data structures and notation:
greedy_structs.pxd).

While the partial tree can be completed with allowed arcs, only the arcs after which it still
can are offered (``completable`` in the reference), checked only for arcs that would enter the
beam, only on graphs with disallowed arcs (arc_safe, from greedy_search's expand). First by a
witness, kept per partial tree: a tree of allowed arcs (single-rooted under single_root) that
contains the partial tree, built in O(|E|) from a search of the component graph and kept as arcs
are added. (u, v) is completable if the witness has it, or if moving v below u leaves one (v is
not an ancestor of u: up the witness's heads from u, O(depth); and under single_root neither a
new root arc nor the witness's own root arc); a root arc (0, v) before any root arc if the
witness's root word s has a possible arc from v's witness subtree (v to the root, s below it).
When adding an arc keeps the witness a tree, one of its heads changes (witness_add); otherwise
it is rebuilt when next needed. What the witness does not settle is found per tree and
iteration on the graph of its components (nodes the tops, an edge per possible arc) by
dominators (find_safe): with the root fixed (the root's component, or under single_root before
any root arc a virtual root whose edges go to the components that have a possible root arc and
reach all others), adding (u, v) keeps every component reachable unless v dominates top(u); a
root arc (0, v) under single_root is safe iff v's component reaches all others; O(|E|) per tree
and iteration (Cooper, Harvey and Kennedy's iterative dominators, in a pass or two on these
graphs).
"""

from libc.stdint cimport int32_t, uint8_t
from libc.string cimport memset


cdef void component_graph(const Graph* g, const State* st, Scratch* sc) noexcept nogil:
    """The component graph of st (its possible arcs compacted in alist): the out-edges of top t,
    as arc ids x -> y with top(x) = t, are cadj[cstart[t] .. cstart[t+1]-1]."""
    cdef Py_ssize_t N = g.N, i, t
    cdef int32_t* cstart = sc.cstart
    cdef const int32_t* top = st.top
    for t in range(N + 1):
        cstart[t] = 0
    for i in range(st.nalive):                     # counting sort on top(x)
        cstart[top[g.ah[st.alist[i]]] + 1] += 1
    for t in range(N):
        cstart[t + 1] += cstart[t]
    for i in range(st.nalive):
        t = top[g.ah[st.alist[i]]]
        sc.cadj[cstart[t]] = st.alist[i]
        cstart[t] += 1
    for t in range(N, 0, -1):
        cstart[t] = cstart[t - 1]
    cstart[0] = 0


cdef Py_ssize_t reach(const Graph* g, const Scratch* sc, Py_ssize_t start,
                      int32_t* wit) noexcept nogil:
    """Marks in sc.seen the unmarked tops reached from start along the out-edges (start
    included); returns how many it marked. wit (if not NULL) gets the head of the arc through
    which each top but start was reached."""
    cdef Py_ssize_t sp = 1, t, y, k, a, count = 1
    sc.stack[0] = <int32_t>start
    sc.seen[start] = 1
    while sp > 0:
        sp -= 1
        t = sc.stack[sp]
        for k in range(sc.cstart[t], sc.cstart[t + 1]):
            a = sc.cadj[k]
            y = g.am[a]
            if not sc.seen[y]:
                sc.seen[y] = 1
                if wit != NULL:
                    wit[y] = g.ah[a]
                sc.stack[sp] = <int32_t>y
                sp += 1
                count += 1
    return count


cdef Py_ssize_t source_top(const Graph* g, const State* st, Scratch* sc,
                           Py_ssize_t ntops) noexcept nogil:
    """Under single_root before any root arc (the component graph built): a word top from which
    every other word top is reached (the last start of a search over all of them: it lies in
    the source component, which then reaches everything), or -1 if there is none. Leaves
    sc.seen cleared."""
    cdef Py_ssize_t N = g.N, t, last = -1
    for t in range(N):
        sc.seen[t] = 0
    for t in range(1, N):
        if st.heads[t] < 0 and not sc.seen[t]:
            last = t
            reach(g, sc, t, NULL)
    for t in range(N):
        sc.seen[t] = 0
    if last < 0 or reach(g, sc, last, NULL) != ntops - 1:
        last = -1
    for t in range(N):
        sc.seen[t] = 0
    return last


cdef Py_ssize_t mark_good(const Graph* g, const State* st, Scratch* sc, Py_ssize_t last,
                          bint first) noexcept nogil:
    """Marks in sc.good the tops that reach ``last`` (backwards along the in-lists) and have a
    possible root arc; returns how many (with ``first``: stops at the first, returning it,
    or -1). Leaves sc.seen marking the tops searched."""
    cdef Py_ssize_t sp = 1, y, k, a, x, count = 0
    cdef const int32_t* top = st.top
    cdef const uint8_t* dead = st.dead
    sc.seen[last] = 1
    sc.stack[0] = <int32_t>last
    while sp > 0:
        sp -= 1
        y = sc.stack[sp]
        a = g.aid[y]                               # the root arc (0, y)
        if a >= 0 and not dead[a]:
            if first:
                return y
            sc.good[y] = 1
            count += 1
        for k in range(g.in_start[y], g.in_start[y + 1]):
            a = g.in_arcs[k]
            x = g.ah[a]
            if x != 0 and not dead[a] and not sc.seen[top[x]]:
                sc.seen[top[x]] = 1
                sc.stack[sp] = top[x]
                sp += 1
    return -1 if first else count


cdef inline bint witness_below(const State* st, Py_ssize_t x, Py_ssize_t v) noexcept nogil:
    """Whether x is v or below v in the witness (up its heads from x: O(depth))."""
    while x > 0:
        if x == v:
            return True
        x = st.wit[x]
    return x == v


cdef void witness_build(const Graph* g, State* st, Scratch* sc) noexcept nogil:
    """A witness of st (its possible arcs compacted in alist), or wstate -1 if the partial tree
    cannot be completed with allowed arcs: its arcs, plus a search tree of the component graph
    from the root's component (under single_root before any root arc, from a word top with a
    possible root arc that reaches all others, through that root arc)."""
    cdef Py_ssize_t N = g.N, t, s = 0, ntops = 0
    for t in range(N):
        st.wit[t] = st.heads[t]
        ntops += st.heads[t] < 0
    component_graph(g, st, sc)
    if g.sr and not st.rootchild:
        t = source_top(g, st, sc, ntops)
        s = -1 if t < 0 else mark_good(g, st, sc, t, True)
        if s < 0:
            st.wstate = -1
            return
        st.wit[s] = 0
        st.wroot = <int32_t>s
        ntops -= 1                                 # (0 is reached through the root arc)
    for t in range(N):
        sc.seen[t] = 0
    st.wstate = 1 if reach(g, sc, s, st.wit) == ntops else -1


cdef inline bint witness_takes(const Graph* g, const State* st, Py_ssize_t u,
                               Py_ssize_t v) noexcept nogil:
    """Whether the witness with v's head changed to u is again one: (u, v) closes no cycle
    (v is not u or an ancestor of u) and, under single_root, it neither adds a root arc nor
    takes away the witness's."""
    if g.sr and (u == 0 or st.wit[v] == 0):
        return False
    return not witness_below(st, u, v)


cdef bint witness_reroots(const Graph* g, const State* st, Py_ssize_t v) noexcept nogil:
    """Under single_root before any root arc: whether the root arc (0, v) leaves a tree, by
    the witness (its root word s, v in s's subtree): the witness with v moved to the root and
    s moved below a word x of v's subtree through a possible arc (x, s) is one."""
    cdef Py_ssize_t s = st.wroot, k, a, x
    for k in range(g.in_start[s], g.in_start[s + 1]):
        a = g.in_arcs[k]
        x = g.ah[a]
        if not st.dead[a] and witness_below(st, x, v):
            return True
    return False


cdef void witness_add(const Graph* g, State* st, Py_ssize_t u, Py_ssize_t v) noexcept nogil:
    """Keeps st's witness after the arc (u, v) is added: unchanged if it has the arc, moved
    to it if :func:`witness_takes`, else rebuilt when next needed."""
    if st.wstate != 1 or st.wit[v] == u:
        return
    if witness_takes(g, st, u, v):
        st.wit[v] = <int32_t>u
    else:
        st.wstate = 0


cdef inline Py_ssize_t common_dominator(const Scratch* sc, Py_ssize_t x,
                                        Py_ssize_t y) noexcept nogil:
    """The nearest common dominator of tops x and y given the idom found so far."""
    while x != y:
        while sc.po[x] < sc.po[y]:
            x = sc.idom[x]
        while sc.po[y] < sc.po[x]:
            y = sc.idom[y]
    return x


cdef bint find_safe(const Graph* g, const State* st, Scratch* sc) noexcept nogil:
    """Whether the partial tree st (its possible arcs compacted in alist) can be completed with
    allowed arcs; if so fills, for :func:`arc_safe`, the dominator tree of its component graph
    (po, idom; the root is node 0) and, under single_root before any root arc, good: the tops
    with a possible root arc that reach all other components (the virtual root's edges)."""
    cdef Py_ssize_t N = g.N, i, a, t, x, y, k, sp, count, ntops = 0, last, best
    cdef bint pre = g.sr and not st.rootchild, changed = True
    cdef const int32_t* top = st.top
    cdef const uint8_t* dead = st.dead
    cdef const int32_t* cstart = sc.cstart
    for t in range(N):
        sc.good[t] = 0
        sc.po[t] = -1
        sc.idom[t] = -1
        ntops += st.heads[t] < 0
    component_graph(g, st, sc)
    if pre:
        # good = the tops that reach the source top and have a possible root arc
        last = source_top(g, st, sc, ntops)
        if last < 0:
            return False
        count = mark_good(g, st, sc, last, False)
        if count == 0:
            return False
        if count == ntops - 1:                     # every top may take the root arc
            return True
    for t in range(N):
        sc.seen[t] = 0
    # postorder of a depth-first search from the root (in pre, its edges go to the good tops)
    sc.stack[0] = 0
    sc.seen[0] = 1
    sc.cursor[0] = cstart[0]
    sp = 1
    count = 0
    while sp > 0:
        t = sc.stack[sp - 1]
        if sc.cursor[t] < cstart[t + 1]:
            y = g.am[sc.cadj[sc.cursor[t]]]
            sc.cursor[t] += 1
            if not sc.seen[y] and not (pre and t == 0 and not sc.good[y]):
                sc.seen[y] = 1
                sc.cursor[y] = cstart[y]
                sc.stack[sp] = <int32_t>y
                sp += 1
        else:
            sc.po[t] = <int32_t>count
            sc.order[count] = <int32_t>t
            count += 1
            sp -= 1
    if count != ntops:
        return False
    # dominators, Cooper, Harvey and Kennedy: in reverse postorder until nothing changes
    sc.idom[0] = 0
    while changed:
        changed = False
        for i in range(count - 2, -1, -1):
            t = sc.order[i]
            best = -1
            for k in range(g.in_start[t], g.in_start[t + 1]):
                a = g.in_arcs[k]
                x = g.ah[a]
                if dead[a] or (pre and x == 0 and not sc.good[t]) or sc.idom[top[x]] < 0:
                    continue
                best = top[x] if best < 0 else common_dominator(sc, top[x], best)
            if best != sc.idom[t]:
                sc.idom[t] = <int32_t>best
                changed = True
    return True


cdef bint arc_safe(const Graph* g, State* st, Scratch* sc, Py_ssize_t u,
                   Py_ssize_t v) noexcept nogil:
    """Whether st + (u, v) can be completed with allowed arcs, or st cannot be. First by st's
    witness (built once, then kept as arcs are added): yes if it has (u, v) or
    :func:`witness_takes` it. Otherwise v must not dominate top(u) (under single_root before
    any root arc, a root arc needs a good v): find_safe runs once per tree and iteration
    (sc.known), when an arc out of neither the root's component nor one it has an arc to
    needs it."""
    cdef Py_ssize_t x = st.top[u], i, a
    cdef bint pre = g.sr and not st.rootchild
    if st.wstate == 0:
        witness_build(g, st, sc)
    if st.wstate < 0 or st.wit[v] == u or witness_takes(g, st, u, v):
        return True
    if pre and u == 0 and witness_reroots(g, st, v):
        return True
    if not pre:
        if x == 0:
            return True
        if sc.known == 0:
            memset(sc.fromroot, 0, g.N)
            for i in range(st.nalive):
                a = st.alist[i]
                if st.top[g.ah[a]] == 0:
                    sc.fromroot[g.am[a]] = 1
            sc.known = 3
        if sc.fromroot[x]:
            return True
    if sc.known == 0 or sc.known == 3:             # (po[0] < 0: every top is good)
        sc.known = 1 if find_safe(g, st, sc) and sc.po[0] >= 0 else 2
    if sc.known == 2:
        return True
    if pre and u == 0:
        return sc.good[v]
    while sc.po[x] < sc.po[v]:
        x = sc.idom[x]
    return x != v
