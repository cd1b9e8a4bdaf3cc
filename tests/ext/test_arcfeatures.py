"""dparse._ext.arcfeatures: ``score_arcs`` against the features ``feature_delta`` reports.

The labeled score of an arc (h, m, l) is recovered independently of the scorer as the sum of the
weights at the indices that ``feature_delta`` lists for it (its +1 block); every score the scorer
writes must agree with those sums. Sentences are synthetic (random attribute ids and morphology).
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from dparse._ext.arcfeatures import (
    EDGE_GROUPS,
    N_COLS,
    SPECIAL_IDS,
    FeatureSpace,
    arc_list_indices,
    edge_list_indices,
    edge_list_scores,
    feature_delta,
    score_arcs,
)

from dparse.decoders import get_decoder, score_tree
from dparse.learning import combine
from dparse.trees import is_tree

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
N_LABELS = 5
SPACE = FeatureSpace(12, 8, N_LABELS)

Sent = tuple[np.ndarray, np.ndarray, np.ndarray]


def synthetic(rng: np.random.Generator, n: int, max_id: int = 40, max_morph: int = 3) -> Sent:
    """tokens [n+1, N_COLS], morph_ptr [n+2], morph: random ids, row 0 the root."""
    tokens = rng.integers(4, max_id, size=(n + 1, N_COLS)).astype(np.int32)
    tokens[0] = SPECIAL_IDS["root"]
    morph_ptr = np.zeros(n + 2, dtype=np.int32)
    morph_ptr[2:] = np.cumsum(rng.integers(0, max_morph + 1, size=n))
    morph = rng.integers(4, 30, size=int(morph_ptr[-1])).astype(np.int32)
    return tokens, morph_ptr, morph


def random_weights(rng: np.random.Generator, space: FeatureSpace = SPACE) -> np.ndarray:
    return rng.normal(size=space.size)


def score(
    sent: Sent,
    weights: np.ndarray,
    space: FeatureSpace = SPACE,
    gold: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    n = sent[0].shape[0] - 1
    arc = np.full((n + 1, n + 1), np.nan)
    label = np.full((n + 1, n + 1), -7, dtype=np.int32)
    gold_heads, gold_labels = gold if gold is not None else (None, None)
    score_arcs(*sent, weights, space, arc, label, gold_heads, gold_labels)
    return arc, label


def labeled_features(
    sent: Sent, h: int, m: int, lab: int, space: FeatureSpace = SPACE
) -> np.ndarray:
    """Weight indices of the labeled arc (h, m, lab): the +1 block of a one-word delta."""
    n = sent[0].shape[0] - 1
    gold_heads = np.zeros(n + 1, dtype=np.int32)
    gold_labels = np.zeros(n + 1, dtype=np.int32)
    gold_heads[m], gold_labels[m] = h, lab
    pred_heads, pred_labels = gold_heads.copy(), gold_labels.copy()
    pred_labels[m] = (lab + 1) % space.n_labels
    if space.n_labels == 1:
        pred_heads[m] = next(x for x in range(n + 1) if x not in (h, m))
    idx, val = feature_delta(*sent, space, gold_heads, gold_labels, pred_heads, pred_labels)
    assert idx.dtype == np.int64 and val.dtype == np.float64
    assert ((0 <= idx) & (idx < space.size)).all()
    return idx[val > 0]


def labeled_scores(sent: Sent, weights: np.ndarray, h: int, m: int) -> np.ndarray:
    """[n_labels]: the score of h -> m under each label, from the features alone."""
    return np.array([weights[labeled_features(sent, h, m, lab)].sum() for lab in range(N_LABELS)])


def arcs(n: int) -> list[tuple[int, int]]:
    return [(h, m) for m in range(1, n + 1) for h in range(n + 1) if h != m]


def random_tree(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random valid tree (int32 [n+1]): the best tree under random scores."""
    heads = get_decoder("cle").decode(rng.normal(size=(n + 1, n + 1)))
    return heads.astype(np.int32)


# -- FeatureSpace -----------------------------------------------------------------------------


