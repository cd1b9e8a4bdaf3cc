"""Shared test settings: the real-treebank data root, and Ctrl-C for the children.

``DATA`` is ``$DPARSE_DATA`` or ``../shared/data`` beside the repository. Tests that read it
take the ``data`` fixture (or carry ``requires_data``) and are skipped when it is missing.

A suite started in the background by a shell without job control (``nohup make test &``)
inherits SIGINT ignored, and so would every child process the tests interrupt with SIGINT
(an ignored disposition survives exec): the test process gives SIGINT back its Python
handler, which exec resets to the default in the children.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

DATA = Path(os.environ.get("DPARSE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
requires_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"treebank data not found at {DATA}")


@pytest.fixture
def data() -> Path:
    """The data root; skips the test when it is missing."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    return DATA
