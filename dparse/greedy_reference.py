"""Greedy graph inference, straightforward Python reference: BGI and BGI-PP.

Tchernowitz, Yedidsion and Reichart (2016), "Effective Greedy Inference for Graph-based
Non-Projective Dependency Parsing": Algorithm 1 (basic greedy inference, BGI, Section 3) and
Algorithm 2 (greedy inference with partial part predictions, BGI-PP, Section 4). Written for
clarity, not speed (no Appendix A data structures): a slow but literal baseline that faster
versions must equal (dparse/_ext/greedy.pyx does, for first-order parts).

Both build a tree one arc per iteration. The partial tree T is a forest; E holds the arcs still
possible (arcs into words without a head that close no cycle). Adding e = (u, v) makes the
``lostArcs`` impossible: the other arcs into v (incomingSet) and the arcs that would close a
cycle (cycleSet), which are exactly the arcs into r, the top of u's component, from v's subtree.
Each iteration adds the arc of E with the lowest value

    BGI:    v_e = loss_e - gain_e                         (Algorithm 1, line 11)
    BGI-PP: v_e = beta * loss_e - (1 - beta) * gain_e     (Algorithm 2, line 11, Section 4)

Parts. A part has a weight W, arcs A that it needs and arcs B that it forbids (footnote 1):
an arc (h, m) is A = {(h, m)}; ``grand[g, h, m]`` is A = {(g, h), (h, m)}; a consecutive
sibling part ``sib[h, m, s]`` (DESIGN.md conventions) is A = {(h, m), (h, s)} (A = {(h, s)}
when m == h) and B = the arcs from h to the words strictly between m and s, because the two
modifiers must be consecutive. The paper leaves parts with B != {} out (footnote 1, Section
11); we define, and document here, how they are counted:

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

Choices where the paper is silent, documented: single_root=True (the DESIGN default) adds to
lostArcs of a root arc (0, v) the other root arcs; probabilities are not renormalised as arcs
are removed; arcs are scanned in index order h * (n+1) + m and one replaces the best so far only
if its value is lower by more than tol = ``TIE_TOLERANCE`` * (1 + the largest |part weight|), so
exact ties and float-rounding near-ties go to the earliest arc; arcs scored -inf or NaN are
disallowed: they weigh 0 and are taken only when no allowed arc remains possible (so a tree is
always returned).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["TIE_TOLERANCE", "Trace", "arc_probabilities", "bgi", "bgi_pp", "greedy"]

TIE_TOLERANCE = 1e-9
"""Relative margin by which a value must be lower to beat an earlier arc's."""

Heads = NDArray[np.int32]
Scores = NDArray[np.float64]
Arc = tuple[int, int]
Trace = list[tuple[Arc, float]]
"""(arc, value v_e) of each iteration, in order."""


class _Parts:
    """All parts of one sentence: weights [P], needed arcs A and forbidden arcs B per part,
    and for each arc the parts holding it in A and in B."""

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
                if 0 < h != m and g != h and m != g and m > 0:
                    self._add(float(grand[g, h, m]), ((g, h), (h, m)), ())
        if sib is not None:
            for h, m, s in zip(*np.nonzero(sib), strict=True):
                if s == 0 or s == h or (m != h and (m == 0 or (m - h) * (s - m) <= 0)):
                    continue  # not a sibling pair: m strictly between h and s on one side
                lo, hi = sorted((int(m), int(s)))
                need = ((h, s),) if m == h else ((h, m), (h, s))
                between = tuple((int(h), k) for k in range(lo + 1, hi))
                self._add(float(sib[h, m, s]), tuple((int(a), int(b)) for a, b in need), between)

    def _add(self, weight: float, need: tuple[Arc, ...], forbid: tuple[Arc, ...]) -> None:
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


