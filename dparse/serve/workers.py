"""The listening sockets of ``dparse serve`` and its worker processes (``--workers N``).

With several workers, each has a listening socket of its own, all bound to one address with
``SO_REUSEPORT``: the kernel gives each new connection to one of the sockets (by a hash of the
connection's addresses), so that keep-alive clients spread over the workers. One socket shared
by every worker, as uvicorn's multiprocess mode has it, lets the worker that wakes first accept
every connection waiting: 16 clients connecting at once all went to one worker and the other
stayed idle. The parent holds the sockets for the server's life and starts the workers (spawned,
each loading the models itself, see :func:`dparse.serve.app.app_from_environment`); a worker
that dies is replaced on the same socket, which kept the connections that arrived meanwhile. A
worker that fails at start (uvicorn's exit status 3) stops the server rather than being started
again and again. SIGTERM or SIGINT: the parent passes SIGTERM to the workers, each of which
lets its requests in flight finish, and exits 0 once they have ended.

Where the platform lacks ``SO_REUSEPORT``, the workers share one socket.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import threading
from typing import Any

from dparse.errors import DparseError

log = logging.getLogger("dparse.serve")
STARTUP_FAILURE = 3  # uvicorn's exit status of a worker that could not start
POLL_SECONDS = 0.5  # how often the parent looks for a worker that died
REUSE_PORT = hasattr(socket, "SO_REUSEPORT")


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` TCP sockets listening on ``host``:``port`` (0: a free port, the same for
    all), with ``SO_REUSEPORT`` when there are several (module doc); DparseError when the
    address cannot be taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sockets: list[socket.socket] = []
    for _ in range(count):
        # IPPROTO_TCP named: asyncio sets TCP_NODELAY on the connections of such a socket
        # only, and without it each answer (headers, then body) waits some 40 ms on the
        # client's delayed ACK
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if count > 1:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            for other in sockets:
                other.close()
            raise DparseError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") \
                from None
        sock.listen(2048)
        sock.set_inheritable(True)
        sockets.append(sock)
        port = sock.getsockname()[1]  # the port the first one got, for the others
    return sockets


def run_workers(count: int, options: dict[str, Any], environment: dict[str, str],
                sockets: list[socket.socket], read_timeout: float) -> int:
    """Serve with ``count`` worker processes, worker ``k`` on ``sockets[k % len(sockets)]``,
    each running ``uvicorn.Config(**options)`` with ``environment`` added to its own and
    :class:`~dparse.serve.protocol.TimedHttpProtocol`'s ``read_timeout`` set; return the
    parent's exit status once they have ended (module doc)."""
    context = multiprocessing.get_context("spawn")
    stopping = threading.Event()
    status = 0

    def start(k: int) -> multiprocessing.process.BaseProcess:
        worker = context.Process(target=_worker, args=(options, environment, read_timeout,
                                                        sockets[k % len(sockets)]),
                                 name=f"dparse-serve-worker-{k}")
        worker.start()
        return worker

    previous = {sig: signal.signal(sig, lambda *_: stopping.set())
                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        workers = [start(k) for k in range(count)]
        while not stopping.wait(POLL_SECONDS):
            for k, worker in enumerate(workers):
                if worker.is_alive():
                    continue
                worker.join()
                if worker.exitcode == STARTUP_FAILURE:
                    log.error("worker process %d could not start; stopping", worker.pid)
                    status = STARTUP_FAILURE
                    stopping.set()
                    break
                log.warning("worker process %d ended (exit status %s); starting another",
                            worker.pid, worker.exitcode)
                workers[k] = start(k)
        for worker in workers:
            if worker.is_alive() and worker.pid is not None:
                os.kill(worker.pid, signal.SIGTERM)
        for worker in workers:
            worker.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status


def _worker(options: dict[str, Any], environment: dict[str, str], read_timeout: float,
            sock: socket.socket) -> None:
    """One worker process: uvicorn serving on ``sock`` until SIGTERM or SIGINT."""
    import uvicorn

    from dparse.serve.protocol import TimedHttpProtocol

    os.environ.update(environment)
    TimedHttpProtocol.read_timeout = read_timeout
    config = uvicorn.Config(**options)  # configures this process's logging
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # SIGINT before uvicorn's own handler was set: nothing to say
        pass
