"""Exact second-order arc marginals and log Z (dparse/graph/marginals2.pyx) against brute-force
enumeration of every projective tree (tests/bruteforce.py scores each tree's arc, sibling and
grandparent parts independently of the chart), single-root and not."""

from __future__ import annotations

import os

import numpy as np
import pytest
from bruteforce import all_trees, relevant_entries2, second_order_parts, tree_scores
from dparse.graph.marginals import NoTreeError, arc_marginals
from dparse.graph.marginals2 import second_order_log_partition, second_order_marginals

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = ["normal", "ties", "negative", "disallowed"]


def brute_force(arc: np.ndarray, sib: np.ndarray | None, grand: np.ndarray | None,
                single_root: bool) -> tuple[float, np.ndarray]:
    """log Z and mu [n+1, n+1] summed over every projective tree (NaN and -inf: disallowed)."""
    n = arc.shape[0] - 1
    clean = [None if x is None else np.where(np.isnan(x), -np.inf, x) for x in (arc, sib, grand)]
    scores = tree_scores(*clean, projective=True, single_root=single_root)
    trees = all_trees(n, True, single_root)
    top = scores.max()
    if top == -np.inf:
        return -np.inf, np.zeros_like(arc)
    weights = np.exp(scores - top)
    probs = weights / weights.sum()
    mu = np.zeros_like(arc)
    for m in range(1, n + 1):
        np.add.at(mu[:, m], trees[:, m], probs)
    return float(top + np.log(weights.sum())), mu


def random_parts(rng: np.random.Generator, n: int, kind: str, single_root: bool,
                 grandparents: bool = True) -> tuple[np.ndarray, ...]:
    """arc [n+1, n+1], sib and grand [n+1]^3 (grand None without grandparents) of one kind;
    "disallowed" sets a fifth of the arcs and a tenth of the other parts to -inf or NaN
    (often every tree of a short sentence), and puts junk (+inf) in entries no tree uses."""
    N = n + 1
    shapes = [(N, N), (N, N, N), (N, N, N)]
    if kind == "normal":
        parts = [rng.normal(0.0, 2.0, size=s) for s in shapes]
    elif kind == "ties":  # integers from a tiny range: many trees score alike
        parts = [rng.integers(-1, 2, size=s).astype(float) for s in shapes]
    elif kind == "negative":
        parts = [-rng.exponential(2.0, size=s).round(1) for s in shapes]
    else:
        parts = [rng.integers(-3, 4, size=s).astype(float) for s in shapes]
        for x, share in zip(parts, (0.2, 0.1, 0.1), strict=True):
            mask = rng.random(x.shape) < share
            x[mask] = rng.choice([-np.inf, np.nan], size=int(mask.sum()))
        for x, relevant in zip(parts, relevant_entries2(n, single_root), strict=True):
            x[~relevant] = np.inf
    if not grandparents:
        parts[2] = None
    return tuple(parts)


def check(arc: np.ndarray, sib: np.ndarray | None, grand: np.ndarray | None,
          single_root: bool) -> bool:
    """Checks the marginals and log Z against brute force; whether some tree was allowed."""
    want_z, want_mu = brute_force(arc, sib, grand, single_root)
    if want_z == -np.inf:
        with pytest.raises(NoTreeError, match="no projective .*tree"):
            second_order_marginals(arc, sib, grand, single_root)
        with pytest.raises(NoTreeError):
            second_order_log_partition(arc, sib, grand, single_root)
        return False
    log_z, mu = second_order_marginals(arc, sib, grand, single_root)
    assert log_z == pytest.approx(want_z, abs=1e-9)
    assert second_order_log_partition(arc, sib, grand, single_root) == log_z
    np.testing.assert_allclose(mu, want_mu, rtol=0, atol=1e-9)
    np.testing.assert_allclose(mu[:, 1:].sum(axis=0), 1.0, rtol=0, atol=1e-9)
    assert (mu >= 0).all() and (mu[:, 0] == 0).all() and (np.diag(mu) == 0).all()
    return True


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", range(1, 7))
def test_marginals_and_log_z_equal_brute_force(n: int, kind: str, single_root: bool) -> None:
    rng = np.random.default_rng([SEED, n, KINDS.index(kind), single_root])
    allowed = 0
    for _ in range(8):
        allowed += check(*random_parts(rng, n, kind, single_root), single_root)
    assert allowed > 0 or (kind == "disallowed" and n > 3)


