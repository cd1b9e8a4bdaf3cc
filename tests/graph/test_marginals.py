"""Exact arc marginals and log Z (dparse/graph/marginals.pyx) against brute-force enumeration
of every tree (tests/bruteforce.py), projective and not, single-root and not."""

from __future__ import annotations

import os

import numpy as np
import pytest
from bruteforce import all_trees
from dparse.graph.marginals import ImpreciseMarginals, NoTreeError, arc_marginals, log_partition

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = [(p, r) for p in (True, False) for r in (True, False)]


def brute_force(arc: np.ndarray, projective: bool, single_root: bool
                ) -> tuple[float, np.ndarray]:
    """log Z and mu [n+1, n+1] by summing over every tree of the kind (disallowed arcs: -inf)."""
    n = arc.shape[0] - 1
    trees = all_trees(n, projective, single_root)
    words = np.arange(1, n + 1)
    clean = np.where(np.isnan(arc), -np.inf, arc)
    scores = clean[trees[:, 1:], words].sum(axis=1)
    top = scores.max()
    if top == -np.inf:
        return -np.inf, np.zeros_like(arc)
    weights = np.exp(scores - top)
    log_z = top + np.log(weights.sum())
    probs = weights / weights.sum()
    mu = np.zeros_like(arc)
    for m in words:
        np.add.at(mu[:, m], trees[:, m], probs)
    return float(log_z), mu


def random_scores(rng: np.random.Generator, n: int, scale: float = 3.0) -> np.ndarray:
    """Random [n+1, n+1] scores with ties (rounded to halves) and negative values, junk in
    column 0 and on the diagonal (to be ignored), and some disallowed arcs."""
    arc = np.round(rng.normal(0.0, scale, (n + 1, n + 1)) * 2) / 2
    arc[:, 0] = rng.normal(0.0, 50.0, n + 1)
    np.fill_diagonal(arc, 99.0)
    mask = rng.random((n + 1, n + 1)) < 0.2
    arc[mask] = rng.choice([-np.inf, np.nan], size=int(mask.sum()))
    return arc


def check_against_brute_force(arc: np.ndarray, projective: bool, single_root: bool) -> None:
    want_z, want_mu = brute_force(arc, projective, single_root)
    if want_z == -np.inf:
        with pytest.raises(NoTreeError, match="no .*tree"):
            arc_marginals(arc, projective, single_root)
        with pytest.raises(NoTreeError):
            log_partition(arc, projective, single_root)
        return
    log_z, mu = arc_marginals(arc, projective, single_root)
    assert log_z == pytest.approx(want_z, abs=1e-9)
    assert log_partition(arc, projective, single_root) == log_z
    np.testing.assert_allclose(mu, want_mu, rtol=0, atol=1e-9)
    np.testing.assert_allclose(mu[:, 1:].sum(axis=0), 1.0, rtol=0, atol=1e-9)
    assert (mu >= 0).all() and (mu[:, 0] == 0).all() and (np.diag(mu) == 0).all()


@pytest.mark.parametrize(("projective", "single_root"), KINDS)
@pytest.mark.parametrize("n", range(1, 8))
def test_marginals_and_log_z_equal_brute_force(n: int, projective: bool,
                                               single_root: bool) -> None:
    rng = np.random.default_rng([SEED, n, projective, single_root])
    for _ in range(12 if n < 7 else 4):
        check_against_brute_force(random_scores(rng, n), projective, single_root)


@pytest.mark.parametrize(("projective", "single_root"), KINDS)
def test_all_ties_give_uniform_trees(projective: bool, single_root: bool) -> None:
    n = 5
    trees = all_trees(n, projective, single_root)
    log_z, mu = arc_marginals(np.zeros((n + 1, n + 1)), projective, single_root)
    assert log_z == pytest.approx(np.log(len(trees)), abs=1e-12)
    counts = np.zeros((n + 1, n + 1))
    for m in range(1, n + 1):
        np.add.at(counts[:, m], trees[:, m], 1.0)
    np.testing.assert_allclose(mu, counts / len(trees), atol=1e-12)


@pytest.mark.parametrize(("projective", "single_root"), KINDS)
def test_a_sentence_with_few_allowed_trees(projective: bool, single_root: bool) -> None:
    """Arcs 0->1, 1->2, 2->3, 3->4, 4->3, 2->4, 0->3 allow five trees by hand (one of them
    non-projective, two of them with two root words): the marginals are theirs."""
    n = 4
    arc = np.full((n + 1, n + 1), -np.inf)
    arc[0, 1], arc[1, 2], arc[2, 3], arc[3, 4] = 1.0, -2.0, 0.5, 3.0
    arc[4, 3], arc[2, 4], arc[0, 3] = 0.25, -1.0, 2.0
    trees = [[-1, 0, 1, 2, 3], [-1, 0, 1, 2, 2], [-1, 0, 1, 4, 2],
             [-1, 0, 1, 0, 3], [-1, 0, 1, 0, 2]]  # the last: 0->3 and 2->4 cross
    kept = [t for t in trees if (t.count(0) == 1 or not single_root)
            and (t != trees[-1] or not projective)]
    scores = np.array([sum(arc[h, m] for m, h in enumerate(t) if m) for t in kept])
    p = np.exp(scores - np.log(np.exp(scores).sum()))
    log_z, mu = arc_marginals(arc, projective, single_root)
    assert log_z == pytest.approx(np.log(np.exp(scores).sum()), abs=1e-12)
    want = np.zeros((n + 1, n + 1))
    for pi, t in zip(p, kept, strict=True):
        want[t[1:], np.arange(1, n + 1)] += pi
    np.testing.assert_allclose(mu, want, atol=1e-12)
    assert mu[1, 2] == pytest.approx(1.0, abs=1e-12)
    check_against_brute_force(arc, projective, single_root)


