"""The Starlette application of ``dparse serve`` and what uvicorn runs it with.

Routes: ``GET /models`` and ``GET``/``POST /process`` (UDPipe's REST API,
:mod:`dparse.serve.process`), ``GET /health`` (the models, the work queue, this process's
memory), ``GET``/``POST /`` (the page, :mod:`dparse.serve.page`). A request error is
answered with its status and a ``text/plain`` message, as UDPipe's server answers (503 with
``Retry-After``); a bug is answered 500 and logged with its traceback (the only thing logged
as an error). Every request is logged on one line (``dparse.serve`` logger): client, method,
path, status, milliseconds and, for parses, the model, sentences and tokens.

Parsing runs under the :class:`~dparse.serve.limits.WorkQueue`: a request whose data is at
most ``INLINE_CHARS`` characters (a few sentences, a millisecond or so of parsing) in the
event loop itself, a larger one in a worker thread, so that the event loop keeps answering
(``/health``, the queue's 503s) while it parses. Handing every request to a thread would
cost the small ones, the usual ones, more than their parse: the event loop waits for the GIL
while the thread runs Python code (up to the interpreter's 5 ms switch interval).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dparse.conll import read_conll_block
from dparse.errors import DparseError
from dparse.serve.errors import BUSY, REQUEST_TIMEOUT, TOO_LARGE, RequestError
from dparse.serve.limits import RETRY_AFTER, Limits, WorkQueue
from dparse.serve.models import ModelSet
from dparse.serve.page import input_format, render
from dparse.serve.params import body_params, query_params
from dparse.serve.process import Process

log = logging.getLogger("dparse.serve")
SETTINGS_VARIABLE = "DPARSE_SERVE_SETTINGS"  # the settings a worker process reads (JSON)
NOTE = "dparse.note"  # the scope key where a handler leaves what the request log adds
CORS = {"Access-Control-Allow-Origin": "*"}  # as UDPipe's server: pages elsewhere may call it
INLINE_CHARS = 4096  # data parsed in the event loop (module doc); more: in a worker thread
Handler = Callable[[Request], Awaitable[Response]]


def memory() -> dict[str, int]:
    """This process's resident memory in bytes: ``rss``, and ``pss`` (memory-mapped pages
    that several processes share counted in shares), where Linux gives it."""
    import psutil

    info = psutil.Process().memory_full_info()
    return {"rss": info.rss, **({"pss": info.pss} if hasattr(info, "pss") else {})}


def create_app(models: ModelSet, limits: Limits) -> Starlette:
    """The application serving ``models`` within ``limits``."""
    queue = WorkQueue(limits)

    async def read_params(request: Request) -> dict[str, str]:
        """The query's and the body's parameters; the body read up to ``limits.max_body``
        bytes, within ``limits.read_timeout`` seconds of the headers (a client that sends it
        slowly or not at all would hold its connection for ever; the headers have their own
        limit: :mod:`dparse.serve.protocol`)."""
        params = query_params(request.scope.get("query_string", b""))
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > limits.max_body:
            raise _too_large(int(length), limits)
        chunks, size = [], 0
        try:
            async with asyncio.timeout(limits.read_timeout):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > limits.max_body:
                        raise _too_large(size, limits)
                    chunks.append(chunk)
        except TimeoutError:
            raise RequestError(REQUEST_TIMEOUT, "The request body did not arrive within "
                               f"{limits.read_timeout:g}s of its headers ({size} bytes "
                               "came).") from None
        return {**params, **body_params(request.headers.get("content-type", ""),
                                        b"".join(chunks))}

    async def process(request: Request) -> Response:
        job = Process.of(await read_params(request), models)
        async with queue.slot():
            result, tokens, count = await _parsed(job, limits)
        request.scope[NOTE] = f"model={job.model.name} sentences={count} tokens={tokens}"
        return JSONResponse(job.answer(result), headers=CORS)

    async def models_list(request: Request) -> Response:
        return JSONResponse(models.describe(), headers=CORS)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "pid": os.getpid(),
                             "models": [m.name for m in models.models],
                             "working": queue.working, "waiting": queue.waiting,
                             "memory": memory()})

    async def page(request: Request) -> Response:
        names = [m.name for m in models.models]
        params = await read_params(request) if request.method == "POST" else {}
        text = params.get("data", "")
        chosen = params.get("model", names[0])
        if not text.strip():
            return HTMLResponse(render(names, chosen, text))
        try:
            job = Process.of({"model": chosen, "data": text, "input": input_format(text),
                              "parser": ""}, models)
            async with queue.slot():
                result, _, _ = await _parsed(job, limits)
        except RequestError as error:
            return HTMLResponse(render(names, chosen, text, error=error.message),
                                status_code=error.status)
        parsed = list(read_conll_block(result.encode(), "result", "conllu"))
        return HTMLResponse(render(names, chosen, text, parsed, result))

    routes = [
        Route("/", _handled(page), methods=["GET", "POST"]),
        Route("/models", _handled(models_list), methods=["GET", "POST"]),
        Route("/process", _handled(process), methods=["GET", "POST"]),
        Route("/health", _handled(health), methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(RequestLog)
    return app


async def _parsed(job: Process, limits: Limits) -> tuple[str, int, int]:
    """:func:`_run` of ``job``, here or in a worker thread (module doc)."""
    if len(job.data) <= INLINE_CHARS:
        return _run(job, limits)
    return await run_in_threadpool(_run, job, limits)


def _run(job: Process, limits: Limits) -> tuple[str, int, int]:
    """The CoNLL-U of a request (in a worker thread), its tokens and sentences."""
    sentences = job.sentences(limits)
    return job.run(sentences), sum(len(s) for s in sentences), len(sentences)


def _too_large(size: int, limits: Limits) -> RequestError:
    return RequestError(TOO_LARGE, f"The payload size is too large: {size} bytes or more, "
                        f"this server takes at most {limits.max_body}.")


def _handled(handler: Handler) -> Handler:
    """``handler`` answering a RequestError with its status and message, a client gone
    before its answer with nothing, and a bug with 500 (logged with its traceback)."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except RequestError as error:
            request.scope[NOTE] = error.message.splitlines()[0]
            headers = {**CORS, **({"Retry-After": str(RETRY_AFTER)}
                                  if error.status == BUSY else {}),
                       # the rest of a late body may still come: the connection ends
                       **({"Connection": "close"} if error.status == REQUEST_TIMEOUT else {})}
            return PlainTextResponse(error.message + "\n", error.status, headers=headers)
        except ClientDisconnect:
            request.scope[NOTE] = "client disconnected before the body ended"
            return Response(status_code=400)  # nobody reads it
        except Exception:
            log.exception("internal error on %s %s", request.method, request.url.path)
            return PlainTextResponse("Internal server error (dparse serve); see its log.\n",
                                     500)

    return run


