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