def test_feature_space_layout() -> None:
    space = FeatureSpace(20, 14, 37)
    assert (space.arc_bits, space.lab_bits, space.n_labels) == (20, 14, 37)
    assert space.lab_offset == 2**20
    assert space.size == 2**20 + 2**14 * 37
    copy = pickle.loads(pickle.dumps(space))
    assert (copy.arc_bits, copy.lab_bits, copy.n_labels, copy.size) == (20, 14, 37, space.size)


@pytest.mark.parametrize(("arc_bits", "lab_bits", "n_labels"),
                         [(9, 8, 3), (31, 8, 3), (12, 7, 3), (12, 27, 3), (12, 8, 0)])
def test_feature_space_rejects_bad_sizes(arc_bits: int, lab_bits: int, n_labels: int) -> None:
    with pytest.raises(ValueError):
        FeatureSpace(arc_bits, lab_bits, n_labels)


# -- scores against features ------------------------------------------------------------------


def test_arc_score_is_the_best_labeled_score_of_its_features() -> None:
    rng = np.random.default_rng(SEED)
    n = 6
    sent = synthetic(rng, n)
    weights = random_weights(rng)
    arc, label = score(sent, weights)
    for h, m in arcs(n):
        per_label = labeled_scores(sent, weights, h, m)
        assert arc[h, m] == pytest.approx(per_label.max(), rel=1e-9, abs=1e-9)
        assert label[h, m] == int(per_label.argmax())


def test_weight_dot_delta_is_the_score_difference_of_the_trees() -> None:
    """w . (phi(gold) - phi(pred)) for trees labeled with the scorer's best labels."""
    rng = np.random.default_rng(SEED + 1)
    n = 9
    sent = synthetic(rng, n)
    weights = random_weights(rng)
    arc, label = score(sent, weights)
    gold = random_tree(rng, n)
    words = np.arange(1, n + 1)
    gold_labels = np.zeros(n + 1, dtype=np.int32)
    gold_labels[1:] = label[gold[1:], words]
    checked = 0
    for m in range(1, n + 1):  # trees that differ from gold at exactly word m
        for h in range(n + 1):
            pred = gold.copy()
            pred[m] = h
            if h == gold[m] or not is_tree(pred):
                continue
            pred_labels = gold_labels.copy()
            pred_labels[m] = label[h, m]
            idx, val = combine(*feature_delta(*sent, SPACE, gold, gold_labels, pred, pred_labels))
            assert weights[idx] @ val == pytest.approx(arc[gold[m], m] - arc[h, m], abs=1e-9)
            checked += 1
    assert checked >= n
    # two whole trees at once
    pred = random_tree(rng, n)
    pred_labels = np.zeros(n + 1, dtype=np.int32)
    pred_labels[1:] = label[pred[1:], words]
    idx, val = combine(*feature_delta(*sent, SPACE, gold, gold_labels, pred, pred_labels))
    expected = score_tree(gold, arc) - score_tree(pred, arc)
    assert weights[idx] @ val == pytest.approx(expected, abs=1e-9)


def test_feature_delta_of_a_label_change_touches_only_label_weights() -> None:
    rng = np.random.default_rng(SEED + 2)
    n = 5
    sent = synthetic(rng, n)
    heads = random_tree(rng, n)
    gold_labels = rng.integers(0, N_LABELS, size=n + 1).astype(np.int32)
    pred_labels = gold_labels.copy()
    pred_labels[3] = (gold_labels[3] + 2) % N_LABELS
    idx, val = combine(*feature_delta(*sent, SPACE, heads, gold_labels, heads, pred_labels))
    assert idx.size > 0 and (idx >= SPACE.lab_offset).all()
    column = (idx - SPACE.lab_offset) % N_LABELS
    assert set(column[val > 0].tolist()) == {gold_labels[3]}
    assert set(column[val < 0].tolist()) == {pred_labels[3]}
    same = feature_delta(*sent, SPACE, heads, gold_labels, heads, gold_labels)
    assert same[0].size == 0 and same[1].size == 0


