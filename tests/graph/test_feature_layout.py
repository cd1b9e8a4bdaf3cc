"""The blocked arc-feature layout (``FeatureSpace(..., layout="blocked")``) and aligned weights.

``hashing.bucket_pair`` is checked against a plain Python transcription of its arithmetic; the
scorer in the blocked layout against the features ``feature_delta`` lists (as
tests/test_arcfeatures.py does for the hashed layout), on sentences long enough for every
distance bin; a model keeps its layout through save and load, and a model file written before
layouts existed loads as hashed.
"""

from __future__ import annotations

import os
import pickle
from collections import Counter
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data
from dparse._ext.arcfeatures import (
    N_COLS,
    SPECIAL_IDS,
    FeatureSpace,
    arc_list_indices,
    block_pair,
    feature_delta,
    score_arcs,
)

from dparse.aligned import aligned_copy, aligned_zeros
from dparse.conll import read_conll
from dparse.graph.load import load_model
from dparse.graph.model import ArcFactoredModel
from dparse.learning import AveragedLearner
from dparse.modeldir import WEIGHTS_FILE, save_arrays
from dparse.vocab import Vocabulary

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
MASK = (1 << 64) - 1
N_LABELS = 4
BLOCKED = FeatureSpace(12, 8, N_LABELS, "blocked")


def reference_block_pair(key: int, conj1: int, conj2: int, bits: int) -> tuple[int, int]:
    """Python transcription of hashing.bucket_pair (64-bit wrap-around arithmetic)."""
    block = ((key * 0xD6E8FEB86659FD93) & MASK) >> (64 - bits + 4) << 4
    first = (((key ^ conj1) * 0x9FB21C651E98DF25) & MASK) >> 60
    other = (((((key ^ conj2) * 0x9FB21C651E98DF25) & MASK) >> 32) * 15) >> 32
    return block | first, block | ((first + 1 + other) & 15)


def test_block_pair_matches_the_reference_and_shares_a_block() -> None:
    rng = np.random.default_rng(SEED)
    slots: Counter[int] = Counter()
    for _ in range(2000):
        key, conj1, conj2 = (int(x) for x in rng.integers(0, 2**63, size=3, dtype=np.uint64))
        bits = int(rng.integers(10, 31))
        a, b = block_pair(key, conj1, conj2, bits)
        assert (a, b) == reference_block_pair(key, conj1, conj2, bits)
        assert 0 <= a < 2**bits and 0 <= b < 2**bits
        assert a // 16 == b // 16 and a != b  # one block of 16, two slots
        slots[b % 16] += 1
    assert len(slots) == 16 and min(slots.values()) > 2000 / 16 / 2  # slots spread


def test_feature_space_layout_is_kept_and_checked() -> None:
    assert FeatureSpace(12, 8, 3).layout == "hashed"
    copy = pickle.loads(pickle.dumps(BLOCKED))
    assert (copy.layout, copy.size) == ("blocked", BLOCKED.size)
    with pytest.raises(ValueError, match="layout"):
        FeatureSpace(12, 8, 3, "packed")


