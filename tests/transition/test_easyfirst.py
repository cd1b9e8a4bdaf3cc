"""Tests of the easy-first parser (Goldberg and Elhadad 2010): action semantics, the incremental
rescoring window, valid trees, heap vs scan, valid-action training and projectivization."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import DATA
from dparse.transition.easyfirst_core import TEMPLATE_GROUPS, _replay, layout_size, train_sentence

from dparse.cli import cli
from dparse.config import load_config
from dparse.conll import Sentence, read_conll, read_treebank, write_conll
from dparse.learning import AveragedLearner
from dparse.metrics import evaluate
from dparse.postags import TagSettings
from dparse.projectivize import projectivize, projectivize_heads
from dparse.transition.easyfirst import MAX_UPDATES, EasyFirstModel, tag_flags, train_epoch
from dparse.trees import check_tree, is_projective
from dparse.vocab import Vocabulary

XPOS = 3
TAGS = TagSettings("xpos", ("IN",), ("CC",))  # the en_ewt config's tag settings


def tiny(words: str, tags: str, heads: list[int], rels: str | None = None) -> Sentence:
    form = words.split()
    deprels = ["", *(rels.split() if rels else ["dep"] * len(form))]
    return Sentence.build(form, heads=[-1, *heads], deprels=deprels, upos=tags.split(),
                          xpos=tags.split())


FOX = tiny("a brown fox jumped with joy", "DT JJ NN VBD IN NN", [3, 3, 4, 0, 4, 5],
           "det amod nsubj root obl obj")


def new_model(sents: list[Sentence], bits: int = 18) -> tuple[EasyFirstModel, AveragedLearner]:
    vocab = Vocabulary.build(sents)
    learner = AveragedLearner(layout_size(bits, 12, len(vocab.labels)), "perceptron")
    model = EasyFirstModel(vocab, learner.w, bits, 12, "xpos", tag_flags(vocab, TAGS))
    return model, learner


def test_easyfirst_actions_build_the_arcs_of_figure_1() -> None:
    """ATTACHLEFT(i) makes p_i the head of p_{i+1}, ATTACHRIGHT(i) the converse; indices are
    positions in the pending list, whose position 0 is the root."""
    vocab = Vocabulary.build([FOX])
    enc = vocab.encode(FOX)
    flags = tag_flags(vocab, TAGS)
    # pending: ROOT a brown fox jumped with joy
    actions = [(2, 1),  # brown <- fox            ROOT a fox jumped with joy
               (4, 0),  # with -> joy             ROOT a fox jumped with
               (1, 1),  # a <- fox                ROOT fox jumped with
               (1, 1),  # fox <- jumped           ROOT jumped with
               (1, 0),  # jumped -> with          ROOT jumped
               (0, 0)]  # ROOT -> jumped
    heads, _ = _replay(enc.tokens, flags, XPOS, actions)
    assert heads == [-1, 3, 3, 4, 0, 4, 5]


def test_easyfirst_root_never_becomes_a_child() -> None:
    vocab = Vocabulary.build([FOX])
    with pytest.raises(ValueError, match="root"):
        _replay(vocab.encode(FOX).tokens, tag_flags(vocab, TAGS), XPOS, [(0, 1)])


def numbered_feats(count: int) -> str:
    """A FEATS value of ``count`` distinct features: F0=v0|F1=v1|..."""
    return "|".join(f"F{i}=v{i}" for i in range(count))


@pytest.mark.parametrize("templates", [
    0, TEMPLATE_GROUPS["lexical"] | TEMPLATE_GROUPS["feats"],
    TEMPLATE_GROUPS["lexical"] | TEMPLATE_GROUPS["feats"] | TEMPLATE_GROUPS["atoms"]])
def test_easyfirst_rescoring_window_covers_every_changed_location(templates: int) -> None:
    """Section 6: after an attachment only the k = 6 locations around the new parent change
    (also with the added template groups, which read the window's heads' suffixes, lemmas,
    other tag and morphological features, whole or one by one: the nouns carry more features
    than the atoms group reads of a word)."""
    rng = np.random.default_rng(0)
    words = "the old man saw a dog with a telescope in the park and a cat".split()
    tags = "DT JJ NN VBD DT NN IN DT NN IN DT NN CC DT NN".split()
    many = numbered_feats(9)
    feats = [many if t == "NN" else "Tense=Past" if t == "VBD" else "_" for t in tags]
    sent = Sentence.build(words, upos=tags, xpos=tags, feats=feats)
    vocab = Vocabulary.build([sent])
    enc = vocab.encode(sent)
    for _ in range(30):
        actions, length = [], len(words) + 1
        while length > 1:
            i = int(rng.integers(0, length - 1))
            act = 0 if i == 0 else int(rng.integers(0, 2))
            actions.append((i, act))
            length -= 1
        heads, steps = _replay(enc.tokens, tag_flags(vocab, TAGS), XPOS, actions, templates,
                               enc.morph_ptr, enc.morph)
        check_tree(np.array(heads), projective=True)
        for changed, window in steps:
            assert changed <= window
            assert len(window) <= 6


@pytest.fixture(scope="module")
def ewt() -> dict:
    """A model trained for 3 epochs on 2000 en_ewt training sentences, and 300 dev sentences."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    train, _ = projectivize(read_treebank(DATA / "en_ewt" / "train.conllu")[:2000])
    dev = read_treebank(DATA / "en_ewt" / "dev.conllu")[:300]
    model, learner = new_model(train, bits=20)
    encoded = [model.vocab.encode(s) for s in train]
    counts = [train_epoch(model, learner, encoded, range(len(encoded))) for _ in range(3)]
    model.weights = learner.averaged()
    return {"model": model, "dev": dev, "counts": counts}