def test_float32_and_float64_weights_agree() -> None:
    rng = np.random.default_rng(SEED + 3)
    sent = synthetic(rng, 12)
    # quarter integers: every partial sum is exact in both precisions
    exact = rng.integers(-8, 9, size=SPACE.size) / 4.0
    arc64, label64 = score(sent, exact)
    arc32, label32 = score(sent, exact.astype(np.float32))
    assert np.array_equal(arc64, arc32)
    assert np.array_equal(label64, label32)
    weights = random_weights(rng)
    arc64, label64 = score(sent, weights)
    arc32, _ = score(sent, weights.astype(np.float32))
    np.testing.assert_allclose(arc32, arc64, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n", [9, 24])  # 24: arcs of every distance bin
def test_allowed_mask_scores_only_its_arcs_and_leaves_them_unchanged(n: int) -> None:
    """The scores of the arcs kept are those of the full matrix, bit for bit (the per-word
    sums that a mask's arcs read are all made, and only those)."""
    rng = np.random.default_rng(SEED + 21)
    sent = synthetic(rng, n)
    weights = random_weights(rng)
    gold = (rng.integers(0, n + 1, size=n + 1).astype(np.int32),
            rng.integers(0, N_LABELS, size=n + 1).astype(np.int32))
    for cost in (None, gold, None):
        full_arc, full_label = score(sent, weights, gold=cost)
        allowed = (rng.random((n + 1, n + 1)) < 0.4).astype(np.uint8)
        arc = np.full((n + 1, n + 1), np.nan)
        label = np.full((n + 1, n + 1), -7, dtype=np.int32)
        heads, labels = cost if cost is not None else (None, None)
        score_arcs(*sent, weights, SPACE, arc, label, heads, labels, allowed)
        keep = allowed.astype(bool)
        keep[:, 0] = False
        np.fill_diagonal(keep, False)
        assert np.array_equal(arc[keep], full_arc[keep])
        assert np.array_equal(label[keep], full_label[keep])
        assert np.all(arc[~keep] == -np.inf) and np.all(label[~keep] == 0)
    with pytest.raises(ValueError, match="allowed"):
        score_arcs(*sent, weights, SPACE, arc, label, None, None, allowed[:n].copy())


def test_diagonal_and_column_zero_are_minus_infinity() -> None:
    rng = np.random.default_rng(SEED + 4)
    n = 7
    arc, label = score(synthetic(rng, n), random_weights(rng))
    forbidden = np.eye(n + 1, dtype=bool)
    forbidden[:, 0] = True
    assert np.isneginf(arc[forbidden]).all()
    assert np.isfinite(arc[~forbidden]).all()
    assert (label[forbidden] == 0).all()
    assert ((0 <= label) & (label < N_LABELS)).all()


def test_zero_weights_score_zero_and_pick_label_zero() -> None:
    rng = np.random.default_rng(SEED + 5)
    n = 4
    arc, label = score(synthetic(rng, n), np.zeros(SPACE.size))
    allowed = ~np.eye(n + 1, dtype=bool)
    allowed[:, 0] = False
    assert (arc[allowed] == 0.0).all() and (label == 0).all()


# -- cost augmentation ------------------------------------------------------------------------


def test_cost_with_zero_weights_is_the_labeled_hamming_cost() -> None:
    rng = np.random.default_rng(SEED + 6)
    n = 6
    sent = synthetic(rng, n)
    gold = random_tree(rng, n)
    gold_labels = np.array([-1, 0, 1, 2, 3, 4, 0], dtype=np.int32)
    arc, label = score(sent, np.zeros(SPACE.size), gold=(gold, gold_labels))
    for h, m in arcs(n):
        if h == gold[m]:  # the best label is a wrong one: cost 1
            assert arc[h, m] == 1.0
            assert label[h, m] == (1 if gold_labels[m] == 0 else 0)
        else:
            assert arc[h, m] == 2.0 and label[h, m] == 0
    # with a single label the gold head's label is always right
    one = FeatureSpace(12, 8, 1)
    arc, _ = score(sent, np.zeros(one.size), space=one, gold=(gold, np.zeros(n + 1, np.int32)))
    for h, m in arcs(n):
        assert arc[h, m] == (0.0 if h == gold[m] else 2.0)


def test_cost_adds_two_for_wrong_heads_and_one_for_wrong_labels() -> None:
    rng = np.random.default_rng(SEED + 7)
    n = 6
    sent = synthetic(rng, n)
    weights = random_weights(rng) * 0.3  # label margins near 1: the cost may change labels
    gold = random_tree(rng, n)
    gold_labels = rng.integers(0, N_LABELS, size=n + 1).astype(np.int32)
    plain, plain_label = score(sent, weights)
    cost, cost_label = score(sent, weights, gold=(gold, gold_labels))
    for h, m in arcs(n):
        if h != gold[m]:
            assert cost[h, m] == pytest.approx(plain[h, m] + 2.0, abs=1e-9)
            assert cost_label[h, m] == plain_label[h, m]
        else:
            augmented = labeled_scores(sent, weights, h, m) + 1.0
            augmented[gold_labels[m]] -= 1.0
            assert cost[h, m] == pytest.approx(augmented.max(), abs=1e-9)
            assert cost_label[h, m] == int(augmented.argmax())
    forbidden = np.eye(n + 1, dtype=bool)
    forbidden[:, 0] = True
    assert np.isneginf(cost[forbidden]).all()


# -- errors, determinism, sizes ---------------------------------------------------------------


def test_wrong_shapes_and_types_raise() -> None:
    rng = np.random.default_rng(SEED + 8)
    n = 4
    tokens, ptr, morph = synthetic(rng, n)
    w = np.zeros(SPACE.size)
    arc = np.zeros((n + 1, n + 1))
    lab = np.zeros((n + 1, n + 1), dtype=np.int32)
    heads = np.zeros(n + 1, dtype=np.int32)
    with pytest.raises(ValueError, match="columns"):
        score_arcs(np.ascontiguousarray(tokens[:, :5]), ptr, morph, w, SPACE, arc, lab)
    with pytest.raises(ValueError, match="morph_ptr"):
        score_arcs(tokens, ptr[:-1], morph, w, SPACE, arc, lab)
    with pytest.raises(ValueError, match="morph_ptr"):
        score_arcs(tokens, ptr, np.append(morph, np.int32(5)), w, SPACE, arc, lab)
    with pytest.raises(ValueError, match="arc_out"):
        score_arcs(tokens, ptr, morph, w, SPACE, np.zeros((n, n + 1)), lab)
    with pytest.raises(ValueError, match="label_out"):
        score_arcs(tokens, ptr, morph, w, SPACE, arc, np.zeros((n + 1, n), dtype=np.int32))
    with pytest.raises(ValueError, match="weights"):
        score_arcs(tokens, ptr, morph, w[:-1], SPACE, arc, lab)
    with pytest.raises(ValueError, match="gold"):
        score_arcs(tokens, ptr, morph, w, SPACE, arc, lab, heads, None)
    with pytest.raises(ValueError, match="gold"):
        score_arcs(tokens, ptr, morph, w, SPACE, arc, lab, heads[:-1], heads[:-1])
    with pytest.raises(ValueError):  # int64 tokens
        score_arcs(tokens.astype(np.int64), ptr, morph, w, SPACE, arc, lab)
    with pytest.raises(ValueError):  # not C-contiguous
        score_arcs(np.asfortranarray(tokens), ptr, morph, w, SPACE, arc, lab)
    with pytest.raises((TypeError, ValueError)):  # float16 weights
        score_arcs(tokens, ptr, morph, w.astype(np.float16), SPACE, arc, lab)
    with pytest.raises(ValueError, match="heads and labels"):
        feature_delta(tokens, ptr, morph, SPACE, heads, heads, heads[:-1], heads)


def test_scoring_is_deterministic() -> None:
    rng = np.random.default_rng(SEED + 9)
    weights = random_weights(rng)
    sents = [synthetic(rng, n) for n in (8, 30, 3, 8)]
    first = [score(s, weights) for s in sents]
    second = [score(s, weights) for s in reversed(sents)][::-1]
    for (a1, l1), (a2, l2) in zip(first, second, strict=True):
        assert np.array_equal(a1, a2) and np.array_equal(l1, l2)
    heads = random_tree(rng, 8)
    labels = np.zeros(9, dtype=np.int32)
    other = random_tree(rng, 8)
    d1 = feature_delta(*sents[0], SPACE, heads, labels, other, labels)
    d2 = feature_delta(*sents[0], SPACE, heads, labels, other, labels)
    assert np.array_equal(d1[0], d2[0]) and np.array_equal(d1[1], d2[1])


def test_one_word_sentence() -> None:
    rng = np.random.default_rng(SEED + 10)
    sent = synthetic(rng, 1)
    weights = random_weights(rng)
    arc, label = score(sent, weights)
    assert arc.shape == (2, 2)
    assert np.isneginf([arc[0, 0], arc[1, 0], arc[1, 1]]).all()
    per_label = labeled_scores(sent, weights, 0, 1)
    assert arc[0, 1] == pytest.approx(per_label.max(), abs=1e-9)
    assert label[0, 1] == per_label.argmax()
    assert get_decoder("cle").decode(arc).tolist() == [-1, 0]


def test_long_sentence() -> None:
    """150 words, ids spread over all 64 POS bits, long distances and many morph features."""
    rng = np.random.default_rng(SEED + 11)
    n = 150
    sent = synthetic(rng, n, max_id=400, max_morph=6)
    weights = random_weights(rng)
    arc, label = score(sent, weights)
    forbidden = np.eye(n + 1, dtype=bool)
    forbidden[:, 0] = True
    assert np.isneginf(arc[forbidden]).all() and np.isfinite(arc[~forbidden]).all()
    pairs = arcs(n)
    for k in rng.choice(len(pairs), size=25, replace=False):
        h, m = pairs[k]
        per_label = labeled_scores(sent, weights, h, m)
        assert arc[h, m] == pytest.approx(per_label.max(), rel=1e-9, abs=1e-9)
        assert label[h, m] == per_label.argmax()
    for h, m in [(0, n), (n, 1), (1, n)]:  # the longest arcs
        assert arc[h, m] == pytest.approx(labeled_scores(sent, weights, h, m).max(), abs=1e-9)
    arc32, _ = score(sent, weights.astype(np.float32))
    np.testing.assert_allclose(arc32, arc, rtol=1e-4, atol=1e-3)


# -- Undirected edge templates (U-MST-uf) -----------------------------------------------------


def test_directed_feature_indices_are_pinned() -> None:
    """The directed (arc and label) weight indices of a fixed sentence, as trained models were
    saved with: a change here silently breaks every saved first-order model."""
    import hashlib

    rng = np.random.default_rng(12345)
    sent = synthetic(rng, 20, max_id=100, max_morph=3)
    h, m = (a.ravel().astype(np.int32) for a in np.meshgrid(np.arange(21), np.arange(1, 21),
                                                              indexing="ij"))
    idx = arc_list_indices(*sent, FeatureSpace(20, 8, 1), h[h != m], m[h != m])
    assert hashlib.sha256(idx.tobytes()).hexdigest() == (
        "80a531139a6e7e4bc7f1c043dfcf482978dbd7b82ba38e6b8c0cd0557fb9dcdc")
    gold, pred = random_tree(rng, 20), random_tree(rng, 20)
    labels = rng.integers(0, N_LABELS, size=21).astype(np.int32)
    delta, _ = feature_delta(*sent, SPACE, gold, labels, pred, labels[::-1].copy())
    assert hashlib.sha256(delta.tobytes()).hexdigest() == (
        "8a82ccbdbb59f54e57047153d341b46d94c824b223b57ff09abb1f09095a550e")


def edges(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair i < j of nodes 0..n: int32 [K] twice."""
    i, j = np.triu_indices(n + 1, 1)
    return i.astype(np.int32), j.astype(np.int32)


def test_edge_features_are_a_function_of_the_unordered_pair() -> None:
    rng = np.random.default_rng(SEED + 12)
    for n in (1, 2, 9, 70):
        sent = synthetic(rng, n, max_id=90)
        i, j = edges(n)
        for groups in range(1, 16):
            ij = edge_list_indices(*sent, SPACE, i, j, groups)
            assert np.array_equal(ij, edge_list_indices(*sent, SPACE, j, i, groups))
            assert ((0 <= ij) & (ij < 2**SPACE.arc_bits)).all()


def test_edge_scores_are_the_sums_of_their_features() -> None:
    rng = np.random.default_rng(SEED + 13)
    sent = synthetic(rng, 12, max_morph=4)
    weights = random_weights(rng)
    i, j = edges(12)
    groups = sum(EDGE_GROUPS.values())
    s = edge_list_scores(*sent, weights, SPACE, j, i, groups)
    for k in range(len(i)):
        idx = edge_list_indices(*sent, SPACE, i[k:k + 1], j[k:k + 1], groups)
        assert s[k] == pytest.approx(weights[idx].sum(), abs=1e-9)
    s32 = edge_list_scores(*sent, weights.astype(np.float32), SPACE, i, j, groups)
    np.testing.assert_allclose(s32, s, rtol=1e-4, atol=1e-3)
    assert not edge_list_scores(*sent, weights, SPACE, i, j, 0).any()
    assert len(edge_list_indices(*sent, SPACE, i, j, 0)) == 0


def test_edge_groups_are_disjoint_parts_of_the_feature_vector() -> None:
    """The indices of several groups are those of each group, edge by edge."""
    rng = np.random.default_rng(SEED + 14)
    sent = synthetic(rng, 15, max_id=70, max_morph=3)
    i, j = edges(15)
    for k in range(0, len(i), 7):
        e = (i[k:k + 1], j[k:k + 1])
        apart = np.concatenate([edge_list_indices(*sent, SPACE, *e, g)
                                for g in EDGE_GROUPS.values()])
        together = edge_list_indices(*sent, SPACE, *e, sum(EDGE_GROUPS.values()))
        assert sorted(apart.tolist()) == sorted(together.tolist())
    with pytest.raises(ValueError, match="groups"):
        edge_list_indices(*sent, SPACE, i, j, 16)
    with pytest.raises(ValueError, match="self edge or out of range"):
        edge_list_indices(*sent, SPACE, i, i, 1)
    with pytest.raises(ValueError, match="self edge or out of range"):
        edge_list_scores(*sent, random_weights(rng), SPACE, i, j + 1, 1)


def test_between_counts_read_the_tag_counts_between_the_words() -> None:
    """Edge {1, 5}: the counts of the tags of words 2..4 matter, not their order; the words
    outside 1..5 and (for between-counts) the XPOS column do not."""
    rng = np.random.default_rng(SEED + 15)
    tokens, morph_ptr, morph = synthetic(rng, 7)
    col = {"between-counts": 2, "between-xpos": 3}  # the UPOS and XPOS columns of tokens

    def feats(upos: list[int], group: str, xpos: int = 9, outside: int = 9) -> list[int]:
        tok = tokens.copy()
        tok[2:5, col[group]] = upos
        tok[2:5, 5 - col[group]] = xpos  # the other tag column
        tok[[6, 7], :] = outside
        e = np.array([1], dtype=np.int32), np.array([5], dtype=np.int32)
        return sorted(edge_list_indices(tok, morph_ptr, morph, SPACE, *e,
                                        EDGE_GROUPS[group]).tolist())

    for group in col:
        base = feats([10, 11, 11], group)
        assert len(base) == 2 * 8  # two distinct tags, 4 templates x 2 conjunctions
        assert feats([11, 10, 11], group) == base
        assert feats([10, 11, 11], group, xpos=12, outside=13) == base
        assert feats([10, 10, 11], group) != base
        assert feats([10, 11, 12], group) != base
