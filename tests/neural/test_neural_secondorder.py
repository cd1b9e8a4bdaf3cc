"""Second-order neural scores (dparse.neural.secondorder): the parts whose arcs pruning keeps
are those enumerated naively, the sibling and grandparent arrays are the triaffine products
computed naively, the second-order hinge loss is the brute-force maximum over projective trees
(its gradient the found tree's parts minus the gold tree's), every second-order decoder parses
a tiny trained network's scores into valid trees (the exact one the brute-force optimum), the
order and the decoder must agree, training is deterministic, a saved model parses alike, and a
300-word sentence parses over the pruned parts."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from bruteforce import all_trees, tree_score2  # noqa: E402
from conftest import DATA  # noqa: E402
from neural_tiny import tiny_config, train_tiny, write_slices  # noqa: E402

import dparse  # noqa: E402
from dparse.conll import Sentence, read_conll  # noqa: E402
from dparse.decoders import get_decoder  # noqa: E402
from dparse.errors import ConfigError, DparseError  # noqa: E402
from dparse.modeldir import WEIGHTS_FILE, file_sha256  # noqa: E402
from dparse.trees import check_tree  # noqa: E402

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))
SECOND_ORDER = ["eisner2-sib", "eisner2-sibgp", "dd2", "bgi", "bgi-pp", "cube"]


def o2_config(decoder: str = "eisner2-sibgp", **neural: object) -> dict:
    """A tiny second-order network from words alone."""
    settings = {"order": 2, "loss": "hinge", "part_dim": 8, "tags": "none"} | neural
    return tiny_config(**settings) | {
        "decoder": {"name": decoder}, "training": {"epochs": 2, "seed": 1}}


@pytest.fixture(scope="module", name="tiny_o2")
def tiny_o2_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``train.conllu`` (60 sentences), ``dev.conllu`` (10) and ``model``."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    folder = write_slices(tmp_path_factory.mktemp("tiny-o2"), 60, 10)
    train_tiny(folder, o2_config(), folder / "model")
    return folder


def random_network(seed: int, top_k: int = 100, threshold: float = 0.0):
    """An untrained second-order model of random weights over a four-word vocabulary."""
    from dparse.neural.model import NeuralModel
    from dparse.neural.network import ParserNetwork
    from dparse.neural.sections import NeuralConfig
    from dparse.neural.vocab import NeuralVocabulary

    vocab = NeuralVocabulary(["a", "b", "c"], list("abc"), [], ["dep", "root"], False)
    settings = NeuralConfig(word_dim=4, char_dim=2, char_filters=3, lstm_dim=3, arc_dim=5,
                            label_dim=2, order=2, loss="hinge", part_dim=4,
                            prune_top_k=top_k, prune_threshold=threshold)
    torch.manual_seed(seed)
    network = ParserNetwork(settings, vocab)
    for p in network.parameters():  # the biaffine and third factors start at 0: draw them
        torch.nn.init.normal_(p, std=1.5)
    return NeuralModel(vocab, settings, network)


def naive_parts(model, enc) -> dict[str, np.ndarray]:
    """Every sib and grand entry [n+1]^3 of a sentence, float64, as the triaffine product of
    the role MLPs' features (ones appended) with the full core tensor sum_r U ⊗ V ⊗ W."""
    from dparse.neural.network import Batch

    model.network.eval()
    with torch.no_grad():
        x, _ = model.network(Batch.of([enc], torch.device("cpu")))
        out = {}
        for kind, tri in model.network.second_order.kinds.items():
            feats = [torch.cat([mlp(x)[0], torch.ones(x.shape[1], 1)], 1).double()
                     for mlp in tri.mlps]
            u, v, w = tri.factors.double()
            core = torch.einsum("ar,br,cr->abc", u, v, w)
            out[kind] = torch.einsum("ia,jb,kc,abc->ijk", *feats, core).numpy()
    return out


def test_candidate_parts_are_the_parts_whose_arcs_are_kept() -> None:
    from dparse.neural.secondorder import candidate_parts

    rng = np.random.default_rng(SEED)
    for _ in range(200):
        n1 = int(rng.integers(2, 9))
        keep = rng.random((n1, n1)) < rng.random()
        np.fill_diagonal(keep, False)
        keep[:, 0] = False
        found = candidate_parts(keep.astype(np.uint8))
        sib, grand = set(), set()
        for a, b, c in itertools.product(range(n1), repeat=3):
            if keep[a, c] and (b == a or (keep[a, b] and min(a, c) < b < max(a, c))):
                sib.add((a, b, c))
            if b > 0 and keep[a, b] and keep[b, c]:
                grand.add((a, b, c))
        for kind, expected in (("sib", sib), ("grand", grand)):
            got = list(zip(*(i.tolist() for i in found[kind]), strict=True))
            assert len(got) == len(set(got)) and set(got) == expected, kind


