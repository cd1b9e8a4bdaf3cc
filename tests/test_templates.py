"""dparse.templates: every model type saves the versions of the feature templates it reads, and
its loader refuses a model trained with another version by the set's name; a model saved
without versions is read as version 1 of every set."""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import shutil
import zlib
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import DATA, requires_data
from dparse._ext.arcfeatures import EDGE_GROUPS, FeatureSpace
from dparse.graph.o2features import SecondOrderSpace
from dparse.transition.easyfirst_core import layout_size as easyfirst_size
from dparse.transition.shiftreduce_templates import layout_size as shiftreduce_size
from paths import REPO

from dparse.config import load_config, save_config
from dparse.conll import Sentence, read_conll
from dparse.errors import DparseError
from dparse.graph.load import load_model
from dparse.graph.model import ArcFactoredModel
from dparse.graph.pruner import Pruner
from dparse.graph.secondorder import SecondOrderModel
from dparse.graph.thirdorder import FIRST_LABEL_BITS, ThirdOrderModel
from dparse.graph.thirdorder_settings import ThirdOrderSettings
from dparse.modeldir import (
    CONFIG_FILE,
    MANIFEST_FILE,
    TAGGER_DIR,
    WEIGHTS_FILE,
    load_arrays,
    save_arrays,
    writing_model_dir,
)
from dparse.postags import TagSettings
from dparse.rerank.model import FIRST_STAGE_DIR, RerankModel, WordClasses
from dparse.tagging.model import TaggerModel
from dparse.tagging.pipeline import PipelineModel
from dparse.tagging.training import train_tagger
from dparse.templates import (
    ARC,
    O2,
    SETS,
    SHIFTREDUCE,
    TEMPLATES_FILE,
    TOKENIZER,
    TemplateSet,
    check_templates,
    saved_versions,
    write_templates,
)
from dparse.transition.easyfirst import EasyFirstModel, tag_flags
from dparse.transition.shiftreduce import ShiftReduceModel
from dparse.undirected.parser import LABEL_BITS, UndirectedModel
from dparse.vocab import Vocabulary


def refusal(directory: Path, templates_set: TemplateSet, saved: int) -> str:
    """The pattern of the error that refuses a model of version ``saved`` of a set."""
    return re.escape(f"{directory}: trained with feature templates version {saved} of the "
                     f"{templates_set.name}, this dparse has version {templates_set.version}: "
                     "retrain it")


def reseal(directory: Path) -> None:
    """List the model directory's files as they are now in its manifest (as a save of them
    would have), so that the loader gets past the manifest check to the versions."""
    manifest = json.loads((directory / MANIFEST_FILE).read_text())
    manifest["files"] = {
        path.relative_to(directory).as_posix(): {
            "size": len(data := path.read_bytes()), "sha256": hashlib.sha256(data).hexdigest(),
            "crc32": f"{zlib.crc32(data):08x}"}
        for path in sorted(directory.rglob("*")) if path.is_file() and path.name != MANIFEST_FILE}
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest))


# -- the sets and the helper --------------------------------------------------------------------


def test_every_set_declares_its_version_beside_its_templates() -> None:
    """The version is the constant of the module the set names (its source file exists); every
    set is at version 1 but shift-reduce's, whose models saved its version 3 already, and the
    tokenizer's (2: the next token's shape and case, the sentence's place in its line)."""
    assert len({s.key for s in SETS}) == len(SETS)
    for templates_set in SETS:
        assert (REPO / templates_set.source).is_file(), templates_set.source
        module = importlib.import_module(
            templates_set.source.rpartition(".")[0].replace("/", "."))
        assert templates_set.version == getattr(module, templates_set.constant)
        assert templates_set.version == {SHIFTREDUCE: 3, TOKENIZER: 2}.get(templates_set, 1)
    assert O2.name == "second-order features (dparse/graph/o2features.pyx)"


