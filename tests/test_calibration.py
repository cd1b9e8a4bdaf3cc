"""dparse.calibration: MISC attributes and TSV rows of head probabilities, the expected
calibration error, and the temperature fit (against brute-force likelihoods)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from bruteforce import all_trees
from dparse.graph.marginals import log_partition

from dparse.calibration import (
    ARC_HEADER,
    arc_rows,
    calibration,
    calibration_of_files,
    fit_temperature,
    head_attributes,
    head_probabilities,
)
from dparse.conll import Sentence
from dparse.errors import InputError

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))


def arc_score(arc: np.ndarray, heads: np.ndarray) -> float:
    """The first-order score of the tree ``heads``."""
    return float(arc[heads[1:], np.arange(1, len(heads))].sum())


def test_head_attributes_give_the_chosen_head_and_the_likely_others() -> None:
    probs = np.zeros((4, 4))
    probs[:, 1] = [0.0, 0.0, 0.9342, 0.0658]
    probs[:, 2] = [0.996, 0.004, 0.0, 0.0]
    probs[:, 3] = [0.2, 0.3, 0.5, 0.0]
    attrs = head_attributes(probs, np.array([-1, 2, 0, 1]), threshold=0.01)
    assert attrs == [{"HeadProb": "0.934", "HeadAlt": "3:0.066"},
                     {"HeadProb": "0.996"},
                     {"HeadProb": "0.300", "HeadAlt": "2:0.500,0:0.200"}]


def test_arc_rows_list_every_arc_above_the_threshold_most_probable_first() -> None:
    probs = np.zeros((3, 3))
    probs[:, 1] = [0.7, 0.0, 0.3]
    probs[:, 2] = [0.995, 0.005, 0.0]
    rows = arc_rows(4, probs, np.array([-1, 2, 0]), threshold=0.01)
    assert rows == ["4\t1\t0\t0.700000\t0\n", "4\t1\t2\t0.300000\t1\n",
                    "4\t2\t0\t0.995000\t1\n"]
    assert ARC_HEADER.count("\t") == rows[0].count("\t")


def test_misc_attributes_keep_the_others_and_read_back() -> None:
    sent = Sentence.build(["Hi", "there", "!"], [-1, 0, 1, 1], ["", "root", "x", "punct"])
    with_space = sent.with_misc([{"SpaceAfter": "No"}, {}, {}])
    probs = with_space.with_misc([{"HeadProb": "0.500"}, {"HeadProb": "0.250"}, {}])
    lines = probs.to_conllu().splitlines()
    assert [line.split("\t")[9] for line in lines[:3]] == [
        "SpaceAfter=No|HeadProb=0.500", "HeadProb=0.250", "_"]
    again = probs.with_misc([{"HeadProb": "0.125"}, {}, {}])  # replaced in place
    assert again.to_conllu().splitlines()[0].endswith("\tSpaceAfter=No|HeadProb=0.125")
    assert head_probabilities(again) == [0.125, 0.25, None]
    with pytest.raises(ValueError, match="break the MISC"):
        sent.with_misc([{"HeadAlt": "1:0.5|2:0.5"}, {}, {}])
    conllx = Sentence.build(["Hi"], [-1, 0], ["", "root"], fmt="conllx")
    with pytest.raises(ValueError, match="CoNLL-U only"):
        conllx.with_misc([{"HeadProb": "1.000"}])


def test_ece_and_reliability_bins_by_hand() -> None:
    cal = calibration([0.95, 0.95, 0.55, 0.45, 1.0], [True, False, True, False, True])
    assert cal.words == 5
    # bins: 0.9-1.0 holds 0.95, 0.95, 1.0 (accuracy 2/3), 0.5-0.6 holds 0.55 (1), 0.4-0.5 0.45
    want = (3 * abs(2 / 3 - (0.95 + 0.95 + 1.0) / 3) + abs(1 - 0.55) + abs(0 - 0.45)) / 5
    assert cal.ece == pytest.approx(want)
    assert [b[2] for b in cal.bins] == [0, 0, 0, 0, 1, 1, 0, 0, 0, 3]
    assert cal.bins[0][3] is None and "n/a" in cal.format()
    assert cal.as_dict()["bins_equal_width"] == 10
    assert calibration([], []).ece is None


def _brute_nll(pairs: list, t: float) -> float:
    total = 0.0
    for arc, gold in pairs:
        n = arc.shape[0] - 1
        trees = all_trees(n, False, True)
        scores = arc[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1) / t
        top = scores.max()
        total += top + math.log(np.exp(scores - top).sum())
        total -= arc[gold[1:], np.arange(1, n + 1)].sum() / t
    return total / len(pairs)


def test_fitted_temperature_minimizes_the_brute_force_likelihood_and_finds_the_true_one(
) -> None:
    """Gold trees sampled from p(tree) ∝ exp(score / 2.5): the fit minimizes the exact
    negative log-likelihood (its neighbours score worse) and lands near 2.5."""
    rng = np.random.default_rng([SEED, 7])
    pairs = []
    for _ in range(300):
        n = int(rng.integers(2, 6))
        arc = rng.normal(0.0, 4.0, (n + 1, n + 1))
        trees = all_trees(n, False, True)
        scores = arc[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1) / 2.5
        p = np.exp(scores - scores.max())
        pairs.append((arc, trees[rng.choice(len(trees), p=p / p.sum())]))
    fit = fit_temperature(pairs, lambda a, t: log_partition(a / t, False, True), arc_score,
                          False, True)
    assert fit.sentences == 300 and fit.skipped == 0
    assert fit.nll == pytest.approx(_brute_nll(pairs, fit.temperature), abs=1e-9)
    assert fit.nll_at_1 == pytest.approx(_brute_nll(pairs, 1.0), abs=1e-9)
    for factor in (0.98, 1.02):
        assert _brute_nll(pairs, fit.temperature * factor) > fit.nll
    assert 2.0 < fit.temperature < 3.1


def test_fit_skips_gold_trees_outside_the_distribution() -> None:
    arc = np.zeros((4, 4))
    arc[1, 3] = -np.inf
    crossing = np.array([-1, 3, 0, 2])          # 2 -> 3 and 3 -> 1: 3 -> 1 crosses 0 -> 2
    through_pruned = np.array([-1, 0, 1, 1])    # 1 -> 3 is disallowed
    two_roots = np.array([-1, 0, 0, 2])
    fine = np.array([-1, 0, 1, 2])
    fit = fit_temperature([(arc, crossing), (arc, through_pruned), (arc, two_roots),
                           (arc, fine)], lambda a, t: log_partition(a / t, True, True),
                          arc_score, True, True)
    assert (fit.sentences, fit.skipped) == (1, 3)
    with pytest.raises(InputError, match="no gold tree"):
        fit_temperature([(arc, two_roots)], lambda a, t: log_partition(a / t, True, True),
                        arc_score, True, True)


def test_calibration_of_files_reads_head_prob_and_names_what_is_missing(tmp_path) -> None:
    gold = tmp_path / "gold.conllu"
    gold.write_text("1\tA\t_\t_\t_\t_\t2\tx\t_\t_\n2\tb\t_\t_\t_\t_\t0\troot\t_\t_\n\n")
    system = tmp_path / "sys.conllu"
    system.write_text("1\tA\t_\t_\t_\t_\t2\tx\t_\tHeadProb=0.800\n"
                      "2\tb\t_\t_\t_\t_\t1\troot\t_\tSpaceAfter=No|HeadProb=0.600\n\n")
    cal = calibration_of_files(gold, system)
    assert cal.words == 2
    assert cal.ece == pytest.approx((abs(1 - 0.8) + abs(0 - 0.6)) / 2)
    system.write_text("1\tA\t_\t_\t_\t_\t2\tx\t_\tHeadProb=0.800\n2\tb\t_\t_\t_\t_\t0\troot\t_\t_\n\n")
    with pytest.raises(InputError, match=r"sys.conllu:2: word 2 has no HeadProb"):
        calibration_of_files(gold, system)
    system.write_text("1\tA\t_\t_\t_\t_\t0\tx\t_\tHeadProb=0.800\n\n")
    with pytest.raises(InputError, match="1 words where the gold sentence"):
        calibration_of_files(gold, system)