class RequestLog:
    """ASGI middleware: one log line per HTTP request (module doc)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[int] = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            client = scope.get("client") or ("-", 0)
            note = scope.get(NOTE, "")
            log.info("%s:%s %s %s %s %.1fms%s", client[0], client[1], scope["method"],
                     scope["path"], status[0] if status else "-",
                     1000 * (time.perf_counter() - started), f" {note}" if note else "")


def settings_json(arguments: list[tuple[str, str]], limits: Limits) -> str:
    """What :func:`app_from_environment` reads: the models (name, directory) and limits."""
    return json.dumps({"models": arguments, "limits": limits.__dict__})


def load_app(arguments: list[tuple[str, str]], limits: Limits) -> Starlette:
    """The application of the models ``(name, directory)``, loaded now (logged with the
    time it took and the memory after)."""
    started = time.perf_counter()
    models = ModelSet.load(arguments)
    used = memory()
    log.info("process %d: %d model%s loaded in %.1fs (%s); memory RSS %.0f MiB%s", os.getpid(),
             len(models.models), "s" if len(models.models) > 1 else "",
             time.perf_counter() - started,
             ", ".join(f"{m.name}={m.directory}" for m in models.models), used["rss"] / 2**20,
             f", PSS {used['pss'] / 2**20:.0f} MiB" if "pss" in used else "")
    return create_app(models, limits)


def app_from_environment() -> Any:
    """The application of the settings in ``$DPARSE_SERVE_SETTINGS`` (uvicorn's factory in
    each worker process of ``dparse serve --workers N``)."""
    settings = json.loads(os.environ[SETTINGS_VARIABLE])
    try:
        return load_app([tuple(pair) for pair in settings["models"]],
                        Limits(**settings["limits"]))
    except DparseError as exc:
        log.error("%s", exc)
        raise SystemExit(3) from None