def test_versions_are_written_read_and_checked(tmp_path: Path) -> None:
    write_templates(tmp_path, ARC, O2)
    assert json.loads((tmp_path / TEMPLATES_FILE).read_text()) == {"arc": 1, "o2": 1}
    assert saved_versions(tmp_path) == {"arc": 1, "o2": 1}
    check_templates(tmp_path, ARC, O2)
    (tmp_path / TEMPLATES_FILE).write_text('{"arc": 1, "o2": 7}')
    with pytest.raises(DparseError, match=refusal(tmp_path, O2, 7)):
        check_templates(tmp_path, ARC, O2)
    check_templates(tmp_path, ARC)  # a set the model does not read is not checked


@pytest.mark.parametrize("text", ['{"arc": "1"}', '{"arc": true}', "[1]", '{"arc": 1'])
def test_a_damaged_versions_file_is_refused_by_name(tmp_path: Path, text: str) -> None:
    (tmp_path / TEMPLATES_FILE).write_text(text)
    with pytest.raises(DparseError, match=re.escape(f"{tmp_path / TEMPLATES_FILE}: ")):
        check_templates(tmp_path, ARC)


def test_a_directory_without_versions_holds_version_1_of_every_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert saved_versions(tmp_path) == {}
    check_templates(tmp_path, *(s for s in SETS if s not in (SHIFTREDUCE, TOKENIZER)))
    monkeypatch.setattr(importlib.import_module("dparse.graph.o2features"),
                        "TEMPLATES_VERSION", 2)
    with pytest.raises(DparseError, match=refusal(tmp_path, O2, 1)):
        check_templates(tmp_path, ARC, O2)


# -- every model type --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sentences() -> list[Sentence]:
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    return list(islice(read_conll(DATA / "en_ewt" / "dev.conllu"), 60))


@pytest.fixture(scope="module")
def vocab(sentences: list[Sentence]) -> Vocabulary:
    return Vocabulary.build(sentences)


def _zeros(size: int) -> np.ndarray:
    return np.zeros(size, dtype=np.float32)


def _first(vocab: Vocabulary, _: list[Sentence]) -> ArcFactoredModel:
    space = FeatureSpace(14, 8, len(vocab.labels))
    return ArcFactoredModel(vocab, space, _zeros(space.size))


def _pruner(vocab: Vocabulary, sentences: list[Sentence]) -> Pruner:
    return Pruner(_first(vocab, sentences), top_k=5, threshold=0.01)


def _first_pruned(vocab: Vocabulary, sentences: list[Sentence]) -> ArcFactoredModel:
    model = _first(vocab, sentences)
    model.pruner = _pruner(vocab, sentences)
    return model


def _second(vocab: Vocabulary, sentences: list[Sentence]) -> SecondOrderModel:
    space = SecondOrderSpace(FeatureSpace(14, 8, len(vocab.labels)), 12, 12)
    return SecondOrderModel(vocab, space, _zeros(space.size), _pruner(vocab, sentences), True)


def _third(vocab: Vocabulary, sentences: list[Sentence]) -> ThirdOrderModel:
    first = FeatureSpace(14, FIRST_LABEL_BITS, len(vocab.labels))
    settings = ThirdOrderSettings(10, 12, ("sib", "grand"), True, 2)
    size = first.size + (1 << 10) * len(vocab.labels) + (1 << 12)
    return ThirdOrderModel(vocab, first, _zeros(size), _pruner(vocab, sentences), settings)


def _undirected(vocab: Vocabulary, _: list[Sentence], groups: int = 0) -> UndirectedModel:
    space = FeatureSpace(14, LABEL_BITS, 1)
    return UndirectedModel(vocab, space, _zeros(space.size), groups=groups)


def _easyfirst(vocab: Vocabulary, _: list[Sentence]) -> EasyFirstModel:
    tags = TagSettings("upos", ("ADP",), ("CCONJ",))
    return EasyFirstModel(vocab, _zeros(easyfirst_size(12, 8, len(vocab.labels))), 12, 8,
                          tags.column, tag_flags(vocab, tags))


