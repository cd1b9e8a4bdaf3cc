"""The Dask cluster a grid runs on: a LocalCluster, a SLURM or PBS cluster (dask-jobqueue),
or a running scheduler.

``local`` needs no set-up: ``workers`` single-threaded worker processes on this machine (each
watched by a nanny, which restarts a worker that dies). ``slurm`` and ``pbs`` submit
``workers`` batch jobs of one single-threaded worker each, with the queue, account, walltime
and memory of :class:`ClusterOptions`; they need the optional ``dask-jobqueue`` package
(``pip install 'dparse[cluster]'``). A ``scheduler`` address connects to a cluster someone
started (``dask scheduler`` and ``dask worker``), which this module leaves running. The workers
of a cluster started here drop the heartbeat errors of its shutdown race
(:mod:`dparse.batch.worker_logging`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, fields, replace
from typing import Any

from dparse.errors import ConfigError, DparseError

KINDS = ("local", "slurm", "pbs")
# What a Dask nanny sets in its worker's environment, instead of Dask's default, which also
# sets MALLOC_TRIM_THRESHOLD_: that turns off glibc's dynamic mmap threshold, so that every
# array above 128 KiB (a decoder's charts, a sentence's part scores) is a fresh mmap whose pages
# the kernel faults in and zeroes again; second-order training then ran at half speed, a
# quarter of its time in the kernel. Single-threaded BLAS: the parallelism is the workers'.
WORKER_ENVIRON = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}
CONNECT_TIMEOUT = 60  # seconds to wait for a scheduler


@dataclass(frozen=True)
class ClusterOptions:
    """How many workers, and the batch-job settings of ``slurm`` and ``pbs``."""

    workers: int = 2
    queue: str | None = None
    account: str | None = None
    walltime: str = "01:00:00"
    memory: str = "4GB"
    cores: int = 1
    job_directives: tuple[str, ...] = ()  # extra #SBATCH / #PBS lines
    scheduler_host: str | None = None  # interface address the batch jobs reach back to

    def merged(self, values: dict[str, Any], source: str) -> ClusterOptions:
        """These options with ``values`` (a grid file's ``cluster`` section, or command-line
        options; None values ignored) laid over them; ConfigError naming ``source`` for an
        unknown key or a bad value."""
        known = {f.name: f.type for f in fields(self)}
        changes: dict[str, Any] = {}
        for key, value in values.items():
            if key not in known:
                raise ConfigError(f"{source}: unknown cluster option {key!r} "
                                  f"(known: {', '.join(known)})")
            if value is None:
                continue
            if key in ("workers", "cores"):
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ConfigError(f"{source}: cluster.{key} must be a positive integer, "
                                      f"not {value!r}")
            elif key == "job_directives":
                if not isinstance(value, list | tuple) or not all(isinstance(v, str)
                                                                  for v in value):
                    raise ConfigError(f"{source}: cluster.job_directives must be a list of "
                                      "strings")
                value = tuple(value)
            elif not isinstance(value, str | int | float):
                raise ConfigError(f"{source}: cluster.{key} must be a string, not {value!r}")
            else:
                value = str(value)
            changes[key] = value
        return replace(self, **changes)


def require_jobqueue(kind: str) -> Any:
    """The dask_jobqueue module; DparseError saying how to install it when it is missing."""
    try:
        import dask_jobqueue
    except ImportError:
        raise DparseError(f"--cluster {kind} needs dask-jobqueue: pip install "
                          "'dparse[cluster]'") from None
    return dask_jobqueue


def _jobqueue_cluster(kind: str, options: ClusterOptions) -> Any:
    dask_jobqueue = require_jobqueue(kind)
    cls = dask_jobqueue.SLURMCluster if kind == "slurm" else dask_jobqueue.PBSCluster
    scheduler_options = {"dashboard_address": ":0"}
    if options.scheduler_host:
        scheduler_options["host"] = options.scheduler_host
    environ = f"export DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON='{json.dumps(WORKER_ENVIRON)}'"
    return cls(cores=options.cores, processes=1, memory=options.memory, queue=options.queue,
               account=options.account, walltime=options.walltime,
               job_extra_directives=list(options.job_directives),
               job_script_prologue=[environ],
               worker_extra_args=["--nthreads", "1"], scheduler_options=scheduler_options)


@contextmanager
def open_client(kind: str, options: ClusterOptions, scheduler: str | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` on the cluster of ``kind`` (or at ``scheduler``); leaving
    the block closes the client and any cluster it started (cancelling its batch jobs)."""
    from distributed import Client, LocalCluster

    from dparse.batch.worker_logging import QuietHeartbeat

    if kind not in KINDS:
        raise DparseError(f"unknown cluster kind {kind!r} (known: {', '.join(KINDS)})")
    with ExitStack() as stack:
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout=CONNECT_TIMEOUT)
            except OSError as exc:
                raise DparseError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") \
                    from None
            yield stack.enter_context(client)
            return
        if kind == "local":
            import dask

            with dask.config.set({"distributed.nanny.pre-spawn-environ": WORKER_ENVIRON}):
                cluster = LocalCluster(n_workers=options.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=":0")
        else:
            cluster = _jobqueue_cluster(kind, options)
            cluster.scale(jobs=options.workers)
        stack.enter_context(cluster)
        client = stack.enter_context(Client(cluster))
        client.register_plugin(QuietHeartbeat())
        yield client
