"""Pretrained word vectors (``neural.vectors``): the text and binary readers, their errors, and
a tiny network trained with a vectors file the test writes (frozen table, unseen words, the
saved model without the file, the cap, determinism)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data

torch = pytest.importorskip("torch")

from neural_tiny import tiny_config, train_tiny, write_slices  # noqa: E402

import dparse  # noqa: E402
from dparse.conll import read_conll  # noqa: E402
from dparse.errors import DparseError  # noqa: E402
from dparse.modeldir import WEIGHTS_FILE, file_sha256, load_arrays  # noqa: E402
from dparse.neural.vectors import read_vectors  # noqa: E402
from dparse.vocab import normalize  # noqa: E402

DIM = 6


def write_text_vectors(path: Path, words: list[str], matrix: np.ndarray, header: bool = True,
                       trailing: str = " ") -> Path:
    """A word2vec/fastText text file (``trailing`` after each line's last value)."""
    lines = [f"{len(words)} {matrix.shape[1]}"] if header else []
    lines += [" ".join([w, *(repr(float(v)) for v in row)]) + trailing
              for w, row in zip(words, matrix, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_binary_vectors(path: Path, words: list[str], matrix: np.ndarray,
                         newline: bool = True, count: int | None = None) -> Path:
    """A word2vec binary file (a newline after each vector or not)."""
    out = [f"{len(words) if count is None else count} {matrix.shape[1]}\n".encode()]
    for w, row in zip(words, matrix, strict=True):
        out.append(w.encode() + b" " + row.astype("<f4").tobytes() + (b"\n" if newline else b""))
    path.write_bytes(b"".join(out))
    return path


def random_vectors(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)


def expected(words: list[str], matrix: np.ndarray, limit: int) -> tuple[list[str], np.ndarray]:
    """The first ``limit`` distinct normalized words and their rows, by brute force."""
    kept: list[str] = []
    rows = []
    for w, row in zip(words, matrix, strict=True):
        if normalize(w) not in kept and len(kept) < limit:
            kept.append(normalize(w))
            rows.append(row)
    return kept, np.array(rows)


WORDS = ["the", "The", ",", "café", "Dog", "1990", "2001", "naïve", "</s>", "x-ray"]


@pytest.mark.parametrize("limit", [1, 4, 100])
def test_text_and_binary_files_read_to_the_same_vectors(tmp_path: Path, limit: int) -> None:
    """Every variant of both formats gives the brute-force words (normalized, the first of a
    form winning: "The" after "the", "2001" after "1990") and exactly the written floats."""
    matrix = random_vectors(len(WORDS))
    words, rows = expected(WORDS, matrix, limit)
    files = [write_text_vectors(tmp_path / "a.vec", WORDS, matrix),
             write_text_vectors(tmp_path / "b.txt", WORDS, matrix, header=False, trailing=""),
             write_binary_vectors(tmp_path / "c.bin", WORDS, matrix),
             write_binary_vectors(tmp_path / "d.bin", WORDS, matrix, newline=False)]
    for path in files:
        vectors = read_vectors(path, limit)
        assert vectors.words == words, path
        assert vectors.matrix.dtype == np.float32 and vectors.dim == DIM
        assert np.array_equal(vectors.matrix, rows), path
    assert len(words) == min(limit, 8)


def test_reading_stops_at_the_cap(tmp_path: Path) -> None:
    """The entries after ``limit`` distinct words are not read (so not checked either)."""
    path = write_text_vectors(tmp_path / "v.vec", WORDS[:3], random_vectors(3), header=False)
    with path.open("a", encoding="utf-8") as f:
        f.write("broken 1 2\n")
    assert read_vectors(path, 2).words == ["the", ","]
    with pytest.raises(DparseError, match=r"v\.vec:4: 2 values, expected 6"):
        read_vectors(path, 3)


def _text(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(("content", "message"), [
    ("3 2\na 1 2\nb 1 2 3\nc 1 2\n", r"t\.vec:3: 3 values, expected 2 \(the header's"),
    ("a 1 2\nb 1\n", r"t\.vec:2: 1 values, expected 2 \(the first line's\)"),
    ("a 1 2\nb 1 two\n", r"t\.vec:2: the value 'two' is not a number"),
    ("a 1 2\nb 1 nan\n", r"t\.vec:2: a value that is not a finite number"),
    ("3 2\na 1 2\nb 1 2\n", r"t\.vec: the header's count is 3 but the file holds 2 entries"),
    ("1 2\na 1 2\nb 1 2\n", r"t\.vec:3: more entries than the header's count 1"),
    ("2 3\na 1 2\nb 1 2\n", r"t\.vec:2: 2 values, expected 3 \(the header's dimension\)"),
    ("", r"t\.vec: no word vectors in the file"),
    ("0 300\n", r"t\.vec:1: the header '0 300' gives no vectors"),
    ("a\n", r"t\.vec:1: a word without values"),
    (" 1 2\n", r"t\.vec:1: an empty word"),
    (b"a 1 2\n\xff\xfe 1 2\n", r"t\.vec:2: not UTF-8 text"),
])
def test_malformed_text_files_name_the_file_and_line(tmp_path: Path, content: str,
                                                     message: str) -> None:
    with pytest.raises(DparseError, match=message):
        read_vectors(_text(tmp_path / "t.vec", content), 100)


def test_malformed_binary_files_name_the_entry_and_byte(tmp_path: Path) -> None:
    matrix = random_vectors(3)
    good = write_binary_vectors(tmp_path / "good.bin", ["a", "bb", "c"], matrix).read_bytes()
    # the header "3 6\n" (4 bytes), then entries of len(word) + 1 + 24 + 1 bytes
    a, bb, c = 4, 4 + 27, 4 + 27 + 28
    cases = [
        (good[:-10], rf"entry 3 \(byte {c}\): truncated: the file ends inside the vector of 'c'"),
        (good.replace(b"3 6\n", b"4 6\n", 1),
         rf"entry 4 \(byte {len(good)}\): truncated: the file ends after 3 entries, but the "
         r"header's count is 4"),
        (good.replace(b"3 6\n", b"2 6\n", 1), rf"byte {c}: more data after the header's count"),
        (b"", r"empty: no word vectors"),
        (b"a 1 2\n", r"byte 0: not a word2vec binary file"),
        (good[:bb] + b"\xff" + good[bb + 1:], rf"entry 2 \(byte {bb}\): the word is not UTF-8"),
        (good[:a] + b" " + good[a + 1:], rf"entry 1 \(byte {a}\): an empty word"),
        (good.replace(b"3 6\n", b"3 7\n", 1), r"entry \d \(byte \d+\)"),
    ]
    for data, message in cases:
        with pytest.raises(DparseError, match=r"bad\.bin: " + message):
            read_vectors(_text(tmp_path / "bad.bin", data), 100)
    with pytest.raises(DparseError, match=r"missing\.vec: cannot read the vectors file"):
        read_vectors(tmp_path / "missing.vec", 100)


# The trained model: its vectors file holds training words, words seen only in dev and, past
# the cap, words that must not be kept.

SLICE = {"train": 30, "dev": 8}
CAP = 40


def _file_words(folder: Path) -> tuple[list[str], list[str]]:
    """The vectors file's words (training words with some capitalized duplicates, words of
    dev unseen in training, then filler) and the dev-only words among them."""
    train = list(dict.fromkeys(normalize(w) for s in read_conll(folder / "train.conllu")
                               for w in s.form))
    dev_only = [w for w in dict.fromkeys(normalize(w) for s in read_conll(folder / "dev.conllu")
                                         for w in s.form) if w not in set(train)]
    words = [*train[:10], *(w.upper() for w in train[:3]), *dev_only[:10]]
    words += [f"filler{chr(97 + i)}" for i in range(CAP + 5 - len(words))]  # no digits: distinct
    return words, dev_only[:10]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A tiny words-alone network trained with a text vectors file (a relative path: from the
    data root), its in-memory model, and the file's words and vectors."""
    from dparse.config import load_config
    from dparse.parsers import train_model

    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    folder = write_slices(tmp_path_factory.mktemp("vectors"), **SLICE)
    words, dev_only = _file_words(folder)
    matrix = random_vectors(len(words), seed=1) * 3
    write_text_vectors(folder / "words.vec", words, matrix)
    raw = tiny_config(tags="none", vectors="words.vec", vectors_max=CAP, batch_tokens=100
                      ) | {"training": {"epochs": 2, "seed": 5}}
    cfg = load_config(raw=raw, data_root=str(folder))
    result = train_model(cfg, folder / "model", {})
    return {"folder": folder, "raw": raw, "model": result.model, "words": words,
            "matrix": matrix, "dev_only": dev_only}


def test_the_frozen_table_holds_the_files_vectors_after_training(trained: dict) -> None:
    from dparse.neural.vocab import NeuralVocabulary

    folder = trained["folder"]
    words, rows = expected(trained["words"], trained["matrix"], CAP)
    vocab = NeuralVocabulary.load(folder / "model" / "vocab.json")
    assert vocab.pretrained == words and len(words) == CAP and vocab.pretrained_dim == DIM
    assert len({normalize(w) for w in trained["words"]}) > CAP  # the cap left words out
    arrays = load_arrays(folder / "model" / WEIGHTS_FILE)
    table = arrays["encoder.pretrained"]
    assert table.shape == (CAP + 3, DIM)
    assert np.array_equal(table[3:], rows)  # exactly the file's floats, after training
    assert not table[:3].any()  # padding, unknown and root: no pretrained vector
    assert np.abs(arrays["encoder.project"]).max() > 0  # the projection trained from zero
    assert not any(p is trained["model"].network.encoder.pretrained
                   for p in trained["model"].network.parameters())


def test_an_unseen_word_in_the_file_reads_its_pretrained_vector(trained: dict) -> None:
    """A dev word absent from training but in the file: the unknown word id, its own
    pretrained id; its sentence's arc scores change when that id is made unknown."""
    from dparse.neural.vocab import UNK

    model = trained["model"]
    vocab = model.vocab
    word = trained["dev_only"][0]
    sent = next(s for s in read_conll(trained["folder"] / "dev.conllu")
                if word in [normalize(f) for f in s.form])
    enc = vocab.encode(sent)
    i = [normalize(f) for f in sent.form].index(word) + 1
    assert enc.words[i] == UNK and enc.pretrained[i] == vocab.pretrained.index(word) + 3
    model.score_batch([enc])
    with_vector = enc.scores[0]
    enc.pretrained = enc.pretrained.copy()
    enc.pretrained[i] = UNK
    model.score_batch([enc])
    # the network in eval mode is a fixed function of its input: with a zero projection the
    # two encodings would score identically (a few training steps make it small, not zero)
    assert not np.array_equal(enc.scores[0], with_vector)
    assert np.array_equal(model.vocab.encode(sent).words, enc.words)


def test_the_saved_model_parses_alike_without_the_vectors_file(trained: dict, tmp_path: Path
                                                               ) -> None:
    from dparse.decoders import configured_decoder

    folder = trained["folder"]
    dev = list(read_conll(folder / "dev.conllu"))
    in_memory = list(trained["model"].parse(dev, configured_decoder("cle", None), True))
    shutil.copytree(folder / "model", tmp_path / "model")
    (folder / "words.vec").rename(tmp_path / "moved.vec")
    try:
        loaded = list(dparse.load(tmp_path / "model").parse_many(dev))
    finally:
        (tmp_path / "moved.vec").rename(folder / "words.vec")
    for a, b in zip(in_memory, loaded, strict=True):
        assert a.heads.tolist() == b.heads.tolist() and a.deprels == b.deprels


def test_training_with_vectors_is_deterministic_and_the_binary_file_trains_alike(
        trained: dict) -> None:
    """The same training from the .bin copy of the file: the same weights, byte for byte."""

    folder = trained["folder"]
    write_binary_vectors(folder / "words.bin", trained["words"], trained["matrix"])
    raw = trained["raw"] | {"neural": trained["raw"]["neural"] | {"vectors": "words.bin"}}
    again = train_tiny(folder, raw, folder / "again")
    assert file_sha256(again / WEIGHTS_FILE) == file_sha256(folder / "model" / WEIGHTS_FILE)


def test_without_vectors_nothing_is_added_and_the_initialization_is_the_same(
        trained: dict, tmp_path: Path) -> None:
    """A network without vectors has no pretrained table nor projection, and a network with
    them initializes every other tensor as it would (the zero projection draws nothing)."""
    from dparse.neural.network import ParserNetwork
    from dparse.neural.vocab import NeuralVocabulary

    model = trained["model"]
    v = model.vocab
    plain = NeuralVocabulary(v.words, v.chars, v.tags, v.labels, v.reads_tags, v.filled)
    torch.manual_seed(9)
    without = ParserNetwork(model.settings, plain).state_dict()
    torch.manual_seed(9)
    with_vectors = ParserNetwork(model.settings, v,
                                 trained["matrix"][:len(v.pretrained)]).state_dict()
    assert set(with_vectors) - set(without) == {"encoder.pretrained", "encoder.project"}
    for name, tensor in without.items():
        assert torch.equal(tensor, with_vectors[name]), name
    plain.save(tmp_path / "vocab.json")
    assert "pretrained" not in (tmp_path / "vocab.json").read_text()


@requires_data
def test_bad_vectors_settings_are_clear_errors(tmp_path: Path) -> None:
    from dparse.config import load_config
    from dparse.errors import ConfigError

    base = {"parser": "neural", "data": {"train": "x.conllu"}}
    with pytest.raises(ConfigError, match="neural.vectors_max must be at least 1"):
        load_config(raw=base | {"neural": {"vectors_max": 0}})
    with pytest.raises(ConfigError, match="neural.vectors must be a file's path or null"):
        load_config(raw=base | {"neural": {"vectors": ""}})
    with pytest.raises(ConfigError, match="neural.vectors: bad value"):
        load_config(raw=base | {"neural": {"vectors": 3}})
    folder = write_slices(tmp_path, train=5, dev=2)
    raw = tiny_config(vectors="absent.vec") | {"training": {"epochs": 1}}
    with pytest.raises(DparseError, match=r"absent\.vec: cannot read the vectors file"):
        train_tiny(folder, raw, tmp_path / "m")
    (folder / "bad.vec").write_text("a 1 2\nb 1 x\n", encoding="utf-8")
    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps(tiny_config(vectors="bad.vec")), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "dparse", "train", str(config), "--out",
                           str(tmp_path / "m"), "--data-root", str(folder)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "bad.vec:2: the value 'x' is not a number" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "m").exists()