def _shiftreduce(vocab: Vocabulary, _: list[Sentence]) -> ShiftReduceModel:
    return ShiftReduceModel(vocab, _zeros(shiftreduce_size(12, 8, len(vocab.labels))), 12, 8,
                            "xpos")


def _rerank(vocab: Vocabulary, sentences: list[Sentence]) -> RerankModel:
    first_cfg = load_config(REPO / "configs" / "en_ewt" / "sr-b1.yaml")
    classes = WordClasses("xpos", vocab.tag_classes("xpos", {}))
    return RerankModel(_shiftreduce(vocab, sentences), first_cfg, np.zeros(2 << 12), 12, 12,
                       False, True, 3, classes)


def _tagger(_: Vocabulary, sentences: list[Sentence]) -> TaggerModel:
    cfg = load_config(REPO / "configs" / "en_ewt" / "tagger.yaml", ["training.epochs=1"],
                      data_root=str(DATA))
    return train_tagger(cfg, sentences, []).model


# name: (the model, its loader, the versions file of each model directory in it: the set keys)
MODELS: dict[str, tuple[Callable[[Vocabulary, list[Sentence]], Any], Callable[[Path], Any],
                        dict[str, set[str]]]] = {
    "first-order": (_first, load_model, {"": {"arc"}}),
    "first-order with a pruner": (_first_pruned, load_model, {"": {"arc"}, "pruner": {"arc"}}),
    "second-order": (_second, load_model, {"": {"arc", "o2"}, "pruner": {"arc"}}),
    "third-order": (_third, load_model, {"": {"arc", "o3"}, "pruner": {"arc"}}),
    "undirected": (_undirected, UndirectedModel.load, {"": {"arc"}}),
    "undirected with edge templates": (
        lambda v, s: _undirected(v, s, EDGE_GROUPS["morph"] | EDGE_GROUPS["context"]),
        UndirectedModel.load, {"": {"arc", "edge"}}),
    "easy-first": (_easyfirst, EasyFirstModel.load, {"": {"easyfirst"}}),
    "forest reranker": (_rerank, RerankModel.load, {"": {"arc", "o3", "rerank"}}),
    "tagger": (_tagger, TaggerModel.load, {"": {"tagger"}}),
}
BY_KEY = {s.key: s for s in SETS}
CHANGES = [(name, folder, key) for name, (_, _, files) in MODELS.items()
           for folder, keys in files.items() for key in sorted(keys)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, vocab: Vocabulary,
          sentences: list[Sentence]) -> dict[str, Path]:
    """Every model of MODELS saved once (read only: copy what you change)."""
    root = tmp_path_factory.mktemp("templates")
    for name, (make, _, _) in MODELS.items():
        with writing_model_dir(root / name) as staging:  # a tagger is no SavedModel
            make(vocab, sentences).write_files(staging)
    return {name: root / name for name in MODELS}


@requires_data
@pytest.mark.parametrize("name", MODELS)
def test_a_model_saves_the_versions_of_the_templates_it_reads(name: str,
                                                              saved: dict[str, Path]) -> None:
    _, load, files = MODELS[name]
    directory = saved[name]
    found = {"" if p.parent == directory else p.parent.relative_to(directory).as_posix(): p
             for p in directory.rglob(TEMPLATES_FILE)}
    assert found.keys() == files.keys()
    for folder, keys in files.items():
        assert json.loads(found[folder].read_text()) == {k: BY_KEY[k].version for k in keys}
    assert json.loads((directory / MANIFEST_FILE).read_text())["files"].keys() >= {
        f"{folder}/{TEMPLATES_FILE}".lstrip("/") for folder in files}
    load(directory)


