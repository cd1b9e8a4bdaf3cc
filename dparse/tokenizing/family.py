"""The tokenizing family (``parser: tokenizer``) as the registry sees it (:mod:`dparse.families`):
its record, trainer and loader. A tokenizer trains here but does not parse: ``dparse tokenize``
uses its models, and a parser or tagger model whose config has a ``tokenizer`` section (also
this family's) carries one (:mod:`dparse.tokenizing.carried`). The model modules are imported
inside the functions, so that the record is cheap to import."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from dparse.errors import ConfigError
from dparse.families import ParserFamily
from dparse.tokenizing.checks import check_tokenizing
from dparse.tokenizing.sections import TokenizerConfig, TokenizingConfig

if TYPE_CHECKING:
    from dparse.epochs import EpochReport, TrainResult
    from dparse.sections import ExperimentConfig


def _train(cfg: ExperimentConfig, progress: bool,
           on_epoch: Callable[[EpochReport], None] | None) -> TrainResult:
    from dparse.tokenizing.training import train

    return train(cfg, progress=progress, on_epoch=on_epoch)


def _load(directory: Path, cfg: ExperimentConfig, name: str) -> NoReturn:
    raise ConfigError(f"{directory} is a tokenizer (parser: tokenizer), not a parser: `dparse "
                      f"tokenize {directory} TEXT` tokenizes raw text with it")


TOKENIZER = ParserFamily(
    name="tokenizer",
    summary="tokenizers, sentence splitters and multiword-token expanders of raw text",
    train=_train,
    load=_load,
    sections={"tokenizing": TokenizingConfig, "tokenizer": TokenizerConfig},
    check=check_tokenizing,
    trains_on_workers=False,
    parses=False,
)
FAMILIES = (TOKENIZER,)