@pytest.mark.parametrize("top_k", [100, 2])
def test_the_part_arrays_are_the_naive_triaffine_products(top_k: int) -> None:
    from dparse.neural.secondorder import kept_arcs

    rng = np.random.default_rng(SEED + top_k)
    model = random_network(SEED + top_k, top_k=top_k, threshold=0.0)
    for n in (1, 2, 5, 7):
        enc = model.vocab.encode(Sentence.build([str(w) for w in rng.choice(list("abcd"), n)]))
        arc, _, parts = model.score_parts(enc, None, False)
        raw = enc.scores[0]
        kept = kept_arcs(raw, top_k, 0.0).astype(bool)
        assert kept.sum(axis=0)[1:].max() <= max(top_k, 1) and kept.any(axis=0)[1:].all()
        assert (np.isfinite(arc[:, 1:]) == kept[:, 1:]).all()
        assert np.array_equal(arc[kept], raw[kept])
        assert (model.allowed(enc) > 0).tolist() == kept.tolist()
        naive = naive_parts(model, enc)
        ok = kept | np.eye(n + 1, dtype=bool)  # h -> h: the innermost sibling's marker
        h, m, s = np.indices((n + 1,) * 3)
        sib_kept = ok[h, m] & kept[h, s] & ((m == h) | ((np.minimum(h, s) < m)
                                                        & (m < np.maximum(h, s))))
        grand_kept = kept[h, m] & kept[m, s] & (m > 0)  # g -> h -> m as (h, m, s)
        for kind, mask in (("sib", sib_kept), ("grand", grand_kept)):
            assert parts[kind].shape == (n + 1,) * 3 and parts[kind].dtype == np.float64
            assert np.allclose(parts[kind][mask], naive[kind][mask], rtol=1e-5, atol=1e-5)
            assert (parts[kind][~mask] == 0).all()


def _hinge_batch(seed: int, lengths: list[int], top_k: int):
    """Arc scores [B, N+1, N+1], projective gold trees [B, N+1] and random projections."""
    from dparse.neural.secondorder import BatchParts, SecondOrderScorer

    rng = np.random.default_rng(seed)
    size = max(lengths) + 1
    scores = torch.tensor(rng.normal(scale=2.0, size=(len(lengths), size, size)),
                          requires_grad=True)
    heads = np.full((len(lengths), size), -1, dtype=np.int64)
    for b, n in enumerate(lengths):
        trees = all_trees(n, True, True)
        heads[b, 1:n + 1] = trees[rng.integers(len(trees)), 1:]
    factors = {kind: torch.tensor(rng.normal(size=(3, len(lengths), size, 3)),
                                  requires_grad=True) for kind in ("sib", "grand")}
    scorer = SecondOrderScorer(4, 3, 0.0, top_k, 0.01)
    return scores, torch.tensor(heads), BatchParts(factors, scorer)


def _tree_score(heads: np.ndarray, arc: torch.Tensor, dense: dict[str, torch.Tensor]
                ) -> torch.Tensor:
    """A tree's score under arc [n+1, n+1] and dense sib and grand [n+1]^3 (differentiable)."""
    from dparse.graph.ensemble import tree_parts

    sib, grand = tree_parts(heads)
    return (arc[torch.as_tensor(heads[1:]), torch.arange(1, len(heads))].sum()
            + dense["sib"][sib].sum() + dense["grand"][grand].sum())


@pytest.mark.parametrize(("seed", "top_k"), [(SEED, 100), (SEED + 1, 100), (SEED + 2, 2)])
def test_the_second_order_hinge_is_the_brute_force_maximum(seed: int, top_k: int) -> None:
    from dparse.neural.losses import hinge_loss

    lengths = [4, 1, 5, 3]
    scores, heads, parts = _hinge_batch(seed, lengths, top_k)
    loss = hinge_loss(scores, heads, torch.tensor(lengths), get_decoder("eisner2-sibgp"), True,
                      parts)
    expected = torch.zeros((), dtype=torch.float64)
    for b, n in enumerate(lengths):
        arc = scores[b, :n + 1, :n + 1]
        kept = parts.scorer.kept_arcs(arc.detach().numpy()).astype(bool)
        gold = heads[b, :n + 1].numpy()
        kept[gold[1:], np.arange(1, n + 1)] = True
        dense = {kind: torch.einsum("ir,jr,kr->ijk", *f[:, b, :n + 1])
                 for kind, f in parts.factors.items()}
        trees = all_trees(n, True, True)
        trees = trees[kept[trees[:, 1:], np.arange(1, n + 1)].all(axis=1)]
        values = [tree_score2(t, arc.detach().numpy(), *(d.detach().numpy() for d in
                                                         dense.values()))
                  + (t[1:] != gold[1:]).sum() for t in trees]
        best = trees[int(np.argmax(values))]

        expected = expected + (_tree_score(best, arc, dense) + (best[1:] != gold[1:]).sum()
                               - _tree_score(gold, arc, dense))
        assert max(values) - tree_score2(gold, arc.detach().numpy(),
                                         *(d.detach().numpy() for d in dense.values())) >= 0
    expected = expected / sum(lengths)
    assert loss.item() == pytest.approx(expected.item(), abs=1e-9)
    got = torch.autograd.grad(loss, [scores, *parts.factors.values()])
    want = torch.autograd.grad(expected, [scores, *parts.factors.values()])
    for g, w in zip(got, want, strict=True):
        assert torch.allclose(g, w, atol=1e-9)