def greedy(
    arc: Scores,
    sib: Scores | None = None,
    grand: Scores | None = None,
    *,
    single_root: bool = True,
    pp: bool = False,
    alpha: float = 1.0,
    beta: float = 0.5,
) -> tuple[Heads, Trace]:
    """BGI (pp=False) or BGI-PP (pp=True) on arc float64 [n+1, n+1] and optional sib, grand
    float64 [n+1, n+1, n+1] (finite). Returns heads int32 [n+1] (heads[0] == -1) and the trace.

    alpha and beta are BGI-PP's hyper-parameters (Section 4), ignored by BGI.
    """
    arc = np.asarray(arc, dtype=np.float64)
    size = arc.shape[0]
    n = size - 1
    if np.isposinf(arc).any():
        raise ValueError("arc scores must not be +inf")
    for name, part in (("sib", sib), ("grand", grand)):
        if part is not None and not np.isfinite(part).all():
            raise ValueError(f"{name} scores must be finite")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    off_diagonal = ~np.eye(size, dtype=bool)
    off_diagonal[:, 0] = False
    allowed = off_diagonal & np.isfinite(arc)
    parts = _Parts(arc, allowed, sib, grand)
    tol = TIE_TOLERANCE * (1.0 + max(map(abs, parts.weight), default=0.0))
    prob = arc_probabilities(arc, allowed, alpha) if pp else np.ones((size, size))

    heads = np.full(size, -1, dtype=np.int32)
    children: list[list[int]] = [[] for _ in range(size)]
    alive: set[Arc] = {(int(u), int(v)) for u, v in zip(*np.nonzero(off_diagonal), strict=True)}
    tree: set[Arc] = set()
    undecided = [True] * len(parts.weight)

    def top(u: int) -> int:
        while heads[u] >= 0:
            u = int(heads[u])
        return u

    def subtree(v: int) -> list[int]:
        nodes, stack = [], [v]
        while stack:
            x = stack.pop()
            nodes.append(x)
            stack.extend(children[x])
        return nodes

    def lost_arcs(e: Arc) -> set[Arc]:
        """Algorithm 1, lines 6-8: incomingSet and cycleSet of e (plus the other root arcs
        under single_root when e leaves the root), among the possible arcs."""
        u, v = e
        lost = {(x, v) for x in range(size) if x != u and (x, v) in alive}
        r = top(u)
        lost |= {(x, r) for x in subtree(v) if (x, r) in alive}
        if single_root and u == 0:
            lost |= {(0, x) for x in range(1, size) if x != v and (0, x) in alive}
        return lost

    def residual(p: int, present: set[Arc]) -> float:
        """p_part | T: the product of p_a over the needed arcs not in ``present``."""
        value = 1.0
        for a in parts.need[p]:
            if a not in present:
                value *= prob[a]
        return value

    def evaluate(e: Arc) -> tuple[float, set[int], set[int], set[Arc]]:
        """v_e and the parts lost and gained by adding e, and its lostArcs."""
        lost_a = lost_arcs(e)
        lost = {p for a in lost_a for p in parts.by_need.get(a, ()) if undecided[p]}
        lost |= {p for p in parts.by_forbid.get(e, ()) if undecided[p]}
        with_e = tree | {e}
        candidates = {p for p in parts.by_need.get(e, ()) if undecided[p]}
        candidates |= {p for a in lost_a for p in parts.by_forbid.get(a, ()) if undecided[p]}
        gained = {
            p
            for p in candidates - lost
            if all(a in with_e for a in parts.need[p])
            and all(b not in alive or b in lost_a for b in parts.forbid[p])
        }
        if pp:  # Algorithm 2, lines 5 and 10
            gain = sum(
                parts.weight[p] * residual(p, with_e)
                for p in parts.by_need.get(e, ())
                if undecided[p] and p not in lost
            )
            loss = sum(parts.weight[p] * residual(p, tree) for p in lost)
            value = beta * loss - (1.0 - beta) * gain
        else:  # Algorithm 1, lines 5 and 10
            gain = sum(parts.weight[p] for p in gained)
            loss = sum(parts.weight[p] for p in lost)
            value = loss - gain
        return value, lost, gained, lost_a

    trace: Trace = []
    for _ in range(n):  # Algorithm 1/2, line 2
        best: tuple[bool, float, Arc, set[int], set[int], set[Arc]] | None = None
        for e in sorted(alive, key=lambda a: a[0] * size + a[1]):
            value, lost, gained, lost_a = evaluate(e)
            disallowed = not allowed[e]
            if (
                best is None
                or disallowed < best[0]
                or (disallowed == best[0] and value < best[1] - tol)
            ):
                best = (disallowed, value, e, lost, gained, lost_a)
        assert best is not None  # a complete graph always leaves a possible arc
        _, value, e, lost, gained, lost_a = best
        u, v = e
        heads[v] = u  # lines 13-16: add e, drop lostArcs, settle the parts
        children[u].append(v)
        tree.add(e)
        alive.discard(e)
        alive -= lost_a
        for p in lost | gained:
            undecided[p] = False
        trace.append((e, value))
    return heads, trace


def bgi(
    arc: Scores,
    sib: Scores | None = None,
    grand: Scores | None = None,
    *,
    single_root: bool = True,
) -> Heads:
    """Algorithm 1 (BGI): heads int32 [n+1] for arc [n+1, n+1], sib and grand [n+1, n+1, n+1]."""
    return greedy(arc, sib, grand, single_root=single_root)[0]


def bgi_pp(
    arc: Scores,
    sib: Scores | None = None,
    grand: Scores | None = None,
    *,
    single_root: bool = True,
    alpha: float = 1.0,
    beta: float = 0.5,
) -> Heads:
    """Algorithm 2 (BGI-PP): heads int32 [n+1]; alpha the softmax sharpness, beta in [0, 1] the
    loss weight (Section 4)."""
    return greedy(arc, sib, grand, single_root=single_root, pp=True, alpha=alpha, beta=beta)[0]
