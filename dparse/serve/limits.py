"""What a server takes: the size of a request body, the time a request may take to arrive,
the words of a sentence, and the work it
does at once (a worker process parses ``concurrency`` requests at a time, holds ``queue``
more waiting, each at most ``queue_timeout`` seconds; beyond that a request is answered 503
with ``Retry-After``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from dparse.serve.errors import BUSY, RequestError

RETRY_AFTER = 1  # seconds a busy server asks a client to wait (the Retry-After header)


@dataclass(frozen=True)
class Limits:
    """A server's limits (module doc); ``max_body`` in bytes, ``max_words`` a sentence."""

    max_body: int = 1 << 20  # UDPipe's server's default, 1024 kB
    max_words: int = 1000  # UDPipe 2's server refuses longer sentences
    concurrency: int = 1
    queue: int = 64
    queue_timeout: float = 30.0
    read_timeout: float = 30.0  # seconds for a request's headers, then as many for its body


class WorkQueue:
    """Admits requests to work: ``concurrency`` at a time, ``queue`` more waiting in arrival
    order; a request beyond those, or one that waited ``queue_timeout`` seconds, gets
    RequestError 503. Lives in one event loop."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.working = 0
        self.waiting = 0
        self._slots: asyncio.Semaphore | None = None

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``concurrency`` slots for the block."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limits.concurrency)
        if self._slots.locked() and self.waiting >= self.limits.queue:
            raise self._busy(f"{self.working} requests working and {self.waiting} waiting")
        if self._slots.locked():
            self.waiting += 1
            try:
                await asyncio.wait_for(self._slots.acquire(), self.limits.queue_timeout)
            except TimeoutError:
                raise self._busy(f"waited {self.limits.queue_timeout:g}s in the queue") from None
            finally:
                self.waiting -= 1
        else:  # a free slot: taken at once (no timer to set)
            await self._slots.acquire()
        self.working += 1
        try:
            yield
        finally:
            self.working -= 1
            self._slots.release()

    @staticmethod
    def _busy(why: str) -> RequestError:
        return RequestError(BUSY, f"The server is busy ({why}); retry after {RETRY_AFTER}s.")
