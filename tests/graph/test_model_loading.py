"""Models that load at once (issue 34): weights in an aligned array file, memory-mapped
read-only on load; models saved before (weights.npz) still load and parse the same."""

from __future__ import annotations

import json
import mmap
import shutil
import zlib
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, requires_data
from dparse._ext.arcfeatures import FeatureSpace
from dparse.graph.o2features import SecondOrderSpace

from dparse import modeldir
from dparse.conll import Sentence, read_conll
from dparse.decoders import get_decoder
from dparse.errors import DparseError
from dparse.graph.load import load_model
from dparse.graph.model import ArcFactoredModel, GraphModel
from dparse.graph.pruner import Pruner
from dparse.graph.secondorder import SecondOrderModel
from dparse.modeldir import (
    ARRAYS_MAGIC,
    OLD_WEIGHTS_FILE,
    WEIGHTS_FILE,
    load_arrays,
    save_arrays,
    writing_model_dir,
)
from dparse.timer import ParseTimer
from dparse.vocab import Vocabulary

ARRAYS = {
    "weights": np.arange(1000, dtype=np.float32) / 7,
    "bits": 18,
    "layout": "blocked",
    "flag": True,
    "table": np.arange(15, dtype=np.uint8).reshape(3, 5),
    "empty": np.zeros(0, dtype=np.int64),
    "ratio": np.float64(0.25),
}


def _mapped(array: np.ndarray) -> bool:
    """Whether ``array`` is a view of a memory map."""
    base = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None) if isinstance(base, np.ndarray) else base.obj
    return base is not None


def test_arrays_round_trip_mapped_read_only_and_aligned(tmp_path: Path) -> None:
    save_arrays(tmp_path / "a.bin", **ARRAYS)
    loaded = load_arrays(tmp_path / "a.bin")
    assert list(loaded) == list(ARRAYS)
    for name, value in ARRAYS.items():
        expected = np.asarray(value)
        assert loaded[name].dtype == expected.dtype and loaded[name].shape == expected.shape
        assert np.array_equal(loaded[name], expected)
        assert not loaded[name].flags.writeable
        assert loaded[name].ctypes.data % 64 == 0
    assert _mapped(loaded["weights"])
    assert (int(loaded["bits"]), str(loaded["layout"]), bool(loaded["flag"])) == (
        18, "blocked", True)
    with pytest.raises(ValueError, match="read-only"):
        loaded["weights"][0] = 1.0


def test_array_files_are_deterministic_and_rewritable_while_mapped(tmp_path: Path) -> None:
    save_arrays(tmp_path / "a.bin", **ARRAYS)
    save_arrays(tmp_path / "b.bin", **ARRAYS)
    data = (tmp_path / "a.bin").read_bytes()
    assert data == (tmp_path / "b.bin").read_bytes() and data.startswith(ARRAYS_MAGIC)
    mapped = load_arrays(tmp_path / "a.bin")
    # the file a process maps is replaced by a new one, never truncated under it (SIGBUS)
    save_arrays(tmp_path / "a.bin", weights=mapped["weights"] * 2)
    assert np.array_equal(mapped["weights"], ARRAYS["weights"])
    assert np.array_equal(load_arrays(tmp_path / "a.bin")["weights"], ARRAYS["weights"] * 2)


def test_array_files_refuse_objects(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="objects"):
        save_arrays(tmp_path / "a.bin", things=np.array([{}, []], dtype=object))


@pytest.mark.parametrize("damage", ["magic", "header", "truncated", "misaligned"])
def test_damaged_array_file_names_the_file(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "a.bin"
    save_arrays(path, **ARRAYS)
    data = path.read_bytes()
    header_end = data.index(b"\n", len(ARRAYS_MAGIC)) + 1
    header = json.loads(data[len(ARRAYS_MAGIC):header_end])
    if damage == "magic":
        data = b"PK" + data[2:]
    elif damage == "header":
        data = data[:len(ARRAYS_MAGIC)] + b"[" + data[len(ARRAYS_MAGIC) + 1:]
    elif damage == "truncated":
        data = data[:header_end + 100]
    else:
        header["weights"]["offset"] += 4
        line = json.dumps(header).encode()
        data = ARRAYS_MAGIC + line.ljust(header_end - len(ARRAYS_MAGIC) - 1) + data[header_end - 1:]
    path.unlink()
    path.write_bytes(data)
    with pytest.raises(DparseError, match=f"{path}: (not a dparse array file|damaged array file)"):
        load_arrays(path)
    with pytest.raises(DparseError, match=f"{tmp_path}: not a dparse model directory "
                                          r"\(no missing.bin\)"):
        load_arrays(tmp_path / "missing.bin")


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    return list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 25))