def test_easyfirst_trained_on_a_slice_reaches_75_uas(ewt: dict) -> None:
    parsed = list(ewt["model"].parse(ewt["dev"]))
    report = evaluate(ewt["dev"], parsed)
    assert report.uas > 75.0
    assert report.las > 70.0
    assert all(c["capped"] == 0 for c in ewt["counts"])


def test_easyfirst_parses_are_projective_single_root_trees(ewt: dict) -> None:
    for sent in ewt["dev"]:
        heads, labels, _ = ewt["model"].parse_encoded(ewt["model"].vocab.encode(sent))
        check_tree(heads, single_root=True, projective=True)
        assert labels[0] == -1 and (labels[1:] >= 0).all()
        heads, _, _ = ewt["model"].parse_encoded(ewt["model"].vocab.encode(sent), False)
        check_tree(heads, projective=True)


def test_easyfirst_heap_and_scan_give_identical_parses(ewt: dict) -> None:
    model = ewt["model"]
    rng = np.random.default_rng(1)
    random_model = EasyFirstModel(model.vocab, rng.standard_normal(model.size).astype(np.float32),
                                  model.action_bits, model.label_bits, "xpos", model.flags)
    zero_model = EasyFirstModel(model.vocab, np.zeros(model.size, dtype=np.float32),
                                model.action_bits, model.label_bits, "xpos", model.flags)
    for m in (model, random_model, zero_model):
        for sent in ewt["dev"]:
            enc = m.vocab.encode(sent)
            for single_root in (True, False):
                scan = m.parse_encoded(enc, single_root, heap=False)
                heap = m.parse_encoded(enc, single_root, heap=True)
                assert np.array_equal(scan[0], heap[0]) and np.array_equal(scan[1], heap[1])
                assert scan[2] == heap[2]


def test_easyfirst_feature_extractions_grow_linearly(ewt: dict) -> None:
    """Section 6: n extractions for the n locations of the n + 1 initial structures, then at
    most 6 per attachment, so at most 7n - 6; a linear fit explains the counts and a quadratic
    term adds nothing."""
    model = ewt["model"]
    lengths, counts = [], []
    for sent in ewt["dev"]:
        n = len(sent)
        _, _, count = model.parse_encoded(model.vocab.encode(sent))
        assert n <= count <= 7 * n - 6 or n == 1
        lengths.append(n)
        counts.append(count)
    n, c = np.array(lengths, dtype=float), np.array(counts, dtype=float)
    slope, intercept = np.polyfit(n, c, 1)
    r2 = 1 - ((c - (slope * n + intercept)) ** 2).sum() / ((c - c.mean()) ** 2).sum()
    assert 5.5 < slope < 7.0 and r2 > 0.99
    assert abs(np.polyfit(n, c, 2)[0]) < 0.01


