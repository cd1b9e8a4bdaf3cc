"""The tree CRF (dparse.neural.crf) against brute-force enumeration: log-partition functions by
the Matrix-Tree Theorem and by the inside algorithm over every tree of n <= 6 words (single
root and not, projective and not), and the marginals (autograd) against finite differences."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from bruteforce import all_trees  # noqa: E402

from dparse.neural.crf import log_partition, marginals, tree_scores  # noqa: E402

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
KINDS = [(projective, single_root) for projective in (False, True) for single_root in (False, True)]


def brute_log_partition(scores: np.ndarray, n: int, projective: bool, single_root: bool
                        ) -> float:
    """log of the sum of exp(tree score) over every tree of the first n words."""
    trees = all_trees(n, projective, single_root)
    totals = scores[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1)
    top = totals.max()
    return float(top + np.log(np.exp(totals - top).sum()))


def random_batch(rng: np.random.Generator, lengths: list[int], size: int) -> torch.Tensor:
    """Scores [B, size+1, size+1]: normal, some scaled up, negative ones included, and ties."""
    scores = rng.normal(scale=3.0, size=(len(lengths), size + 1, size + 1))
    scores[0] = np.round(scores[0])  # ties
    scores[-1] -= 20.0  # every score negative
    return torch.tensor(scores, dtype=torch.float64)


@pytest.mark.parametrize(("projective", "single_root"), KINDS)
def test_log_partition_equals_brute_force(projective: bool, single_root: bool) -> None:
    rng = np.random.default_rng(SEED)
    for n in range(1, 7):
        lengths = [n, max(1, n - 2), n, 1]  # padding: shorter sentences beside longer ones
        scores = random_batch(rng, lengths, 6)
        got = log_partition(scores, torch.tensor(lengths), projective=projective,
                            single_root=single_root)
        for b, length in enumerate(lengths):
            want = brute_log_partition(scores[b].numpy(), length, projective, single_root)
            assert got[b].item() == pytest.approx(want, abs=1e-9, rel=1e-12)


@pytest.mark.parametrize(("projective", "single_root"), KINDS)
def test_marginals_are_the_finite_differences_of_the_log_partition(projective: bool,
                                                                    single_root: bool) -> None:
    rng = np.random.default_rng(SEED + 1)
    n = 5
    lengths = torch.tensor([n, 3])
    scores = random_batch(rng, [n, 3], n)
    probs = marginals(scores, lengths, projective=projective, single_root=single_root)
    eps = 1e-6
    for b, length in enumerate(lengths.tolist()):
        for h in range(length + 1):
            for m in range(1, length + 1):
                up, down = scores.clone(), scores.clone()
                up[b, h, m] += eps
                down[b, h, m] -= eps
                diff = (log_partition(up, lengths, projective=projective,
                                      single_root=single_root)[b]
                        - log_partition(down, lengths, projective=projective,
                                        single_root=single_root)[b]).item() / (2 * eps)
                assert probs[b, h, m].item() == pytest.approx(diff, abs=1e-6)
        # each word has one head; no tree holds a padding position's arcs or a self-loop
        assert probs[b, : length + 1, 1: length + 1].sum(dim=0).numpy() == pytest.approx(1.0)
        assert float(probs[b, length + 1:].abs().sum() + probs[b, :, length + 1:].abs().sum()) \
            == 0.0
        assert float(torch.diagonal(probs[b]).abs().sum()) == 0.0
    if single_root:
        assert probs[:, 0].sum(dim=1).numpy() == pytest.approx(1.0)


def test_a_tree_scores_the_sum_of_its_arcs() -> None:
    rng = np.random.default_rng(SEED + 2)
    scores = random_batch(rng, [4, 2], 4)
    heads = torch.tensor([[-1, 2, 0, 2, 3], [-1, 0, 1, -1, -1]])
    want = [sum(scores[0, h, m].item() for m, h in enumerate([2, 0, 2, 3], 1)),
            scores[1, 0, 1].item() + scores[1, 1, 2].item()]
    assert tree_scores(scores, heads, torch.tensor([4, 2])).numpy() == pytest.approx(want)
