"""dparse.learning: sparse ``combine``, perceptron and PA steps, and parameter averaging."""

from __future__ import annotations

import numpy as np
import pytest

from dparse.learning import LEARNERS, AveragedLearner, combine


def test_combine_sums_repeats_and_drops_zeros() -> None:
    idx = np.array([5, 3, 5, 7, 3, 2, 2, 9], dtype=np.int64)
    val = np.array([1.0, 2.0, -1.0, 4.0, -2.0, 1.0, 1.0, 0.5])
    out_idx, out_val = combine(idx, val)
    assert out_idx.tolist() == [2, 7, 9]  # 5 and 3 cancel out
    assert out_val.tolist() == [2.0, 4.0, 0.5]


def test_combine_empty_and_all_cancelling() -> None:
    empty_idx, empty_val = combine(np.zeros(0, dtype=np.int64), np.zeros(0))
    assert empty_idx.size == 0 and empty_val.size == 0
    idx, val = combine(np.array([4, 4, 1, 1]), np.array([1.0, -1.0, -2.0, 2.0]))
    assert idx.size == 0 and val.size == 0


def test_combine_matches_a_dictionary_sum() -> None:
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 30, size=200)
    val = rng.choice([-1.0, 1.0], size=200)
    expected: dict[int, float] = {}
    for i, v in zip(idx.tolist(), val.tolist(), strict=True):
        expected[i] = expected.get(i, 0.0) + v
    out_idx, out_val = combine(idx, val)
    assert dict(zip(out_idx.tolist(), out_val.tolist(), strict=True)) == {
        i: v for i, v in expected.items() if v != 0
    }
    assert (np.diff(out_idx) > 0).all()


def test_unknown_learner() -> None:
    with pytest.raises(ValueError, match="sgd"):
        AveragedLearner(4, "sgd")
    assert set(LEARNERS) == {"perceptron", "pa"}
    assert AveragedLearner(4, "pa").cost_augmented
    assert not AveragedLearner(4, "perceptron").cost_augmented


def test_perceptron_step_is_one_whatever_the_margin() -> None:
    learner = AveragedLearner(6, "perceptron")
    learner.w[:] = [0.0, 10.0, 0.0, 0.0, -10.0, 0.0]  # w . delta = 30 > cost: PA would skip
    step = learner.update(np.array([1, 4, 1]), np.array([1.0, -1.0, 1.0]), cost=3.0)
    assert step == 1.0
    assert learner.w.tolist() == [0.0, 12.0, 0.0, 0.0, -11.0, 0.0]


def test_update_with_an_empty_delta_changes_nothing() -> None:
    for method in LEARNERS:
        learner = AveragedLearner(5, method)
        assert learner.update(np.array([2, 2]), np.array([1.0, -1.0]), cost=4.0) == 0.0
        assert not learner.w.any() and not learner.u.any()


def test_pa_step_size() -> None:
    # delta = (+1, -1, +2) on indices 0, 1, 2: ||delta||^2 = 6; w . delta = -0.5 (w[1] = 0.5)
    idx = np.array([0, 1, 2, 2])
    val = np.array([1.0, -1.0, 1.0, 1.0])
    learner = AveragedLearner(4, "pa", C=1.0)
    learner.w[1] = 0.5
    step = learner.update(idx, val, cost=2.5)  # loss = 2.5 + 0.5 = 3; 3 / 6 = 0.5 < C
    assert step == pytest.approx(0.5)
    assert learner.w == pytest.approx([0.5, 0.0, 1.0, 0.0])
    # after the step the margin equals the cost exactly (loss 0): no further step
    assert learner.w[:3] @ np.array([1.0, -1.0, 2.0]) == pytest.approx(2.5)
    assert learner.update(idx, val, cost=2.5) == pytest.approx(0.0)


def test_pa_step_is_capped_by_c() -> None:
    learner = AveragedLearner(4, "pa", C=0.2)
    learner.w[1] = 0.5
    step = learner.update(np.array([0, 1, 2]), np.array([1.0, -1.0, 2.0]), cost=2.5)
    assert step == pytest.approx(0.2)
    assert learner.w == pytest.approx([0.2, 0.3, 0.4, 0.0])


def test_pa_skips_when_the_margin_already_exceeds_the_cost() -> None:
    learner = AveragedLearner(3, "pa", C=1.0)
    learner.w[:] = [3.0, 0.0, 0.0]
    assert learner.update(np.array([0, 1]), np.array([1.0, -1.0]), cost=2.0) == 0.0
    assert learner.w.tolist() == [3.0, 0.0, 0.0] and not learner.u.any()


@pytest.mark.parametrize("method", LEARNERS)
def test_averaging_is_the_mean_of_all_weight_vectors(method: str) -> None:
    """``averaged()`` after T ticks is the mean of w_0 = 0, w_1, ..., w_T (T + 1 vectors; w_t
    the weights after tick t), and so proportional to the mean of w_1..w_T."""
    rng = np.random.default_rng(42)
    size = 8
    learner = AveragedLearner(size, method, C=0.7)
    history = [learner.w.copy()]
    for _ in range(40):
        if rng.random() < 0.8:
            k = int(rng.integers(1, 6))
            idx = rng.integers(0, size, size=k)
            val = rng.choice([-1.0, 1.0], size=k)
            learner.update(idx, val, cost=float(rng.integers(1, 4)))
        learner.tick()
        history.append(learner.w.copy())
        ticks = len(history) - 1
        assert learner.c == ticks + 1
        explicit = np.mean(history, axis=0)
        averaged = learner.averaged()
        assert averaged.dtype == np.float32 and averaged.shape == (size,)
        np.testing.assert_allclose(averaged, explicit, rtol=1e-5, atol=1e-6)
        after_ticks = np.mean(history[1:], axis=0)
        np.testing.assert_allclose(averaged, after_ticks * ticks / (ticks + 1), rtol=1e-5,
                                   atol=1e-6)
    assert np.abs(learner.w).sum() > 0  # the run did learn something