def test_easyfirst_training_builds_the_gold_tree() -> None:
    """Algorithm 2 only performs valid actions: the tree it builds is the (projective) gold."""
    model, learner = new_model([FOX])
    enc = model.vocab.encode(FOX)
    built = np.empty(len(FOX) + 1, dtype=np.int32)
    for _ in range(3):
        counts = train_sentence(enc.tokens, model.flags, enc.heads, enc.labels, learner.w,
                                learner.u, float(learner.c), model.action_bits,
                                model.label_bits, len(model.vocab.labels), XPOS,
                                heads_out=built)
        learner.tick()
        assert np.array_equal(built, FOX.heads)
        assert counts["steps"] == len(FOX)
    model.weights = learner.averaged()
    heads, labels, _ = model.parse_encoded(enc)
    assert np.array_equal(heads, FOX.heads)
    assert [model.vocab.labels[i] for i in labels[1:]] == FOX.deprels[1:]


def test_easyfirst_atoms_read_each_feature_up_to_the_cap() -> None:
    """The atoms group: an update touches weights that no other template does when the words
    carry morphological features, none when they carry none, and nothing of a word's features
    past the sixth."""
    nine, six = numbered_feats(9), numbered_feats(6)
    many = Sentence.build(FOX.form, FOX.heads, FOX.deprels, FOX.upos, FOX.xpos,
                          feats=[nine] * len(FOX))

    def trained(feats: list[str], templates: int) -> np.ndarray:
        sent = Sentence.build(FOX.form, FOX.heads, FOX.deprels, FOX.upos, FOX.xpos,
                              feats=feats)
        model, learner = new_model([many])  # one vocabulary: the same feature ids
        enc = model.vocab.encode(sent)
        train_sentence(enc.tokens, model.flags, enc.heads, enc.labels, learner.w, learner.u,
                       float(learner.c), model.action_bits, model.label_bits,
                       len(model.vocab.labels), XPOS, templates=templates,
                       morph_ptr=enc.morph_ptr, morph=enc.morph)
        return learner.w.copy()

    atoms = TEMPLATE_GROUPS["atoms"]
    plain = trained(["_"] * len(FOX), 0)
    assert np.array_equal(trained(["_"] * len(FOX), atoms), plain)
    with_atoms = trained([nine] * len(FOX), atoms)
    assert np.count_nonzero(with_atoms) > np.count_nonzero(plain)
    assert np.array_equal(trained([six] * len(FOX), atoms), with_atoms)
    assert not np.array_equal(trained(["F0=v0"] * len(FOX), atoms), with_atoms)


@pytest.mark.parametrize(("ptr", "message"), [
    ([0, 1, 1, 1, 1, 1, 1, 1], "the root"),       # row 0 given the feature
    ([0, 0, 2, 1, 1, 1, 1, 1], "must not decrease"),
    ([0, 0, 1, 1, 1, 1, 1, 9], "points past morph"),
])
def test_easyfirst_rejects_bad_morphological_pointers(ptr: list[int], message: str) -> None:
    sent = Sentence.build(FOX.form, FOX.heads, FOX.deprels, FOX.upos, FOX.xpos,
                          feats=["Number=Sing"] + ["_"] * (len(FOX) - 1))
    model, learner = new_model([sent])
    enc = model.vocab.encode(sent)
    assert len(ptr) == len(FOX) + 2
    with pytest.raises(ValueError, match=message):
        train_sentence(enc.tokens, model.flags, enc.heads, enc.labels, learner.w, learner.u,
                       float(learner.c), model.action_bits, model.label_bits,
                       len(model.vocab.labels), XPOS, templates=TEMPLATE_GROUPS["atoms"],
                       morph_ptr=np.array(ptr, dtype=np.int32), morph=enc.morph)


def test_easyfirst_training_rejects_a_non_projective_gold_tree() -> None:
    sent = tiny("a b c d", "X X X X", [3, 0, 2, 1])  # 1 -> 4 crosses 2 -> 3
    assert not is_projective(sent.heads)
    model, learner = new_model([sent])
    enc = model.vocab.encode(sent)
    with pytest.raises(ValueError, match="not projective"):
        train_sentence(enc.tokens, model.flags, enc.heads, enc.labels, learner.w, learner.u,
                       1.0, model.action_bits, model.label_bits, len(model.vocab.labels), XPOS)


@pytest.mark.parametrize("path,encoding", [("en_ewt/train.conllu", "utf-8"),
                                           ("conll2007_nltk/eus.train", "latin-1")])
