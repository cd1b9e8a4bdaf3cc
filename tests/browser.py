"""Pictures of pages as a browser draws them: headless Chromium (Debian package chromium,
which .ci/run installs) takes a screenshot, Pillow reads it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest


def screenshot(tmp_path: Path, page: Path, width: int, height: int) -> np.ndarray:
    """The screenshot of ``page`` (a file) by headless Chromium at ``width`` x ``height``, as
    grey levels 0-255; skips the test without Chromium or Pillow."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium is not installed (Debian package chromium)")
    image = pytest.importorskip("PIL.Image", reason="Pillow is needed to read the screenshot")
    shot = tmp_path / f"{page.stem}.png"
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars",
         f"--window-size={width},{height}", f"--screenshot={shot}", page.as_uri()],
        capture_output=True, timeout=60, check=False)
    assert shot.exists(), "Chromium wrote no screenshot"
    return np.asarray(image.open(shot).convert("L"), dtype=float)


class DevTools:
    """Headless Chromium driven over the DevTools protocol on a pipe
    (``--remote-debugging-pipe``: JSON commands on its fd 3, answers and events on its fd 4,
    each message ended by a NUL byte); no package beyond the standard library. ``open(url)``
    gives a page's session; ``call`` sends a command and returns its result. Skips the test
    without Chromium."""

    def __init__(self, tmp_path: Path) -> None:
        import os

        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium is None:
            pytest.skip("headless Chromium is not installed (Debian package chromium)")
        to_chromium, self._commands = os.pipe()
        self._answers, from_chromium = os.pipe()

        def plumb() -> None:  # in the child: its fd 3 reads our commands, fd 4 answers
            os.dup2(to_chromium, 3)
            os.dup2(from_chromium, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'devtools-profile'}", "--remote-debugging-pipe",
             "--window-size=1100,800"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=plumb, pass_fds=(3, 4))
        os.close(to_chromium)
        os.close(from_chromium)
        self._buffer = b""
        self._next = 0

    def call(self, method: str, params: dict | None = None, session: str | None = None
             ) -> dict:
        """The result of the command ``method`` (to the page ``session``); AssertionError
        with the browser's error message."""
        import json
        import os

        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._answers, 1 << 16)
                assert chunk, "Chromium closed its DevTools pipe"
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next:  # events and other answers pass by
                assert "error" not in answer, f"{method}: {answer['error']}"
                return answer["result"]

    def open(self, url: str) -> str:
        """A new page showing ``url``: its session id."""
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        return self.call("Target.attachToTarget", {"targetId": target, "flatten": True}
                         )["sessionId"]

    def evaluate(self, session: str, expression: str) -> object:
        """The value of the JavaScript ``expression`` in the page ``session``."""
        result = self.call("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True}, session)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def close(self) -> None:
        import os

        try:
            self.call("Browser.close")
        except (AssertionError, OSError):
            pass
        os.close(self._commands)
        os.close(self._answers)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
