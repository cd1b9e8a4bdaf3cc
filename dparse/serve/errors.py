"""The error a request gets (an HTTP status and a message naming the problem), and the check
that the ``serve`` extra is installed."""

from __future__ import annotations

from dparse.errors import DparseError

BAD_REQUEST = 400  # UDPipe's status for every error of a request
NOT_FOUND = 404
REQUEST_TIMEOUT = 408  # a body that did not arrive in time (the connection then closes)
TOO_LARGE = 413  # a body over the size limit
BUSY = 503  # the queue of work is full, or a request waited too long (with Retry-After)


class RequestError(Exception):
    """A request that cannot be answered: ``status`` (``BAD_REQUEST``, ...) and ``message``,
    which the client gets as ``text/plain`` as UDPipe's server answers it.

    >>> RequestError(400, "The parameter 'data' is required.").status
    400
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def require_serve() -> None:
    """DparseError naming the ``dparse[serve]`` extra when Starlette or uvicorn is missing."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise DparseError(f"dparse serve needs Starlette and uvicorn ({exc.name} is not "
                          "installed): pip install 'dparse[serve]'") from None