def test_easyfirst_valid_action_training_terminates_on_non_projective_treebanks(
    data, path: str, encoding: str
) -> None:
    """Every training sentence of a treebank with non-projective trees (projectivized first)
    is learned by the valid-action loop without ever reaching the update cap."""
    sents = read_treebank(data / path, encoding=encoding)
    if path.startswith("en_ewt"):
        sents = [s for s in sents if not is_projective(s.heads)]  # the 288 non-projective ones
    train, report = projectivize(sents)
    assert report.non_projective_sentences > 0
    model, learner = new_model(train)
    encoded = [model.vocab.encode(s) for s in train]
    for _ in range(2):
        counts = train_epoch(model, learner, encoded, range(len(encoded)))
        assert counts["capped"] == 0
        assert counts["steps"] == sum(len(e) for e in encoded)
    assert counts["updates"] < MAX_UPDATES * len(encoded)


def test_projectivize_lifts_the_shortest_non_projective_arc() -> None:
    heads = np.array([-1, 2, 0, 1], dtype=np.int32)  # 1 -> 3 spans 2, 1's own head
    assert projectivize_heads(heads).tolist() == [-1, 2, 0, 2]  # 3 lifted to 1's head
    heads = np.array([-1, 3, 0, 2, 1], dtype=np.int32)  # 3 -> 1 and 1 -> 4 cross 0 -> 2
    new = projectivize_heads(heads)  # shortest first: 1 lifted to 2, then 4 lifted to 2
    assert is_projective(new) and new.tolist() == [-1, 2, 0, 2, 2]
    projective = np.array([-1, 2, 0, 2], dtype=np.int32)
    assert projectivize_heads(projective).tolist() == projective.tolist()


def test_projectivize_treebank_is_projective_and_lifts_to_ancestors(data) -> None:
    sents = read_treebank(data / "conll2007_nltk" / "eus.train", encoding="latin-1")
    out, report = projectivize(sents)
    changed = 0
    for old, new in zip(sents, out, strict=True):
        assert is_projective(new.heads)
        if is_projective(old.heads):
            assert new is old
        for m in np.flatnonzero(new.heads != old.heads):
            a = int(old.heads[m])  # the new head is a proper ancestor of the old one
            while a > 0 and a != new.heads[m]:
                a = int(old.heads[a])
            assert a == new.heads[m]
            changed += 1
    assert changed == report.changed_arcs > 0
    assert report.non_projective_sentences == sum(not is_projective(s.heads) for s in sents)


def test_easyfirst_cli_train_and_parse(tmp_path, data) -> None:
    sents = read_treebank(data / "en_ewt" / "train.conllu")[:300]
    write_conll(sents, tmp_path / "train.conllu")
    runner = CliRunner()
    out = tmp_path / "model"
    result = runner.invoke(cli, [
        "train", "configs/en_ewt/easyfirst.yaml", "--out", str(out), "-q",
        "--set", f"data.train={tmp_path / 'train.conllu'}", "--set", "data.dev=null",
        "--set", "training.epochs=2", "--set", "features.arc_bits=16",
        "--set", "features.label_bits=10"])
    assert result.exit_code == 0, result.output
    for decoder in ("easyfirst-scan", "easyfirst-heap"):
        result = runner.invoke(cli, ["parse", str(out), str(tmp_path / "train.conllu"), "-o",
                                     str(tmp_path / f"{decoder}.conllu"), "--decoder", decoder])
        assert result.exit_code == 0, result.output
    scan = list(read_conll(tmp_path / "easyfirst-scan.conllu"))
    heap = list(read_conll(tmp_path / "easyfirst-heap.conllu"))
    assert [s.heads.tolist() for s in scan] == [s.heads.tolist() for s in heap]
    assert evaluate(sents, scan).uas > 70.0


def test_easyfirst_config_and_decoder_names_are_checked(tmp_path) -> None:
    from dparse.errors import ConfigError
    from dparse.parsers import load_parser

    with pytest.raises(ConfigError, match="parser must be one of"):
        load_config(raw={"parser": "shift-reduce", "data": {"train": "x"}})
    cfg = load_config("configs/en_ewt/easyfirst.yaml")
    assert cfg.parser == "easyfirst" and cfg.features.prepositions == "IN"
    with pytest.raises(ConfigError, match="easyfirst-scan"):
        load_parser(tmp_path, cfg, "cle")
