"""Where the tests find the repository: ``REPO``, the checkout's root (its configs/, README.md,
benchmarks/ and the data root beside it)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
