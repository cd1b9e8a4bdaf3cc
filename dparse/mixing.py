"""Iterative parameter mixing (McDonald, Hall and Mann 2010): one model trained by several
workers.

The training sentences are cut into N shards, fixed for the run (:func:`shards`). Each epoch
every shard's worker runs the family's online learner (:class:`ShardJob`) over its shard, in an
order seeded by (seed, epoch, shard), starting from the mixed weights w; the driver then mixes
the shards' end weights w_i = w + D_i,

    w' = w + sum_i mu_i D_i,

with mu_i = 1/N (``uniform``) or each shard's share of the epoch's updates (``updates``: the
paper's two variants), and keeps the average of every weight vector any worker passed through.

Averaging. :class:`~dparse.learning.AveragedLearner` keeps w, u and c with the sum of the
vectors w_0 .. w_{c-1} it passed through equal to c w - u. A shard of n_i instances that starts
from w with u_i = 0 and c_i = 1 ends with w + D_i and u_i = sum_k k D_ik, and passed through
vectors that sum to n_i w + (n_i + 1) D_i - u_i. So the driver's state becomes c' = c + sum n_i,
w' as above and

    u' = u + sum_i (u_i + (c' mu_i - n_i - 1) D_i),

whose average w' - u'/c' is that of all the vectors of the epoch; with one shard it is serial
training's.

Traffic. A worker keeps its shard, model and learner between epochs and returns only the
weights its shard touched (indices int32, w_i and u_i there). The driver sends every worker the
mixed values at the union of the touched indices (elsewhere all workers' weights are already
equal). A worker without the state the epoch needs (restarted after a crash, or a task moved
to another worker) says so and is sent its shard and the whole mixed vector again, so a worker
lost mid-epoch has its shard rerun from the same start: the model does not change. Mixing sums
the shards in shard order, so the same seed and N give the same weights, byte for byte, on any
engine (:mod:`dparse.batch.engines`).
"""

from __future__ import annotations

import logging
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from dparse._ext.sparsevec import marked
from dparse.errors import DparseError
from dparse.learning import AveragedLearner, average

log = logging.getLogger(__name__)
MIXINGS = ("uniform", "updates")
MAX_ATTEMPTS = 3  # tries of one shard's epoch (workers lost, or states missing) before failing


class ShardJob(Protocol):
    """What a worker trains on one shard (picklable: sent to the worker once)."""

    size: int  # length of the weight vector
    method: str  # the learner: perceptron or pa
    C: float

    def __len__(self) -> int:
        """Training instances (sentences) of the shard."""
        ...

    def epoch(self, learner: AveragedLearner, order: np.ndarray) -> Any:
        """One online pass over the shard's instances in ``order`` (int [len]), learning into
        ``learner``; returns the family's epoch statistics (picklable, merged by the
        caller)."""
        ...


class ModelShard:
    """What the families' shard jobs share: ``size``, their ``model``'s, and ``len``, of their
    ``instances`` (fields of the dataclasses that use it)."""

    model: Any
    instances: Sequence[Any]

    @property
    def size(self) -> int:
        return int(self.model.size)

    def __len__(self) -> int:
        return len(self.instances)


class ShardLearner(AveragedLearner):
    """A worker's learner: also marks the weights its updates touch (a bit each, see
    :func:`dparse._ext.sparsevec.marked`) and counts the updates."""

    def __init__(self, size: int, method: str, C: float) -> None:
        super().__init__(size, method, C)
        self.touched = np.zeros((size + 7) // 8, dtype=np.uint8)
        self.updates = 0
        self.last = np.zeros(0, dtype=np.int32)  # the indices the last epoch touched

    def update(self, idx: np.ndarray, val: np.ndarray, cost: float) -> float:
        step = super().update(idx, val, cost)
        self.updates += step != 0.0
        return step

    def begin_epoch(self) -> None:
        """Start counting a new shard epoch: u = 0, c = 1, nothing touched (the weights kept)."""
        self.u[self.last] = 0.0
        self.touched.fill(0)
        self.c = 1
        self.updates = 0

    def end_epoch(self) -> np.ndarray:
        """The indices touched this epoch, int32, increasing."""
        self.last = marked(self.touched, len(self.w))
        return self.last


@dataclass
class SparseValues:
    """Weight values at some indices: ``index`` int32 [k] increasing, ``values`` float64 [k]."""

    index: np.ndarray
    values: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.index.nbytes + self.values.nbytes)