def _models(sentences: list[Sentence]) -> list[GraphModel]:
    """A first-order model (blocked layout) and a second-order one, random weights."""
    vocab = Vocabulary.build(sentences)
    rng = np.random.default_rng(34)
    space = FeatureSpace(14, 8, len(vocab.labels), "blocked")
    first = ArcFactoredModel(vocab, space, rng.normal(size=space.size).astype(np.float32))
    hashed = FeatureSpace(14, 8, len(vocab.labels))
    second_space = SecondOrderSpace(hashed, 14, 14)
    pruner = Pruner(ArcFactoredModel(vocab, hashed, rng.normal(size=hashed.size)
                                     .astype(np.float32)), 4, 1e-3)
    second = SecondOrderModel(vocab, second_space,
                              rng.normal(size=second_space.size).astype(np.float32), pruner,
                              True, True)
    return [first, second]


def _parse(model: GraphModel, sentences: list[Sentence]) -> list[str]:
    decoder = get_decoder("cle" if isinstance(model, ArcFactoredModel) else "eisner2-sib")
    return [s.to_conll() for s in model.parse(sentences, decoder, True, ParseTimer())]


@requires_data
def test_loaded_models_map_their_weights_and_parse_the_same(
    sentences: list[Sentence], tmp_path: Path
) -> None:
    for index, model in enumerate(_models(sentences)):
        model.save(tmp_path / f"m{index}")
        loaded = load_model(tmp_path / f"m{index}")
        assert type(loaded) is type(model)
        assert _mapped(loaded.weights) and not loaded.weights.flags.writeable
        assert loaded.weights.ctypes.data % 64 == 0
        assert np.array_equal(loaded.weights, model.weights)
        assert _parse(loaded, sentences) == _parse(model, sentences)


@requires_data
def test_models_saved_with_weights_npz_still_load(
    sentences: list[Sentence], tmp_path: Path
) -> None:
    """A model directory saved before aligned array files (its arrays in a compressed
    weights.npz, pruner too) loads, decompressed, and parses as the same model saved now."""
    for index, model in enumerate(_models(sentences)):
        new = tmp_path / f"new{index}"
        model.save(new)
        with writing_model_dir(tmp_path / f"old{index}") as staging:
            shutil.copytree(new, staging, dirs_exist_ok=True)
            (staging / "manifest.json").unlink()
            for path in staging.rglob(WEIGHTS_FILE):
                np.savez_compressed(path.with_name(OLD_WEIGHTS_FILE), **load_arrays(path))
                path.unlink()
        old = load_model(tmp_path / f"old{index}")
        assert not _mapped(old.weights)
        assert np.array_equal(old.weights, model.weights)
        assert _parse(old, sentences) == _parse(model, sentences)


@requires_data
def test_a_model_saved_over_a_loaded_one_leaves_it_whole(
    sentences: list[Sentence], tmp_path: Path
) -> None:
    first, _ = _models(sentences)
    first.save(tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    expected = _parse(loaded, sentences)
    ArcFactoredModel(first.vocab, first.space, -first.weights).save(tmp_path / "m")
    assert _parse(loaded, sentences) == expected
    assert np.array_equal(load_model(tmp_path / "m").weights, -first.weights)


@pytest.mark.parametrize("data", [b"", b"abc", bytes(range(256)) * 5000])
def test_load_checks_the_crc32_that_saving_wrote(tmp_path: Path, data: bytes) -> None:
    """The check at load reads files through a memory map, the save through a buffer: the
    same CRC-32 (zlib's) either way, empty files included."""
    path = tmp_path / "f"
    path.write_bytes(data)
    at_load = modeldir._file_digests(path, sha256=False)["crc32"]
    assert at_load == modeldir._file_digests(path, sha256=True)["crc32"]
    assert at_load == f"{zlib.crc32(data):08x}"