def test_every_second_order_decoder_parses_a_trained_network(tiny_o2: Path) -> None:
    for name in SECOND_ORDER:
        projective = get_decoder(name).projective
        parser = dparse.load(tiny_o2 / "model", decoder=name)
        for parsed in parser.parse_many(read_conll(tiny_o2 / "dev.conllu")):
            check_tree(parsed.heads, single_root=True, projective=projective)
            assert all(parsed.deprels[1:])


def test_the_exact_decoder_finds_the_best_tree_over_the_kept_arcs(tiny_o2: Path) -> None:
    from dparse.neural.model import NeuralModel

    model = NeuralModel.read_files(tiny_o2 / "model")
    forms = [f for s in read_conll(tiny_o2 / "train.conllu") for f in s.form] + ["☃"]
    rng = np.random.default_rng(SEED)
    for n in (1, 3, 5, 6):
        enc = model.vocab.encode(Sentence.build([forms[i] for i in rng.integers(len(forms),
                                                                                 size=n)]))
        arc, _, parts = model.score_parts(enc, None, False)
        for single_root in (True, False):
            heads = get_decoder("eisner2-sibgp").decode(arc, single_root=single_root, **parts)
            trees = all_trees(n, True, single_root)
            best = max(tree_score2(t, arc, parts["sib"], parts["grand"]) for t in trees)
            assert tree_score2(heads, arc, parts["sib"], parts["grand"]) == pytest.approx(
                best, abs=1e-9)


def test_the_order_and_the_decoder_must_agree(tiny_o2: Path, tmp_path: Path) -> None:
    from dparse.config import load_config

    with pytest.raises(DparseError, match="reads arcs only.*neural.order: 2"):
        dparse.load(tiny_o2 / "model", decoder="cle")
    with pytest.raises(ConfigError, match="reads arcs only"):
        load_config(raw=o2_config("eisner"), data_root=str(tmp_path))
    with pytest.raises(ConfigError, match="neural.loss: hinge"):
        load_config(raw=o2_config(loss="local"), data_root=str(tmp_path))
    with pytest.raises(ConfigError, match="neural.order must be 1"):
        load_config(raw=o2_config(order=3), data_root=str(tmp_path))


def test_training_is_deterministic_and_a_saved_model_parses_alike(tiny_o2: Path,
                                                                  tmp_path: Path) -> None:
    again = train_tiny(tiny_o2, o2_config(), tmp_path / "again")
    assert file_sha256(again / WEIGHTS_FILE) == file_sha256(tiny_o2 / "model" / WEIGHTS_FILE)
    dparse.load(tiny_o2 / "model").parse_file(tiny_o2 / "dev.conllu", tmp_path / "a.conllu")
    dparse.load(again).parse_file(tiny_o2 / "dev.conllu", tmp_path / "b.conllu")
    assert (tmp_path / "a.conllu").read_bytes() == (tmp_path / "b.conllu").read_bytes()
    parser = dparse.load(again)
    dev = list(read_conll(tiny_o2 / "dev.conllu"))
    for sent, batched in zip(dev, parser.parse_many(dev), strict=True):
        assert parser.parse(sent).heads.tolist() == batched.heads.tolist()


