"""dparse.modeldir: model directories written whole (staged, sealed by a manifest, swapped
into place) and refused on load, naming the file, when damaged, mixed or unchecked."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import DATA, requires_data
from dparse._ext.arcfeatures import FeatureSpace
from dparse.graph.o2features import SecondOrderSpace
from dparse.transition.easyfirst_core import layout_size

from dparse import __version__, modeldir
from dparse.config import load_config
from dparse.conll import Sentence, read_conll, write_conll
from dparse.decoders import get_decoder
from dparse.epochs import save_model
from dparse.errors import DparseError
from dparse.graph.load import load_model
from dparse.graph.model import ArcFactoredModel
from dparse.graph.pruner import Pruner
from dparse.graph.secondorder import SecondOrderModel
from dparse.modeldir import (
    MANIFEST_FILE,
    OLD_WEIGHTS_FILE,
    WEIGHTS_FILE,
    check_model_dir,
    writing_model_dir,
)
from dparse.postags import TagSettings
from dparse.prune import LengthDictionary
from dparse.transition.easyfirst import EasyFirstModel, tag_flags
from dparse.undirected.parser import LABEL_BITS, UndirectedModel
from dparse.vocab import Vocabulary

pytestmark = requires_data


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    return list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 30))


@pytest.fixture(scope="module")
def vocab(sentences: list[Sentence]) -> Vocabulary:
    return Vocabulary.build(sentences)


def _weights(size: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=size).astype(np.float32)


def _first(vocab: Vocabulary, seed: int) -> ArcFactoredModel:
    space = FeatureSpace(14, 8, len(vocab.labels))
    return ArcFactoredModel(vocab, space, _weights(space.size, seed))


def _second(vocab: Vocabulary, seed: int) -> SecondOrderModel:
    first = FeatureSpace(14, 8, len(vocab.labels))
    space = SecondOrderSpace(first, 12, 12)
    pruner = Pruner(_first(vocab, seed + 100), top_k=5, threshold=0.01)
    return SecondOrderModel(vocab, space, _weights(space.size, seed), pruner, True, True)


def _easyfirst(vocab: Vocabulary, seed: int) -> EasyFirstModel:
    tags = TagSettings("upos", ("ADP",), ("CCONJ",))
    size = layout_size(12, 8, len(vocab.labels))
    return EasyFirstModel(vocab, _weights(size, seed), 12, 8, tags.column,
                          tag_flags(vocab, tags))


def _undirected(vocab: Vocabulary, seed: int, sentences: list[Sentence]) -> UndirectedModel:
    space = FeatureSpace(14, LABEL_BITS, 1)
    return UndirectedModel(vocab, space, _weights(space.size, seed),
                           LengthDictionary.learn(sentences), both=True, groups=0)


def _contents(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (relative path -> bytes)."""
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# -- round trips --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["first", "second"])
def test_graph_models_round_trip(kind: str, vocab: Vocabulary, sentences: list[Sentence],
                                 tmp_path: Path) -> None:
    model = _first(vocab, 1) if kind == "first" else _second(vocab, 1)
    model.save(tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert type(loaded) is type(model) and np.array_equal(loaded.weights, model.weights)
    decoder = get_decoder("cle")
    before = [s.to_conll() for s in model.parse(sentences, decoder)]
    assert [s.to_conll() for s in loaded.parse(sentences, decoder)] == before
    assert type(model).load(tmp_path / "m").weights.shape == model.weights.shape


def test_easyfirst_and_undirected_models_round_trip(vocab: Vocabulary,
                                                    sentences: list[Sentence],
                                                    tmp_path: Path) -> None:
    easy = _easyfirst(vocab, 2)
    easy.save(tmp_path / "easy")
    loaded = EasyFirstModel.load(tmp_path / "easy")
    assert np.array_equal(loaded.weights, easy.weights) and loaded.tag == easy.tag
    assert np.array_equal(loaded.flags, easy.flags)
    undirected = _undirected(vocab, 3, sentences)
    undirected.save(tmp_path / "umst")
    back = UndirectedModel.load(tmp_path / "umst")
    assert np.array_equal(back.weights, undirected.weights) and back.both
    assert back.pruner is not None and back.pruner.to_dict() == undirected.pruner.to_dict()
    assert "prune.json" in json.loads((tmp_path / "umst" / MANIFEST_FILE).read_text())["files"]


def test_manifest_lists_every_file_with_size_and_checksum(vocab: Vocabulary,
                                                          tmp_path: Path) -> None:
    cfg = load_config(raw={"data": {"train": "t.conllu"}})
    save_model(SimpleNamespace(model=_second(vocab, 1)), cfg, tmp_path / "m")
    manifest = json.loads((tmp_path / "m" / MANIFEST_FILE).read_text())
    assert manifest["format"] == "dparse-model" and manifest["format_version"] == 1
    assert manifest["dparse_version"] == __version__
    files = _contents(tmp_path / "m")
    assert set(manifest["files"]) == set(files) - {MANIFEST_FILE} == {
        "config.yaml", "templates.json", "vocab.json", "weights.bin",
        "pruner/pruner.json", "pruner/templates.json", "pruner/vocab.json", "pruner/weights.bin"}
    for rel, entry in manifest["files"].items():
        assert entry == {"size": len(files[rel]), "sha256": hashlib.sha256(files[rel]).hexdigest(),
                         "crc32": f"{zlib.crc32(files[rel]):08x}"}
    assert stat.S_IMODE((tmp_path / "m").stat().st_mode) == 0o777 & ~modeldir.current_umask()


def test_same_model_saved_later_gives_the_same_bytes(vocab: Vocabulary, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    model = _second(vocab, 4)
    model.save(tmp_path / "a")
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 86_400)  # a zip time stamp would differ
    model.save(tmp_path / "b")
    assert _contents(tmp_path / "a") == _contents(tmp_path / "b")


# -- saving over what is there ------------------------------------------------------------------


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_save_over_a_model_replaces_it_whole(exchange: bool, vocab: Vocabulary, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    if not exchange:
        monkeypatch.setattr(modeldir, "exchange_paths", lambda a, b: False)
    target = tmp_path / "m"
    _second(vocab, 1).save(target)
    target.chmod(0o750)
    new = _first(vocab, 2)
    new.save(target)
    assert isinstance(load_model(target), ArcFactoredModel)
    assert not (target / "pruner").exists()  # nothing of the old model is left in it
    assert np.array_equal(load_model(target).weights, new.weights)
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert _hidden(tmp_path) == []


def test_an_error_while_saving_keeps_the_old_model(vocab: Vocabulary, tmp_path: Path) -> None:
    target = tmp_path / "m"
    _first(vocab, 1).save(target)
    old = _contents(target)
    with pytest.raises(RuntimeError), writing_model_dir(target) as staging:
        _first(vocab, 2).write_files(staging)
        raise RuntimeError("crashed")
    assert _contents(target) == old and _hidden(tmp_path) == []


def test_what_is_not_a_model_is_never_replaced(vocab: Vocabulary, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("keep me")
    with pytest.raises(DparseError, match=f"{notes}: it exists and is not a dparse model"):
        _first(vocab, 1).save(notes)
    assert _contents(notes) == {"todo.txt": b"keep me"}
    (tmp_path / "file").write_text("keep me too")
    with pytest.raises(DparseError, match="a file of that name exists"):
        _first(vocab, 1).save(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    _first(vocab, 1).save(tmp_path / "empty")  # an empty directory is taken
    _first(vocab, 1).save(tmp_path / "new" / "parents" / "m")  # missing parents are created
    load_model(tmp_path / "new" / "parents" / "m")
    assert _hidden(tmp_path) == []


def test_model_saved_before_manifests_is_refused_and_may_be_overwritten(
    vocab: Vocabulary, tmp_path: Path
) -> None:
    old = tmp_path / "old"
    _first(vocab, 1).save(old)
    (old / MANIFEST_FILE).unlink()  # what every model saved before manifests looks like:
    (old / WEIGHTS_FILE).rename(old / OLD_WEIGHTS_FILE)  # its weights in weights.npz
    with pytest.raises(DparseError, match=f"{old}: not a dparse model directory: no "
                                          f"{MANIFEST_FILE} .*retrain"):
        load_model(old)
    _first(vocab, 2).save(old)
    check_model_dir(old)


def test_symlinked_model_directory_keeps_its_link(vocab: Vocabulary, tmp_path: Path) -> None:
    (tmp_path / "run1").mkdir()
    link = tmp_path / "current"
    link.symlink_to("run1")
    _first(vocab, 1).save(link)
    assert link.is_symlink() and (tmp_path / "run1" / MANIFEST_FILE).is_file()
    new = _first(vocab, 2)
    new.save(link)
    assert link.is_symlink() and os.readlink(link) == "run1"
    assert np.array_equal(load_model(tmp_path / "run1").weights, new.weights)
    assert _hidden(tmp_path) == []


def test_leftovers_of_a_killed_save_are_removed_by_the_next(vocab: Vocabulary,
                                                            tmp_path: Path) -> None:
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)
    stale_new = tmp_path / f".m.dparse-{dead}-abcd1234.new"
    stale_old = tmp_path / f".m.dparse-{dead}-abcd1234.old"
    live = tmp_path / f".m.dparse-{os.getppid()}-efgh5678.new"  # a save still running
    for d in (stale_new, stale_old, live):
        (d / "pruner").mkdir(parents=True)
        (d / "pruner" / "weights.bin").write_bytes(b"partial")
    _first(vocab, 1).save(tmp_path / "m")
    assert _hidden(tmp_path) == [live.name]


# -- damaged models -----------------------------------------------------------------------------


def _truncate(path: Path, keep: float) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _manifest(directory: Path, change: Callable[[dict], None]) -> None:
    data = json.loads((directory / MANIFEST_FILE).read_text())
    change(data)
    (directory / MANIFEST_FILE).write_text(json.dumps(data))


DAMAGES: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "truncated weights": (lambda d, o: _truncate(d / "weights.bin", 0.5),
                          r"/weights\.bin: \d+ bytes where manifest\.json says \d+"),
    "emptied weights": (lambda d, o: _truncate(d / "weights.bin", 0),
                        r"/weights\.bin: 0 bytes where manifest\.json says"),
    "truncated vocab": (lambda d, o: _truncate(d / "vocab.json", 0.9),
                        r"/vocab\.json: \d+ bytes where"),
    "emptied vocab": (lambda d, o: _truncate(d / "vocab.json", 0), r"/vocab\.json: 0 bytes"),
    "one byte changed": (lambda d, o: _flip_byte(d / "weights.bin"),
                         r"/weights\.bin: contents do not match the checksum"),
    "weights of another model": (lambda d, o: shutil.copy(o / "weights.bin", d / "weights.bin"),
                                 r"/weights\.bin: (\d+ bytes where|contents do not match)"),
    "pruner of another model": (
        lambda d, o: shutil.copy(o / "pruner" / "weights.bin", d / "pruner" / "weights.bin"),
        r"/pruner/weights\.bin: (\d+ bytes where|contents do not match)"),
    "config of another model": (lambda d, o: shutil.copy(o / "config.yaml", d / "config.yaml"),
                                r"/config\.yaml: (\d+ bytes where|contents do not match)"),
    "extra file": (lambda d, o: (d / "pruner" / "notes.txt").write_text("x"),
                   r"/pruner/notes\.txt: not part of the model"),
    "missing file": (lambda d, o: (d / "pruner" / "pruner.json").unlink(),
                     r"/pruner/pruner\.json: missing \(listed in manifest\.json\)"),
    "missing manifest": (lambda d, o: (d / MANIFEST_FILE).unlink(),
                         r"not a dparse model directory: no manifest\.json"),
    "manifest not JSON": (lambda d, o: _truncate(d / MANIFEST_FILE, 0.5),
                          r"/manifest\.json: damaged model manifest"),
    "manifest of another model": (lambda d, o: shutil.copy(o / MANIFEST_FILE, d / MANIFEST_FILE),
                                  r"/(weights|vocab|config|pruner)\S*: "),
    "newer format": (lambda d, o: _manifest(d, lambda m: m.update(format_version=99)),
                     r"/manifest\.json: model format version 99 is newer than this dparse"),
    "one byte changed, manifest without CRC-32s (checked by SHA-256)": (
        lambda d, o: (_manifest(d, lambda m: [e.pop("crc32") for e in m["files"].values()]),
                      _flip_byte(d / "weights.bin")),
        r"/weights\.bin: contents do not match the checksum"),
    "bad CRC-32 in the manifest": (lambda d, o: _manifest(d, lambda m: m["files"]["vocab.json"]
                                                          .update(crc32="xyz")),
                                   r"/manifest\.json: damaged model manifest \(bad entry for "
                                   r"vocab\.json"),
    "file outside listed": (lambda d, o: _manifest(d, lambda m: m["files"].update(
        {"../x": {"size": 1, "sha256": "0" * 64}})), r"damaged model manifest \(bad file name"),
}


@pytest.fixture
def two_models(vocab: Vocabulary, tmp_path: Path) -> tuple[Path, Path]:
    """Two second-order model directories (with config.yaml) of the same shape."""
    folder = tmp_path / "models"
    write_conll(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 30), tmp_path / "t.conllu")
    for name, seed in (("m", 1), ("other", 2)):
        cfg = load_config(raw={"data": {"train": str(tmp_path / "t.conllu")},
                               "training": {"seed": seed}})
        save_model(SimpleNamespace(model=_second(vocab, seed)), cfg, folder / name)
    return folder / "m", folder / "other"


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_damaged_model_is_refused_naming_the_file(damage: str,
                                                  two_models: tuple[Path, Path]) -> None:
    directory, other = two_models
    load_model(directory)  # intact; the check is remembered until a file changes
    change, message = DAMAGES[damage]
    change(directory, other)
    with pytest.raises(DparseError, match=message):
        load_model(directory)
    with pytest.raises(DparseError, match=message):
        SecondOrderModel.load(directory)


@pytest.mark.parametrize("damage", ["truncated weights", "emptied vocab", "missing manifest",
                                    "config of another model"])
def test_command_line_refuses_a_damaged_model_with_exit_2(
    damage: str, two_models: tuple[Path, Path], tmp_path: Path
) -> None:
    directory, other = two_models
    text = tmp_path / "in.conllu"
    write_conll(islice(read_conll(DATA / "en_ewt" / "test.conllu"), 3), text)
    out = tmp_path / "out.conllu"
    out.write_text("old output\n")

    def parse() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dparse", "parse", str(directory),
                               str(text), "-o", str(out)], capture_output=True, text=True)

    assert parse().returncode == 0 and out.read_text() != "old output\n"
    out.write_text("old output\n")
    change, message = DAMAGES[damage]
    change(directory, other)
    run = parse()
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert run.stderr.startswith("dparse: error: ")
    assert re.search(message, run.stderr), run.stderr
    assert out.read_text() == "old output\n"


