"""Where the tasks of one training run go when it trains on several workers
(``dparse train --workers N``): the shard epochs of :mod:`dparse.mixing` and the independent
jobs of a jackknife (pruner folds).

- :class:`InlineEngine` runs every task in this process, one after another: N workers
  simulated on one core (``--cluster inline``), as the scaling table does, and as tests do.
- :class:`DaskEngine` runs them on the Dask workers of :func:`dparse.batch.cluster.open_client`
  (``local`` processes, ``slurm`` or ``pbs`` batch jobs, or a running scheduler), each shard's
  epoch on the worker that holds its state; a task whose worker was lost raises
  :class:`dparse.mixing.LostTask`, which the driver answers by sending it again.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, Future
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from dparse.batch.cluster import KINDS, ClusterOptions, open_client, require_jobqueue
from dparse.errors import DparseError
from dparse.mixing import MAX_ATTEMPTS, MIXINGS, LostTask, release, shard_epoch

CLUSTERS = (*KINDS, "inline")
WORKER_TIMEOUT = 300  # seconds to wait for batch-job workers to join


@dataclass(frozen=True)
class WorkerOptions:
    """How one training run uses several workers: ``workers`` shards (and workers), the
    ``cluster`` they run on (:data:`CLUSTERS`), the ``mixing`` of :mod:`dparse.mixing`,
    batch-job settings and a running scheduler's address. Trainers given one mix its epochs
    (one worker: one shard through the mixing path); given None they train serially, which is
    what ``dparse train`` asks for one worker (:func:`worker_options`)."""

    workers: int = 1
    cluster: str = "local"
    mixing: str = "uniform"
    options: ClusterOptions = field(default_factory=ClusterOptions)
    scheduler: str | None = None
    # an engine already open (a tagging pipeline's, whose jackknife ran on it): what
    # training_engine gives instead of starting another cluster
    engine: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.cluster not in CLUSTERS:
            raise DparseError(f"unknown cluster {self.cluster!r} (known: {', '.join(CLUSTERS)})")
        if self.mixing not in MIXINGS:
            raise DparseError(f"unknown mixing {self.mixing!r} (known: {', '.join(MIXINGS)})")
        if self.workers < 1:
            raise DparseError(f"workers must be at least 1, not {self.workers}")


def worker_options(workers: int, cluster: str, mixing: str, **batch: Any) -> WorkerOptions | None:
    """The WorkerOptions of ``workers`` on ``cluster`` with ``mixing``, as ``dparse train
    --workers`` and :func:`dparse.train` ask for them (None for one worker: serial training);
    ``batch``: :class:`dparse.batch.cluster.ClusterOptions` values and ``scheduler``."""
    if workers == 1:
        return None
    scheduler = batch.pop("scheduler", None)
    return WorkerOptions(workers, cluster, mixing,
                         ClusterOptions().merged(batch, "worker options"), scheduler)


class InlineEngine:
    """Every task at once, in this process (results kept until asked for)."""

    def submit_shard(self, shard: int, *args: Any) -> Any:
        return shard_epoch(*args)

    def result(self, handle: Any) -> Any:
        return handle

    def release(self, run: str) -> None:
        release(run)

    def run_tasks(self, fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        """``[fn(*args) for args in calls]``."""
        return [fn(*args) for args in calls]

    def share(self, value: Any) -> Any:
        return value


def _lost_task_errors() -> tuple[type[BaseException], ...]:
    """What a Dask future raises when its worker (or an input that lived there) was lost."""
    from distributed.scheduler import KilledWorker

    return KilledWorker, CancelledError


def _located(*args: Any) -> tuple[str, Any]:
    """Run :func:`shard_epoch` on a Dask worker; returns the worker's address with its answer."""
    from distributed import get_worker

    return get_worker().address, shard_epoch(*args)


