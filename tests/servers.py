"""A ``dparse serve`` process on a free loopback port, for the tests of dparse.serve
(tests/serve/): started as the command line starts it (``--port 0``: the kernel picks the
port, which the server prints), ready once ``/health`` answers (the socket listens before the
server starts, so the first request waits in its backlog), stopped by SIGTERM; its log kept
for the tests to read. A test module that starts one first skips without the serve extra or
httpx: ``require_serving()``."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import threading

import pytest
from paths import REPO

SERVING = ("httpx", "starlette", "uvicorn")  # the serve extra, and the tests' client


def require_serving() -> None:
    """Skip the calling test module without the serve extra or httpx."""
    for name in SERVING:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (pip install -e '.[dev]')",
                        allow_module_level=True)

STARTUP_SECONDS = 120  # the models load before the server prints its address
# how a server stopped by SIGTERM ends: uvicorn raises the signal again once it has shut down
# gracefully (one process); the parent of --workers N exits 0
STOPPED = (0, -signal.SIGTERM)


class Server:
    """A running ``dparse serve ARGS...``: ``url`` (``http://127.0.0.1:PORT``), ``port``, the
    ``log`` lines so far, ``client`` (an httpx.Client on ``url``)."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dparse", "serve", "--port", "0", *args], cwd=REPO,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        self.log: list[str] = []
        self._address = threading.Event()
        self.url = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._address.wait(STARTUP_SECONDS) or not self.url:
            self.process.kill()
            self.process.wait()
            self._reader.join()
            pytest.fail("dparse serve did not start:\n" + "".join(self.log))
        self.port = int(self.url.rsplit(":", 1)[1])
        import httpx

        self.client = httpx.Client(base_url=self.url, timeout=60)
        assert self.client.get("/health").json()["status"] == "ok"

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)
            if line.startswith("dparse serve: http://"):
                self.url = line.split()[2].rstrip("/")
                self._address.set()
        self._address.set()  # the process ended: whoever waits stops waiting

    def stop(self) -> int:
        """SIGTERM, then the exit status once the process ended (its log read whole)."""
        self.client.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(60)
        self._reader.join(60)
        return status

    def finish(self) -> None:
        """Stop it (SIGTERM) and check it stopped cleanly and logged no internal error."""
        assert self.stop() in STOPPED
        assert self.errors() == []

    def errors(self) -> list[str]:
        """The log lines that report an internal error (level ERROR, or a traceback)."""
        return [line for line in self.log if " ERROR " in line or "Traceback" in line
                or "Exception in ASGI" in line]