# Loaded only by what needs them (memory: OpenSSL alone is 3.5 MB of a 100 MB parse): a
# one-job first-order parse loads no SHA-256, process pool, forest writer or higher-order code.
NOT_FOR_A_FIRST_ORDER_PARSE = (
    "_hashlib", "concurrent.futures", "multiprocessing", "dparse.hypergraph.forest_io",
    "dparse.graph.secondorder", "dparse.graph.thirdorder", "dparse.graph.o2features",
    "dparse.graph.o3features", "dparse.graph.eisner3", "dparse.graph.greedy_search",
    "dparse.graph.greedy_parts", "dparse.graph.greedy_witness",
    "dparse.graph.generalized_eisner", "dparse._ext.cubepruning", "dparse.graph.dd2",
    "dparse.undirected.decoders")


def test_first_order_parse_loads_only_what_it_uses(vocab: Vocabulary, tmp_path: Path) -> None:
    text = tmp_path / "in.conllu"
    write_conll(islice(read_conll(DATA / "en_ewt" / "test.conllu"), 3), text)
    cfg = load_config(raw={"data": {"train": str(text)}})
    save_model(SimpleNamespace(model=_first(vocab, 1)), cfg, tmp_path / "m")
    script = ("import sys; from dparse.cli import main\n"
              "sys.argv[0] = 'dparse'\n"
              "try:\n    main()\n"
              "except SystemExit as end:\n    assert not end.code, end.code\n"
              "print(' '.join(sorted(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", script, "parse", str(tmp_path / "m"), str(text),
                          "-o", str(tmp_path / "out.conllu")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    loaded = set(run.stdout.split())
    assert "dparse.graph.model" in loaded and "dparse.graph.cle" in loaded
    assert loaded.isdisjoint(NOT_FOR_A_FIRST_ORDER_PARSE), loaded & set(NOT_FOR_A_FIRST_ORDER_PARSE)
