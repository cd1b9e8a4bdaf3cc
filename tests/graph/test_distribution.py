"""dparse.graph.distribution: which tree distribution a decoder's head probabilities come
from, its log Z at a temperature, a tree's score, the temperature fit over it and the
fallback for sentences without an allowed tree, against brute force (tests/bruteforce.py)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from bruteforce import all_trees, tree_score2, tree_scores

from dparse.calibration import fit_temperature
from dparse.decoders import get_decoder
from dparse.errors import InputError
from dparse.graph.distribution import PartScores, TreeDistribution, tree_parts
from dparse.graph.model import GraphModel
from dparse.trees import tree_mask

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))


def random_parts(rng: np.random.Generator, n: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """arc with a fifth of its arcs disallowed, sib and grand with a third of entries 0 (as a
    pruned model's), the rest normal."""
    arc = rng.normal(0.0, 2.0, (n + 1, n + 1))
    arc[rng.random(arc.shape) < 0.2] = -np.inf
    parts = {}
    for name in ("sib", "grand"):
        x = rng.normal(0.0, 1.0, (n + 1,) * 3)
        x[rng.random(x.shape) < 0.3] = 0.0
        parts[name] = x
    return arc, parts


def test_each_decoder_gives_its_distribution() -> None:
    kinds = {"eisner": (True, False), "cle": (False, False), "eisner2-sib": (True, True),
             "eisner2-sibgp": (True, True), "dd2": (True, True)}
    for name, (projective, second) in kinds.items():
        dist = TreeDistribution.of(get_decoder(name), single_root=True)
        assert (dist.projective, dist.second_order, dist.single_root) == (projective, second,
                                                                          True)


@pytest.mark.parametrize("single_root", [True, False])
def test_tree_score_and_log_partition_equal_brute_force(single_root: bool) -> None:
    rng = np.random.default_rng([SEED, 3, single_root])
    dist = TreeDistribution(True, single_root, True)
    for n in (1, 3, 5):
        trees = all_trees(n, True, single_root)
        for _ in range(4):
            arc, parts = random_parts(rng, n)
            scores = dist.parts(arc, parts)
            assert scores.sib is not None and len(scores.sib[0]) < (n + 1) ** 3
            for tree in trees[rng.choice(len(trees), size=min(10, len(trees)))]:
                want = tree_score2(tree, arc, parts["sib"], parts["grand"])
                assert dist.tree_score(scores, tree) == pytest.approx(want, abs=1e-12)
            every = tree_scores(arc, parts["sib"], parts["grand"], projective=True,
                                single_root=single_root)
            for t in (1.0, 0.4, 3.0):
                finite = every[np.isfinite(every)] / t
                want = (np.log(np.exp(finite - finite.max()).sum()) + finite.max()
                        if len(finite) else -np.inf)
                if len(finite):
                    assert dist.log_partition(scores, t) == pytest.approx(want, abs=1e-9)


def test_first_order_distributions_read_arcs_alone() -> None:
    rng = np.random.default_rng([SEED, 5])
    arc, parts = random_parts(rng, 4)
    arc[np.isinf(arc)] = 0.0
    first = TreeDistribution(False, True, False)
    scores = first.parts(arc, parts)
    assert scores.sib is None and scores.grand is None
    tree = all_trees(4, False, True)[7]
    assert first.tree_score(scores, tree) == pytest.approx(
        arc[tree[1:], np.arange(1, 5)].sum())


def test_tree_parts_are_the_brute_forces() -> None:
    from bruteforce import second_order_parts

    for tree in all_trees(5, False, False)[::37]:
        sib, grand = second_order_parts(tree)
        want = [np.ravel_multi_index(tuple(np.array(p).T), (6, 6, 6)) if p else []
                for p in (sib, grand)]
        for got, expected in zip(tree_parts(tree), want, strict=True):
            assert sorted(got.tolist()) == sorted(np.asarray(expected).tolist())


def test_second_order_fit_minimizes_the_brute_force_likelihood() -> None:
    """Gold trees sampled from the second-order distribution at T = 2: the fit minimizes the
    exact negative log-likelihood and lands near 2."""
    rng = np.random.default_rng([SEED, 11])
    dist = TreeDistribution(True, True, True)
    pairs, brute = [], []
    for _ in range(150):
        n = int(rng.integers(2, 6))
        arc = rng.normal(0.0, 3.0, (n + 1, n + 1))
        parts = {k: rng.normal(0.0, 2.0, (n + 1,) * 3) for k in ("sib", "grand")}
        every = tree_scores(arc, parts["sib"], parts["grand"], projective=True,
                            single_root=True)
        p = np.exp((every - every.max()) / 2.0)
        pick = rng.choice(len(every), p=p / p.sum())
        pairs.append((dist.parts(arc, parts), all_trees(n, True, True)[pick]))
        brute.append((every, every[pick]))

    def nll(t: float) -> float:
        return sum(np.log(np.exp((e - e.max()) / t).sum()) + e.max() / t - g / t
                   for e, g in brute) / len(brute)

    fit = fit_temperature(pairs, dist.log_partition, dist.tree_score, True, True)
    assert fit.sentences == 150 and fit.skipped == 0
    assert fit.nll == pytest.approx(nll(fit.temperature), abs=1e-9)
    assert fit.nll_at_1 == pytest.approx(nll(1.0), abs=1e-9)
    for factor in (0.97, 1.03):
        assert nll(fit.temperature * factor) > fit.nll
    assert 1.5 < fit.temperature < 2.7


def test_a_non_projective_decoded_tree_without_a_projective_tree_allowed() -> None:
    """Only the arcs of one non-projective tree allowed: no projective tree exists, nor one
    after the decoded tree's arcs are taken back; then every arc is allowed at the lowest
    score, and the result is a distribution that favours the decoded tree's arcs."""
    n = 4
    heads = np.array([-1, 3, 0, 2, 2])  # 3 -> 1 crosses 0 -> 2
    arc = np.full((n + 1, n + 1), -np.inf)
    arc[heads[1:], np.arange(1, n + 1)] = 5.0
    zeros = {k: np.zeros((n + 1,) * 3) for k in ("sib", "grand")}
    probs = TreeDistribution(True, True, True).marginals(arc, zeros, heads, 1.0)
    np.testing.assert_allclose(probs[:, 1:].sum(axis=0), 1.0, atol=1e-9)
    assert all(probs[heads[m], m] == probs[:, m].max() for m in (2, 3, 4))
    assert math.isfinite(probs.sum())


def test_part_scores_keep_every_non_zero_entry() -> None:
    rng = np.random.default_rng([SEED, 13])
    arc, parts = random_parts(rng, 5)
    scores = PartScores.of(arc, parts)
    for name in ("sib", "grand"):
        np.testing.assert_array_equal(scores.dense(name, 2.0), parts[name] / 2.0)


class _Vocab:
    labels = ["_", "dep"]

    @staticmethod
    def encode(sentence: object) -> object:
        return sentence


class _RandomPartsModel(GraphModel):
    """A graph model whose part scores are fixed random arrays (the arcs of words 2 and 4
    pruned as a pruner would: -inf arcs, 0 parts), to check what parse_marginals and
    fit_temperature compute from score_parts."""

    def __init__(self, arc: np.ndarray, parts: dict[str, np.ndarray]) -> None:
        self.vocab = _Vocab()
        self.pruner = None
        self.arc, self.parts = arc, parts

    def score_parts(self, enc, weights, cost_augmented, scratch=None):  # noqa: ANN001, ANN201
        label = np.ones(self.arc.shape, dtype=np.int32)
        return self.arc.copy(), label, {k: v.copy() for k, v in self.parts.items()}


def test_parse_marginals_are_those_of_the_decoders_distribution() -> None:
    from dparse.graph.marginals import arc_marginals
    from dparse.graph.marginals2 import second_order_marginals

    from dparse.conll import as_sentence

    rng = np.random.default_rng([SEED, 19])
    n = 7
    arc, parts = random_parts(rng, n)
    arc[np.isneginf(arc)] = 0.0
    arc[[1, 3], 4] = arc[5, 2] = -np.inf
    model = _RandomPartsModel(arc, parts)
    sentence = as_sentence([f"w{i}" for i in range(1, n + 1)])
    for name in ("eisner2-sibgp", "dd2", "eisner", "cle"):
        decoder = get_decoder(name)
        parsed, probs = next(model.parse_marginals([sentence], decoder, True, temperature=0.7))
        accepted = {k: v for k, v in parts.items() if k in decoder.parts}
        assert (parsed.heads == decoder.decode(arc, single_root=True, **accepted)).all()
        if name in ("eisner2-sibgp", "dd2"):
            want = second_order_marginals(arc / 0.7, parts["sib"] / 0.7, parts["grand"] / 0.7)[1]
        else:
            want = arc_marginals(arc / 0.7, name == "eisner")[1]
        np.testing.assert_allclose(probs, want, atol=1e-12)
        dist = TreeDistribution.of(decoder, True)
        if not tree_mask(parsed.heads, single_root=True, projective=dist.projective):
            with pytest.raises(InputError, match="no gold tree"):  # dd2's crossing tree
                model.fit_temperature([parsed], decoder)
            continue
        fit = model.fit_temperature([parsed], decoder)
        scores = dist.parts(arc, accepted)
        assert fit.nll_at_1 == pytest.approx(dist.log_partition(scores) - dist.tree_score(
            scores, parsed.heads), abs=1e-9)
