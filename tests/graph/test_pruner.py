"""The second-order models' pruner: tree-CRF marginals against brute force, the kept-heads rule,
unlabeled scoring and AdaGrad training in Cython against numpy, old pruner files, prune_stats."""

from __future__ import annotations

import json
from itertools import islice

import numpy as np
import pytest
from bruteforce import all_trees, tree_score
from click.testing import CliRunner
from conftest import DATA, requires_data
from dparse._ext.arcfeatures import FeatureSpace, arc_list_indices, arc_list_scores
from dparse._ext.arcprob import AdaGrad, score_heads

from dparse.cli import cli
from dparse.config import load_config
from dparse.conll import Sentence, read_conll, write_conll
from dparse.errors import ConfigError, DparseError
from dparse.graph.model import ArcFactoredModel
from dparse.graph.pruner import Pruner, fit_pruner, loss_gradient, train_pruner, unlabeled_scores
from dparse.prune import EncodedPruner, head_softmax, keep_heads, prune_stats, tree_marginals
from dparse.vocab import Vocabulary


def random_arcs(rng: np.random.Generator, n: int, ties: bool) -> np.ndarray:
    """Scores float64 [n+1, n+1], -inf on the diagonal and in column 0; negative scores, and
    with ``ties`` few distinct values."""
    arc = rng.integers(-3, 2, size=(n + 1, n + 1)).astype(float) if ties else \
        rng.normal(scale=3.0, size=(n + 1, n + 1)) - 2.0
    np.fill_diagonal(arc, -np.inf)
    arc[:, 0] = -np.inf
    return arc


def brute_marginals(arc: np.ndarray, single_root: bool) -> np.ndarray:
    """P(h -> m) by enumerating every tree, P(tree) proportional to exp(score)."""
    n = arc.shape[0] - 1
    trees = all_trees(n, False, single_root)
    scores = tree_score(trees, np.where(np.isfinite(arc), arc, -1e300))
    p = np.exp(scores - scores.max())
    p /= p.sum()
    mu = np.zeros((n + 1, n + 1))
    for m in range(1, n + 1):
        np.add.at(mu[:, m], trees[:, m], p)
    return mu


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("ties", [False, True])
def test_tree_marginals_match_brute_force(single_root: bool, ties: bool) -> None:
    rng = np.random.default_rng(7 + ties + 2 * single_root)
    for n in range(1, 7):
        for _ in range(3):
            arc = random_arcs(rng, n, ties)
            mu = tree_marginals(arc, single_root)
            assert np.allclose(mu, brute_marginals(arc, single_root), atol=1e-9)
            assert np.allclose(mu[:, 1:].sum(axis=0), 1.0)
            if single_root:
                assert np.isclose(mu[0].sum(), 1.0)


def test_tree_marginals_with_pruned_arcs_and_no_tree() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        arc = random_arcs(rng, 6, False) * 2.0  # score spread about 12
        arc[rng.random(arc.shape) < 0.3] = -np.inf
        arc[0, 1:] = rng.normal(size=6)  # every word may hang from the root: a tree exists
        mu = tree_marginals(arc, True)
        assert np.allclose(mu, brute_marginals(arc, True), atol=1e-9)
        assert np.all(mu[~np.isfinite(arc)] == 0.0)
    blocked = arc.copy()
    blocked[:, 3] = -np.inf
    with pytest.raises(DparseError, match="no possible head"):
        tree_marginals(blocked)
    cycle = np.full((3, 3), -np.inf)
    cycle[1, 2] = cycle[2, 1] = 0.0  # heads for both words, but no tree
    with pytest.raises(DparseError):
        tree_marginals(cycle)
    pruner = Pruner(None, 2, 0.0, objective="crf")  # falls back to the head softmax
    assert np.array_equal(pruner.probabilities(cycle), head_softmax(cycle))


def test_head_softmax_columns_are_distributions() -> None:
    arc = random_arcs(np.random.default_rng(1), 5, False)
    probs = head_softmax(arc)
    assert np.allclose(probs[:, 1:].sum(axis=0), 1.0) and np.all(probs[:, 0] == 0)
    m = 2
    expect = np.exp(arc[:, m][np.isfinite(arc[:, m])])
    assert np.allclose(probs[np.isfinite(arc[:, m]), m], expect / expect.sum())


