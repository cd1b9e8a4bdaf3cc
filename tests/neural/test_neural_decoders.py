"""Every graph decoder on a neural model's arc scores (dparse.neural.model through
GraphModel.score_parts): valid trees of its kind, the exact decoders' trees scoring the
brute-force optimum, the approximate ones never above it; and parsing with each decoder."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from bruteforce import best_score, tree_score  # noqa: E402
from neural_tiny import tiny_neural_fixture  # noqa: E402, F401

from dparse.conll import Sentence, read_conll  # noqa: E402
from dparse.decoders import available_decoders, get_decoder  # noqa: E402
from dparse.families import family  # noqa: E402
from dparse.trees import check_tree  # noqa: E402

SEED = int(os.environ.get("DPARSE_TEST_SEED", "0"))


def graph_decoders() -> list[str]:
    """Every decoder that the neural family's decoder modules register."""
    providers = family("neural").decoders
    for module in providers:
        __import__(module)
    return [name for name in available_decoders()
            if type(get_decoder(name)).__module__ in providers]


def neural_model(folder: Path):
    from dparse.neural.model import NeuralModel

    return NeuralModel.read_files(folder / "model")


def small_sentences(folder: Path, rng: np.random.Generator) -> list[Sentence]:
    """Sentences of 1 to 6 words: random words of the training file (unknown ones too)."""
    forms = [f for s in read_conll(folder / "train.conllu") for f in s.form]
    forms += ["Zyzzyvaq", "ÆØÅ-ß", "12345", "☃"]  # unknown words and characters
    out = []
    for n in [1, 2, 3, 4, 5, 6, 6, 5, 6]:
        words = [forms[i] for i in rng.integers(len(forms), size=n)]
        out.append(Sentence.build(words, upos=["NOUN"] * n))
    return out


def test_there_are_graph_decoders_to_test() -> None:
    assert {"cle", "eisner", "bgi", "bgi-pp", "eisner2-sib", "dd2", "cube"} <= set(
        graph_decoders())


@pytest.mark.parametrize("single_root", [True, False])
def test_every_graph_decoder_decodes_neural_scores(tiny_neural: Path, single_root: bool
                                                   ) -> None:
    rng = np.random.default_rng(SEED)
    model = neural_model(tiny_neural)
    for sent in small_sentences(tiny_neural, rng):
        arc, label, parts = model.score_parts(model.vocab.encode(sent), None, False)
        n = len(sent)
        assert arc.dtype == np.float64 and arc.shape == (n + 1, n + 1) and not parts
        assert label.dtype == np.int32 and label.shape == (n + 1, n + 1)
        assert np.isfinite(arc).all()
        for name in graph_decoders():
            decoder = get_decoder(name)
            heads = decoder.decode(arc, single_root=single_root)
            check_tree(heads, single_root=single_root, projective=decoder.projective)
            best = best_score(arc, projective=decoder.projective, single_root=single_root)
            score = float(tree_score(heads, arc))
            if decoder.exact:
                assert score == pytest.approx(best, abs=1e-9), name
            else:
                assert score <= best + 1e-9, name


def test_the_exact_decoders_match_brute_force_on_random_networks(tmp_path: Path) -> None:
    """Untrained networks of random weights give arbitrary score tensors."""
    import torch

    from dparse.neural.model import NeuralModel
    from dparse.neural.network import ParserNetwork
    from dparse.neural.sections import NeuralConfig
    from dparse.neural.vocab import NeuralVocabulary

    rng = np.random.default_rng(SEED + 1)
    vocab = NeuralVocabulary(["a", "b", "c"], list("abc"), [], ["dep", "root"], False)
    for seed in range(3):
        torch.manual_seed(SEED + seed)
        network = ParserNetwork(NeuralConfig(word_dim=4, char_dim=2, char_filters=3,
                                             lstm_dim=3, arc_dim=5, label_dim=2), vocab)
        for p in network.parameters():  # biaffine weights start at 0: draw them
            torch.nn.init.normal_(p, std=2.0)
        model = NeuralModel(vocab, NeuralConfig(), network)
        for n in range(1, 7):
            words = [str(x) for x in rng.choice(list("abcd"), size=n)]
            arc, _, _ = model.score_parts(vocab.encode(Sentence.build(words)), None, False)
            for name in ("cle", "eisner"):
                decoder = get_decoder(name)
                for single_root in (True, False):
                    heads = decoder.decode(arc, single_root=single_root)
                    best = best_score(arc, projective=decoder.projective,
                                      single_root=single_root)
                    assert float(tree_score(heads, arc)) == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("decoder", ["cle", "eisner", "bgi", "bgi-pp", "eisner2-sib", "dd2",
                                     "cube"])
def test_parsing_with_each_decoder_gives_labelled_trees(tiny_neural: Path, decoder: str
                                                        ) -> None:
    import dparse

    parser = dparse.load(tiny_neural / "model", decoder=decoder)
    dev = list(read_conll(tiny_neural / "dev.conllu"))
    labels = set(parser._spec.load().model.vocab.labels) if hasattr(parser, "_spec") else None
    projective = get_decoder(decoder).projective
    for sent, parsed in zip(dev, parser.parse_many(dev), strict=True):
        check_tree(parsed.heads, single_root=True, projective=projective)
        assert parsed.form == sent.form and all(d for d in parsed.deprels[1:])
        if labels is not None:
            assert set(parsed.deprels[1:]) <= labels
