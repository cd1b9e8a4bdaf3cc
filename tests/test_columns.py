"""dparse.columns: a model does not read a token column its dev file leaves empty (pt_bosque's
XPOS), blanks it in training and in every sentence it parses, and says so in the log."""

from __future__ import annotations

import json
import logging
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data

from dparse.columns import (
    COLUMNS,
    ColumnCounter,
    blank_columns,
    input_gaps,
    parse_columns_setting,
    unread_columns,
)
from dparse.config import load_config
from dparse.conll import Sentence, read_treebank, write_conll
from dparse.epochs import save_model
from dparse.errors import ConfigError
from dparse.parsers import load_parser, train_parser
from dparse.timer import ParseTimer
from dparse.vocab import Vocabulary

WORDS = "the cat sat on the mat".split()
HEADS = [-1, 2, 3, 0, 3, 6, 4]


def sentence(xpos: list[str] | None = None, feats: list[str] | None = None) -> Sentence:
    return Sentence.build(WORDS, heads=HEADS, deprels=["", *["dep"] * 6],
                          upos="DET NOUN VERB ADP DET NOUN".split(),
                          xpos=xpos or "DT NN VBD IN DT NN".split(),
                          lemma=WORDS, feats=feats or ["Number=Sing"] * 6)


def test_filled_shares_count_tokens_not_sentences() -> None:
    sents = [sentence(), sentence(xpos=["_"] * 6), sentence(xpos=["_", "NN"] * 3)]
    counter = ColumnCounter()
    assert list(counter.through(sents)) == sents  # passed through as they are
    assert counter.tokens == 18
    assert counter.shares()["xpos"] == pytest.approx(9 / 18)
    assert counter.shares()["upos"] == 1.0
    assert ColumnCounter.of(sents).shares() == counter.shares()
    assert ColumnCounter.of([]).shares()["xpos"] == 0.0


def test_settings_name_columns_or_fail_clearly() -> None:
    assert parse_columns_setting("auto") is None
    assert parse_columns_setting("all") == COLUMNS
    assert parse_columns_setting("xpos, upos") == ("upos", "xpos")  # in COLUMNS order
    with pytest.raises(ConfigError, match="unknown column.*cpos"):
        parse_columns_setting("upos,cpos")
    with pytest.raises(ConfigError, match="data.columns"):
        load_config(raw={"data": {"train": "x", "columns": "tags"}})


def test_auto_leaves_out_what_dev_leaves_empty_and_nothing_without_dev() -> None:
    train = [sentence()] * 4
    no_xpos = [sentence(xpos=["_"] * 6)]
    unread, reasons = unread_columns("auto", train, no_xpos)
    assert unread == ("xpos",)
    assert len(reasons) == 1 and "XPOS not read" in reasons[0] and "0.0% of the dev" in reasons[0]
    assert unread_columns("auto", train, train) == ((), [])
    assert unread_columns("auto", train, []) == ((), [])  # nothing to compare with
    # half the training share is still read; less is not
    half = [sentence(xpos=["_", "_", "_", "DT", "NN", "IN"])]
    assert unread_columns("auto", train, half)[0] == ()
    less = [sentence(xpos=["_", "_", "_", "_", "NN", "IN"])]
    assert unread_columns("auto", train, less)[0] == ("xpos",)
    # an empty training column is never "less filled" in dev
    assert unread_columns("auto", no_xpos, no_xpos)[0] == ()
    # explicit settings ignore the data
    assert unread_columns("all", train, no_xpos)[0] == ()
    assert unread_columns("upos", train, train)[0] == ("lemma", "xpos", "feats")


def test_blanking_copies_and_keeps_the_written_lines() -> None:
    sents = [sentence()]
    blanked = blank_columns(sents, ("xpos", "feats"))
    assert blanked[0] is not sents[0]
    assert blanked[0].xpos == ["_"] * 6 and blanked[0].feats == ["_"] * 6
    assert sents[0].xpos == "DT NN VBD IN DT NN".split()  # the original is untouched
    assert blanked[0].to_conll() == sents[0].to_conll()
    assert blank_columns(sents, ())[0] is sents[0]


def test_blanking_keeps_the_lines_of_a_tagged_copy() -> None:
    """A sentence tagged (its lines made later), its XPOS blanked for a model that does not
    read it, then parsed: the lines written out carry the tagger's XPOS and the new heads."""
    tagged = sentence().with_tags(xpos=["T"] * 6)
    blanked = blank_columns([tagged], ("xpos",))[0]
    assert blanked.xpos == ["_"] * 6
    parsed = blanked.with_parse([-1, 0, 1, 1, 1, 1, 1], ["", "root"] + ["dep"] * 5)
    rows = [line.split("\t") for line in parsed.to_conll().splitlines() if line]
    assert [r[4] for r in rows] == ["T"] * 6
    assert [r[6] for r in rows] == ["0", "1", "1", "1", "1", "1"]


def test_vocabulary_encodes_unread_columns_as_blank_and_keeps_them(tmp_path: Path) -> None:
    train = blank_columns([sentence()], ("xpos", "feats"))
    vocab = Vocabulary.build(train, ("xpos", "feats"))
    full, blank = vocab.encode(sentence()), vocab.encode(train[0])
    assert np.array_equal(full.tokens, blank.tokens)
    assert full.morph.size == 0 and np.array_equal(full.morph_ptr, blank.morph_ptr)
    vocab.save(tmp_path / "vocab.json")
    again = Vocabulary.load(tmp_path / "vocab.json")
    assert again.unread == ("xpos", "feats")
    assert np.array_equal(again.encode(sentence()).tokens, full.tokens)
    # every column read: no unread key in the file, each column counts
    plain = Vocabulary.build([sentence()])
    plain.save(tmp_path / "plain.json")
    assert "unread_columns" not in (tmp_path / "plain.json").read_text()
    assert Vocabulary.load(tmp_path / "plain.json").unread == ()
    assert not np.array_equal(plain.encode(sentence()).tokens,
                              plain.encode(sentence(xpos=["_"] * 6)).tokens)


