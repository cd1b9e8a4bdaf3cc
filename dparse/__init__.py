"""dparse: fast, research-grade data-driven dependency parsing."""

__version__ = "0.1.0"
