"""dparse: fast, research-grade data-driven dependency parsing.

The names below are the public API (README, "From Python"); everything under them may change.
They are imported on first use, so that ``import dparse`` stays cheap.

Example::

    import dparse
    parser = dparse.load("models/en_ewt-o1-cle-tagged")
    print(parser.parse(["Dogs", "bark", "."]).to_conllu())
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from dparse.errors import ConfigError, DparseError, InputError

if TYPE_CHECKING:
    from dparse.api import (
        Evaluation,
        Parser,
        ParseStats,
        Tagger,
        Tokenizer,
        TrainedModel,
        evaluate,
        load,
        load_tagger,
        load_tokenizer,
        read,
        train,
        write,
    )
    from dparse.conll import Sentence

__version__ = "0.1.0"

# public name -> the module that defines it
_LAZY = {
    "load": "dparse.api",
    "Parser": "dparse.api",
    "load_tagger": "dparse.api",
    "Tagger": "dparse.api",
    "load_tokenizer": "dparse.api",
    "Tokenizer": "dparse.api",
    "ParseStats": "dparse.api",
    "read": "dparse.api",
    "write": "dparse.api",
    "evaluate": "dparse.api",
    "Evaluation": "dparse.api",
    "train": "dparse.api",
    "TrainedModel": "dparse.api",
    "Sentence": "dparse.conll",
}

__all__ = ["ConfigError", "DparseError", "Evaluation", "InputError", "ParseStats", "Parser",
           "Sentence", "Tagger", "Tokenizer", "TrainedModel", "__version__", "evaluate", "load",
           "load_tagger", "load_tokenizer", "read", "train", "write"]


def __getattr__(name: str) -> Any:
    """The public names of :data:`_LAZY`, imported on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'dparse' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
