"""Greedy graph inference, straightforward Python reference: BGI and BGI-PP, with beam search.

Tchernowitz, Yedidsion and Reichart (2016), "Effective Greedy Inference for Graph-based
Non-Projective Dependency Parsing": Algorithm 1 (basic greedy inference, BGI, Section 3),
Algorithm 2 (greedy inference with partial part predictions, BGI-PP, Section 4) and beam search
(Section 6). Written for clarity, not speed (no Appendix A data structures): a slow but literal
baseline that the C search dparse/graph/greedy_search.pyx must equal, tree for tree.

Both build a tree one arc per iteration. The partial tree T is a forest; E holds the arcs still
possible (arcs into words without a head that close no cycle). Adding e = (u, v) makes the
``lostArcs`` impossible: the other arcs into v (incomingSet) and the arcs that would close a
cycle (cycleSet), which are exactly the arcs into r, the top of u's component, from v's subtree.
Each iteration adds the arc of E with the lowest value

    BGI:    v_e = loss_e - gain_e                         (Algorithm 1, line 11)
    BGI-PP: v_e = beta * loss_e - (1 - beta) * gain_e     (Algorithm 2, line 11, Section 4)

Parts. A part has a weight W, arcs A that it needs and arcs B that it forbids (footnote 1):
an arc (h, m) is A = {(h, m)}; ``grand[g, h, m]`` is A = {(g, h), (h, m)}; a consecutive sibling
part ``sib[h, m, s]`` (docs/design.md, 'Score arrays and parts') is A = {(h, m), (h, s)}
(A = {(h, s)} when m == h) and B = the arcs from h to the words strictly between m and s, because
the two modifiers must be consecutive. The paper leaves parts with B != {} out (footnote 1,
Section 11); we define, and document here, how they are counted:

- a part is *lost* when an arc of A becomes impossible or an arc of B is added to T;
- it is *gained* (in T) when all of A is in T and every arc of B is impossible.

So every part is counted exactly once, gained or lost, over a run, and Section 3's identity
holds: the sum of the chosen BGI values equals (sum of all weights) - 2 * score(tree). For
first-order parts the definitions are the paper's own.

BGI (Algorithm 1): gain_e sums the parts gained by adding e, loss_e the parts lost.
BGI-PP (Algorithm 2): arc probabilities p_(u,v) = softmax over u of alpha * arc[u, v] (each
word's incoming arcs, computed once on the input graph; disallowed arcs get 0); a part's
probability is the product over A, and given T the residual product over A minus T. Then
gain_e = sum over undecided parts with e in A (and none of A lost) of W * p(A | T + e) and
loss_e = sum over the parts lost by adding e of W * p(A | T). B does not enter probabilities.

Disallowed arcs: arcs scored -inf or NaN. They weigh 0, and so does every part that needs one
(it could only be in a tree with a disallowed arc); B holds only allowed arcs. They stay
possible (a tree is always returned) but are taken only when no allowed arc remains possible;
then every value is 0 and the first possible arc is taken. So the Section 3 identity holds for
every tree of allowed arcs. Disallowed arcs are used only when no tree avoids them (the
decoders' contract): while the partial tree can still be completed with allowed arcs, an
iteration chooses only among the allowed arcs after which it still can (``completable``; the
paper's graphs are complete, so it never needs this). Sibling and grandparent weights must be
finite where all needed arcs are allowed (other entries are never read).

Beam search (Section 6) of width ``beam``: a beam of partial trees b^j, each with its value
beamVal (the sum of its chosen v_e) and its count of disallowed arcs, best first. Each iteration
expands every b^j (in beam order) with each of its choices (above: its completable allowed arcs,
else its allowed ones, else its disallowed ones), candidate value v_e^j = beamVal_j + v_e, and
keeps the best ``beam`` candidates in a list built in generation order (j, then arc index): a
candidate moves before the entry in front of it while it has fewer disallowed arcs, or as many
and a value lower by more than tol (below), and is dropped if that place is past the end.
Duplicates: if the candidate's tree is already in the list before that place the candidate is
dropped, else that entry is removed, so the beam never holds the same partial tree twice. The
result is the first tree of the final list (fewest disallowed arcs, then lowest value).
Width 1 is plain BGI / BGI-PP.

Other choices where the paper is silent, documented: single_root=True (the default of the decoder
contract, docs/design.md, 'Decoder contract') adds to lostArcs of a root arc (0, v) the other root
arcs; probabilities are not renormalised as arcs are removed; arcs are scanned in index order
h * (n+1) + m; tol = ``TIE_TOLERANCE`` * (1 + the largest |part weight|), so exact ties and
float-rounding near-ties go to the earliest candidate.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["TIE_TOLERANCE", "Trace", "arc_probabilities", "beam_search", "bgi", "bgi_pp", "greedy"]

TIE_TOLERANCE = 1e-9
"""Relative margin by which a value must be lower to beat an earlier candidate's."""