@pytest.mark.parametrize("single_root", [True, False])
def test_sibling_parts_alone_equal_brute_force(single_root: bool) -> None:
    """grand None: the distribution that eisner2-sib decodes."""
    rng = np.random.default_rng([SEED, 17, single_root])
    for n in (2, 4, 6):
        for kind in ("normal", "disallowed"):
            check(*random_parts(rng, n, kind, single_root, grandparents=False), single_root)


@pytest.mark.parametrize("single_root", [True, False])
def test_no_second_order_parts_give_first_order_marginals(single_root: bool) -> None:
    rng = np.random.default_rng([SEED, 23, single_root])
    arc = rng.normal(0.0, 3.0, (9, 9))
    arc[rng.random(arc.shape) < 0.2] = -np.inf
    zeros = np.zeros((9, 9, 9))
    for sib, grand in ((None, None), (zeros, zeros), (zeros, None)):
        log_z, mu = second_order_marginals(arc, sib, grand, single_root)
        want_z, want_mu = arc_marginals(arc, True, single_root)
        assert log_z == pytest.approx(want_z, abs=1e-10)
        np.testing.assert_allclose(mu, want_mu, atol=1e-12)


@pytest.mark.parametrize("single_root", [True, False])
def test_a_tree_whose_parts_are_alone_allowed_has_probability_one(single_root: bool) -> None:
    """Every arc outside one random tree disallowed: its arcs have probability 1 and log Z is
    its score, sibling and grandparent parts included."""
    rng = np.random.default_rng([SEED, 29, single_root])
    n = 6
    trees = all_trees(n, True, single_root)
    for _ in range(5):
        tree = trees[rng.integers(len(trees))]
        arc = np.full((n + 1, n + 1), -np.inf)
        arc[tree[1:], np.arange(1, n + 1)] = rng.normal(size=n)
        sib, grand = rng.normal(size=(2, n + 1, n + 1, n + 1))
        log_z, mu = second_order_marginals(arc, sib, grand, single_root)
        sibs, grands = second_order_parts(tree)
        score = arc[tree[1:], np.arange(1, n + 1)].sum() + sum(sib[p] for p in sibs) + sum(
            grand[p] for p in grands)
        assert log_z == pytest.approx(score, abs=1e-12)
        want = np.zeros((n + 1, n + 1))
        want[tree[1:], np.arange(1, n + 1)] = 1.0
        np.testing.assert_allclose(mu, want, atol=1e-12)


@pytest.mark.parametrize("single_root", [True, False])
def test_large_scores_stay_exact(single_root: bool) -> None:
    """Scores in the hundreds (a linear model's): shifted, not overflowed."""
    rng = np.random.default_rng([SEED, 31, single_root])
    n = 6
    arc = 400.0 + rng.normal(0.0, 4.0, (n + 1, n + 1))
    sib, grand = 200.0 + rng.normal(0.0, 4.0, (2, n + 1, n + 1, n + 1))
    check(arc, sib, grand, single_root)


@pytest.mark.parametrize("single_root", [True, False])
def test_a_long_pruned_sentence_gives_distributions(single_root: bool) -> None:
    """60 words, most arcs disallowed as a pruner leaves them (parts 0 there): each word's
    heads sum to 1, and log Z is the inside pass's alone."""
    rng = np.random.default_rng([SEED, 37, single_root])
    n = 60
    arc = rng.normal(0.0, 3.0, (n + 1, n + 1))
    near = np.abs(np.subtract.outer(np.arange(n + 1), np.arange(n + 1))) <= 4
    arc[~near] = -np.inf
    arc[0, 1:] = rng.normal(0.0, 3.0, n)
    sib, grand = rng.normal(0.0, 1.0, (2, n + 1, n + 1, n + 1))
    log_z, mu = second_order_marginals(arc, sib, grand, single_root)
    np.testing.assert_allclose(mu[:, 1:].sum(axis=0), 1.0, atol=1e-9)
    assert (mu >= 0).all() and (mu[np.isneginf(arc)] == 0).all()
    assert second_order_log_partition(arc, sib, grand, single_root) == log_z


def test_bad_scores_are_refused() -> None:
    arc, sib, grand = np.zeros((4, 4)), np.zeros((4, 4, 4)), np.zeros((4, 4, 4))
    for x, at in ((arc, (1, 2)), (sib, (1, 2, 3)), (grand, (0, 1, 2))):
        x[at] = np.inf
        with pytest.raises(ValueError, match=r"\+inf"):
            second_order_marginals(arc, sib, grand)
        x[at] = 0.0
    with pytest.raises(ValueError, match="shape"):
        second_order_marginals(arc, np.zeros((3, 3, 3)))
    with pytest.raises(ValueError, match="square"):
        second_order_marginals(np.zeros((1, 1)))