class DaskEngine:
    """Tasks on the workers of a ``distributed.Client`` (or of the client a future will give:
    a cluster still starting); a shard's epochs go to the worker that ran its last one (at
    first: shard i to worker i mod N, by address)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.places: dict[int, str] = {}

    @property
    def client(self) -> Any:
        """The client (waiting for it if the cluster is still starting)."""
        if isinstance(self._client, Future):
            self._client = self._client.result()
        return self._client

    def _where(self, shard: int) -> str:
        workers = sorted(self.client.scheduler_info()["workers"])
        if not workers:
            raise DparseError("the Dask cluster has no workers")
        place = self.places.get(shard)
        return place if place in workers else workers[shard % len(workers)]

    def _sent(self, value: Any, where: str | None) -> Any:
        """``value`` if a scalar (or already on the cluster: :meth:`share`), else its future
        on worker ``where`` (anywhere if None): a task message stays small, the data travels
        once."""
        from distributed import Future as DaskFuture

        if value is None or isinstance(value, str | int | float | DaskFuture):
            return value
        return self.client.scatter([value], workers=None if where is None else [where],
                                   hash=False)[0]

    def submit_shard(self, shard: int, *args: Any) -> Any:
        where = self._where(shard)
        sent = [self._sent(a, where) for a in args]
        future = self.client.submit(_located, *sent, workers=[where],
                                    allow_other_workers=True, pure=False)
        return shard, future

    def result(self, handle: Any) -> Any:
        shard, future = handle
        try:
            where, answer = future.result()
        except _lost_task_errors() as exc:
            raise LostTask(str(exc)) from exc
        self.places[shard] = where
        return answer

    def release(self, run: str) -> None:
        self.client.run(release, run)

    def share(self, value: Any) -> Any:
        """``value`` on every worker, sent once (its future)."""
        return self.client.scatter([value], broadcast=True, hash=False)[0]

    def run_tasks(self, fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        """``[fn(*args) for args in calls]``, the calls spread over the workers; a call lost
        with its worker (or its input with the worker that held it) is sent again."""
        def submit(args: tuple[Any, ...]) -> Any:
            return self.client.submit(fn, *[self._sent(a, None) for a in args], pure=False)

        futures = [submit(args) for args in calls]
        results = []
        for args, future in zip(calls, futures, strict=True):
            for _ in range(MAX_ATTEMPTS):
                try:
                    results.append(future.result())
                    break
                except _lost_task_errors():
                    future = submit(args)
            else:
                raise DparseError(f"a task of {fn.__name__} failed {MAX_ATTEMPTS} times "
                                  "(workers lost)")
        return results


def _import(modules: Sequence[str]) -> None:
    """Import ``modules`` (on a worker, before its first task needs them)."""
    for name in modules:
        importlib.import_module(name)


@contextmanager
def training_engine(options: WorkerOptions, warm_up: Sequence[str] = ()
                    ) -> Iterator[InlineEngine | DaskEngine]:
    """The engine of ``options``: inline, or a Dask client on the cluster it names (started
    here and stopped when the block ends, unless it is a running scheduler's). The cluster
    starts, and its workers import the modules ``warm_up``, in a thread while the block goes
    on (reading the treebank). With ``options.engine`` set, that engine (left open)."""
    if options.engine is not None:
        yield options.engine
        return
    if options.cluster == "inline":
        yield InlineEngine()
        return
    if options.cluster in ("slurm", "pbs") and options.scheduler is None:
        require_jobqueue(options.cluster)
    cluster_options = replace(options.options, workers=options.workers)
    ready: Future = Future()
    done = threading.Event()

    # Imported here, not in the thread: importing distributed from two threads at once (the
    # block's first task imports distributed.scheduler) fails on its circular imports.
    import distributed  # noqa: F401  (which sets its loggers' levels: then ours)
    import distributed.scheduler  # noqa: F401

    logging.getLogger("distributed").setLevel(logging.WARNING)  # no line per worker event

    def serve() -> None:
        """Start the cluster, hand its client over, and stop it (in this thread, where the
        client was entered) once the block is done."""
        try:
            with open_client(options.cluster, cluster_options, options.scheduler) as client:
                try:
                    client.wait_for_workers(options.workers, timeout=WORKER_TIMEOUT)
                except TimeoutError:
                    raise DparseError(f"{options.workers} Dask workers did not join within "
                                      f"{WORKER_TIMEOUT} s") from None
                client.run(_import, list(warm_up))
                ready.set_result(client)
                done.wait()
        except BaseException as exc:  # noqa: BLE001  (handed to the block, which raises it)
            if not ready.done():
                ready.set_exception(exc)

    thread = threading.Thread(target=serve, name="dparse-cluster", daemon=True)
    thread.start()
    try:
        yield DaskEngine(ready)
    finally:
        done.set()
        thread.join()