@pytest.mark.parametrize(("projective", "single_root"), KINDS)
def test_no_allowed_tree_is_a_clear_error(projective: bool, single_root: bool) -> None:
    with pytest.raises(NoTreeError, match="avoids the disallowed"):
        arc_marginals(np.full((4, 4), -np.inf), projective, single_root)
    arc = np.zeros((4, 4))
    arc[:, 2] = -np.inf  # word 2 has no head
    with pytest.raises(NoTreeError):
        arc_marginals(arc, projective, single_root)


@pytest.mark.parametrize("projective", [True, False])
def test_crossing_or_two_root_only_trees_are_no_tree_of_the_kind(projective: bool) -> None:
    arc = np.full((3, 3), -np.inf)
    arc[0, 1] = arc[0, 2] = 0.0  # only the two-root tree
    with pytest.raises(NoTreeError, match="single-root"):
        arc_marginals(arc, projective, True)
    arc = np.full((5, 5), -np.inf)
    arc[0, 2], arc[2, 4], arc[4, 1], arc[1, 3] = 0.0, 0.0, 0.0, 0.0  # arcs 4->1, 2->4 cross
    if projective:
        with pytest.raises(NoTreeError, match="projective"):
            arc_marginals(arc, True, True)
    else:
        log_z, mu = arc_marginals(arc, False, True)
        assert log_z == pytest.approx(0.0, abs=1e-12) and mu[4, 1] == pytest.approx(1.0)


@pytest.mark.parametrize(("projective", "single_root"), KINDS)
def test_large_scores_stay_exact(projective: bool, single_root: bool) -> None:
    """Scores in the hundreds (a linear model's, before the temperature): shifted, not
    overflowed."""
    rng = np.random.default_rng([SEED, 99, projective, single_root])
    arc = 400.0 + rng.normal(0.0, 4.0, (7, 7))
    check_against_brute_force(arc, projective, single_root)


@pytest.mark.parametrize("projective", [True, False])
def test_bad_scores_are_refused(projective: bool) -> None:
    arc = np.zeros((3, 3))
    arc[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"\+inf"):
        arc_marginals(arc, projective)
    with pytest.raises(ValueError, match="square"):
        arc_marginals(np.zeros((1, 1)), projective)
    with pytest.raises(ValueError, match="square"):
        arc_marginals(np.zeros((3, 4)), projective)


@pytest.mark.parametrize("single_root", [True, False])
def test_a_cycle_of_best_arcs_far_above_every_tree_is_refused_not_wrong(single_root: bool
                                                                        ) -> None:
    """Words 3 and 4 prefer each other by a gap g over every tree: the Laplacian's condition
    number grows like exp(g); exact at g = 20, refused at g = 80 (beyond double precision)."""
    def scores(gap: float) -> np.ndarray:
        arc = np.full((5, 5), -gap)
        arc[3, 4] = arc[4, 3] = arc[0, 1] = arc[1, 2] = 0.0
        arc[2, 3] = -gap / 2
        return arc

    check_against_brute_force(scores(20.0), False, single_root)
    with pytest.raises(ImpreciseMarginals, match="lost their precision"):
        arc_marginals(scores(80.0), False, single_root)
    arc_marginals(scores(80.0), True, single_root)  # inside-outside has no such limit


@pytest.mark.parametrize(("projective", "single_root"), KINDS)
def test_a_model_whose_pruner_left_no_tree_counts_the_decoded_trees_arcs(
        projective: bool, single_root: bool) -> None:
    """GraphModel.parse_marginals' fallback (TreeDistribution.marginals): the decoded tree's
    pruned arcs take the lowest score of the sentence, so the distribution exists, holds that
    tree, and is exact for the scores so completed."""
    from dparse.decoders import get_decoder
    from dparse.graph.distribution import TreeDistribution

    rng = np.random.default_rng([SEED, 5, projective, single_root])
    arc = rng.normal(0.0, 2.0, (6, 6))
    arc[:, 3] = -np.inf  # word 3 has no allowed head
    arc[4, 3] = -np.inf
    heads = get_decoder("eisner" if projective else "cle").decode(arc, single_root=single_root)
    probs = TreeDistribution(projective, single_root, False).marginals(arc, {}, heads, 0.5)
    completed = arc / 0.5
    allowed = np.where(np.isfinite(completed), completed, np.nan)
    np.fill_diagonal(allowed, np.nan)
    completed[heads[3], 3] = np.nanmin(allowed[:, 1:])  # word 3's one head: any score will do
    check_against_brute_force(completed, projective, single_root)
    np.testing.assert_allclose(probs, brute_force(completed, projective, single_root)[1],
                               atol=1e-9)
    assert probs[heads[3], 3] == pytest.approx(1.0)