@dataclass
class ShardResult:
    """What a worker returns for one shard's epoch: the touched indices with w_i and u_i
    there, the shard's instances and updates, the family's statistics and the seconds (wall
    and CPU) of the pass."""

    shard: int
    epoch: int
    index: np.ndarray
    weights: np.ndarray
    sums: np.ndarray
    instances: int
    updates: int
    stats: Any
    seconds: float
    cpu_seconds: float
    peak_rss: int  # the worker process's peak resident memory so far, bytes

    @property
    def nbytes(self) -> int:
        return int(self.index.nbytes + self.weights.nbytes + self.sums.nbytes)


NEED_STATE = "need-state"  # a worker's answer when it lacks the shard's state for the epoch


@dataclass
class _ShardState:
    job: ShardJob
    learner: ShardLearner
    epoch: int  # the last epoch run (0: none yet)


_STATES: dict[tuple[str, int], _ShardState] = {}  # this process's shards, by (run, shard)


def shard_order(seed: int | None, epoch: int, shard: int, n: int) -> np.ndarray:
    """The order a shard of ``n`` instances is visited in, at ``epoch``: seeded, the same on
    every worker (``seed`` None: as the shard holds them, training.shuffle false)."""
    if seed is None:
        return np.arange(n)
    return np.random.default_rng([seed, epoch, shard]).permutation(n)


def shard_epoch(run: str, shard: int, epoch: int, seed: int | None, mixed: SparseValues | None,
                job: ShardJob | None = None, start: np.ndarray | None = None
                ) -> ShardResult | str:
    """Run one shard's epoch on this worker (the task :class:`MixedTraining` sends).

    The worker's state for (``run``, ``shard``) is made from ``job`` (weights ``start``, the
    whole mixed vector, or zeros) when given; else it must have run ``epoch - 1``, and the
    previous mixing's ``mixed`` values are written into its weights. Without such a state
    the answer is :data:`NEED_STATE`."""
    key = (run, shard)
    if job is not None:
        learner = ShardLearner(job.size, job.method, job.C)
        if start is not None:
            learner.w[:] = start
        state = _STATES[key] = _ShardState(job, learner, epoch - 1)
    else:
        state = _STATES.get(key)
        if state is None or state.epoch != epoch - 1:
            return NEED_STATE
        if mixed is not None:
            state.learner.w[mixed.index] = mixed.values
    learner = state.learner
    learner.begin_epoch()
    wall, cpu = time.perf_counter(), time.process_time()
    stats = state.job.epoch(learner, shard_order(seed, epoch, shard, len(state.job)))
    index = learner.end_epoch()
    state.epoch = epoch
    return ShardResult(shard, epoch, index, learner.w[index], learner.u[index],
                       len(state.job), learner.updates, stats, time.perf_counter() - wall,
                       time.process_time() - cpu,
                       resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)


def release(run: str) -> int:
    """Drop this process's states of ``run``; returns how many there were."""
    keys = [key for key in _STATES if key[0] == run]
    for key in keys:
        del _STATES[key]
    return len(keys)


def shards(n: int, count: int, seed: int) -> list[np.ndarray]:
    """``count`` shards of ``n`` instances: a seeded permutation dealt out in turn, each
    shard's indices increasing (sizes differ by at most one)."""
    if not 1 <= count <= n:
        raise DparseError(f"cannot cut {n} training sentences into {count} shards")
    perm = np.random.default_rng([seed, count]).permutation(n)
    return [np.sort(perm[i::count]) for i in range(count)]


