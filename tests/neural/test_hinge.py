"""The structured hinge loss (dparse.neural.losses.hinge_loss): with an exact decoder it is the
brute-force max over trees of score + Hamming cost minus the gold tree's score, its gradient
is the found tree's arcs minus the gold ones, it is 0 when gold wins by its margin, and a tiny
network trains with it under an inexact decoder, parsing valid trees."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from bruteforce import all_trees  # noqa: E402
from neural_tiny import tiny_config, train_tiny, write_slices  # noqa: E402

import dparse  # noqa: E402
from dparse.conll import read_conll  # noqa: E402
from dparse.decoders import get_decoder  # noqa: E402
from dparse.neural.losses import hinge_loss  # noqa: E402
from dparse.trees import check_tree  # noqa: E402

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))


def _batch(rng: np.random.Generator, lengths: list[int], size: int
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores [B, size+1, size+1] (ties in the first, all negative in the last) and gold
    heads [B, size+1] (a random tree each; -1 at the root and on padding)."""
    scores = rng.normal(scale=2.0, size=(len(lengths), size + 1, size + 1))
    scores[0] = np.round(scores[0])
    scores[-1] -= 20.0
    heads = np.full((len(lengths), size + 1), -1, dtype=np.int64)
    for b, n in enumerate(lengths):
        trees = all_trees(n, False, True)
        heads[b, 1:n + 1] = trees[rng.integers(len(trees)), 1:]
    return torch.tensor(scores, requires_grad=True), torch.tensor(heads)


@pytest.mark.parametrize("seed", range(SEED, SEED + 4))
def test_hinge_with_an_exact_decoder_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    lengths = [1, 3, 5, 4]
    scores, heads = _batch(rng, lengths, 5)
    loss = hinge_loss(scores, heads, torch.tensor(lengths), get_decoder("cle"), True)
    expected = 0.0
    arrays = scores.detach().numpy()
    for b, n in enumerate(lengths):
        trees = all_trees(n, False, True)
        words = np.arange(1, n + 1)
        gold = heads[b, 1:n + 1].numpy()
        augmented = (arrays[b][trees[:, 1:], words].sum(axis=1)
                     + (trees[:, 1:] != gold).sum(axis=1))
        expected += augmented.max() - arrays[b][gold, words].sum()
    assert loss.item() == pytest.approx(expected / sum(lengths), abs=1e-9)
    loss.backward()
    grad = scores.grad.numpy() * sum(lengths)
    assert np.allclose(grad.sum(axis=(1, 2)), 0.0)  # n found arcs minus n gold arcs
    assert set(np.round(grad, 9).ravel().tolist()) <= {-1.0, 0.0, 1.0}


def test_hinge_is_zero_when_gold_wins_by_its_margin() -> None:
    rng = np.random.default_rng(SEED)
    scores, heads = _batch(rng, [4, 2], 4)
    with torch.no_grad():
        for b, n in enumerate([4, 2]):
            scores[b, heads[b, 1:n + 1], torch.arange(1, n + 1)] += 100.0
    loss = hinge_loss(scores, heads, torch.tensor([4, 2]), get_decoder("cle"), True)
    assert loss.item() == 0.0


def test_a_network_trains_with_the_hinge_loss_and_a_greedy_decoder(tmp_path: Path) -> None:
    folder = write_slices(tmp_path, train=30, dev=5)
    raw = tiny_config(loss="hinge", tags="none") | {"decoder": {"name": "bgi"},
                                                     "training": {"epochs": 1, "seed": 1}}
    model = train_tiny(folder, raw, tmp_path / "m")
    for sent in dparse.load(model).parse_many(read_conll(folder / "dev.conllu")):
        check_tree(sent.heads, single_root=True)
