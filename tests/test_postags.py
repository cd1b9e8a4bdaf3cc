"""dparse.postags: the POS column and the preposition / coordinator tags chosen from the training
data (``auto``), stored in the model and reused when parsing; old models keep their column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from dparse.transition.easyfirst_core import TAG_LEXICAL, TAG_PREPOSITION, layout_size

from dparse.cli import cli
from dparse.config import load_config, save_config
from dparse.conll import Sentence, read_conll, read_treebank, write_conll
from dparse.metrics import evaluate
from dparse.modeldir import CONFIG_FILE, VOCAB_FILE, WEIGHTS_FILE, save_arrays, writing_model_dir
from dparse.parsers import load_parser
from dparse.postags import MAX_XPOS_TAGS, TagSettings, auto_word_classes, choose_column
from dparse.rerank.model import WordClasses
from dparse.timer import ParseTimer
from dparse.transition.easyfirst import EasyFirstModel, tag_flags, tag_settings
from dparse.transition.shiftreduce import ShiftReduceModel
from dparse.vocab import Vocabulary

WORDS = "the cat sat on the mat and the dog slept".split()
UPOS = "DET NOUN VERB ADP DET NOUN CCONJ DET NOUN VERB".split()
PTB = "DT NN VBD IN DT NN CC DT NN VBD".split()
STTS = "ART NN VVFIN APPR ART NN KON ART NN VVFIN".split()
HEADS = [-1, 2, 3, 0, 6, 6, 3, 10, 9, 10, 3]


def sentence(xpos: list[str], upos: list[str] = UPOS) -> Sentence:
    return Sentence.build(WORDS, heads=HEADS, deprels=["", *["dep"] * len(WORDS)], upos=upos,
                          xpos=xpos)


def test_choose_column_from_hand_made_sentences() -> None:
    assert choose_column([sentence(["_"] * 10)] * 3) == "upos"  # XPOS missing
    assert choose_column([sentence(PTB)] * 3) == "xpos"  # PTB tags: filled, 6 tags
    assert choose_column([sentence(PTB), *[sentence(["_"] * 10)] * 19]) == "upos"  # 5% filled
    fine = [sentence([f"T{i}.{j}" for j in range(10)]) for i in range(MAX_XPOS_TAGS // 10 + 1)]
    assert len({x for s in fine for x in s.xpos}) > MAX_XPOS_TAGS
    assert choose_column(fine) == "upos"  # too fine
    assert choose_column(fine[:6]) == "xpos"  # 60 tags: not too fine


def test_auto_word_classes_follow_the_column() -> None:
    assert auto_word_classes("upos", [sentence(PTB)]) == (["ADP"], ["CCONJ"])
    assert auto_word_classes("xpos", [sentence(PTB)]) == (["IN"], ["CC"])
    # another tag set: the XPOS tags whose tokens are mostly UPOS ADP / CCONJ
    assert auto_word_classes("xpos", [sentence(STTS)]) == (["APPR"], ["KON"])
    # no universal tags in the UPOS column (CoNLL-X CPOSTAG): nothing to go by
    cpos = [sentence(STTS, upos=[t[0] for t in STTS])]
    assert auto_word_classes("xpos", cpos) == ([], [])


def test_explicit_lists_win_and_empty_means_none() -> None:
    sents = [sentence(["_"] * 10)]
    assert TagSettings.resolve("auto", "auto", "auto", sents) == TagSettings(
        "upos", ("ADP",), ("CCONJ",))
    assert TagSettings.resolve("xpos", "IN TO", None, [sentence(PTB)]) == TagSettings(
        "xpos", ("IN", "TO"), ())
    assert TagSettings.resolve("auto", "auto", "", [sentence(PTB)]) == TagSettings(
        "xpos", ("IN",), ())
    with pytest.raises(ValueError, match="POS column"):
        TagSettings.resolve("cpos", "auto", "auto", sents)


def test_easyfirst_flags_and_reranker_word_classes_use_the_resolved_column() -> None:
    sents = [sentence(["_"] * 10)]
    vocab = Vocabulary.build(sents)
    cfg = load_config(raw={"parser": "easyfirst", "data": {"train": "x"}})
    tags = tag_settings(cfg, sents)
    flags = tag_flags(vocab, tags)
    ids = vocab.encode(sents[0]).tokens[1:, 2]  # the UPOS column
    assert [int(f) for f in flags[ids]] == [
        TAG_LEXICAL | TAG_PREPOSITION if u == "ADP" else TAG_LEXICAL if u == "CCONJ" else 0
        for u in UPOS]
    classes = WordClasses.from_config(cfg, vocab, sents)
    assert classes.tag == "upos" and (classes.of(vocab.encode(sents[0]))[1:] > 0).sum() == 2


def _slice(data: Path, tmp_path: Path) -> tuple[Path, Path, list[Sentence]]:
    """The first 150 sentences of da_ddt dev (XPOS ``_`` on 99% of the tokens) for training
    and the first 150 of its test file."""
    train = read_treebank(data / "da_ddt" / "dev.conllu")[:150]
    test = read_treebank(data / "da_ddt" / "test.conllu")[:150]
    write_conll(train, tmp_path / "train.conllu")
    write_conll(test, tmp_path / "test.conllu")
    return tmp_path / "train.conllu", tmp_path / "test.conllu", test


def _train_parse(config: str, tmp_path: Path, name: str, train: Path, test: Path,
                 *overrides: str) -> list[Sentence]:
    runner = CliRunner()
    out = tmp_path / name
    sets = [f"data.train={train}", "data.dev=null", "training.epochs=4", "features.arc_bits=16",
            "features.label_bits=10", *overrides]
    result = runner.invoke(cli, ["train", config, "--out", str(out), "-q",
                                 *[a for s in sets for a in ("--set", s)]])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["parse", str(out), str(test), "-o", str(tmp_path / f"{name}.out")])
    assert result.exit_code == 0, result.output
    return list(read_conll(tmp_path / f"{name}.out"))


def test_easyfirst_auto_beats_forced_xpos_on_da_ddt_and_stores_the_column(data,
                                                                          tmp_path) -> None:
    train, test, gold = _slice(data, tmp_path)
    auto = _train_parse("configs/ud/easyfirst.yaml", tmp_path, "auto", train, test)
    forced = _train_parse("configs/ud/easyfirst.yaml", tmp_path, "xpos", train, test,
                          "features.tag=xpos", "features.prepositions=IN",
                          "features.coordinators=CC")
    assert EasyFirstModel.load(tmp_path / "auto").tag == "upos"
    assert EasyFirstModel.load(tmp_path / "auto").templates == 7  # lexical,feats,atoms
    assert EasyFirstModel.load(tmp_path / "xpos").tag == "xpos"
    uas_auto, uas_xpos = evaluate(gold, auto).uas, evaluate(gold, forced).uas
    assert uas_auto > uas_xpos + 5.0, (uas_auto, uas_xpos)
    # parsing reads the stored column: the same parses as the model object in memory
    model = EasyFirstModel.load(tmp_path / "auto")
    again = list(model.parse(read_treebank(test)))
    assert [s.heads.tolist() for s in again] == [s.heads.tolist() for s in auto]


def test_shiftreduce_stores_the_resolved_column(data, tmp_path) -> None:
    train, test, gold = _slice(data, tmp_path)
    parsed = _train_parse("configs/ud/sr-nonsp-b12.yaml", tmp_path, "sr", train, test,
                          "training.epochs=1", "shiftreduce.beam=2")
    assert ShiftReduceModel.load(tmp_path / "sr").tag == "upos"
    assert evaluate(gold, parsed).uas > 40.0


def test_old_easyfirst_model_keeps_its_column(data, tmp_path) -> None:
    """A model written before ``auto`` and the template groups existed (``tag: xpos`` in its
    saved config and weights file, no ``templates`` entry) loads and parses with XPOS and the
    paper's templates."""
    sents = read_treebank(data / "en_ewt" / "dev.conllu")[:20]
    vocab = Vocabulary.build(sents)
    cfg = load_config("configs/en_ewt/easyfirst.yaml",
                      ["features.arc_bits=12", "features.label_bits=8"])
    tags = tag_settings(cfg, sents)
    assert tags == TagSettings("xpos", ("IN",), ("CC",))
    weights = np.random.default_rng(0).normal(size=layout_size(12, 8, len(vocab.labels)))
    old = EasyFirstModel(vocab, weights.astype(np.float32), 12, 8, "xpos",
                         tag_flags(vocab, tags))
    with writing_model_dir(tmp_path / "old") as staging:  # the files as dparse wrote them
        save_arrays(staging / WEIGHTS_FILE, weights=old.weights, action_bits=12,
                    label_bits=8, tag="xpos", flags=old.flags)  # (no "templates" entry)
        vocab.save(staging / VOCAB_FILE)
        save_config(cfg, staging / CONFIG_FILE)
    loaded = load_parser(tmp_path / "old", load_config(tmp_path / "old" / "config.yaml"), None)
    out = list(loaded.parse(sents, ParseTimer()))
    reloaded = EasyFirstModel.load(tmp_path / "old")
    assert reloaded.tag == "xpos" and reloaded.templates == 0
    assert [s.heads.tolist() for s in out] == [
        s.heads.tolist() for s in old.parse(sents)]
    upos = EasyFirstModel(vocab, old.weights, 12, 8, "upos", old.flags)
    assert [s.heads.tolist() for s in out] != [s.heads.tolist() for s in upos.parse(sents)]