class Engine(Protocol):
    """Runs the shard tasks of :func:`shard_epoch`: in this process one after another
    (:class:`dparse.batch.engines.InlineEngine`) or on Dask workers."""

    def submit_shard(self, shard: int, *args: Any) -> Any:
        """Start ``shard_epoch(*args)`` for ``shard`` where its state is likely to be;
        returns a handle for :meth:`result`."""
        ...

    def result(self, handle: Any) -> ShardResult | str:
        """The task's answer; raises :class:`LostTask` when its worker was lost."""
        ...

    def release(self, run: str) -> None:
        """Free the states of ``run`` on every worker."""
        ...

    def run_tasks(self, fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        """``[fn(*args) for args in calls]``, run on the engine's workers."""
        ...

    def share(self, value: Any) -> Any:
        """``value`` as an argument of several tasks (sent to the workers once)."""
        ...


class LostTask(Exception):
    """A shard task whose worker (or its input) was lost: the driver sends it again."""


@dataclass
class MixingLog:
    """Per epoch: each shard's seconds (wall, CPU), the bytes sent to and from the workers and
    the driver's mixing seconds (what ``make mixing-scaling`` reads)."""

    shard_seconds: list[list[float]] = field(default_factory=list)
    shard_cpu_seconds: list[list[float]] = field(default_factory=list)
    bytes_up: list[int] = field(default_factory=list)  # workers -> driver
    bytes_down: list[int] = field(default_factory=list)  # driver -> workers (the next epoch's)
    mix_seconds: list[float] = field(default_factory=list)
    peak_rss: list[int] = field(default_factory=list)  # per shard: its worker's peak, bytes
    resent: int = 0  # shard tasks sent again with the whole state

    def summary(self) -> str:
        """One line: the mean slowest shard, traffic per epoch, workers' peak memory."""
        epochs = max(len(self.shard_seconds), 1)
        slowest = sum(max(e) for e in self.shard_seconds) / epochs
        up = sum(self.bytes_up) / epochs / 1e6
        down = sum(self.bytes_down) / max(len(self.bytes_down), 1) / 1e6
        peaks = ", ".join(f"{p / 1e6:.0f}" for p in self.peak_rss)
        return (f"{len(self.peak_rss)} shards: slowest shard {slowest:.1f}s per epoch; "
                f"{up:.0f} MB up and {down:.0f} MB down per epoch; workers' peak memory "
                f"{peaks} MB; {self.resent} shard tasks sent again")


class MixedTraining:
    """The driver of iterative parameter mixing: one :class:`ShardJob` per shard, run through
    an :class:`Engine`; :meth:`submit` starts an epoch, :meth:`collect` waits for its shards
    and mixes them, :meth:`averaged` gives the averaged weights so far."""

    def __init__(self, engine: Engine, jobs: Sequence[ShardJob], seed: int | None,
                 mixing: str = "uniform", run: str | None = None) -> None:
        if mixing not in MIXINGS:
            raise DparseError(f"unknown mixing {mixing!r}; choose one of {', '.join(MIXINGS)}")
        sizes = {job.size for job in jobs}
        if len(sizes) != 1:
            raise DparseError(f"shard jobs disagree on the weight vector's length: {sizes}")
        self.engine = engine
        self.jobs = list(jobs)
        self.seed = seed
        self.mixing = mixing
        self.run = run or f"mix-{time.time_ns()}-{id(self)}"
        size = sizes.pop()
        self.w = np.zeros(size, dtype=np.float64)
        self.u = np.zeros(size, dtype=np.float64)
        self.c = 1
        self.log = MixingLog()
        self._union = np.zeros(size, dtype=bool)
        self._mixed: SparseValues | None = None  # the last mixing's values, for the next epoch
        self._epoch = 0
        self._handles: list[Any] = []

    def submit(self, epoch: int) -> None:
        """Start ``epoch`` (1, 2, ... in turn) on every shard."""
        if epoch != self._epoch + 1 or self._handles:
            raise DparseError(f"mixing: epoch {epoch} submitted out of turn")
        self._epoch = epoch
        first = epoch == 1
        mixed = None if self._mixed is None else self.engine.share(self._mixed)
        self._handles = [self.engine.submit_shard(
            shard, self.run, shard, epoch, self.seed, mixed, job if first else None)
            for shard, job in enumerate(self.jobs)]
        if self._mixed is not None:
            self.log.bytes_down.append(self._mixed.nbytes * len(self.jobs))

    def collect(self) -> list[Any]:
        """Wait for the submitted epoch, mix its shards; returns their statistics in shard
        order."""
        results = [self._result(shard, handle) for shard, handle in enumerate(self._handles)]
        self._handles = []
        t0 = time.perf_counter()
        self._mix(results)
        self.log.mix_seconds.append(time.perf_counter() - t0)
        self.log.shard_seconds.append([r.seconds for r in results])
        self.log.shard_cpu_seconds.append([r.cpu_seconds for r in results])
        self.log.bytes_up.append(sum(r.nbytes for r in results))
        self.log.peak_rss = [r.peak_rss for r in results]
        return [r.stats for r in results]

    def _result(self, shard: int, handle: Any) -> ShardResult:
        """A shard's result, sending the task again with its job and the whole mixed vector
        (the epoch's start) while its worker lacks the state or was lost."""
        for _ in range(MAX_ATTEMPTS):
            try:
                answer = self.engine.result(handle)
            except LostTask:
                answer = NEED_STATE
            if isinstance(answer, ShardResult):
                return answer
            self.log.resent += 1
            handle = self.engine.submit_shard(shard, self.run, shard, self._epoch, self.seed,
                                              None, self.jobs[shard], self.w)
        raise DparseError(f"mixing: shard {shard} of epoch {self._epoch} failed "
                          f"{MAX_ATTEMPTS} times (workers lost)")

    def _mix(self, results: list[ShardResult]) -> None:
        """w, u and c after the epoch (the module doc's formulas), in shard order."""
        instances = sum(r.instances for r in results)
        c_next = self.c + instances
        updates = sum(r.updates for r in results)
        if self.mixing == "updates" and updates > 0:
            mus = [r.updates / updates for r in results]
        else:
            mus = [1.0 / len(results)] * len(results)
        deltas = [r.weights - self.w[r.index] for r in results]
        for r, delta, mu in zip(results, deltas, mus, strict=True):
            self.w[r.index] += mu * delta
            self.u[r.index] += r.sums + (c_next * mu - r.instances - 1) * delta
            self._union[r.index] = True
        self.c = c_next
        index = np.flatnonzero(self._union).astype(np.int32)
        self._union[index] = False
        self._mixed = SparseValues(index, self.w[index])

    def averaged(self) -> np.ndarray:
        """The average of every weight vector so far, float32 (as a saved model holds),
        64-byte aligned (as :meth:`AveragedLearner.averaged`)."""
        return average(self.w, self.u, self.c)

    def close(self) -> None:
        """Free the workers' states of this run."""
        self.engine.release(self.run)


def run_mixed_epochs(training: MixedTraining, epochs: int,
                     after_epoch: Callable[[int, list[Any], np.ndarray], None],
                     progress: bool = False) -> MixingLog:
    """Train ``epochs`` mixed epochs, calling ``after_epoch(epoch, shard_stats, averaged)``
    after each; the next epoch's shards already run while it does (a dev parse overlaps
    them). ``progress``: a bar of the epochs. Logs and returns the run's :class:`MixingLog`."""
    from tqdm import tqdm

    bar = tqdm(total=epochs, desc=f"epochs on {len(training.jobs)} shards", unit="epoch",
               disable=not progress, leave=False, dynamic_ncols=True)
    try:
        training.submit(1)
        for epoch in range(1, epochs + 1):
            stats = training.collect()
            averaged = training.averaged()
            if epoch < epochs:
                training.submit(epoch + 1)
            after_epoch(epoch, stats, averaged)
            bar.update()
    finally:
        bar.close()
        training.close()
    log.info("%s", training.log.summary())
    return training.log
