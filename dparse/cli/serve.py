"""``dparse serve MODEL...``: trained models behind HTTP (UDPipe's REST API and a page)."""

from __future__ import annotations

import socket

import click

from dparse.errors import DparseError

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s[%(process)d]: %(message)s"


def log_config(level: str) -> dict[str, object]:
    """The logging of every process of the server: dparse's and uvicorn's lines on stderr."""
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"plain": {"format": LOG_FORMAT}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain",
                                "stream": "ext://sys.stderr"}},
        "loggers": {name: {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
                    for name in ("dparse.serve", "uvicorn", "uvicorn.error")},
    }


def check_models(arguments: list[tuple[str, str]]) -> None:
    """Load the models ``(name, directory)`` in a child process, which then ends;
    DparseError with its message if one cannot load."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from dparse.serve.models import load_message

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        problem = pool.submit(load_message, arguments).result()
    if problem is not None:
        raise DparseError(problem)


@click.command("serve")
@click.argument("models", nargs=-1, required=True, metavar="MODEL...")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: a free one, printed at start).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes, each with every model loaded (their memory-mapped "
              "weights shared).")
@click.option("--max-request-kb", type=click.IntRange(min=1), default=1024, show_default=True,
              help="Largest request body in kB (1024 bytes); a larger one gets 413.")
@click.option("--max-words", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Most words a sentence may have; a longer one gets 400.")
@click.option("--concurrency", type=click.IntRange(min=1), default=1, show_default=True,
              help="Requests a worker process parses at a time.")
@click.option("--queue", type=click.IntRange(min=0), default=64, show_default=True,
              help="Requests a worker process holds waiting beyond those; more get 503 with "
              "Retry-After.")
@click.option("--queue-timeout", type=click.FloatRange(min=0, min_open=True), default=30.0,
              show_default=True, help="Seconds a request may wait in the queue before 503.")
@click.option("--read-timeout", type=click.FloatRange(min=0, min_open=True), default=30.0,
              show_default=True, help="Seconds a client has to send a request's headers (from "
              "connecting or from the previous answer; else the connection closes), then as "
              "many for its body (else 408).")
@click.option("--shutdown-timeout", type=click.FloatRange(min=0), default=30.0,
              show_default=True, help="On SIGTERM, seconds the requests in flight get to "
              "finish.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True, help="Least level logged (info: a line per "
              "request).")
def serve(models: tuple[str, ...], host: str, port: int, workers: int, max_request_kb: int,
          max_words: int, concurrency: int, queue: int, queue_timeout: float,
          read_timeout: float, shutdown_timeout: float, log_level: str) -> None:
    """Serve MODEL... (model directories, or NAME=DIR; the first is the default) over HTTP:
    UDPipe's REST API (GET /models, GET or POST /process), GET /health, and a page at / that
    parses what you type and draws the trees.

    /process takes UDPipe's parameters (model, data, input=conllu|horizontal|vertical,
    tagger, parser, output=conllu) and dparse's (decoder, tags, kbest, constraints,
    marginals, marginals_threshold, temperature) and answers {"model", "acknowledgements",
    "result"}: with parser, the result is what dparse parse writes. Needs the serve extra
    (pip install 'dparse[serve]'). SIGTERM stops it once the requests in flight are done.

    \b
    Examples:
      dparse serve models/en_ewt-o1-cle
      dparse serve en=models/en_ewt-o1-cle en_eisner=models/en_ewt-o1-eisner --port 8080 \\
          --workers 2
      curl -d model=en -d input=horizontal -d parser= \\
          --data-urlencode 'data=The dog barks .' http://127.0.0.1:8080/process
    """
    from dparse.serve.errors import require_serve
    from dparse.serve.limits import Limits
    from dparse.serve.models import model_argument

    require_serve()
    import uvicorn

    from dparse.serve.app import SETTINGS_VARIABLE, load_app, settings_json
    from dparse.serve.protocol import TimedHttpProtocol
    from dparse.serve.workers import REUSE_PORT, listening_sockets, run_workers

    arguments = [model_argument(text) for text in models]
    limits = Limits(max_request_kb * 1024, max_words, concurrency, queue, queue_timeout,
                    read_timeout)
    logging_config = log_config(log_level)
    import logging.config

    logging.config.dictConfig(logging_config)
    # the models load before the server listens: one that cannot load is an error here (with
    # workers, in a process that ends then, so that the parent holds no model)
    app = load_app(arguments, limits) if workers == 1 else check_models(arguments)
    sockets = listening_sockets(host, port, workers if REUSE_PORT else 1)
    address = sockets[0].getsockname()
    shown = f"[{address[0]}]" if sockets[0].family == socket.AF_INET6 else address[0]
    click.echo(f"dparse serve: http://{shown}:{address[1]}/ ({len(arguments)} model"
               f"{'s' if len(arguments) > 1 else ''}, {workers} worker"
               f"{'s' if workers > 1 else ''})", err=True)
    options = {"host": host, "port": address[1], "http": TimedHttpProtocol,
               "log_config": logging_config,
               "access_log": False, "timeout_graceful_shutdown": shutdown_timeout,
               "lifespan": "off"}
    if workers == 1:
        TimedHttpProtocol.read_timeout = read_timeout
        uvicorn.Server(uvicorn.Config(app, **options)).run(sockets=sockets)
        return
    status = run_workers(workers, {"app": "dparse.serve.app:app_from_environment",
                                   "factory": True, **options},
                         {SETTINGS_VARIABLE: settings_json(arguments, limits)}, sockets,
                         read_timeout)
    if status:
        raise SystemExit(status)
