"""dparse.mixing (iterative parameter mixing) and dparse.batch.engines: the mixed weights and
their average against a dense reference computed from the formulas' definitions, one shard
equal to serial training, the same model on every engine, a worker killed mid-epoch that
changes nothing, and a graph parser trained on shards of real data."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from dparse.batch.engines import DaskEngine, InlineEngine, WorkerOptions, training_engine
from dparse.errors import DparseError
from dparse.learning import AveragedLearner
from dparse.mixing import MixedTraining, shard_order, shards

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
N_FEATURES = 40
N_CLASSES = 3


@dataclass
class ToyShard:
    """A multi-class linear classifier trained online on random sparse instances: a small
    ShardJob whose epochs can be made slow (``pause`` seconds before each)."""

    features: list[np.ndarray]
    gold: list[int]
    method: str = "pa"
    C: float = 0.5
    pause: float = 0.0

    @property
    def size(self) -> int:
        return N_FEATURES * N_CLASSES

    def __len__(self) -> int:
        return len(self.gold)

    def epoch(self, learner: AveragedLearner, order: np.ndarray) -> int:
        time.sleep(self.pause)
        return toy_epoch(self, learner, order)


def toy_epoch(job: ToyShard, learner: AveragedLearner, order: np.ndarray,
              visited: list[np.ndarray] | None = None) -> int:
    """One pass; returns the errors made; ``visited`` gets w after every instance."""
    errors = 0
    for i in order:
        feats, gold = job.features[i], job.gold[i]
        scores = [learner.w[feats * N_CLASSES + k].sum() for k in range(N_CLASSES)]
        pred = int(np.argmax(scores))
        if pred != gold:
            errors += 1
            idx = np.concatenate([feats * N_CLASSES + gold, feats * N_CLASSES + pred])
            val = np.concatenate([np.ones(feats.size), -np.ones(feats.size)])
            learner.update(idx, val, 1.0)
        learner.tick()
        if visited is not None:
            visited.append(learner.w.copy())
    return errors


def toy_data(n: int, seed: int) -> tuple[list[np.ndarray], list[int]]:
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(N_FEATURES, N_CLASSES))
    features = [np.sort(rng.choice(N_FEATURES, size=5, replace=False)) for _ in range(n)]
    gold = [int(np.argmax(truth[f].sum(axis=0) + rng.normal(scale=0.5, size=N_CLASSES)))
            for f in features]
    return features, gold


def toy_jobs(n: int, n_shards: int, method: str = "pa", pause: float = 0.0) -> list[ToyShard]:
    features, gold = toy_data(n, 7)
    return [ToyShard([features[i] for i in part], [gold[i] for i in part], method,
                     pause=pause) for part in shards(n, n_shards, 3)]


def reference_mixing(jobs: list[ToyShard], epochs: int, seed: int, mixing: str
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The mixed weights and the average of every vector visited (the initial zeros and each
    worker's vector after each of its instances), computed densely by their definitions."""
    w = np.zeros(jobs[0].size)
    total, count = w.copy(), 1
    for epoch in range(1, epochs + 1):
        ends, updates = [], []
        for shard, job in enumerate(jobs):
            learner = AveragedLearner(job.size, job.method, job.C)
            learner.w[:] = w
            visited: list[np.ndarray] = []
            toy_epoch(job, learner, shard_order(seed, epoch, shard, len(job)), visited)
            total += np.sum(visited, axis=0)
            count += len(visited)
            ends.append(learner.w)
            updates.append(sum(not np.array_equal(a, b)
                               for a, b in zip([w, *visited], visited, strict=False)))
        mus = (np.array(updates) / sum(updates) if mixing == "updates" and sum(updates)
               else np.full(len(jobs), 1.0 / len(jobs)))
        w = w + sum(mu * (end - w) for mu, end in zip(mus, ends, strict=True))
    return w, total / count


@pytest.mark.parametrize("mixing", ["uniform", "updates"])
@pytest.mark.parametrize("n_shards", [2, 3])
def test_mixed_weights_and_average_follow_the_definitions(n_shards: int, mixing: str) -> None:
    jobs = toy_jobs(90, n_shards)
    mixed = MixedTraining(InlineEngine(), jobs, seed=5, mixing=mixing)
    for epoch in range(1, 4):
        mixed.submit(epoch)
        assert len(mixed.collect()) == n_shards
    w, average = reference_mixing(jobs, 3, 5, mixing)
    assert np.allclose(mixed.w, w, rtol=1e-12, atol=1e-12)
    assert np.allclose(mixed.averaged(), average, rtol=1e-5, atol=1e-6)
    assert mixed.log.resent == 0 and len(mixed.log.bytes_up) == 3
    mixed.close()


def test_one_shard_is_serial_training() -> None:
    job = toy_jobs(60, 1, method="perceptron")[0]
    mixed = MixedTraining(InlineEngine(), [job], seed=2)
    serial = AveragedLearner(job.size, "perceptron")
    for epoch in range(1, 4):
        mixed.submit(epoch)
        mixed.collect()
        toy_epoch(job, serial, shard_order(2, epoch, 0, len(job)))
    assert np.array_equal(mixed.w, serial.w)
    assert np.allclose(mixed.averaged(), serial.averaged(), rtol=1e-6, atol=1e-6)