@pytest.mark.parametrize("relative", [False, True])
def test_keep_heads_rule(relative: bool) -> None:
    rng = np.random.default_rng(5 + relative)
    for trial in range(200):
        n = int(rng.integers(1, 12))
        arc = random_arcs(rng, n, ties=trial % 2 == 0)
        probs = head_softmax(arc)
        k, thr = int(rng.integers(1, 5)), float(rng.choice([0.0, 0.01, 0.2, 0.9]))
        ok = keep_heads(probs, np.isfinite(arc), k, thr, relative).astype(bool)
        assert not ok[:, 0].any() and not ok.diagonal().any() and ok[0].any()
        expect = np.zeros_like(ok)
        for m in range(1, n + 1):
            col = probs[:, m]
            cut = thr * col.max() if relative else thr
            kth = np.sort(col)[::-1][min(k, n) - 1]
            expect[:, m] = (col >= cut) & (col >= kth) & np.isfinite(arc[:, m])
            expect[np.argmax(col), m] = True  # never empty: the best head stays
            assert ok[np.argmax(col), m] and ok[:, m].sum() >= 1
        if not expect[0].any():
            expect[0, 1 + np.argmax(probs[0, 1:])] = True
        assert np.array_equal(ok, expect)


def test_keep_heads_root_fallback_and_possible_mask() -> None:
    probs = np.zeros((3, 3))
    probs[1, 2] = probs[2, 1] = 0.9
    probs[0, 1], probs[0, 2] = 0.04, 0.06
    probs[2, 1] -= 0.04
    probs[1, 2] -= 0.06
    ok = keep_heads(probs, np.ones((3, 3), bool), 1, 0.0)
    assert ok[0].tolist() == [0, 0, 1]  # the root's best child by probability
    ok = keep_heads(probs, np.ones((3, 3), bool), 1, 0.0, root_by=np.array([0, 5.0, 1.0]))
    assert ok[0].tolist() == [0, 1, 0]
    possible = np.ones((3, 3), bool)
    possible[0] = False
    possible[0, 1] = True
    ok = keep_heads(probs, possible, 3, 0.0)
    assert ok[0].tolist() == [0, 1, 0]


@pytest.fixture(scope="module")
def sentences() -> tuple[Vocabulary, list[Sentence]]:
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    sents = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 150))
    return Vocabulary.build(sents), sents


@requires_data
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_score_heads_sums_the_unlabeled_arc_features(sentences, dtype) -> None:
    vocab, sents = sentences
    space = FeatureSpace(14, 8, len(vocab.labels))
    w = np.random.default_rng(0).normal(size=space.size).astype(dtype)
    for sent in sents[:20]:
        enc = vocab.encode(sent)
        n = len(enc)
        out = unlabeled_scores(enc, w, 14)
        heads, mods = np.nonzero(~np.eye(n + 1, dtype=bool)[:, 1:])
        mods = (mods + 1).astype(np.int32)
        heads = heads.astype(np.int32)
        expect = arc_list_scores(enc.tokens, enc.morph_ptr, enc.morph, w, space, heads, mods)
        assert np.allclose(out[heads, mods], expect)
        assert np.all(np.isneginf(out[:, 0])) and np.all(np.isneginf(out.diagonal()))
    with pytest.raises(ValueError):
        score_heads(enc.tokens, enc.morph_ptr, enc.morph, w[:100], 14, out)


@requires_data
def test_adagrad_step_against_numpy(sentences) -> None:
    """One step equals AdaGrad on the gradient summed over every arc's features (numpy)."""
    vocab, sents = sentences
    space = FeatureSpace(12, 8, len(vocab.labels))
    opt = AdaGrad(12, 0.5)
    w = np.zeros(1 << 12)
    sumsq = np.zeros(1 << 12)
    history: list[np.ndarray] = []
    rng = np.random.default_rng(2)
    for sent in sents[:5]:
        enc = vocab.encode(sent)
        n = len(enc)
        dscore = rng.normal(size=(n + 1, n + 1))
        dscore[np.abs(dscore) < 0.3] = 0.0
        grad = np.zeros(1 << 12)
        for h in range(n + 1):
            for m in range(1, n + 1):
                if h != m and dscore[h, m] != 0.0:
                    idx = arc_list_indices(enc.tokens, enc.morph_ptr, enc.morph, space,
                                           np.array([h], np.int32), np.array([m], np.int32))
                    np.add.at(grad, idx, dscore[h, m])
        touched = grad != 0
        sumsq[touched] += grad[touched] ** 2
        w[touched] -= 0.5 * grad[touched] / np.sqrt(sumsq[touched])
        opt.step(enc.tokens, enc.morph_ptr, enc.morph, dscore)
        assert np.allclose(opt.weights, w) and np.allclose(opt.sumsq, sumsq)
        history.append(w.copy())
        assert np.allclose(opt.averaged(), np.mean(history, axis=0))  # pruner.average


