"""Second-order parts: the scorer agrees with the feature delta, pruning, the model round trip."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data
from dparse._ext.arcfeatures import FeatureSpace
from dparse.graph.o2features import SecondOrderSpace, score_second_order, second_order_delta

from dparse.config import load_config
from dparse.conll import read_conll, write_conll
from dparse.decoders import configured_decoder, get_decoder
from dparse.graph.load import load_model
from dparse.graph.model import PartScratch, sparse_zeros
from dparse.graph.pruner import pruning_recall
from dparse.graph.secondorder import SecondOrderModel
from dparse.graph.training import train
from dparse.metrics import evaluate
from dparse.trees import check_tree
from dparse.vocab import Vocabulary

pytestmark = requires_data


def tree_parts(heads: np.ndarray) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """The sibling (h, m, s) and grandparent (g, h, m) parts of a tree, naively."""
    n = len(heads) - 1
    sib, grand = [], []
    for h in range(n + 1):
        for step in (-1, 1):
            prev, m = h, h + step
            while 0 < m <= n:
                if heads[m] == h:
                    sib.append((h, prev, m))
                    prev = m
                m += step
    for m in range(1, n + 1):
        if heads[m] > 0:
            grand.append((int(heads[heads[m]]), int(heads[m]), m))
    return sib, grand


@pytest.fixture(scope="module")
def vocab_and_sentences() -> tuple[Vocabulary, list]:
    sents = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 120))
    return Vocabulary.build(sents), sents


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("with_sib", "with_grand"), [(True, True), (True, False), (False, True)])
def test_scores_of_tree_parts_equal_weights_dot_delta(
    vocab_and_sentences, dtype, with_sib: bool, with_grand: bool
) -> None:
    vocab, sents = vocab_and_sentences
    space = SecondOrderSpace(FeatureSpace(12, 8, len(vocab.labels)), 14, 13)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(space.size).astype(dtype)
    for sent in sents:
        enc = vocab.encode(sent)
        n = len(enc)
        allowed = np.ones((n + 1, n + 1), dtype=np.uint8)
        # a part family left out scores nothing: zeros in the expected sums below
        sib = np.zeros((n + 1,) * 3)
        grand = np.zeros((n + 1,) * 3)
        score_second_order(enc.tokens, w, space, allowed, sib if with_sib else None,
                           grand if with_grand else None)
        pred = rng.integers(0, n, size=n + 1).astype(np.int32)
        pred[0] = -1
        # Every head before its word: a tree.
        pred[1:] = np.where(pred[1:] >= np.arange(1, n + 1), 0, pred[1:])
        check_tree(pred)
        idx, val = second_order_delta(enc.tokens, space, enc.heads, pred, with_grand, with_sib)
        gold_sib, gold_grand = tree_parts(enc.heads)
        pred_sib, pred_grand = tree_parts(pred)
        expected = (sum(sib[p] for p in gold_sib) + sum(grand[p] for p in gold_grand)
                    - sum(sib[p] for p in pred_sib) - sum(grand[p] for p in pred_grand))
        assert float(w[idx].astype(np.float64) @ val) == pytest.approx(expected, abs=1e-6)
        low = space.sib_offset if with_sib else space.grand_offset
        high = space.size if with_grand else space.grand_offset
        assert np.all(idx >= low) and np.all(idx < high)


def test_grandparent_scores_do_not_depend_on_sibling_scoring(vocab_and_sentences) -> None:
    vocab, sents = vocab_and_sentences
    space = SecondOrderSpace(FeatureSpace(12, 8, len(vocab.labels)), 12, 12)
    w = np.random.default_rng(3).standard_normal(space.size)
    enc = vocab.encode(max(sents, key=len))
    n1 = len(enc) + 1
    allowed = np.ones((n1, n1), dtype=np.uint8)
    sib, grand, alone = (np.zeros((n1, n1, n1)) for _ in range(3))
    score_second_order(enc.tokens, w, space, allowed, sib, grand)
    score_second_order(enc.tokens, w, space, allowed, None, alone)
    assert np.array_equal(grand, alone) and np.any(alone != 0.0)


def test_parts_over_pruned_arcs_are_zero(vocab_and_sentences) -> None:
    vocab, sents = vocab_and_sentences
    space = SecondOrderSpace(FeatureSpace(12, 8, len(vocab.labels)), 12, 12)
    w = np.random.default_rng(1).standard_normal(space.size)
    enc = vocab.encode(max(sents, key=len))
    n = len(enc)
    allowed = (np.random.default_rng(2).random((n + 1, n + 1)) < 0.3).astype(np.uint8)
    sib = np.zeros((n + 1,) * 3)
    grand = np.zeros((n + 1,) * 3)
    score_second_order(enc.tokens, w, space, allowed, sib, grand)
    h, m, s = np.nonzero(sib)
    assert np.all(allowed[h, s]) and np.all((m == h) | (allowed[h, m] == 1))
    g, h, m = np.nonzero(grand)
    assert np.all(allowed[g, h]) and np.all(allowed[h, m]) and np.all(h > 0)


def test_second_order_space_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError):
        SecondOrderSpace(FeatureSpace(12, 8, 3), 5, 12)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[SecondOrderModel, Path, list]:
    """A second-order model trained one epoch on 400 sentences (pruner: two epochs)."""
    folder = tmp_path_factory.mktemp("o2")
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 400), folder / "train.conllu")
    cfg = load_config(raw={
        "data": {"train": str(folder / "train.conllu")},
        "features": {"order": 2, "arc_bits": 16, "label_bits": 12, "sib_bits": 14,
                     "grand_bits": 14},
        "pruner": {"epochs": 2, "arc_bits": 16, "label_bits": 12, "top_k": 5},
        "decoder": {"name": "cle"},
        "training": {"epochs": 1},
    })
    model = train(cfg, progress=False).model
    assert isinstance(model, SecondOrderModel)
    model.save(folder / "model")
    dev = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 60))
    return model, folder / "model", dev


def test_pruner_keeps_at_most_top_k_heads_and_a_root_child(trained) -> None:
    model, _, dev = trained
    for sent in dev:
        allowed = model.pruner.allowed(model.vocab.encode(sent))
        assert allowed[:, 0].sum() == 0
        assert np.all(allowed[:, 1:].sum(axis=0) >= 1)
        assert np.all(allowed[:, 1:].sum(axis=0) <= 5)
        assert allowed[0].any()
    encoded = [model.vocab.encode(s) for s in dev]
    for enc in encoded:
        enc.allowed = model.pruner.allowed(enc)
    recall, heads = pruning_recall(encoded)
    assert recall > 90.0 and heads <= 5.0


def test_second_order_model_round_trip_and_valid_trees(trained) -> None:
    model, directory, dev = trained
    loaded = load_model(directory)
    assert isinstance(loaded, SecondOrderModel)
    decoder = get_decoder("cle")
    first = list(model.parse(dev, decoder))
    again = list(loaded.parse(dev, decoder))
    for a, b in zip(first, again, strict=True):
        check_tree(a.heads, single_root=True)
        assert np.array_equal(a.heads, b.heads) and a.deprels == b.deprels


def test_parts_in_a_reused_scratch_equal_fresh_ones(trained) -> None:
    model, _, dev = trained
    scratch = PartScratch()
    # long and short sentences in turn: each take must be all zeros where nothing is scored
    for sent in sorted(dev, key=len, reverse=True)[:6] + sorted(dev, key=len)[:6] * 2:
        enc = model.vocab.encode(sent)
        arc, label, fresh = model.score_parts(enc, None, False)
        arc2, label2, reused = model.score_parts(enc, None, False, scratch)
        assert fresh.keys() == reused.keys() == {"sib", "grand"}
        for key in fresh:
            assert np.array_equal(fresh[key], reused[key])
        assert np.array_equal(arc, arc2) and np.array_equal(label, label2)


def test_part_scratch_hands_out_zeros_and_allocates_past_its_limit(monkeypatch) -> None:
    scratch = PartScratch()
    first, second = scratch.take(4, 2)
    first[...] = 1.0
    second[1, 2, 3] = -np.inf
    again = scratch.take(3, 2) + scratch.take(4, 1)
    assert all(a.shape == (n, n, n) and not a.any() for a, n in zip(again, (3, 3, 4), strict=True))
    monkeypatch.setattr(PartScratch, "LIMIT", 100)
    big = scratch.take(5, 1)[0]
    assert big.shape == (5, 5, 5) and not big.any()
    assert big.dtype == np.float64 and big.flags.c_contiguous and big.flags.writeable
    assert not np.shares_memory(big, scratch.take(4, 1)[0])


def test_a_large_part_array_takes_memory_only_where_written() -> None:
    status = Path("/proc/self/status")
    if not status.is_file():
        pytest.skip("no /proc/self/status to read the resident memory from")

    def resident_mb() -> float:
        return int(status.read_text().split("VmRSS:")[1].split()[0]) / 1024

    before = resident_mb()
    big = sparse_zeros((400, 400, 400))  # 512 MB of address space
    rng = np.random.default_rng(0)
    index = tuple(rng.integers(400, size=(3, 1000)))
    big[index] = 1.0
    assert big.sum() == len(set(zip(*index, strict=True)))  # reads every page
    assert resident_mb() - before < 64  # 1000 pages of 4 kB written, the rest never backed


def test_unzeroed_scratch_keeps_what_was_there() -> None:
    scratch = PartScratch(zeroed=False)
    first = scratch.take(4, 1)[0]
    first[...] = np.nan
    again = scratch.take(3, 1)[0]
    assert again.shape == (3, 3, 3) and np.isnan(again).all()


@pytest.mark.parametrize("options", [{}, {"beam": 3, "improve": 2}])
@pytest.mark.parametrize("name", ["bgi", "bgi-pp"])
def test_greedy_decoders_read_only_the_parts_the_scorer_writes(
    trained, name: str, options: dict
) -> None:
    # The greedy decoders parse from an uncleared scratch (reads_pruned_parts False): here one
    # poisoned with NaN before every sentence, which a read of a pruned arc's part would meet
    # (an error, or another tree).
    model, _, dev = trained
    decoder = configured_decoder(name, options)
    assert not decoder.reads_pruned_parts and get_decoder("dd2").reads_pruned_parts
    scratch = PartScratch(zeroed=False)
    pruned = 0
    for sent in dev:
        enc = model.vocab.encode(sent)
        arc, _, fresh = model.score_parts(enc, None, False)
        scratch.take(len(sent) + 1, 2)[0].base[...] = np.nan
        arc2, _, dirty = model.score_parts(enc, None, False, scratch)
        assert all(np.isnan(dirty[key]).any() for key in dirty) or len(sent) < 3
        pruned += int(np.isinf(arc[:, 1:]).sum() - len(sent))
        assert np.array_equal(decoder.decode(arc, **fresh), decoder.decode(arc2, **dirty))
    assert pruned > 0
    parsed = [s.heads for s in model.parse(dev, decoder)]
    expected = [model.predict(model.vocab.encode(s), decoder)[0] for s in dev]
    assert all(np.array_equal(a, b) for a, b in zip(parsed, expected, strict=True))


@pytest.mark.parametrize("name", ["eisner2-sib", "eisner2-sibgp", "dd2"])
def test_second_order_decoders_give_valid_trees(trained, name: str) -> None:
    model, _, dev = trained
    decoder = get_decoder(name)
    for sent in model.parse(dev, decoder):
        check_tree(sent.heads, single_root=True, projective=decoder.projective)


def test_second_order_training_with_its_decoder_improves_on_the_pruner(tmp_path: Path) -> None:
    """Trained with eisner2-sibgp, the model parses dev better than its own first-order pruner."""
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 800), tmp_path / "t.conllu")
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 200), tmp_path / "d.conllu")
    cfg = load_config(raw={
        "data": {"train": str(tmp_path / "t.conllu"), "dev": str(tmp_path / "d.conllu")},
        "features": {"order": 2, "arc_bits": 18, "label_bits": 13, "sib_bits": 16,
                     "grand_bits": 16},
        "pruner": {"epochs": 2, "arc_bits": 16, "label_bits": 12},
        "decoder": {"name": "eisner2-sibgp"},
        "training": {"epochs": 2},
    })
    result = train(cfg, progress=False)
    model = result.model
    assert isinstance(model, SecondOrderModel)
    dev = list(read_conll(tmp_path / "d.conllu"))
    o2 = evaluate(dev, list(model.parse(dev, get_decoder("eisner2-sibgp"))))
    pruner = evaluate(dev, list(model.pruner.model.parse(dev, get_decoder("eisner"))))
    # Measured: second order 81.1 UAS, its two-epoch pruner (with Eisner) 77.6.
    assert o2.uas >= 78.0 and o2.uas > pruner.uas


@pytest.fixture(scope="module")
def trained_without_siblings(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[SecondOrderModel, Path, list]:
    """An arc + grandparent model (features.siblings false, as the greedy parser of
    Tchernowitz et al. 2016, footnote 1), trained one epoch with BGI-PP on 400 sentences."""
    folder = tmp_path_factory.mktemp("o2-gp")
    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 400), folder / "train.conllu")
    cfg = load_config(raw={
        "data": {"train": str(folder / "train.conllu")},
        "features": {"order": 2, "arc_bits": 16, "label_bits": 12, "sib_bits": 10,
                     "grand_bits": 14, "siblings": False},
        "pruner": {"epochs": 2, "arc_bits": 16, "label_bits": 12, "top_k": 5},
        "decoder": {"name": "bgi-pp", "options": {"alpha": 0.25, "beta": 0.6}},
        "training": {"epochs": 1},
    })
    model = train(cfg, progress=False).model
    assert isinstance(model, SecondOrderModel)
    model.save(folder / "model")
    dev = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 60))
    return model, folder / "model", dev


def test_model_without_siblings_scores_and_learns_no_sibling_part(
    trained_without_siblings,
) -> None:
    model, _, dev = trained_without_siblings
    assert not model.siblings and model.grandparents
    _, _, parts = model.score_parts(model.vocab.encode(dev[0]), None, False)
    assert set(parts) == {"grand"}
    w, space = model.weights, model.space
    assert not np.any(w[space.sib_offset:space.grand_offset])
    assert np.any(w[space.grand_offset:])


def test_model_without_siblings_round_trip(trained_without_siblings) -> None:
    model, directory, dev = trained_without_siblings
    loaded = load_model(directory)
    assert isinstance(loaded, SecondOrderModel) and not loaded.siblings
    decoder = get_decoder("bgi-pp")
    for a, b in zip(model.parse(dev, decoder), loaded.parse(dev, decoder), strict=True):
        check_tree(a.heads, single_root=True)
        assert np.array_equal(a.heads, b.heads) and a.deprels == b.deprels