def test_training_keeps_the_gold_arcs_for_the_hinge() -> None:
    from dparse.graph.model import PartScratch

    scores, heads, parts = _hinge_batch(SEED, [6], top_k=1)
    first = scores[0].detach().numpy()
    gold = heads[0].numpy()
    allowed, arrays = parts.arrays(0, first, gold, ["sib"], PartScratch())
    pruned = parts.scorer.kept_arcs(first)
    assert allowed[gold[1:], np.arange(1, 7)].all()
    assert ((allowed > 0) == ((pruned > 0) | (np.eye(7)[gold.clip(0)] > 0).T
                              & (np.arange(7) > 0))).all()
    sib = torch.einsum("ir,jr,kr->ijk", *parts.factors["sib"][:, 0].detach()).numpy()
    from dparse.graph.ensemble import tree_parts

    index = tree_parts(gold)[0]
    assert np.allclose(arrays["sib"][index], sib[index])


def test_a_300_word_sentence_parses_over_the_pruned_parts(tiny_o2: Path) -> None:
    from dparse.neural.model import NeuralModel
    from dparse.neural.secondorder import candidate_parts

    model = NeuralModel.read_files(tiny_o2 / "model")
    forms = [f for s in read_conll(tiny_o2 / "train.conllu") for f in s.form]
    rng = np.random.default_rng(SEED)
    sent = Sentence.build([forms[i] for i in rng.integers(len(forms), size=300)])
    enc = model.vocab.encode(sent)
    kept = model.allowed(enc)
    assert kept.sum() <= (model.settings.prune_top_k + 1) * 300  # ties and a root child
    parts = candidate_parts(kept)
    assert len(parts["sib"][0]) + len(parts["grand"][0]) < 301 ** 3 // 100
    for name in ("eisner2-sib", "bgi"):
        parsed = dparse.load(tiny_o2 / "model", decoder=name).parse(sent)
        check_tree(parsed.heads, single_root=True, projective=get_decoder(name).projective)


@pytest.mark.parametrize(("second", "first"), [("en_ewt/neural-o2", "en_ewt/neural-o1"),
                                               ("en_ewt/neural-o2-gold", "en_ewt/neural-o1-gold"),
                                               ("ud/neural-o2", "ud/neural-o1")])
def test_the_second_order_configs_are_the_first_order_ones_with_parts(second: str, first: str
                                                                       ) -> None:
    from dparse.config import load_config

    configs = Path(__file__).resolve().parents[2] / "configs"
    two, one = (load_config(configs / f"{name}.yaml", overrides=["decoder.single_root=true"],
                            data_root=str(DATA)).to_dict() for name in (second, first))
    assert two["neural"]["order"] == 2 and two["neural"]["loss"] == "hinge"
    assert two["decoder"]["name"] == "eisner2-sibgp" and one["neural"]["order"] == 1
    for cfg in (one, two):
        cfg.pop("name")
        cfg["decoder"].pop("name")
        for key in ("order", "loss", "part_dim", "prune_top_k", "prune_threshold"):
            cfg["neural"].pop(key)
    assert one == two


def test_constraints_k_best_lists_and_marginals_read_the_second_order_scores(tiny_o2: Path
                                                                            ) -> None:
    from dparse.errors import InputError

    dev = list(read_conll(tiny_o2 / "dev.conllu"))
    for name in ("eisner2-sibgp", "bgi"):
        parser = dparse.load(tiny_o2 / "model", decoder=name)
        kept = 0
        for sent in dev:  # every gold arc fixed: the gold tree, pruned arcs or not
            try:
                parsed = parser.parse(sent, constraints="keep")
            except InputError:  # a non-projective gold tree under a projective decoder
                continue
            kept += 1
            assert parsed.heads.tolist() == sent.heads.tolist()
        assert kept >= len(dev) - 2
    parser = dparse.load(tiny_o2 / "model", decoder="eisner2-sibgp")
    sent = dev[0]
    scores = [score for _, score in parser.parse_kbest(sent, 3)]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    _, probs = parser.marginals(sent)
    assert np.allclose(probs[:, 1:].sum(axis=0), 1.0)


def test_the_neural_decoders_table_has_a_row_per_decoder(tiny_o2: Path, tiny_first_order: Path
                                                         ) -> None:
    import re
    import sys

    from paths import REPO

    sys.path.insert(0, str(REPO / "benchmarks"))
    from neural_decoders import ROWS, build

    text = build(tiny_o2 / "model", tiny_first_order / "model", tiny_o2 / "dev.conllu")
    rows = re.findall(r"^\| ([^|]+) \| (\d+\.\d\d) \| (\d+\.\d\d) \| (\d+\.\d\d) \| [\d.]+ \| "
                      r"[\d,]+ \| [\d.]+ \|$", text, re.MULTILINE)
    assert [r[0] for r in rows] == [row for row, _, _ in ROWS], text
    assert rows[0][3] == "100.00"  # the exact row against itself
    assert all(0 <= float(v) <= 100 for r in rows for v in r[1:])
    assert str(tiny_o2) not in text  # no machine's path in results/