@requires_data
@pytest.mark.parametrize("objective", ["local", "crf"])
def test_loss_gradient_is_probabilities_minus_gold(sentences, objective: str) -> None:
    vocab, sents = sentences
    model = ArcFactoredModel(vocab, FeatureSpace(12, 8, len(vocab.labels)),
                             np.zeros(FeatureSpace(12, 8, len(vocab.labels)).size, np.float32))
    pruner = Pruner(model, 5, 0.01, True, objective)
    enc = vocab.encode(sents[3])
    arc = random_arcs(np.random.default_rng(4), len(enc), False)
    grad = loss_gradient(pruner, arc, enc.heads)
    n = len(enc)
    assert np.allclose(grad[:, 1:].sum(axis=0), 0.0)  # sum of probs 1, minus the gold arc
    assert np.all(grad[enc.heads[1:], np.arange(1, n + 1)] <= 0.0)


@requires_data
@pytest.mark.parametrize("objective", ["local", "crf"])
def test_trained_pruner_keeps_gold_and_round_trips(sentences, tmp_path, objective) -> None:
    vocab, sents = sentences
    train, dev = sents[:120], sents[120:]
    cfg = load_config(raw={"data": {"train": "x"}, "features": {"order": 2},
                           "pruner": {"objective": objective, "epochs": 2, "arc_bits": 16,
                                      "top_k": 8, "threshold": 0.01, "relative": True,
                                      "average": objective == "local"}})
    encoded = [vocab.encode(s) for s in train]
    pruner = train_pruner(cfg, vocab, encoded, progress=False)
    assert all(enc.allowed is not None for enc in encoded)
    stats = prune_stats(EncodedPruner(pruner, vocab), train)
    assert stats.gold_kept_directed_pct > 97.0 and stats.heads_per_word < 8
    pruner.write_files(tmp_path / "p")
    back = Pruner.read_files(tmp_path / "p")
    assert (back.objective, back.relative, back.top_k) == (objective, True, 8)
    for sent in dev:
        enc = vocab.encode(sent)
        assert np.array_equal(pruner.allowed(enc), back.allowed(enc))
    write_conll(dev, tmp_path / "dev.conllu")
    res = CliRunner().invoke(cli, ["prune", "eval", str(tmp_path / "dev.conllu"), "--pruner",
                                   str(tmp_path / "p"), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == prune_stats(EncodedPruner(pruner, vocab), dev).as_dict()
    res = CliRunner().invoke(cli, ["prune", "eval", str(tmp_path / "dev.conllu"), "--pruner",
                                   str(tmp_path)])
    # main() turns the DparseError into exit status 2
    assert isinstance(res.exception, DparseError) and "not a dparse model" in str(res.exception)


@requires_data
def test_training_graphs_by_jackknife(sentences) -> None:
    """pruner.train_folds k: each fold's training graphs are those of a pruner trained on the
    other folds, and they keep more heads than the pruner that saw the sentences."""
    vocab, sents = sentences
    raw = {"data": {"train": "x"}, "features": {"order": 2},
           "pruner": {"objective": "local", "epochs": 2, "arc_bits": 15, "top_k": 20,
                      "threshold": 0.001, "relative": True, "train_folds": 3}}
    cfg = load_config(raw=raw)
    encoded = [vocab.encode(s) for s in sents[:90]]
    pruner = train_pruner(cfg, vocab, encoded, progress=False)
    own = [pruner.allowed(enc) for enc in encoded]
    for f in range(3):
        rest = encoded[:30 * f] + encoded[30 * f + 30:]
        other = fit_pruner(cfg, vocab, rest, False)
        for enc in encoded[30 * f:30 * f + 30]:
            assert np.array_equal(enc.allowed, other.allowed(enc))
    assert sum(int(a.sum()) for a in own) < sum(int(e.allowed.sum()) for e in encoded)
    with pytest.raises(ConfigError, match="train_folds"):
        load_config(raw={**raw, "pruner": {"train_folds": 1}})


@requires_data
def test_old_pruner_files_load_as_the_perceptron_pruner(sentences, tmp_path) -> None:
    """A pruner.json without the newer keys gives today's rule: labeled scores, their head
    softmax, absolute threshold."""
    vocab, sents = sentences
    space = FeatureSpace(12, 8, len(vocab.labels))
    w = np.random.default_rng(9).normal(size=space.size).astype(np.float32)
    Pruner(ArcFactoredModel(vocab, space, w), 4, 0.05).write_files(tmp_path / "p")
    (tmp_path / "p" / "pruner.json").write_text(json.dumps({"top_k": 4, "threshold": 0.05}))
    old = Pruner.read_files(tmp_path / "p")
    assert (old.objective, old.relative) == ("perceptron", False)
    for sent in sents[:20]:
        enc = vocab.encode(sent)
        arc = ArcFactoredModel(vocab, space, w).score(enc)[0]
        probs = head_softmax(arc)
        n = len(enc)
        ok = old.allowed(enc)
        for m in range(1, n + 1):
            kth = np.sort(probs[:, m])[::-1][min(4, n) - 1]
            expect = (probs[:, m] >= 0.05) & (probs[:, m] >= kth) & np.isfinite(arc[:, m])
            expect[np.argmax(probs[:, m])] = True
            if m == 1 + int(np.argmax(arc[0, 1:])):
                expect[0] |= bool(ok[0, m])
            assert np.array_equal(ok[:, m].astype(bool), expect)


def test_prune_stats_heads_per_word_by_hand() -> None:
    """Two sentences, a pruner keeping fixed arcs: counted by hand."""
    s1 = Sentence.build(["a", "b", "c"], np.array([-1, 2, 0, 2]), ["", "x", "root", "y"])
    s2 = Sentence.build(["d", "e"], np.array([-1, 0, 1]), ["", "root", "x"])
    keep = {3: [(0, 2), (2, 1), (3, 1), (1, 3), (0, 3)],  # gold 2->1, 0->2 kept; 2->3 not
            2: [(0, 1), (1, 2), (0, 2)]}  # both gold arcs kept

    class Fixed:
        def allowed(self, sent: Sentence) -> np.ndarray:
            ok = np.zeros((len(sent) + 1, len(sent) + 1), dtype=bool)
            for h, m in keep[len(sent)]:
                ok[h, m] = True
            return ok

    st = prune_stats(Fixed(), [s1, s2])
    assert (st.words, st.arcs_kept, st.gold, st.gold_kept_directed) == (5, 8, 5, 4)
    assert st.heads_per_word == pytest.approx(8 / 5)
    assert st.gold_kept_directed_pct == pytest.approx(80.0)
    assert st.as_dict()["heads_per_word"] == 1.6


def test_pruner_config_keys() -> None:
    base = {"data": {"train": "x"}, "features": {"order": 2}}
    cfg = load_config(raw=base)
    assert (cfg.pruner.objective, cfg.pruner.relative) == ("perceptron", False)
    with pytest.raises(ConfigError, match="pruner.objective"):
        load_config(raw={**base, "pruner": {"objective": "svm"}})
    with pytest.raises(ConfigError, match="first_order_labels"):
        load_config(raw={"data": {"train": "x"}, "decoder": {"name": "cube"},
                         "features": {"order": 3, "first_order_labels": True},
                         "pruner": {"objective": "local"}})
    with pytest.raises(ConfigError, match="pruner.first_order is for first-order models"):
        load_config(raw={**base, "pruner": {"first_order": True}})


@requires_data
def test_first_order_model_on_the_pruner(tmp_path) -> None:
    """pruner.first_order: a first-order model trains its pruner (a jackknife on its training
    sentences), scores only the arcs the pruner keeps, saves it in pruner/ and loads it back."""
    from dparse.decoders import configured_decoder
    from dparse.graph.load import load_model
    from dparse.graph.training import train
    from dparse.trees import check_tree

    write_conll(islice(read_conll(DATA / "en_ewt" / "train.conllu"), 300),
                tmp_path / "train.conllu")
    options = {"alpha": 0.5, "beta": 0.8, "beam": 2}
    cfg = load_config(raw={
        "data": {"train": str(tmp_path / "train.conllu")},
        "features": {"order": 1, "arc_bits": 16, "label_bits": 12},
        "pruner": {"first_order": True, "objective": "crf", "relative": True, "top_k": 4,
                   "threshold": 0.001, "train_folds": 2, "epochs": 2, "arc_bits": 16},
        "decoder": {"name": "bgi-pp", "options": options},
        "training": {"epochs": 1},
    })
    model = train(cfg, progress=False).model
    assert isinstance(model, ArcFactoredModel) and isinstance(model.pruner, Pruner)
    model.save(tmp_path / "model")
    assert (tmp_path / "model" / "pruner" / "pruner.json").is_file()
    loaded = load_model(tmp_path / "model")
    assert isinstance(loaded, ArcFactoredModel) and isinstance(loaded.pruner, Pruner)
    dev = list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 40))
    kept = 0
    for sent in dev:
        enc = loaded.vocab.encode(sent)
        allowed = loaded.pruner.allowed(enc).astype(bool)
        arc, _, parts = loaded.score_parts(enc, None, False)
        assert parts == {} and np.all(np.isneginf(arc[~allowed]))
        assert np.all(np.isfinite(arc[allowed])) and allowed[:, 1:].sum(axis=0).max() <= 4
        kept += int(allowed[:, 1:].sum())
    assert 1.0 <= kept / sum(len(s) for s in dev) < 4.0
    decoder = configured_decoder("bgi-pp", options)
    first = list(model.parse(dev, decoder))
    again = list(loaded.parse(dev, decoder))
    for a, b in zip(first, again, strict=True):
        check_tree(a.heads, single_root=True)
        assert np.array_equal(a.heads, b.heads) and a.deprels == b.deprels
