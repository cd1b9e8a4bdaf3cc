"""Iterative parameter mixing (dparse.mixing) of the perceptron-trained parsers: easy-first,
shift-reduce and the forest reranker, on a slice of el_gdt. One shard is serial training, byte
for byte; 2 and 3 shards give the same model twice, valid trees and dev scores near serial
training's; the touched mask of the C training routines is exactly the set of weights they
write; shard jobs survive pickling; the Dask local engine gives the inline engine's model."""

from __future__ import annotations

import pickle
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from conftest import DATA

from dparse.batch.engines import InlineEngine, WorkerOptions
from dparse.config import ExperimentConfig, load_config
from dparse.conll import read_conll, write_conll
from dparse.epochs import PerceptronTrainResult
from dparse.metrics import evaluate
from dparse.mixing import ShardLearner, shard_order
from dparse.parsers import train_parser
from dparse.trees import check_tree

CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "en_ewt"
FAMILIES = ("easyfirst", "shiftreduce", "rerank")
TRAIN, DEV = 300, 80  # sentences of el_gdt train and dev
UAS_MARGIN = 3.0  # mixed training's dev UAS may be this far below serial training's
UAS_FLOOR = {"easyfirst": 76.0, "shiftreduce": 78.0, "rerank": 78.0}  # serial: 80, 83, 83
TAGS = {"tag": "upos", "prepositions": "ADP", "coordinators": "CCONJ"}  # el_gdt's XPOS = UPOS


