"""Shared test settings: the real-treebank data root.

``DATA`` is ``$DPARSE_DATA`` or ``../shared/data`` beside the repository. Tests that read it
take the ``data`` fixture (or carry ``requires_data``) and are skipped when it is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(os.environ.get("DPARSE_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
requires_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"treebank data not found at {DATA}")


@pytest.fixture
def data() -> Path:
    """The data root; skips the test when it is missing."""
    if not DATA.is_dir():
        pytest.skip(f"treebank data not found at {DATA}")
    return DATA
