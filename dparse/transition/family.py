"""The transition-based parser families as the registry sees them (:mod:`dparse.families`):
the easy-first parser (``parser: easyfirst``) and the beam shift-reduce parser (``parser:
shiftreduce``), each with its record, trainer, loader and loaded parser. The model modules
are imported inside the functions, so that the records are cheap to import."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from dparse.errors import ConfigError
from dparse.families import ParserFamily
from dparse.transition.checks import check_shiftreduce
from dparse.transition.sections import ShiftReduceConfig

if TYPE_CHECKING:
    from dparse.batch.engines import WorkerOptions
    from dparse.conll import Sentence
    from dparse.constraints import Constraints
    from dparse.epochs import EpochReport, TrainResult
    from dparse.hypergraph.forest import OnForest
    from dparse.sections import ExperimentConfig
    from dparse.timer import ParseTimer
    from dparse.transition.easyfirst import EasyFirstModel
    from dparse.transition.shiftreduce import ShiftReduceModel


class EasyFirstParser:
    """An easy-first model with its argmax (``easyfirst-scan`` or ``easyfirst-heap``)
    (:class:`dparse.parsers.LoadedParser`)."""

    builds_forests = False
    projective = True

    def __init__(self, model: EasyFirstModel, decoder_name: str, single_root: bool) -> None:
        self.model = model
        self.decoder_name = decoder_name
        self.single_root = single_root

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer,
              on_forest: OnForest | None = None) -> Iterator[Sentence]:
        """The sentences parsed by easy-first attachment."""
        return self.model.parse(sentences, self.decoder_name, self.single_root, timer)

    def parse_constrained(self, items: Iterable[tuple[Sentence, Constraints]],
                          timer: ParseTimer) -> Iterator[Sentence]:
        """Each sentence parsed under its constraints: only attachments that keep a
        projective tree with every fixed arc and no forbidden one within reach, fixed arcs
        first (:meth:`dparse.transition.easyfirst.EasyFirstModel.parse_constrained`)."""
        return self.model.parse_constrained(items, self.decoder_name, self.single_root, timer)


def _train_easyfirst(cfg: ExperimentConfig, progress: bool,
                     on_epoch: Callable[[EpochReport], None] | None,
                     workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.transition.easyfirst import train

    return train(cfg, progress=progress, on_epoch=on_epoch, workers=workers)


def _load_easyfirst(directory: Path, cfg: ExperimentConfig, name: str) -> EasyFirstParser:
    from dparse.transition.easyfirst import EasyFirstModel, use_heap

    use_heap(name)  # a bad decoder name fails before loading
    return EasyFirstParser(EasyFirstModel.load(directory), name, cfg.decoder.single_root)


class ShiftReduceParser:
    """A shift-reduce model configured for parsing (:class:`dparse.parsers.LoadedParser`):
    its own beam search, which builds packed forests."""

    builds_forests = True
    projective = True

    def __init__(self, model: ShiftReduceModel, decoder_name: str, force_gold: bool) -> None:
        self.model = model
        self.decoder_name = decoder_name
        self.force_gold = force_gold

    def parse(self, sentences: Iterable[Sentence], timer: ParseTimer,
              on_forest: OnForest | None = None) -> Iterator[Sentence]:
        """The sentences parsed by the beam search (``on_forest``: each one's forest)."""
        return self.model.parse(sentences, timer, self.force_gold, on_forest)

    def parse_constrained(self, items: Iterable[tuple[Sentence, Constraints]],
                          timer: ParseTimer, on_forest: OnForest | None = None
                          ) -> Iterator[Sentence]:
        """Each sentence parsed under its constraints: the beam searches only transitions
        whose arcs are allowed and that reduce a word once its fixed dependents are attached
        (:meth:`dparse.transition.shiftreduce.ShiftReduceModel.parse_constrained`)."""
        return self.model.parse_constrained(items, timer, self.force_gold, on_forest)


def _train_shiftreduce(cfg: ExperimentConfig, progress: bool,
                       on_epoch: Callable[[EpochReport], None] | None,
                       workers: WorkerOptions | None = None) -> TrainResult:
    from dparse.transition.shiftreduce import train

    return train(cfg, progress=progress, on_epoch=on_epoch, workers=workers)


def _load_shiftreduce(directory: Path, cfg: ExperimentConfig, name: str) -> ShiftReduceParser:
    from dparse.transition.shiftreduce import DECODER_NAME, ShiftReduceModel

    if name not in (DECODER_NAME, cfg.decoder.name):
        raise ConfigError(f"{directory}: a shift-reduce model (parser: shiftreduce) decodes "
                          f"with its own beam search only; --decoder {name} does not apply")
    model = ShiftReduceModel.load(directory).configure(cfg)
    return ShiftReduceParser(model, DECODER_NAME, cfg.shiftreduce.force_gold)


EASYFIRST = ParserFamily(
    name="easyfirst",
    summary="easy-first parsers",
    train=_train_easyfirst,
    load=_load_easyfirst,
    parse_time_keys=("decoder.name", "decoder.single_root"),
)
SHIFTREDUCE = ParserFamily(
    name="shiftreduce",
    summary="beam shift-reduce parsers",
    train=_train_shiftreduce,
    load=_load_shiftreduce,
    sections={"shiftreduce": ShiftReduceConfig},
    check=check_shiftreduce,
    parse_time_keys=("decoder.single_root", "shiftreduce.beam", "shiftreduce.force_gold"),
)
FAMILIES = (EASYFIRST, SHIFTREDUCE)
