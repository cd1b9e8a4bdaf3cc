"""dparse.learning: sparse ``combine``, perceptron and PA steps, and parameter averaging."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import requires_data
from dparse._ext.sparsevec import add_update, gather_dot, marked, squared_norm

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
    # canonical types whatever the input's: what gather_dot takes
    for given in (np.zeros(0, dtype=np.uint32), np.array([3, 1, 3], dtype=np.int32)):
        idx, val = combine(given, np.ones(given.size, dtype=np.float32))
        assert idx.dtype == np.int64 and val.dtype == np.float64
        assert gather_dot(np.arange(4.0), idx, val) == (2.0 * 3.0 + 1.0 if idx.size else 0.0)
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


def test_gather_dot_adds_the_products_left_to_right() -> None:
    # Magnitudes spread over 30 decades: any other order of the additions rounds differently.
    rng = np.random.default_rng(7)
    w = rng.standard_normal(50) * 10.0 ** rng.integers(-15, 15, size=50)
    idx = rng.integers(0, 50, size=200)
    val = rng.standard_normal(200)
    total = 0.0
    for i, v in zip(idx, val, strict=True):
        total += float(w[i]) * float(v)
    assert gather_dot(w, idx, val) == total
    assert squared_norm(val) == sum(float(v) * float(v) for v in val)
    assert gather_dot(w, idx[:0], val[:0]) == 0.0


def test_gather_dot_rejects_bad_indices_and_lengths() -> None:
    w = np.ones(4)
    with pytest.raises(IndexError, match="index 4 outside 0..3"):
        gather_dot(w, np.array([0, 4]), np.ones(2))
    with pytest.raises(IndexError, match="index -1"):
        gather_dot(w, np.array([-1]), np.ones(1))
    with pytest.raises(ValueError, match="2 indices but 3 values"):
        gather_dot(w, np.array([0, 1]), np.ones(3))


@pytest.mark.parametrize("size", [1, 7, 8, 9, 1000, 4099])
def test_touched_bits_list_exactly_the_updated_indices(size: int) -> None:
    """add_update sets one bit per written index in a mask of (size + 7) // 8 bytes, and
    marked lists the set bits in order, the last byte's spare bits included in the checks."""
    rng = np.random.default_rng(size)
    w, u = np.zeros(size), np.zeros(size)
    bits = np.zeros((size + 7) // 8, dtype=np.uint8)
    written: set[int] = set()
    for _ in range(5):
        idx = rng.choice(size, size=min(size, 17), replace=False).astype(np.int64)
        add_update(w, u, idx, np.ones(idx.size), 1.0, 2.0, bits)
        written.update(idx.tolist())
    assert marked(bits, size).tolist() == sorted(written)
    assert marked(bits, size).dtype == np.int32
    assert sum(bin(b).count("1") for b in bits.tolist()) == len(written)
    assert marked(np.zeros_like(bits), size).size == 0
    with pytest.raises(ValueError, match="arrays of different lengths"):
        add_update(w, u, np.zeros(1, np.int64), np.ones(1), 1.0, 1.0,
                   np.zeros(bits.size + 1, np.uint8))
    with pytest.raises(ValueError, match="a mask of"):
        marked(np.zeros(bits.size + 1, np.uint8), size)


# Trains a first-order model by PA on 100 en_ewt dev sentences, one epoch, and prints the hash
# of the float64 weights: the argument is the data root.
TRAIN_AND_HASH = """
import hashlib, sys
import numpy as np
from dparse._ext.arcfeatures import FeatureSpace
from dparse.conll import read_conll
from dparse.decoders import get_decoder
from dparse.graph.model import ArcFactoredModel
from dparse.graph.online import run_epoch
from dparse.learning import AveragedLearner
from dparse.vocab import Vocabulary
sents = list(read_conll(sys.argv[1] + "/en_ewt/dev.conllu"))[:100]
vocab = Vocabulary.build(sents)
space = FeatureSpace(18, 12, len(vocab.labels))
model = ArcFactoredModel(vocab, space, np.zeros(space.size, dtype=np.float32))
learner = AveragedLearner(space.size, "pa", 0.05)
run_epoch(model, learner, [vocab.encode(s) for s in sents], get_decoder("cle"), True, "",
          progress=False)
print(hashlib.sha256(learner.w.tobytes()).hexdigest())
"""


def openblas_kernels() -> list[str]:
    """OpenBLAS kernels (OPENBLAS_CORETYPE) this CPU can run whose ddot kernels add in
    different orders: Prescott (SSE2) always, Sandybridge with AVX, Haswell with AVX2."""
    flags = set()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    return (["Prescott"] + (["Sandybridge"] if "avx" in flags else [])
            + (["Haswell"] if {"avx2", "fma"} <= flags else []))


@requires_data
def test_pa_training_gives_the_same_weights_under_every_blas_kernel(data: Path) -> None:
    """The BLAS ddot that numpy's ``@`` calls adds in a CPU-dependent order (OpenBLAS picks its
    kernel per CPU); the learner's dot products must not: the same data give the same float64
    weights bit for bit whichever kernel OpenBLAS would use (here forced by OPENBLAS_CORETYPE,
    as on another CPU)."""
    blas = np.__config__.CONFIG["Build Dependencies"]["blas"]["name"]
    if "openblas" not in blas.lower():
        pytest.skip(f"numpy uses {blas}, not OpenBLAS: OPENBLAS_CORETYPE cannot pick kernels")
    kernels = openblas_kernels()
    if len(kernels) < 2:
        pytest.skip("this CPU runs only one of the OpenBLAS kernels compared")
    hashes = {}
    for kernel in kernels:
        env = {**os.environ, "OPENBLAS_CORETYPE": kernel}
        out = subprocess.run([sys.executable, "-c", TRAIN_AND_HASH, str(data)], env=env,
                             capture_output=True, text=True, check=True)
        hashes[kernel] = out.stdout.strip()
    assert len(set(hashes.values())) == 1, hashes
