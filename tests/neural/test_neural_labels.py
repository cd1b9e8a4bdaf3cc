"""The labels of a parse (dparse.neural.labels): the labels of the decoded arcs equal those of
the every-arc matrix, and both equal each arc's best label by the biaffine formula; a parse
labels its tree as its k-best list's first tree is labelled."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from neural_tiny import tiny_neural_fixture  # noqa: E402, F401

import dparse  # noqa: E402
from dparse.conll import read_conll  # noqa: E402
from dparse.neural.labels import LabelFeatures, flat_weight  # noqa: E402


@pytest.mark.parametrize("seed", range(6))
def test_labels_at_heads_and_the_matrix_are_each_arcs_best_label(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, e, n_labels = int(rng.integers(1, 9)), int(rng.integers(2, 7)), int(rng.integers(1, 6))
    dep, head = (rng.normal(size=(n + 1, e)).astype(np.float32) for _ in range(2))
    weight = rng.normal(size=(n_labels, e, e)).astype(np.float32)
    if seed == 0:
        weight[:] = weight[0]  # every label ties: the first is taken
    features = LabelFeatures(dep, head, flat_weight(weight))
    exact = np.einsum("md,lde,he->hml", dep.astype(np.float64), weight.astype(np.float64),
                      head.astype(np.float64))  # [h, m, l]
    matrix = features.matrix()
    assert matrix.dtype == np.int32 and matrix.shape == (n + 1, n + 1)
    for h in range(n + 1):
        for m in range(1, n + 1):
            best = exact[h, m].max()
            assert exact[h, m, matrix[h, m]] >= best - 1e-4 * (1 + abs(best))
    if seed == 0:
        assert not matrix[:, 1:].any()
    for _ in range(5):
        heads = rng.integers(0, n + 1, size=n + 1).astype(np.int32)
        heads[0] = -1
        labels = features.at_heads(heads)
        assert labels[0] == -1
        assert labels[1:].tolist() == [int(matrix[heads[m], m]) for m in range(1, n + 1)]


def test_a_parse_labels_its_tree_as_the_kbest_list_does(tiny_neural: Path) -> None:
    parser = dparse.load(tiny_neural / "model")
    sentences = list(read_conll(tiny_neural / "dev.conllu"))
    parsed = parser.parse_many(sentences)
    for sent, plain in zip(sentences, parsed, strict=True):
        first = parser.parse_kbest(sent, 1)[0][0]
        assert list(first.heads) == list(plain.heads) and first.deprels == plain.deprels