TINY = {
    "graph": {"features": {"arc_bits": 16, "label_bits": 10}, "decoder": {"name": "cle"}},
    "easyfirst": {"parser": "easyfirst", "training": {"learner": "perceptron"},
                  "features": {"arc_bits": 16, "label_bits": 10},
                  "decoder": {"name": "easyfirst-scan"}},
    "shiftreduce": {"parser": "shiftreduce", "training": {"learner": "perceptron"},
                    "features": {"arc_bits": 16, "label_bits": 10},
                    "decoder": {"name": "shiftreduce"}, "shiftreduce": {"beam": 2}},
    "umst": {"parser": "umst", "features": {"arc_bits": 16}, "decoder": {"name": "umst"}},
}


@pytest.fixture(scope="module")
def bosque(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """150 sentences of pt_bosque train (XPOS filled) and 40 of dev (XPOS empty)."""
    folder = tmp_path_factory.mktemp("bosque")
    for split, count in (("train", 150), ("dev", 40)):
        sents = list(islice(read_treebank(DATA / "pt_bosque" / f"{split}.conllu"), count))
        write_conll(sents, folder / f"{split}.conllu")
    return folder


@requires_data
@pytest.mark.parametrize("parser", sorted(TINY))
def test_every_trainer_leaves_out_pt_bosque_xpos_and_parses_as_without_it(
        parser: str, bosque: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    raw = {"name": "bosque", "data": {"train": "train.conllu", "dev": "dev.conllu"},
           **TINY[parser]}
    raw["training"] = {**raw.get("training", {}), "epochs": 1}
    cfg = load_config(raw=raw, data_root=str(bosque))
    with caplog.at_level(logging.WARNING):
        result = train_parser(cfg, progress=False)
    assert any("XPOS not read: filled on" in r.getMessage() for r in caplog.records)
    assert result.model.vocab.unread == ("xpos",)
    save_model(result, cfg, tmp_path / "model")
    loaded = load_parser(tmp_path / "model", cfg, None)
    with_xpos = list(islice(read_treebank(bosque / "train.conllu"), 30))
    assert sum(x != "_" for s in with_xpos for x in s.xpos) > 300
    without = blank_columns(with_xpos, ("xpos",))
    a = list(loaded.parse(with_xpos, ParseTimer()))
    b = list(loaded.parse(without, ParseTimer()))
    assert [list(s.heads) for s in a] == [list(s.heads) for s in b]
    assert [s.deprels for s in a] == [s.deprels for s in b]
    # the output keeps the input's XPOS column
    assert [s.xpos for s in a] == [s.xpos for s in with_xpos]


@requires_data
def test_columns_all_reads_xpos_anyway(bosque: Path) -> None:
    raw = {"name": "bosque", "data": {"train": "train.conllu", "dev": "dev.conllu",
                                      "columns": "all"},
           "training": {"epochs": 1}, **TINY["graph"]}
    result = train_parser(load_config(raw=raw, data_root=str(bosque)), progress=False)
    assert result.model.vocab.unread == ()
    assert len(result.model.vocab.tables["xpos"]) > 50



def test_vocabulary_records_the_training_shares_and_old_files_have_none(tmp_path: Path) -> None:
    sents = [sentence(), sentence(xpos=["_"] * 6, feats=["_", "A=B"] * 3)]
    vocab = Vocabulary.build(sents)
    assert vocab.filled == {"lemma": 1.0, "upos": 1.0, "xpos": 0.5, "feats": 0.75}
    vocab.save(tmp_path / "vocab.json")
    assert Vocabulary.read_columns(tmp_path / "vocab.json") == ((), vocab.filled)
    assert Vocabulary.load(tmp_path / "vocab.json").filled == vocab.filled
    old = {"labels": vocab.labels, **vocab.tables}  # a vocabulary file written before
    (tmp_path / "vocab.json").write_text(json.dumps(old))
    assert Vocabulary.read_columns(tmp_path / "vocab.json") == ((), None)
    assert Vocabulary.load(tmp_path / "vocab.json").filled is None


def test_input_gaps_name_each_read_column_the_input_leaves_empty() -> None:
    trained = {"lemma": 1.0, "upos": 1.0, "xpos": 0.9, "feats": 0.1}
    no_xpos = ColumnCounter.of([sentence(xpos=["_"] * 6, feats=["_"] * 6)] * 20)
    assert no_xpos.tokens == 120
    gaps = input_gaps(trained, (), no_xpos, "in.conllu")
    assert len(gaps) == 2  # XPOS, and FEATS (0% against 10%)
    assert gaps[0].startswith("in.conllu: XPOS is filled on 0.0% of its tokens against 90.0%")
    assert gaps[1].startswith("in.conllu: FEATS")
    assert input_gaps(trained, ("xpos", "feats"), no_xpos, "x") == []  # not read: no matter
    assert input_gaps(None, (), no_xpos, "x") == []  # a model that recorded no shares
    short = ColumnCounter.of([sentence(xpos=["_"] * 6)] * 2)
    assert input_gaps(trained, (), short, "x") == []  # 12 tokens: too few to judge
    full = ColumnCounter.of([sentence()] * 20)
    assert input_gaps(trained, (), full, "x") == []