def synthetic(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """tokens [n+1, N_COLS], morph_ptr [n+2], morph: random ids, row 0 the root."""
    tokens = rng.integers(4, 30, size=(n + 1, N_COLS)).astype(np.int32)
    tokens[0] = SPECIAL_IDS["root"]
    morph_ptr = np.zeros(n + 2, dtype=np.int32)
    morph_ptr[2:] = np.cumsum(rng.integers(0, 3, size=n))
    morph = rng.integers(4, 20, size=int(morph_ptr[-1])).astype(np.int32)
    return tokens, morph_ptr, morph


def labeled_indices(sent: tuple, space: FeatureSpace, h: int, m: int, lab: int) -> np.ndarray:
    """All weight indices of the labeled arc (h, m, lab): the +1 block of a one-word delta."""
    n = sent[0].shape[0] - 1
    gold_heads = np.zeros(n + 1, dtype=np.int32)
    gold_labels = np.zeros(n + 1, dtype=np.int32)
    gold_heads[m], gold_labels[m] = h, lab
    pred_labels = gold_labels.copy()
    pred_labels[m] = (lab + 1) % space.n_labels
    idx, val = feature_delta(*sent, space, gold_heads, gold_labels, gold_heads, pred_labels)
    return idx[val > 0]


@pytest.mark.parametrize("layout", ["hashed", "blocked"])
def test_scores_are_the_best_labeled_sums_of_the_features_at_every_distance(layout: str) -> None:
    """Long sentences: the one-sided templates, summed per word and distance bin, must give
    the same arc scores as the features of each arc (all ten bins, both directions)."""
    rng = np.random.default_rng(SEED + 1)
    space = FeatureSpace(12, 8, N_LABELS, layout)
    n = 26
    sent = synthetic(rng, n)
    weights = aligned_copy(rng.normal(size=space.size))
    arc = np.empty((n + 1, n + 1))
    label = np.empty((n + 1, n + 1), dtype=np.int32)
    score_arcs(*sent, weights, space, arc, label)
    pairs = [(h, m) for m in range(1, n + 1) for h in range(n + 1) if h != m]
    picked = [pairs[i] for i in rng.choice(len(pairs), size=60, replace=False)]
    picked += [(0, n), (n, 1), (1, n), (n - 1, 2), (3, 4), (4, 3)]  # longest and shortest arcs
    for h, m in picked:
        per_label = [weights[labeled_indices(sent, space, h, m, lab)].sum()
                     for lab in range(N_LABELS)]
        assert arc[h, m] == pytest.approx(max(per_label), rel=1e-9, abs=1e-9)
        assert label[h, m] == int(np.argmax(per_label))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_best_label_is_the_first_of_tied_maxima(dtype: type) -> None:
    """Many labels (whole vectors of them and a remainder) and weights that are mostly 0 and
    otherwise 1, so that labels often tie: the label chosen is the first best one, at parse
    time (float32) and in training (float64)."""
    rng = np.random.default_rng(SEED + 5)
    n_labels = 21
    space = FeatureSpace(12, 8, n_labels, "blocked")
    n = 9
    sent = synthetic(rng, n)
    weights = aligned_copy((rng.random(space.size) < 0.05).astype(np.float64), dtype)
    arc = np.empty((n + 1, n + 1))
    label = np.empty((n + 1, n + 1), dtype=np.int32)
    score_arcs(*sent, weights, space, arc, label)
    ties = 0
    for m in range(1, n + 1):
        for h in range(n + 1):
            if h == m:
                continue
            per_label = np.array([weights[labeled_indices(sent, space, h, m, lab)].sum()
                                  for lab in range(n_labels)])
            ties += int((per_label == per_label.max()).sum() > 1)
            assert label[h, m] == int(np.argmax(per_label))
            assert arc[h, m] == per_label.max()
    assert ties > 10


def test_blocked_arc_features_come_in_pairs_of_one_block() -> None:
    rng = np.random.default_rng(SEED + 2)
    sent = synthetic(rng, 9)
    heads = np.array([0, 3, 9, 1, 7], dtype=np.int32)
    mods = np.array([1, 2, 5, 8, 4], dtype=np.int32)
    idx = arc_list_indices(*sent, BLOCKED, heads, mods).reshape(-1, 2)
    assert (idx[:, 0] // 16 == idx[:, 1] // 16).all() and (idx[:, 0] != idx[:, 1]).all()
    hashed = arc_list_indices(*sent, FeatureSpace(12, 8, N_LABELS), heads, mods)
    assert hashed.size == idx.size and not np.array_equal(hashed, idx.reshape(-1))


def test_aligned_arrays_start_on_a_cache_line() -> None:
    for dtype in (np.float32, np.float64):
        for size in (1, 17, 1000):
            zeros = aligned_zeros(size, dtype)
            assert zeros.ctypes.data % 64 == 0 and zeros.dtype == dtype
            assert zeros.shape == (size,) and not zeros.any()
    values = np.arange(10, dtype=np.float64)
    copy = aligned_copy(values, np.float32)
    assert copy.ctypes.data % 64 == 0 and copy.dtype == np.float32
    assert np.array_equal(copy, values)
    learner = AveragedLearner(100)
    assert learner.w.ctypes.data % 64 == 0 and learner.averaged().ctypes.data % 64 == 0


@requires_data
def test_model_keeps_its_layout_and_old_files_load_as_hashed(tmp_path: Path) -> None:
    sentences = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 20))
    vocab = Vocabulary.build(sentences)
    rng = np.random.default_rng(SEED + 3)
    for layout in ("hashed", "blocked"):
        space = FeatureSpace(14, 8, len(vocab.labels), layout)
        model = ArcFactoredModel(vocab, space, rng.normal(size=space.size).astype(np.float32))
        model.save(tmp_path / layout)
        loaded = load_model(tmp_path / layout)
        assert isinstance(loaded, ArcFactoredModel) and loaded.space.layout == layout
        assert loaded.weights.ctypes.data % 64 == 0
        enc = vocab.encode(sentences[0])
        assert np.array_equal(loaded.score(enc)[0], model.score(enc)[0])
    # the weights file of a model saved before layouts existed: no "layout" member
    old = ArcFactoredModel.read_files(tmp_path / "hashed")
    save_arrays(tmp_path / "hashed" / WEIGHTS_FILE, weights=old.weights,
                arc_bits=old.space.arc_bits, lab_bits=old.space.lab_bits)
    assert ArcFactoredModel.read_files(tmp_path / "hashed").space.layout == "hashed"


@requires_data
@pytest.mark.parametrize("layout", ["hashed", "blocked"])
def test_scores_of_real_sentences_are_the_sums_of_their_features(layout: str) -> None:
    """en_ewt sentences (real words, tags and morphology, up to 30 words): every arc's score is
    the best labeled sum of the weights its features name, as in the old scorer."""
    sentences = [s for s in islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 60)
                 if 8 <= len(s) <= 30][:3]
    vocab = Vocabulary.build(sentences)
    space = FeatureSpace(14, 8, N_LABELS, layout)
    rng = np.random.default_rng(SEED + 4)
    weights = aligned_copy(rng.normal(size=space.size).astype(np.float32))
    for sentence in sentences:
        enc = vocab.encode(sentence)
        sent = (enc.tokens, enc.morph_ptr, enc.morph)
        n = len(enc)
        arc = np.empty((n + 1, n + 1))
        label = np.empty((n + 1, n + 1), dtype=np.int32)
        score_arcs(*sent, weights, space, arc, label)
        for m in range(1, n + 1):
            for h in rng.choice([x for x in range(n + 1) if x != m], size=3, replace=False):
                per_label = [weights[labeled_indices(sent, space, h, m, lab)].astype(np.float64)
                             .sum() for lab in range(N_LABELS)]
                # label scores are summed in float32, as at parse time
                assert arc[h, m] == pytest.approx(max(per_label), rel=1e-5, abs=1e-4)
