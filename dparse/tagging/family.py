"""The tagging family (``parser: tagger``) as the registry sees it (:mod:`dparse.families`):
its record, trainer and loader. A tagger trains here but does not parse: ``dparse tag`` and
:func:`dparse.load_tagger` use its models (:mod:`dparse.tagging.pipeline`), as they use the
tagger that a parser config's ``tagger`` section (also this family's) makes its model carry.
The model modules are imported inside the functions, so that the record is cheap to import."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from dparse.errors import ConfigError
from dparse.families import ParserFamily
from dparse.tagging.checks import check_tagging
from dparse.tagging.sections import TaggerConfig, TaggingConfig

if TYPE_CHECKING:
    from dparse.epochs import EpochReport, TrainResult
    from dparse.sections import ExperimentConfig


def _train(cfg: ExperimentConfig, progress: bool,
           on_epoch: Callable[[EpochReport], None] | None) -> TrainResult:
    from dparse.tagging.training import train

    return train(cfg, progress=progress, on_epoch=on_epoch)


def _load(directory: Path, cfg: ExperimentConfig, name: str) -> NoReturn:
    raise ConfigError(f"{directory} is a tagger (parser: tagger), not a parser: `dparse tag "
                      f"{directory}` tags with it; parsing needs a parser model (one trained "
                      "with a tagger section carries its tagger)")


TAGGER = ParserFamily(
    name="tagger",
    summary="taggers of UPOS, XPOS, FEATS and lemmas",
    train=_train,
    load=_load,
    sections={"tagging": TaggingConfig, "tagger": TaggerConfig},
    check=check_tagging,
    trains_on_workers=False,
    config_references=("tagger.config",),
    parses=False,
)
FAMILIES = (TAGGER,)