def test_shards_are_seeded_disjoint_and_balanced() -> None:
    parts = shards(11, 3, 1)
    assert sorted(np.concatenate(parts).tolist()) == list(range(11))
    assert [len(p) for p in parts] == [4, 4, 3]
    assert all((np.diff(p) > 0).all() for p in parts)
    assert [p.tolist() for p in shards(11, 3, 1)] == [p.tolist() for p in parts]
    with pytest.raises(DparseError, match="cannot cut 2"):
        shards(2, 3, 1)


def test_a_worker_without_the_state_is_sent_it_again() -> None:
    jobs = toy_jobs(60, 2)
    mixed = MixedTraining(InlineEngine(), jobs, seed=5)
    mixed.submit(1)
    mixed.collect()
    mixed.close()  # the states are gone, as with a restarted worker
    mixed.submit(2)
    mixed.collect()
    assert mixed.log.resent == 2
    w, _ = reference_mixing(jobs, 2, 5, "uniform")
    assert np.allclose(mixed.w, w, rtol=1e-12, atol=1e-12)


def _inline_weights(jobs: list[ToyShard], epochs: int) -> tuple[np.ndarray, np.ndarray]:
    mixed = MixedTraining(InlineEngine(), jobs, seed=4)
    for epoch in range(1, epochs + 1):
        mixed.submit(epoch)
        mixed.collect()
    mixed.close()
    return mixed.w, mixed.averaged()


def test_dask_workers_give_the_inline_weights_even_when_one_is_killed_mid_epoch() -> None:
    jobs = toy_jobs(120, 2, pause=1.5)
    want_w, want_avg = _inline_weights(toy_jobs(120, 2), 3)
    with training_engine(WorkerOptions(2)) as engine:
        assert isinstance(engine, DaskEngine)
        mixed = MixedTraining(engine, jobs, seed=4)
        mixed.submit(1)
        mixed.collect()
        victim = engine.places[1]
        pids = engine.client.run(os.getpid)
        mixed.submit(2)
        threading.Timer(0.5, os.kill, (pids[victim], signal.SIGKILL)).start()
        mixed.collect()
        mixed.submit(3)
        mixed.collect()
        mixed.close()
    assert mixed.log.resent >= 1
    assert np.array_equal(mixed.w, want_w)
    assert np.array_equal(mixed.averaged(), want_avg)


def slow_square(x: int) -> int:
    time.sleep(1.0)
    return x * x


def test_dask_tasks_lost_with_their_worker_are_run_again() -> None:
    with training_engine(WorkerOptions(2)) as engine:
        assert isinstance(engine, DaskEngine)
        pids = list(engine.client.run(os.getpid).values())
        threading.Timer(0.4, os.kill, (pids[0], signal.SIGKILL)).start()
        assert engine.run_tasks(slow_square, [(k,) for k in range(4)]) == [0, 1, 4, 9]


@pytest.mark.parametrize("config", ["o1-cle", "o1-umst-uf"])
def test_parser_on_two_workers_learns_and_is_the_same_on_every_engine(
        data: Path, config: str) -> None:
    from dparse.config import load_config
    from dparse.parsers import train_parser

    overrides = ["data.train=en_ewt/dev.conllu", "data.dev=null", "training.epochs=2",
                 "features.arc_bits=18", "features.label_bits=12"]
    cfg = load_config(str(CONFIGS / "en_ewt" / f"{config}.yaml"), overrides, str(data))
    inline = train_parser(cfg, progress=False, workers=WorkerOptions(2, "inline"))
    local = train_parser(cfg, progress=False, workers=WorkerOptions(2, "local"))
    assert np.array_equal(inline.model.weights, local.model.weights)
    assert inline.epochs[-1].train_uas > 50.0  # learning from the mixed weights
    assert inline.epochs[-1].train_uas > inline.epochs[0].train_uas + 5.0
    assert local.mixing.resent == 0 and len(local.mixing.bytes_up) == 2


def test_workers_are_for_parsers_and_the_environment_default_skips_the_tagger(
        data: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    def train(*extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "dparse", "train", str(CONFIGS / "en_ewt" / "tagger.yaml"),
               "--out", str(tmp_path / "tagger"), "-q", "--data-root", str(data),
               "--set", "data.train=en_ewt/dev.conllu", "--set", "data.dev=null",
               "--set", "training.epochs=1", *extra]
        return subprocess.run(cmd, capture_output=True, text=True,
                              env={**os.environ, **(env or {})})

    refused = train("--workers", "2")
    assert refused.returncode == 2 and "--workers trains parsers (graph, umst" in refused.stderr
    assert not (tmp_path / "tagger").exists()
    done = train(env={"DPARSE_TRAIN_WORKERS": "2"})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "tagger" / "manifest.json").is_file()
