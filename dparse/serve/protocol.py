"""uvicorn's HTTP protocol (httptools' parser) with a time limit on a request's headers.

uvicorn closes a keep-alive connection that stays silent after an answer, but the timer stops
at the first byte that comes, and a connection gets none before its first request: a client
that connects and sends nothing, a blank line or half a request line holds its connection for
ever, and enough such clients exhaust the server's file descriptors. Here a connection must
bring a request's headers within :attr:`TimedHttpProtocol.read_timeout` seconds of its opening
or of its previous answer, else it is closed; the body then has as long again (the
application answers 408: :func:`dparse.serve.app.create_app`). ``dparse serve`` sets the
timeout from ``--read-timeout`` in every process before uvicorn starts.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class TimedHttpProtocol(HttpToolsProtocol):
    """:class:`HttpToolsProtocol` closing a connection whose request headers take longer
    than ``read_timeout`` seconds (module doc)."""

    read_timeout: float = 30.0
    _headers_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        waiting = bool(self.pipeline)  # a pipelined request, its headers in: it runs next
        super().on_response_complete()
        if not waiting and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._headers_timer = self.loop.call_later(self.read_timeout, self._expire)

    def _disarm(self) -> None:
        if self._headers_timer is not None:
            self._headers_timer.cancel()
            self._headers_timer = None

    def _expire(self) -> None:
        self._headers_timer = None
        if not self.transport.is_closing():
            self.transport.close()