Heads = NDArray[np.int32]
Scores = NDArray[np.float64]
Arc = tuple[int, int]
Trace = list[tuple[Arc, float]]
"""(arc, value v_e) of each iteration, in order."""


class _Parts:
    """All parts of one sentence that need only allowed arcs: weights [P], needed arcs A and
    forbidden (allowed) arcs B per part, and for each arc the parts holding it in A and in B."""

    def __init__(
        self, arc: Scores, allowed: NDArray[np.bool_], sib: Scores | None, grand: Scores | None
    ) -> None:
        self.weight: list[float] = []
        self.need: list[tuple[Arc, ...]] = []
        self.forbid: list[tuple[Arc, ...]] = []
        self.by_need: dict[Arc, list[int]] = {}
        self.by_forbid: dict[Arc, list[int]] = {}
        size = arc.shape[0]
        for h in range(size):
            for m in range(1, size):
                if m != h and allowed[h, m] and arc[h, m] != 0.0:
                    self._add(float(arc[h, m]), ((h, m),), ())
        if grand is not None:
            for g, h, m in zip(*np.nonzero(grand), strict=True):
                if 0 < h != m and g != h and m != g and m > 0 and allowed[g, h] and allowed[h, m]:
                    self._add(float(grand[g, h, m]), ((g, h), (h, m)), (), "grand")
        if sib is not None:
            for h, m, s in zip(*np.nonzero(sib), strict=True):
                if s == 0 or s == h or (m != h and (m == 0 or (m - h) * (s - m) <= 0)):
                    continue  # not a sibling pair: m strictly between h and s on one side
                need = ((h, s),) if m == h else ((h, m), (h, s))
                if not all(allowed[a] for a in need):
                    continue
                lo, hi = sorted((int(m), int(s)))
                between = tuple((int(h), k) for k in range(lo + 1, hi) if allowed[h, k])
                self._add(float(sib[h, m, s]), need, between, "sib")

    def _add(
        self, weight: float, need: tuple[Arc, ...], forbid: tuple[Arc, ...], name: str = "arc"
    ) -> None:
        if not np.isfinite(weight):
            raise ValueError(f"{name} scores must be finite where their arcs are allowed")
        index = len(self.weight)
        self.weight.append(weight)
        self.need.append(tuple((int(a), int(b)) for a, b in need))
        self.forbid.append(forbid)
        for a in self.need[-1]:
            self.by_need.setdefault(a, []).append(index)
        for a in forbid:
            self.by_forbid.setdefault(a, []).append(index)