@requires_data
@pytest.mark.parametrize(("name", "folder", "key"), CHANGES)
def test_a_model_of_other_templates_is_refused_by_name(name: str, folder: str, key: str,
                                                       saved: dict[str, Path],
                                                       tmp_path: Path) -> None:
    """The versions file of the model (or of a model inside it) edited to another version of
    one set: its loader names the directory, the set, both versions and asks to retrain."""
    _, load, _ = MODELS[name]
    directory = Path(shutil.copytree(saved[name], tmp_path / "model"))
    path = directory / folder / TEMPLATES_FILE
    versions = json.loads(path.read_text())
    versions[key] += 1
    path.write_text(json.dumps(versions))
    reseal(directory)
    with pytest.raises(DparseError, match=refusal(directory / folder if folder else directory,
                                                  BY_KEY[key], versions[key])):
        load(directory)


@requires_data
@pytest.mark.parametrize("name", MODELS)
def test_a_model_saved_without_versions_loads_as_version_1(
        name: str, saved: dict[str, Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without its versions files (a model saved before them) a model loads, as version 1 of
    every set it reads: with one of them at version 2 in the code, it is refused as 1."""
    _, load, files = MODELS[name]
    directory = Path(shutil.copytree(saved[name], tmp_path / "model"))
    for path in directory.rglob(TEMPLATES_FILE):
        path.unlink()
    reseal(directory)
    load(directory)
    key = sorted(files[""])[-1]
    bumped = BY_KEY[key]
    monkeypatch.setattr(importlib.import_module(
        bumped.source.rpartition(".")[0].replace("/", ".")), bumped.constant, 2)
    with pytest.raises(DparseError, match=refusal(directory, bumped, 1)):
        load(directory)


@requires_data
@pytest.mark.parametrize(("saved_version", "where"), [
    (SHIFTREDUCE.version + 1, "model"), (None, "model"), (SHIFTREDUCE.version + 1, "first stage")])
def test_a_shift_reduce_model_of_other_templates_is_refused_by_name(
        vocab: Vocabulary, sentences: list[Sentence], tmp_path: Path,
        saved_version: int | None, where: str) -> None:
    """The shift-reduce model keeps its version in weights.bin's ``templates``; without it
    (a model saved before version 2) it was version 1. A reranker's first stage is one."""
    if where == "model":
        directory = tmp_path / "sr"
        _shiftreduce(vocab, sentences).save(directory)
        weights, load = directory / WEIGHTS_FILE, ShiftReduceModel.load
    else:
        directory = tmp_path / "rerank"
        _rerank(vocab, sentences).save(directory)
        weights, load = directory / FIRST_STAGE_DIR / WEIGHTS_FILE, RerankModel.load
    load(directory)
    arrays = {k: np.array(v) for k, v in load_arrays(weights).items() if k != "templates"}
    if saved_version is not None:
        arrays["templates"] = np.array(saved_version)
    save_arrays(weights, **arrays)
    reseal(directory)
    with pytest.raises(DparseError, match=refusal(weights.parent, SHIFTREDUCE,
                                                  saved_version or 1)):
        load(directory)


@requires_data
@pytest.mark.parametrize("versioned", [True, False])
def test_a_pipeline_model_carries_the_versions_of_a_trained_tagger_it_copies(
        versioned: bool, vocab: Vocabulary, sentences: list[Sentence], saved: dict[str, Path],
        tmp_path: Path) -> None:
    """A pipeline model given a trained tagger (``tagger.model``) copies its files, its
    versions file too where it has one (a tagger saved before versions has none)."""
    source = Path(shutil.copytree(saved["tagger"], tmp_path / "tagger"))
    tagger_cfg = load_config(REPO / "configs" / "en_ewt" / "tagger.yaml")
    save_config(tagger_cfg, source / CONFIG_FILE)  # what `dparse train` saves with a tagger
    if not versioned:
        (source / TEMPLATES_FILE).unlink()
    reseal(source)
    tagger = TaggerModel.load(source)
    with writing_model_dir(tmp_path / "pipeline") as staging:
        PipelineModel(_first(vocab, sentences), tagger, tagger_cfg, source).write_files(staging)
    copied = tmp_path / "pipeline" / TAGGER_DIR
    assert (copied / TEMPLATES_FILE).is_file() == versioned
    TaggerModel.load(copied, checked=True)
