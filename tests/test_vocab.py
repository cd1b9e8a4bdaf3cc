"""dparse.vocab: special ids, word normalization, sentence encoding, save/load."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from dparse._ext.arcfeatures import N_COLS, SPECIAL_IDS

from dparse.conll import Sentence, read_conll
from dparse.vocab import FIRST_ID, Vocabulary, normalize

WORD, LEMMA, UPOS, XPOS, PREFIX, SUFFIX = range(6)


def _sentence(
    form: list[str],
    heads: list[int],
    deprels: list[str],
    feats: list[str] | None = None,
) -> Sentence:
    """A sentence whose lemma is the lowercased form, UPOS 'X'+len and XPOS 'T'+first letter."""
    return Sentence.build(
        form,
        heads=[-1, *heads],
        deprels=["", *deprels],
        lemma=[f.lower() for f in form],
        upos=[f"X{len(f)}" for f in form],
        xpos=[f"T{f[0]}" for f in form],
        feats=feats,
    )


TRAIN = [
    _sentence(
        ["The", "dog", "barked", "in", "1999", "."],
        [2, 3, 0, 5, 3, 3],
        ["det", "nsubj", "root", "case", "obl", "punct"],
        ["Definite=Def", "Number=Sing", "Mood=Ind|Tense=Past", "_", "NumType=Card", "_"],
    ),
    _sentence(["the", "Cats", "sleep", "2000"], [2, 3, 0, 3], ["det", "nsubj", "root", "obj"]),
]


@pytest.fixture
def vocab() -> Vocabulary:
    return Vocabulary.build(TRAIN)


def test_special_ids_are_fixed() -> None:
    assert SPECIAL_IDS == {"unk": 0, "root": 1, "bos": 2, "eos": 3}
    assert FIRST_ID == max(SPECIAL_IDS.values()) + 1


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        ("Hello", "hello"),
        ("ABC-12.5", "abc-00.0"),
        ("1999", "0000"),
        ("R2D2", "r0d0"),
        ("\u0663\u0664", "00"),  # Arabic-Indic digits are digits too
        ("Straße", "straße"),
        ("", ""),
    ],
)
def test_normalize(form: str, expected: str) -> None:
    assert normalize(form) == expected


def test_build_assigns_ids_from_first_id_in_order_of_appearance(vocab: Vocabulary) -> None:
    words = vocab.tables["words"]
    assert words[:3] == ["the", "dog", "barked"]  # "The" and "the" are one word
    assert "0000" in words and "1999" not in words and "2000" not in words
    assert words.count("0000") == 1
    assert vocab.index["words"]["the"] == FIRST_ID
    assert vocab.labels == ["det", "nsubj", "root", "case", "obl", "punct", "obj"]
    assert vocab.label_index["det"] == 0
    assert vocab.tables["morph"] == [
        "Definite=Def", "Number=Sing", "Mood=Ind", "Tense=Past", "NumType=Card",
    ]
    assert vocab.tables["prefixes"][:2] == ["the", "dog"] and "barke" in vocab.tables["prefixes"]
    assert "ked" in vocab.tables["suffixes"]
    for name, table in vocab.tables.items():
        assert len(set(table)) == len(table), name
        assert sorted(vocab.index[name].values()) == list(range(FIRST_ID, FIRST_ID + len(table)))


def test_encode_shapes_dtypes_and_root_row(vocab: Vocabulary) -> None:
    sent = TRAIN[0]
    enc = vocab.encode(sent)
    n = len(sent)
    assert len(enc) == n
    assert enc.tokens.shape == (n + 1, N_COLS) and enc.tokens.dtype == np.int32
    assert enc.tokens.flags.c_contiguous
    assert enc.morph_ptr.shape == (n + 2,) and enc.morph_ptr.dtype == np.int32
    assert enc.morph.dtype == np.int32 and enc.morph.ndim == 1
    assert enc.heads.shape == (n + 1,) and enc.heads.dtype == np.int32
    assert enc.labels.shape == (n + 1,) and enc.labels.dtype == np.int32
    assert (enc.tokens[0] == SPECIAL_IDS["root"]).all()
    assert enc.heads.tolist() == [-1, 2, 3, 0, 5, 3, 3]
    assert enc.labels[0] == -1
    assert [vocab.labels[i] for i in enc.labels[1:]] == sent.deprels[1:]


def test_encode_columns_hold_the_normalized_attributes(vocab: Vocabulary) -> None:
    sent = TRAIN[0]
    enc = vocab.encode(sent)
    idx = vocab.index
    for i in range(1, len(sent) + 1):
        w = normalize(sent.form[i - 1])
        row = enc.tokens[i]
        assert row[WORD] == idx["words"][w]
        assert row[LEMMA] == idx["lemmas"][sent.lemma[i - 1]]
        assert row[UPOS] == idx["upos"][sent.upos[i - 1]]
        assert row[XPOS] == idx["xpos"][sent.xpos[i - 1]]
        assert row[PREFIX] == idx["prefixes"][w[:5]]
        assert row[SUFFIX] == idx["suffixes"][w[-3:]]
    # "1999" and "2000" normalize to the same word
    assert enc.tokens[5, WORD] == vocab.encode(TRAIN[1]).tokens[4, WORD]


def test_unknown_symbols_get_zero_and_unknown_labels_minus_one(vocab: Vocabulary) -> None:
    sent = Sentence.build(
        ["THE", "zebra", "barked"],
        heads=[-1, 2, 3, 0],
        deprels=["", "det", "nsubj:pass", "root"],
        lemma=["the", "zebra", "barked"],
        upos=["X3", "NOUN", "X6"],
        xpos=["Tt", "NN", "Tb"],
        feats=["Definite=Def", "Gender=Neut|Number=Sing", "_"],
    )
    enc = vocab.encode(sent)
    assert enc.tokens[1, WORD] == vocab.index["words"]["the"]  # case does not matter
    assert enc.tokens[2].tolist() == [0] * N_COLS  # nothing of "zebra" was seen
    assert enc.tokens[3, WORD] != 0
    assert enc.labels.tolist() == [-1, vocab.label_index["det"], -1, vocab.label_index["root"]]
    assert enc.morph.tolist() == [vocab.index["morph"]["Definite=Def"], 0,
                                  vocab.index["morph"]["Number=Sing"]]


def test_morph_is_csr(vocab: Vocabulary) -> None:
    sent = TRAIN[0]
    enc = vocab.encode(sent)
    ptr = enc.morph_ptr
    assert ptr[0] == 0 and ptr[1] == 0  # the root has no features
    assert ptr[-1] == enc.morph.size == 5
    assert (np.diff(ptr) >= 0).all()
    table = vocab.index["morph"]
    for i, feats in enumerate(sent.feats, start=1):
        expected = [] if feats == "_" else [table[f] for f in feats.split("|")]
        assert enc.morph[ptr[i] : ptr[i + 1]].tolist() == expected


def test_sentence_without_features_has_empty_morph(vocab: Vocabulary) -> None:
    enc = vocab.encode(TRAIN[1])
    assert enc.morph.size == 0 and enc.morph.dtype == np.int32
    assert enc.morph_ptr.tolist() == [0] * 6


def test_save_load_round_trip(vocab: Vocabulary, tmp_path: Path) -> None:
    path = tmp_path / "vocab.json"
    vocab.save(path)
    loaded = Vocabulary.load(path)
    assert loaded.tables == vocab.tables
    assert loaded.labels == vocab.labels
    assert loaded.index == vocab.index
    for sent in TRAIN:
        a, b = vocab.encode(sent), loaded.encode(sent)
        for name in ("tokens", "morph_ptr", "morph", "heads", "labels"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_real_treebank_encodes_every_training_label(data: Path) -> None:
    sents = list(islice(read_conll(data / "en_ewt" / "train.conllu"), 300))
    vocab = Vocabulary.build(sents)
    assert Vocabulary.build(sents).tables == vocab.tables  # building is deterministic
    for sent in sents:
        enc = vocab.encode(sent)
        assert (enc.labels[1:] >= 0).all()
        assert (enc.tokens[1:, WORD] >= FIRST_ID).all()
        assert enc.morph_ptr[-1] == enc.morph.size
        assert np.array_equal(enc.heads, sent.heads)