def _write(folder: Path, name: str, source: str, changes: dict[str, dict[str, Any]]) -> Path:
    """``folder/name.yaml``: the en_ewt config ``source`` with ``changes`` by section."""
    raw = yaml.safe_load((CONFIGS / f"{source}.yaml").read_text(encoding="utf-8"))
    raw["name"] = name
    for section, values in changes.items():
        raw[section].update(values)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the first TRAIN sentences of el_gdt train, the first DEV of its dev, and
    a small config of each family over them (the reranker's work directory in it)."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    folder = tmp_path_factory.mktemp("mixing-perceptron")
    for split, count in (("train", TRAIN), ("dev", DEV)):
        write_conll(islice(read_conll(DATA / "el_gdt" / f"{split}.conllu"), count),
                    folder / f"{split}.conllu")
    data = {"train": "train.conllu", "dev": "dev.conllu", "test": None}
    training = {"epochs": 3}
    _write(folder, "easyfirst", "easyfirst", {
        "data": data, "features": {"arc_bits": 18, "label_bits": 12, **TAGS},
        "training": training})
    _write(folder, "shiftreduce", "sr-nonsp-b12", {
        "data": data, "features": {"arc_bits": 18, "label_bits": 12, "tag": "upos"},
        "shiftreduce": {"beam": 4, "upos_pair": False}, "training": {"epochs": 2}})
    _write(folder, "rerank", "rerank-nonlocal", {
        "data": data, "features": {"arc_bits": 18, "ho_bits": 18, "label_bits": 12, **TAGS},
        "rerank": {"first_stage": "shiftreduce.yaml", "folds": 3, "work": "rerank.work",
                   "k": 3, "train_k": 3, "beta_grid": "0:2:0.5"},
        "training": training})
    return folder


def config(folder: Path, family: str, *overrides: str) -> ExperimentConfig:
    """The family's small config, with ``key.path=value`` overrides."""
    cfg = load_config(folder / f"{family}.yaml", list(overrides), str(folder))
    if family == "rerank":
        cfg.rerank.work = str(folder / "rerank.work")  # the folds, made once for every test
    return cfg


def trained(folder: Path, family: str, workers: WorkerOptions | None = None,
            *overrides: str) -> PerceptronTrainResult:
    result = train_parser(config(folder, family, *overrides), progress=False, workers=workers)
    assert isinstance(result, PerceptronTrainResult)
    return result


def weights(result: PerceptronTrainResult) -> bytes:
    return np.ascontiguousarray(result.model.weights).tobytes()


def dev_uas(result: PerceptronTrainResult, folder: Path) -> float:
    """Dev UAS of the trained model, every tree checked: projective, one root word."""
    dev = list(read_conll(folder / "dev.conllu"))
    parsed = list(result.model.parse(dev))
    for sent in parsed:
        check_tree(sent.heads, single_root=True, projective=True)
    return evaluate(dev, parsed).uas


@pytest.fixture(scope="module")
def serial(folder: Path) -> dict[str, PerceptronTrainResult]:
    """Each family trained on one core with the configs as they are."""
    return {family: trained(folder, family) for family in FAMILIES}


@pytest.mark.parametrize("family", FAMILIES)
def test_one_shard_is_serial_training_byte_for_byte(folder: Path, family: str) -> None:
    """Without shuffling, one shard visits the sentences in serial training's order: the
    mixed path (engine, shard job, mixing, averaging, dev selection) must give its model."""
    one = trained(folder, family, WorkerOptions(1, "inline"), "training.shuffle=false")
    alone = trained(folder, family, None, "training.shuffle=false")
    assert weights(one) == weights(alone)
    assert one.counts == alone.counts and one.best_epoch == alone.best_epoch
    assert [(e.dev_uas, e.dev_las) for e in one.epochs] == [
        (e.dev_uas, e.dev_las) for e in alone.epochs]
    assert one.mixing is not None and len(one.mixing.bytes_up) == len(alone.epochs)
    assert alone.mixing is None


@pytest.mark.parametrize(("shards", "mixing"), [(2, "uniform"), (3, "updates")])
@pytest.mark.parametrize("family", FAMILIES)
def test_shards_give_the_same_model_twice_and_learn_as_serial_training(
        folder: Path, serial: dict[str, PerceptronTrainResult], family: str, shards: int,
        mixing: str) -> None:
    first = trained(folder, family, WorkerOptions(shards, "inline", mixing))
    again = trained(folder, family, WorkerOptions(shards, "inline", mixing))
    assert weights(first) == weights(again)
    assert weights(first) != weights(serial[family])
    assert len(first.mixing.shard_seconds[0]) == shards
    key = "steps" if family == "easyfirst" else "words"  # the training words, in any order
    assert [c[key] for c in first.counts] == [c[key] for c in serial[family].counts]
    mixed_uas, serial_uas = dev_uas(first, folder), dev_uas(serial[family], folder)
    assert mixed_uas > UAS_FLOOR[family]
    assert mixed_uas > serial_uas - UAS_MARGIN, (mixed_uas, serial_uas)


class RecordingEngine(InlineEngine):
    """The inline engine, keeping the shard jobs it is sent."""

    def __init__(self) -> None:
        self.jobs: list[Any] = []

    def submit_shard(self, shard: int, *args: Any) -> Any:
        job = args[5]  # shard_epoch(run, shard, epoch, seed, mixed, job, start)
        if job is not None:
            self.jobs.append(job)
        return super().submit_shard(shard, *args)


def shard_job(folder: Path, family: str) -> Any:
    """The family's shard job of every training sentence, as its trainer makes it."""
    engine = RecordingEngine()
    trained(folder, family, WorkerOptions(1, "inline", engine=engine), "training.epochs=1")
    return engine.jobs[0]


@pytest.fixture(scope="module")
def jobs(folder: Path) -> dict[str, Any]:
    return {family: shard_job(folder, family) for family in FAMILIES}


def run_epoch(job: Any, start: tuple[np.ndarray, np.ndarray]) -> tuple[ShardLearner, Any]:
    """One shard epoch of ``job`` from the weights and sums ``start``."""
    learner = ShardLearner(job.size, job.method, job.C)
    learner.w[:], learner.u[:] = start
    learner.begin_epoch()
    stats = job.epoch(learner, shard_order(1, 1, 0, len(job)))
    learner.end_epoch()
    return learner, stats


@pytest.mark.parametrize("family", FAMILIES)
def test_touched_is_exactly_the_set_of_weights_an_epoch_writes(jobs: dict[str, Any],
                                                               family: str) -> None:
    """From weights and sums of the form (1 + r) 2**-20, r uniform in [0, 1), every write
    (+1 then -1 included: x + 1 - 1 rounds x) changes w or u; an index whose w and u keep
    their bits was never written. (Weights that start at zero would hide updates that cancel
    within one sentence, and u alone those that cancel in u.)"""
    job = jobs[family]
    rng = np.random.default_rng(5)
    start = tuple((1.0 + rng.random(job.size)) * 2.0 ** -20 for _ in range(2))
    learner, _ = run_epoch(job, start)
    changed = np.flatnonzero((learner.w != start[0]) | (learner.u != start[1]))
    assert 1000 < changed.size < job.size // 2
    assert np.array_equal(learner.last, changed)
    assert learner.updates > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_shard_jobs_pickle_and_train_the_same(jobs: dict[str, Any], family: str) -> None:
    job = jobs[family]
    copy = pickle.loads(pickle.dumps(job))
    assert copy.model.weights.size == 0  # the workers get no weights (nor a first stage's)
    assert family != "rerank" or copy.model.first.weights.size == 0
    zeros = (np.zeros(job.size), np.zeros(job.size))
    learner, stats = run_epoch(job, zeros)
    again, stats_again = run_epoch(copy, zeros)
    assert stats == stats_again and learner.updates == again.updates
    assert np.array_equal(learner.w, again.w) and np.array_equal(learner.u, again.u)


def test_rerank_on_two_dask_workers_is_the_inline_model(folder: Path, tmp_path: Path) -> None:
    """The jackknife's folds as tasks on the local Dask workers, then the mixed epochs: the
    same forests and model as on the inline engine."""
    work = {}
    results = {}
    for cluster in ("inline", "local"):
        cfg = config(folder, "rerank")
        cfg.rerank.work = str(tmp_path / cluster)
        results[cluster] = train_parser(cfg, progress=False, workers=WorkerOptions(2, cluster))
        work[cluster] = {p.name: p.read_bytes() for p in (tmp_path / cluster).glob("fold-*")}
    assert weights(results["inline"]) == weights(results["local"])
    assert work["inline"] == work["local"] and len(work["local"]) == 6
    assert results["local"].mixing.resent == 0