def arc_probabilities(arc: Scores, allowed: NDArray[np.bool_], alpha: float) -> Scores:
    """p[u, v] = exp(alpha * arc[u, v]) / sum over u' of exp(alpha * arc[u', v]) over the
    allowed arcs into v (Section 4); float64 [n+1, n+1], 0 for disallowed arcs and column 0."""
    logits = np.where(allowed, alpha * np.where(allowed, arc, 0.0), -np.inf)
    top = logits.max(axis=0, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(logits - top)
    total = e.sum(axis=0)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


class _State:
    """One partial tree of the search: heads, children, possible arcs E, arcs T, which parts
    are still undecided, its beam value, its count of disallowed arcs and its trace."""

    def __init__(self, size: int, parts: int) -> None:
        self.heads = np.full(size, -1, dtype=np.int32)
        self.children: list[list[int]] = [[] for _ in range(size)]
        self.alive: set[Arc] = {(u, v) for u in range(size) for v in range(1, size) if u != v}
        self.tree: set[Arc] = set()
        self.undecided = [True] * parts
        self.value = 0.0
        self.disallowed = 0
        self.trace: Trace = []

    def copy(self) -> _State:
        new = _State.__new__(_State)
        new.heads = self.heads.copy()
        new.children = [list(c) for c in self.children]
        new.alive = set(self.alive)
        new.tree = set(self.tree)
        new.undecided = list(self.undecided)
        new.value, new.disallowed, new.trace = self.value, self.disallowed, list(self.trace)
        return new

    def top(self, u: int) -> int:
        while self.heads[u] >= 0:
            u = int(self.heads[u])
        return u

    def subtree(self, v: int) -> list[int]:
        nodes, stack = [], [v]
        while stack:
            x = stack.pop()
            nodes.append(x)
            stack.extend(self.children[x])
        return nodes


def beam_search(
    arc: Scores,
    sib: Scores | None = None,
    grand: Scores | None = None,
    *,
    single_root: bool = True,
    pp: bool = False,
    alpha: float = 1.0,
    beta: float = 0.5,
    beam: int = 1,
) -> list[tuple[Heads, Trace]]:
    """BGI (pp=False) or BGI-PP (pp=True) with a beam of width ``beam`` on arc float64
    [n+1, n+1] and optional sib, grand float64 [n+1, n+1, n+1]: the final beam, best first,
    each tree as heads int32 [n+1] (heads[0] == -1) and its trace (its beam value is the sum
    of the trace's values).

    alpha and beta are BGI-PP's hyper-parameters (Section 4), ignored by BGI.
    """
    arc = np.asarray(arc, dtype=np.float64)
    size = arc.shape[0]
    n = size - 1
    if np.isposinf(arc).any():
        raise ValueError("arc scores must not be +inf")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    if beam < 1:
        raise ValueError(f"beam must be >= 1, got {beam}")
    off_diagonal = ~np.eye(size, dtype=bool)
    off_diagonal[:, 0] = False
    allowed = off_diagonal & np.isfinite(arc)
    parts = _Parts(arc, allowed, sib, grand)
    tol = TIE_TOLERANCE * (1.0 + max(map(abs, parts.weight), default=0.0))
    prob = arc_probabilities(arc, allowed, alpha) if pp else np.ones((size, size))

    def lost_arcs(st: _State, e: Arc) -> set[Arc]:
        """Algorithm 1, lines 6-8: incomingSet and cycleSet of e (plus the other root arcs
        under single_root when e leaves the root), among the possible arcs."""
        u, v = e
        lost = {(x, v) for x in range(size) if x != u and (x, v) in st.alive}
        r = st.top(u)
        lost |= {(x, r) for x in st.subtree(v) if (x, r) in st.alive}
        if single_root and u == 0:
            lost |= {(0, x) for x in range(1, size) if x != v and (0, x) in st.alive}
        return lost

    def completable(st: _State, e: Arc) -> bool:
        """Whether st + e can still be completed with possible allowed arcs: every component
        is reached from the root's (under single_root with no root arc yet, from one component
        with a possible root arc, through arcs not leaving the root)."""
        heads = st.heads.copy()
        heads[e[1]] = e[0]
        alive = {a for a in st.alive - lost_arcs(st, e) - {e} if allowed[a]}

        def top(x: int) -> int:
            while heads[x] >= 0:
                x = int(heads[x])
            return x

        tops = {x for x in range(size) if heads[x] < 0}

        def reached(start: int, arcs: set[Arc]) -> set[int]:
            seen, stack = {start}, [start]
            while stack:
                c = stack.pop()
                for x, y in arcs:
                    if top(x) == c and y not in seen:
                        seen.add(y)
                        stack.append(y)
            return seen

        if single_root and not (heads[1:] == 0).any():
            inner = {a for a in alive if a[0] != 0}
            return any(reached(y, inner) | {0} == tops for x, y in alive if x == 0)
        return reached(0, alive) == tops

    def residual(p: int, present: set[Arc]) -> float:
        """p_part | T: the product of p_a over the needed arcs not in ``present``."""
        value = 1.0
        for a in parts.need[p]:
            if a not in present:
                value *= prob[a]
        return value

    def evaluate(st: _State, e: Arc) -> tuple[float, set[int], set[Arc]]:
        """v_e, the parts decided (lost or gained) by adding e to st, and its lostArcs."""
        lost_a = lost_arcs(st, e)
        undecided = st.undecided
        lost = {p for a in lost_a for p in parts.by_need.get(a, ()) if undecided[p]}
        lost |= {p for p in parts.by_forbid.get(e, ()) if undecided[p]}
        with_e = st.tree | {e}
        candidates = {p for p in parts.by_need.get(e, ()) if undecided[p]}
        candidates |= {p for a in lost_a for p in parts.by_forbid.get(a, ()) if undecided[p]}
        gained = {
            p
            for p in candidates - lost
            if all(a in with_e for a in parts.need[p])
            and all(b not in st.alive or b in lost_a for b in parts.forbid[p])
        }
        if pp:  # Algorithm 2, lines 5 and 10
            gain = sum(
                parts.weight[p] * residual(p, with_e)
                for p in parts.by_need.get(e, ())
                if undecided[p] and p not in lost
            )
            loss = sum(parts.weight[p] * residual(p, st.tree) for p in lost)
            value = beta * loss - (1.0 - beta) * gain
        else:  # Algorithm 1, lines 5 and 10
            gain = sum(parts.weight[p] for p in gained)
            loss = sum(parts.weight[p] for p in lost)
            value = loss - gain
        return value, lost | gained, lost_a

    def better(a: tuple[int, float], b: tuple[int, float]) -> bool:
        """Candidate (disallowed count, value) a ranks before the earlier candidate b."""
        return a[0] < b[0] or (a[0] == b[0] and a[1] < b[1] - tol)

    states = [_State(size, len(parts.weight))]
    for _ in range(n):  # Algorithm 1/2, line 2
        # (rank key, parent, arc, v_e, decided parts, lostArcs, the new tree's heads)
        ranked: list[tuple[tuple[int, float], int, Arc, float, set[int], set[Arc], tuple]] = []
        for j, st in enumerate(states):
            arcs = sorted(st.alive, key=lambda a: a[0] * size + a[1])
            allowed_arcs = [e for e in arcs if allowed[e]]
            choices = [e for e in allowed_arcs if completable(st, e)] or allowed_arcs or arcs
            for e in choices:
                value, decided, lost_a = evaluate(st, e)
                key = (st.disallowed + (not allowed[e]), st.value + value)
                heads = st.heads.copy()
                heads[e[1]] = e[0]
                cand = (key, j, e, value, decided, lost_a, tuple(heads.tolist()))
                pos = len(ranked)
                while pos > 0 and better(key, ranked[pos - 1][0]):
                    pos -= 1
                if pos >= beam:
                    continue
                same = [k for k, x in enumerate(ranked) if x[6] == cand[6]]
                if same:
                    if same[0] < pos:  # the same tree already ranks before this place
                        continue
                    del ranked[same[0]]
                ranked.insert(pos, cand)
                del ranked[beam:]
        new_states = []
        for key, j, e, value, decided, lost_a, _ in ranked:  # lines 13-16 for each new tree
            st = states[j].copy()
            u, v = e
            st.heads[v] = u
            st.children[u].append(v)
            st.tree.add(e)
            st.alive.discard(e)
            st.alive -= lost_a
            for p in decided:
                st.undecided[p] = False
            st.disallowed, st.value = key
            st.trace.append((e, value))
            new_states.append(st)
        states = new_states
    return [(st.heads, st.trace) for st in states]


def greedy(
    arc: Scores,
    sib: Scores | None = None,
    grand: Scores | None = None,
    *,
    single_root: bool = True,
    pp: bool = False,
    alpha: float = 1.0,
    beta: float = 0.5,
    beam: int = 1,
) -> tuple[Heads, Trace]:
    """The returned tree of :func:`beam_search` (same arguments): heads int32 [n+1] and its
    trace."""
    return beam_search(
        arc, sib, grand, single_root=single_root, pp=pp, alpha=alpha, beta=beta, beam=beam
    )[0]


def bgi(
    arc: Scores,
    sib: Scores | None = None,
    grand: Scores | None = None,
    *,
    single_root: bool = True,
    beam: int = 1,
) -> Heads:
    """Algorithm 1 (BGI): heads int32 [n+1] for arc [n+1, n+1], sib and grand [n+1, n+1, n+1]."""
    return greedy(arc, sib, grand, single_root=single_root, beam=beam)[0]


def bgi_pp(
    arc: Scores,
    sib: Scores | None = None,
    grand: Scores | None = None,
    *,
    single_root: bool = True,
    alpha: float = 1.0,
    beta: float = 0.5,
    beam: int = 1,
) -> Heads:
    """Algorithm 2 (BGI-PP): heads int32 [n+1]; alpha the softmax sharpness, beta in [0, 1] the
    loss weight (Section 4)."""
    return greedy(
        arc, sib, grand, single_root=single_root, pp=True, alpha=alpha, beta=beta, beam=beam
    )[0]
